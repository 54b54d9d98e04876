"""Grade one notebook on the spot, without touching the gradebook (``release`` proofs and ``check``)."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from nbgrader import utils as nbgrader_utils

from ..autograde.executors import stop_soon
from ..sandbox.policy import SandboxPolicy
from ..foundations.stop_signals import stops_deferred
from ..sandbox import spare_zygotes, workers
from ..foundations.settings import KitGrade
from ..foundations.speed import before_forking_workers


class LocalGrader:
    """A one-worker process that grades notebooks on the spot (``with LocalGrader() as grader:``).

    The worker holds the zygote (the clean interpreter student code is forked from), so the calling
    process (the instructor's command, or a test run) never gets an IPython shell, preloaded
    modules or a changed environment of its own; notebooks graded with one ``LocalGrader`` share
    its start-up cost. Given the notebooks' ``forbidden_imports``, the worker starts its zygote
    at once.

    In ``kitgrade check``, which started a zygote first thing (``grader/sandbox/spare_zygotes.py``),
    the worker is forked from the command and adopts it, as ``autograde``'s local workers do: no
    forkserver importing the worker's modules again (a second of a student's wait). Anywhere else
    (the release proof, a test run) it comes from the forkserver.
    """

    def __init__(self, preload=None, forbidden_imports=None):
        self.preload = list(KitGrade().preload_modules if preload is None else preload)
        self.forbidden_imports = None if forbidden_imports is None else list(forbidden_imports)
        self.pool = None

    def __enter__(self) -> "LocalGrader":
        forking = spare_zygotes.forking_now()
        if forking:
            before_forking_workers()
        else:
            workers.start_forkserver()  # the worker's modules imported once, the grader's speed tricks first
        try:
            self.pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context(
                "fork" if forking else "forkserver"), initializer=workers.init_worker,
                initargs=(self.preload, os.getpid(), self.forbidden_imports))
            try:
                with stops_deferred(), spare_zygotes.forking():  # its worker started (and known to the
                    self.pool.submit(int)  # pool) before a Ctrl-C counts
            except BaseException:  # stopped as it ends: ``__exit__`` will not run
                spare_zygotes.kill()
                stop_soon(self.pool)
                raise
        finally:
            spare_zygotes.let_go()  # (the worker holds the zygote it adopted)
        return self

    def __exit__(self, exc_type, *exc_info) -> None:
        if exc_type is None:
            self.pool.submit(workers.close_zygotes).result()
            self.pool.shutdown()
        else:  # stopped (Ctrl-C) or failed: nothing more to wait for
            # first, the adopted zygote (this process's child, tied to it by bubblewrap) with the
            # student's process it runs: its worker, waiting for that process, then ends at once
            spare_zygotes.kill()
            stop_soon(self.pool)

    def execute_and_score(self, nb, policy: SandboxPolicy, data_files: dict[str, bytes] | None = None):
        """Execute ``nb`` in a sandbox and score its autograded test cells like nbgrader.

        Returns ``(executed notebook, NotebookResult)``.
        """
        return self.pool.submit(_execute_and_score, nb, policy, data_files or {}).result()


@dataclass
class CellResult:
    """The outcome of one autograded test cell."""

    grade_id: str
    score: float
    max_score: float
    error: str = ""
    trusted: bool = True

    @property
    def passed(self) -> bool:
        return self.score == self.max_score


@dataclass
class NotebookResult:
    """The autograded test cells of one notebook, and what went wrong while it ran."""

    tests: list[CellResult] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    hidden_failures: list[str] = field(default_factory=list)  # the instructor's alone (``ExecutionReport``)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)


def _execute_and_score(nb, policy: SandboxPolicy, data_files: dict[str, bytes]):
    from ..notebook.notebook_chains import keep_warnings_harmless
    from ..notebook.notebook_outputs import gate_notebook

    nb, report = workers.grade_in_sandbox(nb, policy, data_files)
    result = NotebookResult(findings=report.findings + gate_notebook(nb) + keep_warnings_harmless(nb),
                            hidden_failures=list(report.hidden_failures))
    for cell in nb.cells:
        if cell.cell_type == "code" and nbgrader_utils.is_grade(cell) and not nbgrader_utils.is_solution(cell):
            score, max_score = nbgrader_utils.determine_grade(cell)
            errors = [f"{o.ename}: {o.evalue}".rstrip(": ") for o in cell.outputs if o.output_type == "error"]
            grade_id = cell.metadata.nbgrader["grade_id"]
            result.tests.append(CellResult(grade_id, float(score or 0), float(max_score), errors[0] if errors else "",
                                           trusted=f"cell {grade_id!r}" in report.trusted_tests))
    return nb, result
