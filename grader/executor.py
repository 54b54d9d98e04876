"""Execute one notebook in a forked, sandboxed copy of a worker's template interpreter.

This is the kit's replacement for the kernel nbgrader's ``Execute`` preprocessor starts: same
outputs (IPython formats them), no kernel start-up per submission, and a supervisor outside the
student's process that enforces the per-cell timeout and notices a process that dies.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import time
from dataclasses import dataclass, field

import nbformat
from nbgrader import utils as nbgrader_utils

from .sandbox import SandboxPolicy, Template, run_submission

#: Seconds an interrupted cell gets to stop before its process is killed.
INTERRUPT_GRACE = 2.0


@dataclass
class ExecutionReport:
    """What happened while a notebook ran: one line per event an instructor should know about."""

    findings: list[str] = field(default_factory=list)
    died: bool = False
    kernel_isolation: bool = False


def cell_label(cell, index: int) -> str:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return f"cell {grade_id!r}" if grade_id else f"cell {index}"


def execute_notebook(template: Template, nb, policy: SandboxPolicy, timeout: float) -> ExecutionReport:
    """Run the code cells of ``nb`` (in place, like nbclient) and return what went wrong, if anything."""
    report = ExecutionReport()
    runnable = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and cell.source.strip()]
    cells = [{"source": nb.cells[i].source, "trusted": nbgrader_utils.is_locked(nb.cells[i]),
              "test": nbgrader_utils.is_grade(nb.cells[i]) and not nbgrader_utils.is_solution(nb.cells[i])}
             for i in runnable]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None

    template.readable_roots([os.path.realpath(p) for p in policy.protected_paths])  # before the fork: once per worker
    # Objects that exist now are shared with the child; the collector must not walk (and so copy) them.
    gc.collect()
    gc.freeze()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the grading process
        try:
            os.close(read_end)
            run_submission(template, cells, policy, write_end)
        except BaseException:  # a fault of the grader itself: say so, do not hide it
            import traceback
            os.write(write_end, (json.dumps({"crash": traceback.format_exc()}) + "\n").encode())
        finally:
            os._exit(70)
    os.close(write_end)

    done: set[int] = set()
    current, deadline, interrupted_at = None, None, None
    buffer = b""
    try:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([read_end], [], [], wait)
            if not ready:  # the current cell is over its time
                if interrupted_at is None:
                    label = cell_label(nb.cells[runnable[current]], runnable[current])
                    report.findings.append(f"{label} ran longer than {timeout:g} s and was interrupted")
                    _add_output(nb.cells[runnable[current]], _error("CellTimeoutError", f"No reply from kernel before timeout ({timeout:g} s)"))
                    interrupted_at = time.monotonic()
                    _signal(pid, signal.SIGINT)
                    deadline = interrupted_at + INTERRUPT_GRACE
                else:
                    report.findings.append("the notebook ignored the interrupt; its process was stopped")
                    _signal(pid, signal.SIGKILL)
                    deadline = None
                continue
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = _parse(line)
                if message is None:
                    continue
                if "start" in message and isinstance(message["start"], int) and 0 <= message["start"] < len(cells):
                    current, deadline, interrupted_at = message["start"], time.monotonic() + timeout, None
                elif "done" in message and message.get("done") == current and current not in done:
                    done.add(current)
                    cell = nb.cells[runnable[current]]
                    for output in message.get("outputs") or []:
                        _add_output(cell, output)
                    cell.execution_count = message.get("execution_count")
                    label = cell_label(cell, runnable[current])
                    report.findings.extend(f"{label}: {f}" for f in message.get("findings") or [])
                    deadline = None
                elif "kernel_isolation" in message and current is None:
                    report.kernel_isolation = message["kernel_isolation"] is True
                elif "crash" in message:
                    report.findings.append(f"grader fault: {str(message['crash'])[-2000:]}")
                elif message.get("end"):
                    deadline = None
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)

    if len(done) < len(cells):
        report.died = True
        how = _describe_exit(status)
        first = next(i for i in range(len(cells)) if i not in done)
        report.findings.append(f"the notebook's process {how} during {cell_label(nb.cells[runnable[first]], runnable[first])}"
                               f"; {len(cells) - len(done)} cell(s) did not run")
        for i in range(len(cells)):
            if i not in done:
                cell = nb.cells[runnable[i]]
                if not any(o.output_type == "error" for o in cell.outputs):
                    _add_output(cell, _error("DeadKernelError", f"The grading process {how}"))
    return report


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _parse(line: bytes):
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _error(ename, evalue):
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": [f"{ename}: {evalue}"]}


def _add_output(cell, output: dict):
    if isinstance(output, dict) and output.get("output_type") in _OUTPUT_TYPES:
        cell.outputs.append(nbformat.from_dict(output))


_OUTPUT_TYPES = {"stream", "error", "display_data", "execute_result"}


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGKILL:
            return "was killed (out of time or memory)"
        return f"died of signal {signal.Signals(sig).name}"
    code = os.WEXITSTATUS(status)
    return f"exited early (status {code})"
