"""The supervisor: runs one notebook in a student's process and decides what its test cells scored.

It lives outside the student's process and believes nothing that comes out of it except plain
values. For every code cell, in order:

* a **student** cell, or an instructor's read-only cell, is sent to the student's process to run
  (an instructor cell also runs in the trusted namespace, so tests find its imports and helpers);
* a **trusted test** (a test cell that calls ``student(...)``) runs here; each ``student(code)``
  is one request to the student's process, answered with a value;
* a **plain nbgrader test cell** (asserts, no ``student``) can only run in the student's process,
  as in nbgrader; it is graded from what that process reports, and the report says so.

The supervisor alone keeps time (per cell and per notebook) and size (every message, all of a
notebook's messages, the outputs it keeps, error outputs included); a student's process that
overruns is interrupted, then killed. Error outputs of test cells are always kept (clipped), since
they are what makes nbgrader score a test as failed.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field

from nbgrader import utils as nbgrader_utils

from ..checks import StudentCodeError
from ..student_language import notebook_language, raised, say
from .outputs import error_output, keep_output
from .policy import SandboxPolicy
from .protocol import TOO_MANY_THREADS, Closed, ProtocolError, Reader, TimedOut, as_unicode, send
from .recorder import clip
from .trusted_tests import TrustedSide, is_trusted_test
from ..plain_values import ValueRejected, decode
from .zygote import ZygoteFailed

#: Seconds an interrupted cell gets to stop before its process is killed.
INTERRUPT_GRACE = 2.0
#: Seconds the student's process may take to set itself up.
STARTUP_TIMEOUT = 60.0
#: Messages carrying values (a probe's answer) may be this large; all of them together, this.
VALUE_MESSAGE_LIMIT = 16 * 1024 * 1024
TOTAL_MESSAGE_LIMIT = 64 * 1024 * 1024
#: Notes of the student's process (denials, skipped shell lines, ...) kept from a notebook's own cells:
#: 1,900 cells of 20 denials each made an 8 MB report and printed 38,000 lines on the instructor's terminal.
NOTES_LIMIT = 100
#: Malformed outputs named in the report per notebook (the rest counted in one more finding).
MALFORMED_LIMIT = 10
#: The finding of every notebook graded with ``--unsafe-no-sandbox`` where bubblewrap could not run.
UNSANDBOXED = ("GRADED WITHOUT THE SANDBOX (--unsafe-no-sandbox): this student's code could read the machine's "
               "files and the grader's environment; do not use these grades for a class")
#: How the instructor's report words a failed hidden check (``ExecutionReport.hidden_failures``).
HIDDEN_FAILURE = "hidden check failed (not shown to the student)"


@dataclass
class ExecutionReport:
    """What happened while a notebook ran: one line per event an instructor should know about.

    ``hidden_failures`` are the failed hidden checks (cell, input, expected value): the instructor's
    alone, kept apart from ``findings`` (which a notebook's own text reaches, through its notes) so
    that what a learner is shown never depends on what a finding says."""

    findings: list[str] = field(default_factory=list)
    hidden_failures: list[str] = field(default_factory=list)
    landlock: bool = False
    trusted_tests: list[str] = field(default_factory=list)
    in_process_tests: list[str] = field(default_factory=list)


def cell_label(cell, index: int) -> str:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return f"cell {grade_id!r}" if grade_id else f"cell {index}"


class StudentProcess:
    """One student's process, seen from the supervisor: commands out, replies in, within limits."""

    def __init__(self, zygote, policy: SandboxPolicy, report: ExecutionReport):
        self.zygote, self.report = zygote, report
        self.limits = policy.limits
        self.pid, self.commands, replies = zygote.spawn(policy.to_message())
        if not zygote.sandboxed and policy.limits.unsafe_no_sandbox:
            report.findings.append(UNSANDBOXED)
        self.reader = Reader(replies, TOTAL_MESSAGE_LIMIT + self.limits.output_limit_bytes,
                             VALUE_MESSAGE_LIMIT + self.limits.output_limit_bytes)
        self.alive = True
        self.ended_how = ""
        self.fault = ""  # what went wrong if it could not set itself up (from the zygote, never from it)
        self.sandbox_failed = ""  # the zygote failed while it ran: the notebook is graded again, in a fresh one
        self.notebook_deadline = time.monotonic() + self.limits.notebook_timeout
        self.counter = 0

    def wait_ready(self) -> dict:
        """Wait until the process has set up its walls. One that could not, before any student code
        ran, is a fault of the grading machine (``ZygoteFailed``: the notebook is not graded)."""
        before = len(self.report.findings)
        message = self._next(time.monotonic() + STARTUP_TIMEOUT, None)
        if message is None:
            lines = self.fault.strip().splitlines()
            why = lines[-1] if lines else "; ".join(self.report.findings[before:]) or self.ended_how
            raise ZygoteFailed(f"the notebook's process could not set itself up, before any of its code ran ({why})")
        return message

    def request(self, verb: str, payload: dict, label: str) -> dict | None:
        """Send one command (``run`` or ``probe``) and return its reply (None if none came)."""
        if not self.alive:
            return None
        self.counter += 1
        index = self.counter
        key = _REPLY[verb]
        command = {verb: index, **payload}
        try:
            send(self.commands, command)
        except OSError:
            self._gone("closed its end")
            return None
        deadline = min(time.monotonic() + self.limits.cell_timeout, self.notebook_deadline)
        return self._next(deadline, (key, index), label)

    def _next(self, deadline: float, expect, label: str = "") -> dict | None:
        interrupted = False
        while True:
            try:
                message = self.reader.next(deadline)
            except TimedOut:
                if time.monotonic() >= self.notebook_deadline:
                    self.report.findings.append(f"the notebook ran longer than its limit of "
                                                f"{self.limits.notebook_timeout:g} s; {label or 'its set-up'} was "
                                                "stopped and the cells after it did not run")
                    self._end()
                    return None
                if interrupted or expect is None:
                    self.report.findings.append(f"{label or 'the set-up'} ignored the interrupt; its process was stopped")
                    self._end()
                    return None
                self.report.findings.append(f"{label} ran longer than {self.limits.cell_timeout:g} s and was interrupted")
                interrupted = True
                self.zygote.signal(self.pid, signal.SIGINT)
                deadline = min(time.monotonic() + INTERRUPT_GRACE, self.notebook_deadline + INTERRUPT_GRACE)
                continue
            except ProtocolError as error:
                self.report.findings.append(f"the notebook's process broke the grading protocol ({error}) "
                                            f"during {label or 'its set-up'}; it was stopped")
                self._end()
                return None
            except Closed:
                self._gone(f"during {label or 'its set-up'}")
                return None
            if expect is None and message.get("ready") is True:
                return message
            if expect is not None and message.get(expect[0]) == expect[1]:
                message["interrupted"] = interrupted
                return message
            self.report.findings.append(f"the notebook's process broke the grading protocol (an unexpected "
                                        f"message) during {label or 'its set-up'}; it was stopped")
            self._end()
            return None

    def _gone(self, when: str) -> None:
        self.alive = False
        status = self._reap()
        self.ended_how = _describe_exit(status) if status is not None else "ended"
        self.report.findings.append(f"the notebook's process {self.ended_how} {when}")

    def _end(self) -> None:
        if self.alive:
            self.alive = False
            self.zygote.signal(self.pid, signal.SIGKILL)
            self._reap()
            self.ended_how = "was stopped"

    def _reap(self):
        try:
            os.close(self.commands)
        except OSError:
            pass
        try:
            os.close(self.reader.fd)
        except OSError:
            pass
        self.zygote.signal(self.pid, signal.SIGKILL)
        try:  # how it ended, as a parent saw it: nothing the process itself wrote
            status, self.fault = self.zygote.wait(self.pid)
            return status
        except ZygoteFailed as failure:
            self.sandbox_failed = str(failure)
            return None

    def finish(self) -> None:
        if self.alive:
            try:
                send(self.commands, {"exit": True})
            except OSError:
                pass
            self.alive = False
            self._reap()


def run_notebook(zygote, nb, policy: SandboxPolicy, instructor_sources: dict | None = None) -> ExecutionReport:
    """Run the code cells of ``nb`` (outputs filled in place, as nbclient does); return the report.

    ``instructor_sources`` maps the grade ids of the instructor's code cells to their sources as
    the gradebook holds them (autograde); without it (``check``, the release proof) the notebook's
    own sources are the instructor's.
    """
    report = ExecutionReport()
    limits = policy.limits
    budget = [limits.output_limit_bytes]
    noted = [0, 0, 0]  # notes of the student's process kept in the report, and left out; malformed outputs
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    process = StudentProcess(zygote, policy, report)
    try:
        ready = process.wait_ready()
        report.landlock = ready.get("landlock") is True
        label = [""]
        language = notebook_language(nb)
        trusted = TrustedSide(lambda code: _probe(process, code, label[0], language), language)
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            label[0] = cell_label(cell, index)
            kind, source = _classify(cell, instructor_sources)
            if kind == "trusted test":
                report.trusted_tests.append(label[0])
                if not process.alive:  # no answers can come: the test's own work would only spend the class's time
                    keep_output(cell, _not_run(process), budget, always=True)
                    continue
                outputs, _ = trusted.run_test(source, budget[0])
                report.hidden_failures.extend(f"{label[0]}: {HIDDEN_FAILURE}: {failure}"
                                              for failure in trusted.hidden_failures)
                for output in outputs:
                    keep_output(cell, output, budget, always=output["output_type"] == "error")
                continue
            if kind == "in-process test":
                report.in_process_tests.append(label[0])
            reply = process.request("run", {"source": source, "test": kind == "in-process test",
                                            "instructor": kind == "instructor"}, label[0])
            if kind == "instructor":
                trusted.run_setup(source)
            if reply is None:
                keep_output(cell, _not_run(process), budget, always=True)
                continue
            count = reply.get("execution_count")
            cell.execution_count = count if isinstance(count, int) else None
            for output in reply.get("outputs") if isinstance(reply.get("outputs"), list) else []:
                error = isinstance(output, dict) and output.get("output_type") == "error"
                problem = keep_output(cell, output, budget, always=error and kind != "student")
                if problem and noted[2] < MALFORMED_LIMIT:
                    report.findings.append(f"{label[0]}: an output was not kept, because {problem}")
                noted[2] += bool(problem)
            if reply.get("interrupted"):
                keep_output(cell, error_output("CellTimeoutError", f"the cell ran longer than {limits.cell_timeout:g} s"),
                      budget, always=True)
            elif reply.get("error") is True and not any(o.output_type == "error" for o in cell.outputs):
                keep_output(cell, error_output("CellError", "the cell failed"), budget, always=True)
            notes = reply.get("notes")
            if isinstance(notes, list):
                # a test cell's notes are always kept: a flood in the student's cells must not hide them
                kept = 20 if kind != "student" else max(0, min(20, NOTES_LIMIT - noted[0]))
                report.findings.extend(as_unicode(f"{label[0]}: {clip(str(n), 300)}")[0] for n in notes[:kept])
                noted[0] += len(notes[:kept])
                noted[1] += max(0, len(notes) - kept)
        if noted[1]:
            report.findings.append(f"{noted[1]} more note(s) of the notebook's cells left out (at most {NOTES_LIMIT} "
                                   "are kept per notebook)")
        if noted[2] > MALFORMED_LIMIT:
            report.findings.append(f"{noted[2] - MALFORMED_LIMIT} more output(s) were not kept")
        if budget[0] <= 0:
            report.findings.append(f"output over the notebook's limit of {limits.output_limit_bytes} bytes was dropped")
    finally:
        process.finish()
    if process.sandbox_failed:  # its cells failed because its sandbox did: no grade of it is the student's
        raise ZygoteFailed(f"the grading sandbox failed while the notebook ran ({process.sandbox_failed})")
    return report


def _probe(process: StudentProcess, code: str, label: str, language: str = "en"):
    """``student(code)`` for a trusted test: the value computed in the student's process (its
    failures said in the notebook's ``language``)."""
    if not isinstance(code, str):
        raise TypeError("student() takes the code to run as a string")
    reply = process.request("probe", {"code": code}, label)
    if reply is None:
        raise StudentCodeError(f"no answer: the notebook's process {process.ended_how or 'ended'} without answering")
    if reply.get("interrupted"):
        raise StudentCodeError(say("no_answer_within", language, seconds=f"{process.limits.cell_timeout:g}"))
    error = reply.get("error")
    if isinstance(error, dict):  # what the student's process says its code raised: text for people, no verdict
        reported = f"{clip(str(error.get('ename', 'Error')), 100)}: {clip(str(error.get('evalue', '')), 2000)}"
        raise StudentCodeError(raised(reported, language))
    try:
        return decode(reply.get("value"))
    except ValueRejected as rejected:
        raise StudentCodeError(f"the answer is not a plain value ({rejected})") from None


def _classify(cell, instructor_sources: dict | None) -> tuple[str, str]:
    """('student' | 'instructor' | 'trusted test' | 'in-process test', the source to run)."""
    meta = cell.metadata.get("nbgrader", {})
    grade_id = meta.get("grade_id")
    locked = nbgrader_utils.is_locked(cell)
    is_test = nbgrader_utils.is_grade(cell) and not nbgrader_utils.is_solution(cell)
    source = cell.source
    if instructor_sources is not None:
        if not isinstance(grade_id, str) or grade_id not in instructor_sources:
            return "student", source
        source = instructor_sources[grade_id]
    if is_test:
        return ("trusted test" if is_trusted_test(source) else "in-process test"), source
    if locked:
        return "instructor", source
    return "student", source


def _not_run(process: StudentProcess) -> dict:
    return error_output("DeadKernelError", f"the notebook's process {process.ended_how or 'ended'} before this cell could finish")


_REPLY = {"run": "ran", "probe": "probed"}


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGKILL:
            return "was killed (out of time or memory)"
        return f"died of signal {signal.Signals(sig).name}"
    if os.WEXITSTATUS(status) == TOO_MANY_THREADS:
        return "was stopped for starting more threads than a notebook may hold at once"
    return f"exited early (status {os.WEXITSTATUS(status)})"
