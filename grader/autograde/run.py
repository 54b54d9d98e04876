"""One autograde run: an object holding its state, and its steps in order.

``Run(course, assignment, ...)`` holds the course, the assignment, its settings, the ledger, the
executor and everything learnt on the way (each student's result, who is not graded and why, how
each test cell was graded). ``grade()`` takes the steps, each in a module of its own:

1. ``picking``: the submissions to grade (the ledger skips what is graded and unchanged);
2. ``executors`` / ``dask_executor``: the workers start (while this process goes on);
3. ``staging``: each submission staged, a task per notebook;
4. ``task``: each notebook run in the sandbox, on a worker;
5. ``recording``: as soon as all of a student's notebooks ran, nbgrader grades them here and the
   ledger records it (a fault of the machine is undone, never a grade); ``changes``: which grades
   a regrade changed;
6. ``report``: each student's score and every reason in ``reports/``.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass

from ..course import KIT_DIR, Course, ensure_nbgrader_tools_on_path
from ..course_lock import grading_lock
from ..foundations.errors import EnvironmentFault
from ..foundations.faults import describe
from ..foundations.progress import ProgressBar
from ..sandbox.bubblewrap import require_sandbox
from ..sandbox.scratch import run_folder
from ..foundations.settings import worker_count
from ..foundations.speed import shared_gradebook_engines
from ..foundations.stop_signals import stops_as_keyboard_interrupt
from .changes import changed_grades
from .gradebook_records import GradebookRecords
from .ledger import Ledger
from .picking import pick, submitted_students
from .recording import grade_student, score_missing_as_zero, write_record
from .report import finish_report
from .results import StudentResult
from .staging import sandbox_policy, stage_all
from .stopping import Interrupted


@dataclass
class Options:
    """How a run grades (``kitgrade autograde``'s options)."""

    students: list[str] | None = None  # None: every submission
    workers: int | None = None  # None: c.KitGrade.workers; 0: one per core
    cluster: str | None = None  # a dask scheduler (tcp://, tls://) or local:N
    security: list[str] | None = None  # [ca_file, cert, key] for a tls:// scheduler
    force: bool = False  # grade again what is graded and unchanged
    progress: bool = True


def autograde(course: Course, assignment: str, *, students: list[str] | None = None, workers: int | None = None,
              cluster: str | None = None, security=None, force: bool = False,
              progress: bool = True) -> dict[str, StudentResult]:
    """Grade every submission of ``assignment``; return each student's result (also written to reports/).

    ``cluster`` (``tcp://HOST:PORT``, ``tls://HOST:PORT`` or ``local:N``) runs the notebooks on the
    workers of a dask scheduler instead of local processes. A submission already graded as it is
    now (same files, same assignment and settings) is not graded again unless ``force``: a run that
    was stopped is continued by running it again. ``security``: the CA file, certificate and key for
    a ``tls://`` scheduler (else dask's configuration is used). One run at a time per course.

    Stopped by Ctrl-C, SIGTERM or SIGHUP, it stops every process it started, removes its temporary
    files and raises ``Interrupted`` (what was graded is in the gradebook; a rerun grades the rest).
    """
    options = Options(students=students, workers=workers, cluster=cluster, security=security, force=force,
                      progress=progress)
    run = Run(course, assignment, options)
    try:
        with grading_lock(course.root), stops_as_keyboard_interrupt(), shared_gradebook_engines():
            return run.grade()
    except KeyboardInterrupt:
        raise Interrupted(run.graded, len(run.to_grade) - run.graded) from None


class Run:
    """The state of one autograde run (see the module's docstring for its steps)."""

    def __init__(self, course: Course, assignment: str, options: Options):
        self.course, self.assignment, self.options = course, assignment, options
        self.settings, self.config = course.settings(), course.config()
        self.students = options.students or submitted_students(course, assignment)
        self.results = {student: StudentResult(student) for student in self.students}
        self.to_grade: list[str] = []
        self.graded = 0  # students graded so far in this run
        self.not_graded: dict[str, str] = {}  # student -> why
        self.how_tested: dict[str, str] = {}  # test cell -> "trusted" or "in-process"
        self.without_landlock = 0
        self.run_dir = course.path(KIT_DIR, "runs")  # this run's working files, removed when it ends
        self.gradebook_copy = self.run_dir / "gradebook.db"
        self.ledger = self.before = self.executor = None
        self.policy = self.data_files = None
        self.preload: list[str] = []  # what the grading interpreters load first (``Course.preload``)

    def grade(self) -> dict[str, StudentResult]:
        ensure_nbgrader_tools_on_path()
        require_sandbox(self.settings)  # refused (one line, nothing written) where bubblewrap cannot run
        self.preload = self.course.preload(self.assignment)
        if self.options.cluster:  # connected (and checked) before anything is written
            from .dask_executor import DaskExecutor, tls_security

            self.executor = DaskExecutor.connect(self.options.cluster, tls_security(self.options.security),
                                                 config=self.config, preload=self.preload)
        stopped = True
        try:
            self.ledger = Ledger(self.course, self.assignment)
            self.to_grade = pick(self.ledger, self.students, self.results, self.options.force)
            try:
                self._grade_picked()
            finally:
                shutil.rmtree(self.run_dir, ignore_errors=True)
            stopped = False
        finally:
            if self.executor is not None:
                self.executor.close(stopped=stopped)
        return finish_report(self)

    def _grade_picked(self) -> None:
        self._copy_gradebook()
        self.policy, self.data_files = sandbox_policy(self)
        if self.to_grade and self.executor is None:
            from .executors import LocalExecutor

            notebooks = len(self.to_grade) * max(1, len(self.course.source_notebooks(self.assignment)))
            workers = min(worker_count(self.options.workers, self.settings), notebooks)
            self.executor = LocalExecutor(workers, self.config, self.preload)
        if self.to_grade:
            self.executor.start(self.policy.forbidden_imports)  # the workers start while this process stages
        tasks = stage_all(self)
        self.before = GradebookRecords(self.course, self.assignment, self.to_grade)
        bar = ProgressBar(len(tasks), "graded", enabled=self.options.progress,
                          status=self.executor.status if self.options.cluster else None)
        try:
            with run_folder() as scratch_parent:
                for task in tasks:
                    task["scratch_parent"] = scratch_parent
                self._grade_as_results_come(tasks, bar)
        finally:
            bar.close()
        self._note_how_it_ran()
        for student, why in self.not_graded.items():
            self.results[student].reasons.append(f"not graded, because {why}; run autograde again to grade it")
            self.results[student].graded = False
        # students with nothing gradable (no notebook staged, so nbgrader never saw them) still get their
        # zero, as nbgrader gives a missing notebook; one nbgrader graded is never given a zero here, even
        # if their grade is gone from the gradebook (replaced during the run: the next run grades them)
        with_notebooks = {task["student"] for task in tasks}
        score_missing_as_zero(self.course, self.assignment,
                              [s for s in self.to_grade if s not in self.not_graded and s not in with_notebooks])
        regraded = [s for s in self.to_grade if s not in self.not_graded and s in self.before.submissions]
        for student, changes in changed_grades(self.course, self.assignment, self.before, regraded).items():
            self.results[student].changed = changes
        for student in regraded:
            self.results[student].regraded = True
        for student in self.to_grade:
            if student not in self.not_graded and self.ledger.graded(student) is None:
                try:
                    self.ledger.record(student, self.results[student].reasons)
                except OSError:  # not recorded: the next run grades them again, to the same zero
                    pass

    def _copy_gradebook(self) -> None:
        """The workers sanitize with a copy of the gradebook: only this process writes the real one."""
        try:
            if self.run_dir.exists():
                shutil.rmtree(self.run_dir)
            self.run_dir.mkdir(parents=True)
            shutil.copy(self.course.gradebook_path, self.gradebook_copy)
        except OSError as error:
            raise EnvironmentFault(f"nothing was graded, because {describe(error, self.run_dir) or error}; free "
                                   "some space and run it again") from None

    def _grade_as_results_come(self, tasks: list[dict], bar: ProgressBar) -> None:
        """Run the tasks; as soon as all of a student's notebooks ran, let nbgrader grade that student
        (in this process, while the workers go on with the next submissions)."""
        pending = {student: 0 for student in self.to_grade}
        for task in tasks:
            pending[task["student"]] += 1
        outcomes = self.executor.run_tasks(tasks) if tasks else []
        for task, outcome in outcomes:
            student = task["student"]
            self._take(task, outcome)
            pending[student] -= 1
            if pending[student] == 0 and student not in self.not_graded:
                why = grade_student(self, student)
                if why is None:
                    self.graded += 1
                else:  # reported; the class goes on
                    self.not_graded[student] = why
            bar.advance()

    def _take(self, task: dict, outcome) -> None:
        """What a worker sent back for one notebook, kept (its record on disk, the rest in the results)."""
        student = task["student"]
        if not isinstance(outcome, dict):  # a fault of the grader, not of the student: no grade for this student
            self.not_graded.setdefault(student, f"{task['notebook']}: the grader failed ({outcome})")
            return
        try:
            write_record(task, outcome)
        except OSError as error:  # the machine's fault: this student is not graded
            from pathlib import Path

            Path(task["record"]).unlink(missing_ok=True)
            self.not_graded.setdefault(student, describe(error, task["record"]) or f"the grader failed ({error})")
        # the failed hidden checks too: the report is the instructor's (feedback hides them, ``feedback/pages.py``)
        self.results[student].reasons += [f"{outcome['notebook']}: {f}"
                                          for f in outcome["findings"] + outcome.get("hidden_failures", [])]
        self.without_landlock += not outcome["landlock"]
        self.how_tested.update(outcome.get("tests", {}))
        self.results[student].seconds += outcome.get("seconds", 0.0)

    def _note_how_it_ran(self) -> None:
        if self.without_landlock:
            print(f"note: Landlock is not available here; {self.without_landlock} notebook(s) ran with the audit "
                  "hook as their only file isolation (see docs/threat-model.md)", file=sys.stderr)
        in_process = sorted(label for label, how in self.how_tested.items() if how == "in-process")
        if in_process:
            print(f"note: {len(in_process)} test cell(s) of {self.assignment} are plain nbgrader test cells, graded "
                  f"from what the student's process reported: {', '.join(in_process)} (tests that call student() "
                  "are graded outside it; see docs/threat-model.md)", file=sys.stderr)
