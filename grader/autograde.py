"""Autograde a class: stage, execute in parallel sandboxes, then let nbgrader's ``Autograde`` grade.

1. **Stage** each submission (``submission.stage_submission``): a checked copy in nbgrader's layout
   under ``.kitgrade/staged``; the submitted files are only read.
2. **Prepare** each staged notebook (``prepare_task``): nbgrader's sanitizing chain with the
   gradebook's copy (``notebook_chains``), and the instructor's cells for the trusted tests.
3. **Execute** it in the sandbox (``sandbox/``; ``execute_prepared``) and return its outputs. Locally a
   pool of worker processes (one per core by default) does 2 and 3; on a dask cluster
   (``cluster.py``) this process prepares and the cluster's workers execute.
4. **Grade** with nbgrader's ``Autograde`` converter over the staged copies, its ``Execute`` step
   replaced by ``ReplayExecution``: nbgrader writes ``autograded/`` and the gradebook as usual.
   Each student is graded as soon as their notebooks have run, while the workers go on. Only this
   process writes; the ledger (``.kitgrade/graded``) lets a rerun skip what is graded and unchanged.
5. **Report** each student's score and every reason in ``reports/<assignment>.json`` and ``.csv``.

A fault of the machine (the disk fills up, the gradebook is locked halfway) never becomes a grade:
the student it strikes is "not graded, because ...", whatever nbgrader had recorded of them in this
run is undone (``GradebookRecords``), and the next run grades them. A student the gradebook holds
whose submission is gone from ``submitted/`` keeps their grade, and every report says so.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import shutil
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from traitlets.config import Config

from .course_lock import grading_lock
from .course import KIT_DIR, Course, ensure_nbgrader_tools_on_path
from .errors import EnvironmentFault
from .faults import describe, logged_errors
from .notebook_chains import (autograde_preprocessors, instructor_sources, keep_warnings_harmless, sanitize,
                              sanitize_preprocessors)
from .progress import ProgressBar
from .sandbox.policy import SandboxPolicy, policy_for
from .sandbox.scratch import read_data_files, run_folder, scratch_folder
from .sandbox.supervisor import run_notebook
from .sandbox import workers as grading_workers
from .settings import worker_count
from .submission import SubmissionUnreadable, grade_ids, stage_submission

STAGED = f"{KIT_DIR}/staged"
GRADED = f"{KIT_DIR}/graded"


class Ledger:
    """What is graded already: ``.kitgrade/graded/<assignment>.json``, one entry per student.

    An entry is written as soon as nbgrader has put the student's grade in the gradebook, and holds
    a fingerprint of everything the grade depends on (the submitted files, the assignment's source,
    the course's settings, the kit's and nbgrader's versions) and the reasons of the report. A
    student whose entry matches, and whose submission the gradebook holds, is not graded again.

    Before nbgrader writes anything of a student, their entry is marked ``unfinished`` (``begin``);
    the mark goes when the grade is recorded, or when what nbgrader wrote was undone. A mark left
    behind (the machine failed and the undo failed too, or the run was killed) says the gradebook
    may hold part of a grading: the next run grades them again, and export does not take it as a grade.
    """

    def __init__(self, course: Course, assignment: str):
        self.course, self.assignment = course, assignment
        self.path = course.path(GRADED, f"{assignment}.json")
        try:
            self.entries = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}
        self._common = None
        self._in_gradebook = None

    def fingerprint(self, student: str) -> str:
        import hashlib

        from .cluster import kit_versions

        if self._common is None:
            common = hashlib.sha256(json.dumps(kit_versions()).encode())
            for path in [self.course.root / "nbgrader_config.py", *self.course.source_notebooks(self.assignment)]:
                common.update(path.name.encode() + b"\0" + (path.read_bytes() if path.exists() else b""))
            common.update(f"due {self._due_date()}".encode())  # a due date set or moved: lateness changes
            self._common = common.hexdigest()
        digest = hashlib.sha256(self._common.encode())
        folder = self.course.path("submitted", student, self.assignment)
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            try:
                content = path.read_bytes()
            except OSError:  # matches nothing recorded: the run tries it, and says why it cannot grade it
                return ""
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + content + b"\0")
        return digest.hexdigest()

    def _due_date(self):
        with warnings.catch_warnings(), Gradebook(self.course.db_url, self.course.course_id) as gradebook:
            warnings.simplefilter("ignore")
            try:
                return gradebook.find_assignment(self.assignment).duedate
            except MissingEntry:
                return None

    def graded(self, student: str) -> list[str] | None:
        """The reasons recorded for ``student`` if graded as the submission is now, else None."""
        entry, fingerprint = self.entries.get(student), self.fingerprint(student)
        if not entry or entry.get("unfinished") or not fingerprint or entry.get("fingerprint") != fingerprint:
            return None
        if self._in_gradebook is None:
            with warnings.catch_warnings(), Gradebook(self.course.db_url, self.course.course_id) as gradebook:
                warnings.simplefilter("ignore")
                try:
                    self._in_gradebook = {s.student.id for s in gradebook.find_assignment(self.assignment).submissions}
                except MissingEntry:
                    self._in_gradebook = set()
        return list(entry.get("reasons", [])) if student in self._in_gradebook else None

    def resubmitted(self, student: str) -> bool:
        """Whether ``student``'s submission changed since a run graded it (False if no run recorded one)."""
        entry = self.entries.get(student)
        return bool(entry) and "fingerprint" in entry and entry["fingerprint"] != self.fingerprint(student)

    def unfinished(self, student: str) -> bool:
        """Whether a grading of ``student`` stopped halfway and what it wrote may still be in the gradebook."""
        return bool(self.entries.get(student, {}).get("unfinished"))

    def begin(self, student: str) -> None:
        """Marked before nbgrader writes anything of ``student`` (the entry is otherwise kept as it is)."""
        entry = {**self.entries.get(student, {}), "unfinished": True}
        self._write({**self.entries, student: entry})
        self.entries[student] = entry

    def undone(self, student: str) -> None:
        """What nbgrader wrote of ``student`` was undone: the mark goes; the next run grades them again
        unless they resubmitted since graded (the entry then says whose grade the gradebook holds)."""
        entry = {k: v for k, v in self.entries.get(student, {}).items() if k != "unfinished"}
        if "fingerprint" in entry and self.resubmitted(student):
            self._write({**self.entries, student: entry})
            self.entries[student] = entry
        else:
            self.forget(student)

    def record(self, student: str, reasons: list[str]) -> None:
        entry = {"fingerprint": self.fingerprint(student), "reasons": list(reasons)}
        self._write({**self.entries, student: entry})
        self.entries[student] = entry
        if self._in_gradebook is not None:
            self._in_gradebook.add(student)

    def forget(self, student: str) -> None:
        """``student`` is to be graded again (what the gradebook held of them was undone)."""
        if student in self.entries:
            self._write({s: e for s, e in self.entries.items() if s != student})
            del self.entries[student]
        if self._in_gradebook is not None:
            self._in_gradebook.discard(student)

    def _write(self, entries: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        try:
            temporary.write_text(json.dumps(entries, indent=1))
            os.replace(temporary, self.path)  # a run killed (or a disk full) while writing leaves the ledger whole
        finally:
            temporary.unlink(missing_ok=True)


class Interrupted(Exception):
    """The run was stopped (Ctrl-C, SIGTERM, SIGHUP); what was graded is kept."""

    def __init__(self, graded: int, left: int):
        super().__init__(f"stopped; {graded} graded, {left} left; run again to continue")
        self.graded, self.left = graded, left


@contextmanager
def stops_as_keyboard_interrupt():
    """SIGTERM and SIGHUP (a closed terminal) stop the run as Ctrl-C does: cleanly."""
    def stop(signum, frame):
        raise KeyboardInterrupt

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, stop)
        except (ValueError, OSError):  # not the main thread: leave the handlers alone
            pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass
class StudentResult:
    """One student's outcome in an autograde run."""

    student: str
    score: float = 0.0
    max_score: float = 0.0
    reasons: list[str] = field(default_factory=list)
    graded: bool = True
    seconds: float = 0.0  # wall-clock time its notebooks ran in the sandbox
    awaiting_manual: list[dict] = field(default_factory=list)  # answers waiting for a manual grade (manual_grades)
    manual_kept: int = 0  # manual grades kept through a regrade, which nbgrader flags for a review
    submitted: bool = True  # False: in the gradebook, but no longer in submitted/


class ReportNotWritten(EnvironmentFault):
    """The students were graded (the gradebook holds their grades) but the report could not be written."""

    def __init__(self, message: str, results: dict[str, StudentResult]):
        super().__init__(message, status=1)
        self.results = results


# ---- the worker side ---------------------------------------------------------------------------
def prepare_task(task: dict) -> dict:
    """Instructor side of a task: sanitize the staged notebook with the gradebook's copy, gather the
    instructor's sources. Returns a task that needs nothing but itself (bytes and plain values) to
    run anywhere, or, for a notebook nbgrader cannot sanitize, an outcome with ``"not_gradable"``."""
    config = task["config"]
    nb = nbformat.reads(Path(task["path"]).read_text(encoding="utf-8"), as_version=4)
    base = {k: task[k] for k in ("student", "assignment", "notebook")}
    try:
        nb, findings = sanitize(nb, config, task["db_url"], task["assignment"], task["notebook"], task["student"])
    except Exception as error:  # e.g. nbgrader's metadata validation: no record, so every cell scores 0
        if describe(error):  # the machine's fault (the gradebook's copy cannot be read): not graded at all
            raise
        return {**base, "not_gradable": True, "landlock": True, "tests": {},
                "findings": [f"not gradable: nbgrader could not sanitize it ({type(error).__name__}: {error})"]}
    return {**base, "nb": nbformat.writes(nb).encode("utf-8"), "findings": findings,
            "sources": instructor_sources(task["db_url"], task["assignment"], task["notebook"]),
            "policy": task["policy"], "data_files": task["data_files"], "scratch_parent": task.get("scratch_parent")}


def execute_prepared(task: dict) -> dict:
    """Worker side of a task: run a prepared (sanitized) notebook in the sandbox.

    Returns its findings and the execution record (the outputs of every cell); the caller, the
    instructor's process, is the only one to write anything."""
    if task.get("not_gradable"):
        return task
    nb = nbformat.reads(task["nb"].decode("utf-8"), as_version=4)
    policy: SandboxPolicy = task["policy"]
    started = time.monotonic()
    with scratch_folder(task["data_files"], task.get("scratch_parent")) as scratch:
        report = run_notebook(grading_workers.zygote_for(policy.forbidden_imports), nb, policy.for_scratch(scratch),
                              task["sources"])
    seconds = time.monotonic() - started
    findings = list(task["findings"]) + report.findings + keep_warnings_harmless(nb)
    record = {"sources": [cell.source for cell in nb.cells],
              "cells": [{"outputs": cell.get("outputs", []), "execution_count": cell.get("execution_count")}
                        for cell in nb.cells]}
    return {"student": task["student"], "notebook": task["notebook"], "findings": findings,
            "landlock": report.landlock, "record": record, "seconds": seconds,
            "tests": {**{t: "trusted" for t in report.trusted_tests}, **{t: "in-process" for t in report.in_process_tests}}}


def execute_submission_notebook(task: dict) -> dict:
    """Local worker task: prepare (with the gradebook's copy) and execute one staged notebook."""
    return execute_prepared(prepare_task(task))


def write_record(task: dict, outcome: dict) -> None:
    """Store the execution record a worker returned (read by ``ReplayExecution``)."""
    record = outcome.pop("record", None)
    if record is None:
        return
    path = Path(task["record"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(record, handle)


# ---- the instructor side -----------------------------------------------------------------------
def submitted_students(course: Course, assignment: str) -> list[str]:
    submitted = course.path("submitted")
    if not submitted.exists():
        return []
    return sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir())


def autograde(course: Course, assignment: str, students: list[str] | None = None, workers: int | None = None,
              progress: bool = True, log_level: str = "ERROR", cluster: str | None = None,
              force: bool = False, security=None) -> dict[str, StudentResult]:
    """Grade every submission of ``assignment``; return each student's result (also written to reports/).

    ``cluster`` (``tcp://HOST:PORT``, ``tls://HOST:PORT`` or ``local:N``) runs the notebooks on the
    workers of a dask scheduler instead of local processes (``grader.cluster``). A submission
    already graded as it is now (same files, same assignment and settings) is not graded again
    unless ``force``: a run that was stopped is continued by running it again. ``security``: the CA
    file, certificate and key for a ``tls://`` scheduler (else dask's configuration is used).

    Stopped by Ctrl-C, SIGTERM or SIGHUP, it stops every process it started, removes its temporary
    files and raises ``Interrupted`` (what was graded is in the gradebook; a rerun grades the rest).
    """
    counts = {"graded": 0, "total": 0}
    try:
        with grading_lock(course.root), stops_as_keyboard_interrupt():
            return _autograde(course, assignment, students, workers, progress, log_level, counts, cluster, force,
                              security)
    except KeyboardInterrupt:
        raise Interrupted(counts["graded"], counts["total"] - counts["graded"]) from None


def _autograde(course, assignment, students, workers, progress, log_level, counts, cluster=None,
               force=False, security=None) -> dict[str, StudentResult]:
    ensure_nbgrader_tools_on_path()
    settings = course.settings()
    config = course.config()
    students = students or submitted_students(course, assignment)
    workers = worker_count(workers, settings)
    results = {student: StudentResult(student) for student in students}
    executor = None
    if cluster:  # connected (and checked) before anything is written
        from .cluster import DaskExecutor, tls_security

        executor = DaskExecutor.connect(cluster, tls_security(security))
    try:
        return _autograde_with(course, assignment, students, workers, progress, log_level, counts, executor, force,
                               settings, config, results)
    finally:
        if executor is not None:
            executor.close()


def _autograde_with(course, assignment, students, workers, progress, log_level, counts, executor, force,
                    settings, config, results) -> dict[str, StudentResult]:
    ledger = Ledger(course, assignment)
    for student in list(students):
        reasons = None if force else ledger.graded(student)
        if reasons is not None:  # graded as it is now by an earlier run: kept
            results[student].reasons += reasons
    to_grade = [s for s in students if force or ledger.graded(s) is None]
    counts["total"] = len(to_grade)
    run_dir = course.path(KIT_DIR, "runs")  # this run's working files, removed when it ends
    try:
        return _run(course, assignment, to_grade, workers, progress, log_level, counts, executor, settings, config,
                    results, ledger, run_dir)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _run(course, assignment, to_grade, workers, progress, log_level, counts, executor, settings, config, results,
         ledger, run_dir) -> dict[str, StudentResult]:
    gradebook_copy = run_dir / "gradebook.db"
    try:
        if run_dir.exists():
            shutil.rmtree(run_dir)
        run_dir.mkdir(parents=True)
        shutil.copy(course.gradebook_path, gradebook_copy)
    except OSError as error:
        raise EnvironmentFault(f"nothing was graded, because {describe(error, run_dir) or error}; free some space "
                               "and run it again") from None

    # 1. stage
    expected = {}
    for source in course.source_notebooks(assignment):
        expected[source.stem] = grade_ids(nbformat.read(source, as_version=4))
    for student in to_grade:
        if course.path(STAGED, student, assignment).exists():
            shutil.rmtree(course.path(STAGED, student, assignment))
    tasks = []
    policy = policy_for(settings, course.policy(assignment)["forbidden_imports"], course.protected_paths())
    data_files = read_data_files(course.path("source", assignment), policy.limits)
    size_limit = policy.limits.notebook_size_limit_mb * 1024 * 1024
    not_graded: dict[str, str] = {}
    for student in to_grade:
        staged = course.path(STAGED, student, assignment)
        try:
            results[student].reasons += stage_submission(course.path("submitted", student, assignment), staged,
                                                         expected, size_limit)
        except SubmissionUnreadable as error:  # the machine's or the folder's fault, not the student's
            not_graded[student] = f"the submission could not be read ({error})"
            continue
        except OSError as error:  # its copy in .kitgrade/staged could not be written
            shutil.rmtree(staged, ignore_errors=True)
            not_graded[student] = describe(error, staged) or f"it could not be staged ({error})"
            continue
        for notebook in sorted(staged.glob("*.ipynb")):
            tasks.append({"student": student, "assignment": assignment, "notebook": notebook.stem,
                          "path": str(notebook), "db_url": f"sqlite:///{gradebook_copy}",
                          "record": str(run_dir / assignment / student / f"{notebook.stem}.json"),
                          "policy": policy, "data_files": data_files})

    # 2. execute in parallel; 3. as soon as all of a student's notebooks ran, nbgrader grades them
    # (in this process, while the workers go on with the next submissions)
    bar = ProgressBar(len(tasks), "graded", enabled=progress, status=executor.status if executor else None)
    pending = {student: 0 for student in to_grade}
    for task in tasks:
        pending[task["student"]] += 1
    landlock_count = [0]
    how_tested: dict[str, str] = {}
    try:
        with run_folder() as scratch_parent:
            for task in tasks:
                task["scratch_parent"] = scratch_parent
            _grade_as_results_come(course, assignment, tasks, workers, config, settings, run_dir, log_level,
                                   results, pending, not_graded, how_tested, bar, landlock_count, counts, executor,
                                   ledger)
    finally:
        bar.close()
    without_landlock = landlock_count[0]
    if without_landlock:
        print(f"note: Landlock is not available here; {without_landlock} notebook(s) ran with the audit hook as "
              "their only file isolation (see docs/threat-model.md)", file=sys.stderr)
    in_process = sorted(label for label, how in how_tested.items() if how == "in-process")
    if in_process:
        print(f"note: {len(in_process)} test cell(s) of {assignment} are plain nbgrader test cells, graded from "
              f"what the student's process reported: {', '.join(in_process)} (tests that call student() are "
              "graded outside it; see docs/threat-model.md)", file=sys.stderr)
    for student, why in not_graded.items():
        results[student].reasons.append(f"not graded, because {why}; run autograde again to grade it")
        results[student].graded = False

    # students with nothing gradable still get their zero, as nbgrader gives a missing notebook
    score_missing_as_zero(course, assignment, [s for s in to_grade if s not in not_graded])
    for student in to_grade:
        if student not in not_graded and ledger.graded(student) is None:
            try:
                ledger.record(student, results[student].reasons)
            except OSError:  # not recorded: the next run grades them again, to the same zero
                pass
    # 4. report
    from .report import collect_scores, no_longer_submitted, write_json, write_report

    # a grade whose submission is gone stays (it is the gradebook's), and the report says so
    for student, why in no_longer_submitted(course, assignment).items():
        results[student] = StudentResult(student, reasons=[why], submitted=False)

    collect_scores(course, assignment, results)
    try:
        course.path("reports").mkdir(exist_ok=True)
        write_json(course.path("reports", f"{assignment}-tests.json"), dict(sorted(how_tested.items())))
        write_report(course, assignment, results)
    except OSError as error:
        raise ReportNotWritten(f"the grades are in the gradebook, but the report could not be written, because "
                               f"{describe(error, course.path('reports')) or error}; once that is put right, run "
                               f"`kitgrade autograde {assignment}` again (it grades no one again, and writes the "
                               "report)", results) from None
    return results


def _grade_as_results_come(course, assignment, tasks, workers, config, settings, run_dir, log_level,
                           results, pending, not_graded, how_tested, bar, landlock_count, counts, executor=None,
                           ledger=None) -> None:
    before = GradebookRecords(course, assignment, list(pending))
    """Run the tasks; as soon as all of a student's notebooks ran, let nbgrader grade that student."""
    preload = list(settings.preload_modules)
    if executor is not None:
        outcomes = executor.run_tasks(tasks, config, preload)
    else:
        outcomes = run_tasks(tasks, workers, config, preload)
    for task, outcome in outcomes:
        student = task["student"]
        if isinstance(outcome, dict):
            try:
                write_record(task, outcome)
            except OSError as error:  # the machine's fault: this student is not graded
                Path(task["record"]).unlink(missing_ok=True)
                not_graded.setdefault(student, describe(error, task["record"]) or f"the grader failed ({error})")
            results[student].reasons += [f"{outcome['notebook']}: {f}" for f in outcome["findings"]]
            landlock_count[0] += not outcome["landlock"]
            how_tested.update(outcome.get("tests", {}))
            results[student].seconds += outcome.get("seconds", 0.0)
        else:  # a fault of the grader, not of the student: no grade is recorded for this student
            not_graded.setdefault(student, f"{task['notebook']}: the grader failed ({outcome})")
        pending[student] -= 1
        if pending[student] == 0 and student not in not_graded:
            why = grade_student(course, assignment, student, run_dir, log_level, ledger, results[student].reasons,
                                before)
            if why is None:
                counts["graded"] += 1
            else:  # reported; the class goes on
                not_graded[student] = why
        bar.advance()


def grade_student(course: Course, assignment: str, student: str, run_dir: Path, log_level: str,
                  ledger: Ledger | None, reasons: list[str], before: GradebookRecords) -> str | None:
    """nbgrader grades one student and the ledger records it; returns None, or why they are not graded.

    If the machine fails meanwhile (the disk fills up under ``autograded/`` or ``.kitgrade/``, the
    gradebook is locked), what the gradebook got of this grading is undone (``before`` holds it as it
    was) and so is the ledger's entry: the student has no grade from this run (an earlier one is
    kept), and the next run grades them. If the undo fails too, the ledger's ``unfinished`` mark
    stays, and export leaves out what the gradebook holds of them.
    """
    try:
        if ledger is not None:
            ledger.begin(student)
    except OSError as error:  # nothing of this run is in the gradebook: an earlier grade stays as it was
        return describe(error, ledger.path) or f"the grading could not be noted ({error})"
    try:
        faults = [e for e in grade_with_nbgrader(course, assignment, [student], run_dir, log_level) if describe(e)]
        if faults:
            raise faults[0]
        if ledger is not None:  # graded and in the gradebook: a rerun keeps it
            ledger.record(student, reasons)
        return None
    except Exception as error:
        why = describe(error, course.path("autograded", student, assignment), course.gradebook_path) \
            or f"nbgrader could not grade this submission ({error!r})"
    shutil.rmtree(course.path("autograded", student, assignment), ignore_errors=True)
    try:
        course.path("autograded", student).rmdir()  # nothing else of theirs there: no empty folder left
    except OSError:
        pass
    try:
        before.restore(student)
        if student in before.submissions:
            why += "; the gradebook keeps the grade of the earlier run"
    except Exception as error:  # the gradebook cannot be written either (still locked, the disk still full)
        problem = describe(error, gradebook=course.gradebook_path) or error
        # the ledger's mark stays: export leaves the grade out, the next run grades them again
        return why + f"; part of this grading may be in the gradebook ({problem}): it is not exported as a grade"
    try:
        if ledger is not None:
            ledger.undone(student)
    except Exception as error:  # the mark stays: the next run grades them again, and the grade is theirs
        why += f"; {describe(error, ledger.path) or error}"
    return why


def run_tasks(tasks: list[dict], workers: int, config: Config, preload: list[str]):
    """Run every task in a pool of worker processes; yield ``(task, outcome)`` as each finishes.

    The outcome is the worker's result (a dict) or, for a task the grader could not run, the reason
    (a str). A worker that dies takes its pool with it: the unfinished tasks run again in a new pool,
    and those caught in a dead pool twice then run one at a time, so that only a task that kills
    its worker on its own is given up.
    """
    # Workers come from a fresh forkserver, not from this process: whatever the caller has
    # imported or patched (a test runner, a notebook) must not leak into the graders.
    context = multiprocessing.get_context("forkserver")
    queue = [(list(tasks), workers, 0)]  # (tasks, pool size, times they were caught in a dead pool)
    while queue:
        batch, size, caught = queue.pop(0)
        broken = []
        pool = ProcessPoolExecutor(max_workers=max(1, min(size, len(batch))), mp_context=context,
                                   initializer=grading_workers.init_worker, initargs=(preload, os.getpid()))
        try:
            futures = {pool.submit(execute_submission_notebook, {**task, "config": config}): task for task in batch}
            for future in as_completed(futures):
                task = futures[future]
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    broken.append(task)
                    continue
                except Exception as error:  # a fault of the grader: reported, the class goes on
                    outcome = describe(error) or repr(error)
                yield task, outcome
        except BaseException:  # stopped (Ctrl-C, a signal, the caller gave up): no worker outlives the run
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        if not broken:
            continue
        if len(batch) == 1 and size == 1 and caught >= 2:
            yield broken[0], "its grading process died while grading it, also when it ran alone"
        elif caught == 0:
            queue.append((broken, size, 1))
        else:
            queue.extend(([task], 1, 2) for task in broken)


def grade_with_nbgrader(course: Course, assignment: str, students: list[str], run_dir: Path,
                        log_level: str) -> list[BaseException]:
    """Run nbgrader's ``Autograde`` converter over the staged copies, replaying the recorded outputs.

    Returns the exceptions nbgrader caught and logged (a submission it failed to grade: nbgrader
    removed its ``autograded/`` folder, but may have recorded part of it in the gradebook)."""
    if not students:
        return []
    from nbgrader.converters import Autograde
    from nbgrader.converters.base import NbGraderException

    config = course.config()
    config.merge(Config({
        "Autograde": {"sanitize_preprocessors": sanitize_preprocessors(in_worker=False),
                      "autograde_preprocessors": autograde_preprocessors(), "create_student": True},
        "ReplayExecution": {"run_directory": str(run_dir)},
        "BaseConverter": {"force": True},
    }))
    # one student, or every staged one (the staged copies are exactly this run's submissions)
    student_id = students[0] if len(students) == 1 else "*"
    coursedir = course.coursedir(assignment_id=assignment, student_id=student_id, submitted_directory=STAGED)
    converter = Autograde(coursedir=coursedir, config=config)
    converter.log.setLevel(log_level)
    converter.force = True
    with logged_errors(converter.log) as errors:
        try:
            with warnings.catch_warnings():  # nbgrader's own SQLAlchemy session warnings are not ours to show
                warnings.simplefilter("ignore")
                converter.start()
        except NbGraderException as error:
            converter.log.error("nbgrader reported failures: %s", error)
    return errors


def score_missing_as_zero(course: Course, assignment: str, students: list[str]) -> None:
    """Give a zero to every student whose submission had no gradable notebook."""
    with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gradebook:
        for student in students:
            try:
                gradebook.find_submission(assignment, student)
                continue
            except MissingEntry:
                pass
            warnings.simplefilter("ignore")
            gradebook.update_or_create_student(student)
            submission = gradebook.update_or_create_submission(assignment, student)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gradebook.db.commit()


class GradebookRecords:
    """What grading may change in the gradebook for each of ``students``, as it was: ``restore(student)``
    puts a student's back.

    nbgrader's ``Autograde`` creates the student and the submission, sets its timestamp, each
    notebook's late penalty, each grade's automatic score and each comment's automatic text;
    manual scores and comments are the instructor's and grading leaves them alone. Read once, before
    anyone is graded (one run grades a student once).
    """

    def __init__(self, course: Course, assignment: str, students: list[str]):
        self.course, self.assignment = course, assignment
        self.existed: set[str] = set()
        self.submissions: dict[str, dict] = {}
        with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gradebook:
            warnings.simplefilter("ignore")
            known = {s.id for s in gradebook.students}
            self.existed = known & set(students)
            try:
                submissions = gradebook.find_assignment(assignment).submissions
            except MissingEntry:
                submissions = []
            for submission in submissions:
                if submission.student.id in self.existed:
                    self.submissions[submission.student.id] = {"timestamp": submission.timestamp, "notebooks": {
                        notebook.name: {"penalty": notebook.late_submission_penalty,
                                        "grades": {g.name: (g.auto_score, g.needs_manual_grade) for g in notebook.grades},
                                        "comments": {c.name: c.auto_comment for c in notebook.comments}}
                        for notebook in submission.notebooks}}

    def restore(self, student: str) -> None:
        saved = self.submissions.get(student)
        with warnings.catch_warnings(), Gradebook(self.course.db_url, self.course.course_id) as gradebook:
            warnings.simplefilter("ignore")
            if saved is None:
                try:
                    gradebook.remove_submission(self.assignment, student)
                except MissingEntry:
                    pass
                if student not in self.existed:
                    try:
                        if not gradebook.find_student(student).submissions:
                            gradebook.remove_student(student)
                    except MissingEntry:
                        pass
                return
            submission = gradebook.find_submission(self.assignment, student)
            submission.timestamp = saved["timestamp"]
            for notebook in submission.notebooks:
                kept = saved["notebooks"].get(notebook.name)
                if kept is None:
                    continue
                notebook.late_submission_penalty = kept["penalty"]
                for grade in notebook.grades:
                    if grade.name in kept["grades"]:
                        grade.auto_score, grade.needs_manual_grade = kept["grades"][grade.name]
                for comment in notebook.comments:
                    if comment.name in kept["comments"]:
                        comment.auto_comment = kept["comments"][comment.name]
            gradebook.db.commit()
