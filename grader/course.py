"""A course directory in nbgrader's standard layout, and the kit's access to it."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from .settings import KitGrade

CONFIG_FILE = "nbgrader_config.py"
#: Notebook metadata key (in the instructor's source notebook) holding the kit's per-assignment policy.
POLICY_KEY = "kitgrade"
#: Where the kit keeps its own working files inside a course.
KIT_DIR = ".kitgrade"

CONFIG_TEMPLATE = '''\
# nbgrader configuration of the course {course_id!r}, written by `kitgrade init`.
import os

c = get_config()
here = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = here
c.CourseDirectory.course_id = {course_id!r}
# The gradebook: nbgrader's embedded sqlite default, kept in the course directory.
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")
c.Exchange.root = {exchange!r}

# Deleted test cells are put back from the gradebook (and run) rather than lost.
c.OverwriteCells.add_missing_cells = True
c.Execute.timeout = {timeout}

# The kit's own settings (see grader/settings.py).
c.KitGrade.workers = 0            # 0: one worker per CPU core
c.KitGrade.cell_timeout = {timeout}
c.KitGrade.memory_limit_mb = 2048
# Never readable by student code while it is graded (besides this course directory).
c.KitGrade.protected_paths = {protected!r}
'''


@dataclass
class Course:
    """A course directory: ``nbgrader_config.py``, ``gradebook.db``, ``source/``, ``release/``, ..."""

    root: Path

    def __post_init__(self):
        self.root = Path(self.root).resolve()

    # ---- configuration -------------------------------------------------
    def config(self) -> Config:
        """nbgrader's configuration of this course (the same one `nbgrader` itself reads)."""
        if not (self.root / CONFIG_FILE).exists():
            raise FileNotFoundError(f"{self.root} is not a course directory (no {CONFIG_FILE}); run `kitgrade init`")
        config = PyFileConfigLoader(CONFIG_FILE, path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
        return config

    def settings(self) -> KitGrade:
        """The kit's own settings of this course."""
        return KitGrade(config=self.config())

    @property
    def course_id(self) -> str:
        return self.config().CourseDirectory.course_id

    @property
    def db_url(self) -> str:
        return self.config().CourseDirectory.db_url

    @property
    def gradebook_path(self) -> Path:
        return Path(self.db_url[len("sqlite:///"):])

    def coursedir(self, **overrides):
        """nbgrader's ``CourseDirectory`` of this course."""
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(config=self.config())
        for name, value in overrides.items():
            setattr(coursedir, name, value)
        return coursedir

    # ---- layout ----------------------------------------------------------
    def path(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)

    def assignments(self) -> list[str]:
        """The assignments staged in ``source/``."""
        source = self.path("source")
        return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith(".")) if source.exists() else []

    def source_notebooks(self, assignment: str) -> list[Path]:
        return sorted(self.path("source", assignment).glob("*.ipynb"))

    def policy(self, assignment: str) -> dict:
        """The kit's per-assignment policy, read from the instructor's source notebooks.

        A source notebook may carry ``{"kitgrade": {"forbidden_imports": ["autograd_core"]}}``
        in its notebook metadata; the policies of an assignment's notebooks are merged.
        """
        forbidden: set[str] = set()
        for notebook in self.source_notebooks(assignment):
            meta = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {}).get(POLICY_KEY, {})
            forbidden.update(meta.get("forbidden_imports", []))
        return {"forbidden_imports": sorted(forbidden)}

    def protected_paths(self) -> list[str]:
        """Paths student code may never read or write while it is graded."""
        return [str(self.root), *self.settings().protected_paths]


def ensure_nbgrader_tools_on_path() -> None:
    """nbgrader runs ``alembic`` by name when it creates a gradebook; find it beside this Python."""
    bin_dir = os.path.dirname(os.path.abspath(__import__("sys").executable))
    if shutil.which("alembic") is None and os.path.exists(os.path.join(bin_dir, "alembic")):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def init_course(root: Path, course_id: str, exercises: Path, exchange: Path | None = None,
                timeout: float = 30.0) -> Course:
    """Create a course in nbgrader's standard layout and stage every exercise of ``exercises``.

    Each sub-folder of ``exercises`` holding at least one ``.ipynb`` becomes an assignment in
    ``source/<folder>/`` (with the files beside the notebooks). The gradebook is created empty.

    >>> init_course(Path("course"), "ad101", Path("exercises"))  # doctest: +SKIP
    """
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    exchange = Path(exchange).resolve() if exchange else root / "exchange"
    config_path = root / CONFIG_FILE
    if not config_path.exists():
        protected = [str(Path(exercises).resolve()), str(exchange)]
        config_path.write_text(CONFIG_TEMPLATE.format(course_id=course_id, exchange=str(exchange), timeout=timeout,
                                                      protected=protected))
    exchange.mkdir(parents=True, exist_ok=True)
    for name in ("source", "release", "submitted", "autograded", "feedback"):
        (root / name).mkdir(exist_ok=True)
    for assignment in sorted(Path(exercises).iterdir()) if Path(exercises).exists() else []:
        if not assignment.is_dir() or assignment.name.startswith((".", "_")) or not list(assignment.glob("*.ipynb")):
            continue
        dest = root / "source" / assignment.name
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(assignment, dest, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    course = Course(root)
    from nbgrader.api import Gradebook

    ensure_nbgrader_tools_on_path()
    with Gradebook(course.db_url, course.course_id) as gradebook:
        for assignment in course.assignments():
            gradebook.update_or_create_assignment(assignment)
    os.makedirs(root / KIT_DIR, exist_ok=True)
    return course
