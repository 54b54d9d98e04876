"""A course directory in nbgrader's layout, read once per command, and the state commands check.

``Course`` holds nbgrader's configuration of the course (see ``course_config``: nbgrader's own
loading, checked) and answers from it: the course id, the gradebook, the folders of each step
(``CourseDirectory.source_directory`` and friends), the kit's settings. The configuration is read
once, when the ``Course`` is made; every caller gets its own copy to merge into.
"""

from __future__ import annotations

import copy
import json
import os
import re
import stat
from pathlib import Path

from course_files.student_versions import ensure_nbgrader_tools_on_path
from traitlets.config import Config

from .course_config import CONFIG_FILE, find_course_root, load_course_config
from .foundations.errors import UsageError
from .foundations.settings import KitGrade, preload_for

#: Notebook metadata key (in the instructor's source notebook) holding the kit's per-assignment policy.
POLICY_KEY = "kitgrade"
#: An import statement's modules (``import a.b as c, d``, ``from a.b import c``), read line by line
#: (a line that only looks like one, in a string, counts too: it costs time, never a grade).
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b|import[ \t]+([^#;\n]+))", re.MULTILINE)
#: Magics that import matplotlib (and NumPy) for the notebook.
_PLOTTING_MAGIC = re.compile(r"^[ \t]*%(matplotlib|pylab)\b", re.MULTILINE)


def modules_imported(source: str) -> set[str]:
    """The top-level modules a code cell's source imports."""
    names = set()
    for origin, listed in _IMPORT.findall(source.replace(";", "\n").replace(":", "\n")):  # ``try: import x``
        for part in ([origin] if origin else listed.split(",")):
            words = part.split()
            if words:
                names.add(words[0].split(".")[0].strip("()\\"))
    for magic in _PLOTTING_MAGIC.findall(source):
        names.update(["matplotlib", "numpy"] if magic == "pylab" else ["matplotlib"])
    return {name for name in names if name.isidentifier()}


def modules_imported_by_files(paths) -> set[str]:
    """The top-level modules the Python files ``paths`` import, from the first megabyte of each; a
    path that is not a regular file (a FIFO or a device named ``x.py``) is not read."""
    names: set[str] = set()
    for path in paths:
        try:
            handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if stat.S_ISREG(os.fstat(handle).st_mode):
                names |= modules_imported(os.read(handle, 1_000_000).decode("utf-8", errors="replace"))
        except OSError:
            pass
        finally:
            os.close(handle)
    return names


#: Where the kit keeps its own working files inside a course.
KIT_DIR = ".kitgrade"
#: nbgrader's steps, each a folder of the course named by ``CourseDirectory.<step>_directory``.
STEPS = ("source", "release", "submitted", "autograded", "feedback", "solution", "source_with_tests")

__all__ = ["CONFIG_FILE", "KIT_DIR", "POLICY_KEY", "Course", "ensure_nbgrader_tools_on_path"]


class Course:
    """A course directory: ``nbgrader_config.py``, the gradebook, ``source/``, ``release/``, ...

    ``Course(root)`` reads the course at ``root``; ``Course.find(None)`` finds it as nbgrader does
    (the working directory, or ``CourseDirectory.root`` of the user's nbgrader config).
    """

    def __init__(self, root: str | os.PathLike | None):
        self.root = find_course_root(root)
        self._config, self.config_files = load_course_config(self.root)
        self._settings = KitGrade(config=self._config)
        self._coursedir = self.coursedir()

    @classmethod
    def find(cls, root: str | os.PathLike | None) -> "Course":
        return cls(root)

    def __repr__(self) -> str:
        return f"Course({str(self.root)!r})"

    # ---- configuration -------------------------------------------------
    def config(self) -> Config:
        """nbgrader's configuration of this course (a copy: callers merge their own settings into it)."""
        return copy.deepcopy(self._config)

    def settings(self) -> KitGrade:
        """The kit's own settings of this course (``c.KitGrade``; defaults where not set)."""
        return self._settings

    @property
    def course_id(self) -> str:
        return self._coursedir.course_id

    @property
    def db_url(self) -> str:
        """The gradebook's URL: ``CourseDirectory.db_url`` (nbgrader's default: ``gradebook.db`` in the course)."""
        return self._coursedir.db_url

    @property
    def gradebook_path(self) -> Path | None:
        """The gradebook's file when it is sqlite (nbgrader's default), else None."""
        from sqlalchemy.engine import make_url

        url = make_url(self.db_url)
        if url.get_backend_name() != "sqlite" or not url.database:
            return None
        return Path(url.database)

    def coursedir(self, **overrides):
        """nbgrader's ``CourseDirectory`` of this course."""
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(config=self.config())
        for name, value in overrides.items():
            setattr(coursedir, name, value)
        return coursedir

    # ---- layout ----------------------------------------------------------
    def path(self, *parts: str) -> Path:
        """A path in the course; a first part naming an nbgrader step uses the configured folder name."""
        if parts and parts[0] in STEPS:
            parts = (getattr(self._coursedir, f"{parts[0]}_directory"), *parts[1:])
        return self.root.joinpath(*parts)

    def assignments(self) -> list[str]:
        """The assignments in ``source/``."""
        source = self.path("source")
        return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith(".")) if source.is_dir() else []

    def released_assignments(self) -> list[str]:
        release = self.path("release")
        return sorted(p.name for p in release.iterdir() if p.is_dir() and list(p.glob("*.ipynb"))) if release.is_dir() else []

    def source_notebooks(self, assignment: str) -> list[Path]:
        return sorted(self.path("source", assignment).glob("*.ipynb"))

    def students_with(self, step: str, assignment: str) -> list[str]:
        """Students with a folder for ``assignment`` in ``step`` (``submitted``, ``autograded``, ``feedback``)."""
        folder = self.path(step)
        return sorted(p.name for p in folder.iterdir() if (p / assignment).is_dir()) if folder.is_dir() else []

    def policy(self, assignment: str) -> dict:
        """The kit's per-assignment policy, read from the instructor's source notebooks.

        A source notebook may carry ``{"kitgrade": {"forbidden_imports": ["autograd_core"]}}``
        in its notebook metadata; the policies of an assignment's notebooks are merged.
        """
        forbidden: set[str] = set()
        for notebook in self.source_notebooks(assignment):
            try:
                meta = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {}).get(POLICY_KEY, {})
            except (OSError, UnicodeDecodeError, ValueError) as error:
                raise UsageError(f"{notebook}: the source notebook cannot be read ({type(error).__name__}: "
                                 f"{str(error)[:80]})") from None
            forbidden.update(meta.get("forbidden_imports", []))
        return {"forbidden_imports": sorted(forbidden)}

    def imported_modules(self, assignment: str) -> list[str]:
        """The top-level modules what students are given of ``assignment`` imports: its released
        notebooks' code cells and the Python files beside them in ``source/`` (helpers copied
        into each grading folder). Never what only a solution or a hidden test imports: the list
        decides what a grading interpreter loads first (``settings.preload_for``), which the
        student's process can see."""
        imports: set[str] = set()
        for notebook in self.source_notebooks(assignment):
            released = self.path("release", assignment, notebook.name)
            try:
                cells = json.loads(released.read_text(encoding="utf-8")).get("cells", [])
                imports.update(name for cell in cells if isinstance(cell, dict) and cell.get("cell_type") == "code"
                               for name in modules_imported("".join(cell.get("source", ""))))
            except (OSError, UnicodeDecodeError, ValueError, AttributeError, TypeError):
                continue  # not released yet, or unreadable: the release and autograde say so themselves
        imports |= modules_imported_by_files(sorted(self.path("source", assignment).rglob("*.py"))[:200])
        return sorted(imports)

    def preload(self, assignment: str) -> list[str]:
        """What a grading interpreter of ``assignment`` loads before any notebook (``settings.preload_for``
        of what students are given imports): one answer for the command's zygotes, its workers' and a
        cluster's."""
        return preload_for(self.settings().preload_modules, self.imported_modules(assignment))

    def protected_paths(self) -> list[str]:
        """Paths student code may never read or write while it is graded: the course, the folders its
        settings name, and the kit's own exercises (installed with it: solutions, hidden tests)."""
        return [str(self.root), *self.settings().protected_paths, *kit_exercise_paths()]

    # ---- the state a command acts on -----------------------------------------------------
    def require_assignment(self, assignment: str, released: bool = False) -> None:
        """Refuse an assignment that is not in ``source/`` (or, with ``released``, not released yet)."""
        known = self.assignments()
        if not self.path("source").is_dir():
            raise UsageError(f"{self.root} has no {self.path('source').name}/ folder, so no assignments; put each "
                             f"assignment in {self.path('source').name}/<name>/ (or run `kitgrade init`)")
        if assignment not in known:
            raise UsageError(f"no assignment {assignment!r} in {self.path('source')}; "
                             + (f"the course has: {', '.join(known)}" if known else "it holds none yet"))
        if released and assignment not in self.released_assignments():
            raise UsageError(f"{assignment} is not released yet (nothing in {self.path('release', assignment)}); "
                             f"run `kitgrade release {assignment}` first")

    def changed_since_release(self, assignment: str) -> list[str]:
        """Source notebooks edited after their student version was generated (the gradebook, which
        autograde grades against, was written at that release)."""
        changed = []
        for source in self.source_notebooks(assignment):
            released = self.path("release", assignment, source.name)
            if not released.is_file() or source.stat().st_mtime > released.stat().st_mtime:
                changed.append(source.name)
        return changed

    def require_students(self, assignment: str, students: list[str] | None) -> list[str]:
        """The students to grade: all with a submission, or those named (each must have one)."""
        submitted = self.students_with("submitted", assignment)
        if not submitted:
            raise UsageError(f"nothing to grade: {self.path('submitted')} holds no submission of {assignment}; "
                             f"run `kitgrade collect {assignment}` first")
        unknown = [s for s in students or [] if s not in submitted]
        if unknown:
            listed = ", ".join(submitted[:20]) + (f", ... ({len(submitted)} in all)" if len(submitted) > 20 else "")
            raise UsageError(f"no submission of {assignment} from {', '.join(map(repr, unknown))} in "
                             f"{self.path('submitted')}; submitted: {listed}")
        return list(dict.fromkeys(students)) if students else submitted


def kit_exercise_paths() -> list[str]:
    """Where the kit's own exercises are, installed with it (and, in a checkout, the folder that link names)."""
    import course_files

    exercises = course_files.exercises()
    return sorted({str(exercises), os.path.realpath(exercises)})
