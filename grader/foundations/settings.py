"""The kit's own settings, read from the course's ``nbgrader_config.py`` like nbgrader's."""

from __future__ import annotations

import os

from traitlets import Bool, Float, Integer, List, Unicode
from traitlets.config import Configurable


#: Seconds a cell may run (``c.KitGrade.cell_timeout``, ``kitgrade check --timeout``, a new course's config).
CELL_TIMEOUT = 30.0


class KitGrade(Configurable):
    """Settings of the kit's grader (``c.KitGrade.<name> = ...`` in ``nbgrader_config.py``)."""

    workers = Integer(0, min=0, help="Worker processes for autograde; 0 means one per CPU core.").tag(config=True)
    cell_timeout = Float(CELL_TIMEOUT, min=0.1, help="Seconds a cell may run before it is interrupted.").tag(config=True)
    notebook_timeout = Float(300.0, min=1.0, help="Seconds a whole notebook may run; then it is stopped.").tag(config=True)
    memory_limit_mb = Integer(2048, min=64, help="Address-space cap of each grading process, in MiB.").tag(config=True)
    output_limit_bytes = Integer(200_000, min=0, help="Output kept per notebook, errors included; the rest is dropped.").tag(config=True)
    file_size_limit_mb = Integer(64, min=1, help="Largest file student code may write, in MiB.").tag(config=True)
    notebook_size_limit_mb = Integer(20, min=1, help="Largest submitted notebook file that is read at all, in MiB.").tag(config=True)
    data_files_limit = Integer(500, min=0, help="Most data files copied beside a notebook (from source/<assignment>/).").tag(config=True)
    data_size_limit_mb = Integer(100, min=0, help="Largest total size of those data files, in MiB.").tag(config=True)
    preload_modules = List(
        Unicode(), ["numpy", "numpy.testing", "math", "unittest", "matplotlib.pyplot", "autograd_core"],
        help="Modules imported once per worker before any submission, those of them an assignment's released "
             "notebooks (or the Python files beside them) import; they are guarded against tampering.",
    ).tag(config=True)
    protected_paths = List(
        Unicode(), [],
        help="Folders (besides the course) student code may never read or write: exercises with solutions, the exchange.",
    ).tag(config=True)
    scratch_size_limit_mb = Integer(512, min=1, help="Size of each notebook's own /tmp (a tmpfs), in MiB.").tag(config=True)
    scratch_files_limit = Integer(10_000, min=16, help="Files and folders each notebook may create in its /tmp.").tag(config=True)
    unsafe_no_sandbox = Bool(False, help="Grade without the bubblewrap sandbox (your own tests only).").tag(config=True)
    hide_hidden_tests_in_feedback = Bool(
        True, help="Feedback leaves the hidden tests out unless `feedback --show-hidden-tests` (False: shows them).",
    ).tag(config=True)


def preload_for(preload_modules: list[str], imports: list[str]) -> list[str]:
    """The modules a grading interpreter loads before any notebook of an assignment: those of
    ``c.KitGrade.preload_modules`` whose package what students are given of the assignment imports
    (``Course.imported_modules``). The others would cost every worker their start-up (matplotlib
    alone is a quarter of a second) and every plain test cell its guard's watch, for nothing. A
    module loaded later (a student's own import, or one only a hidden test makes) costs its time in
    the student's process and is not watched by the integrity guard, a speed bump only
    (docs/threat-model.md)."""
    imported = set(imports)
    return [name for name in preload_modules if name.split(".")[0] in imported]


def worker_count(requested: int | None, settings: KitGrade) -> int:
    """The worker processes of a run: ``--workers`` if given, else ``c.KitGrade.workers``; 0 is one per core."""
    chosen = settings.workers if requested is None else requested
    return chosen or default_workers()


def default_workers() -> int:
    """The machine's usable cores."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1
