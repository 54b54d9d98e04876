"""Grade one notebook on the spot, without touching the gradebook (``release`` proofs and ``check``)."""

from __future__ import annotations

import multiprocessing
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader import utils as nbgrader_utils

from .executor import execute_notebook
from .sandbox import SandboxPolicy, Template
from .settings import KitGrade

class LocalGrader:
    """A one-worker process that grades notebooks on the spot (``with LocalGrader() as grader:``).

    The worker holds the template interpreter, so the calling process (the instructor's command,
    or a test run) never gets an IPython shell, preloaded modules or a changed environment of its
    own; notebooks graded with one ``LocalGrader`` share its start-up cost.
    """

    def __init__(self, preload=None):
        self.preload = list(KitGrade().preload_modules if preload is None else preload)
        self.pool = None

    def __enter__(self) -> "LocalGrader":
        self.pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("forkserver"),
                                        initializer=_init_local_worker, initargs=(self.preload,))
        return self

    def __exit__(self, *exc_info) -> None:
        self.pool.shutdown()

    def execute_and_score(self, nb, policy_options: dict, timeout: float, data_dir: Path | None = None):
        """Execute ``nb`` in a sandbox and score its autograded test cells like nbgrader.

        Returns ``(executed notebook, NotebookResult)``.
        """
        return self.pool.submit(_execute_and_score, nb, policy_options, timeout, data_dir).result()


_LOCAL_TEMPLATE: list[Template] = []


def _init_local_worker(preload) -> None:
    _LOCAL_TEMPLATE.append(Template(preload))


@dataclass
class CellResult:
    """The outcome of one autograded test cell."""

    grade_id: str
    score: float
    max_score: float
    error: str = ""

    @property
    def passed(self) -> bool:
        return self.score == self.max_score


@dataclass
class NotebookResult:
    """The autograded test cells of one notebook, and what went wrong while it ran."""

    tests: list[CellResult] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)


#: At most this much of a notebook's folder is copied beside it into the sandbox.
DATA_FILES_LIMIT = (500, 100 * 1024 * 1024)


def copy_data_files(folder: Path, scratch: Path) -> None:
    """Copy the files beside a notebook (data it may read) into its scratch folder, within limits."""
    count, size = 0, 0
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or path.suffix == ".ipynb" or any(part.startswith(".") for part in relative.parts):
            continue
        count, size = count + 1, size + path.stat().st_size
        if count > DATA_FILES_LIMIT[0] or size > DATA_FILES_LIMIT[1]:
            break
        target = scratch / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)


def _execute_and_score(nb, policy_options: dict, timeout: float, data_dir: Path | None = None):
    from .autograde import keep_warnings_harmless

    scratch = tempfile.mkdtemp(prefix="kitgrade-")
    try:
        if data_dir is not None:
            copy_data_files(Path(data_dir), Path(scratch))
        report = execute_notebook(_LOCAL_TEMPLATE[0], nb, SandboxPolicy(scratch_dir=scratch, **policy_options), timeout)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result = NotebookResult(findings=report.findings + keep_warnings_harmless(nb))
    for cell in nb.cells:
        if cell.cell_type == "code" and nbgrader_utils.is_grade(cell) and not nbgrader_utils.is_solution(cell):
            score, max_score = nbgrader_utils.determine_grade(cell)
            errors = [f"{o.ename}: {o.evalue}".rstrip(": ") for o in cell.outputs if o.output_type == "error"]
            result.tests.append(CellResult(cell.metadata.nbgrader["grade_id"], float(score or 0), float(max_score),
                                           errors[0] if errors else ""))
    return nb, result
