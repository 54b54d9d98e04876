"""``init``: a new course in nbgrader's layout with the kit's exercises in ``source/``; never over work.

``init`` makes a course in a new or empty folder, from the kit's own exercises (installed with it,
``kit_exercises``) or another folder of them. On an existing course, or in a folder that
already holds files, it refuses and says why; with ``force`` it adds the exercises beside what is
there: a new assignment is copied, a file of an already staged one is updated only while it is
still the copy ``init`` made (its digest is kept in ``.kitgrade/staged_exercises.json``), and a
file the instructor changed is kept and reported. ``nbgrader_config.py`` is written once, never
rewritten; options that contradict an existing course (another course id or exchange) are errors.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from course_files import IGNORED

from ..course import CONFIG_FILE, KIT_DIR, Course, ensure_nbgrader_tools_on_path
from ..foundations.errors import UsageError
from ..foundations.settings import CELL_TIMEOUT

DEFAULT_COURSE_ID = "autograd-kit"
#: Digests of the exercise files as ``init`` copied them (relative to the course), to tell them from edits.
MANIFEST = f"{KIT_DIR}/staged_exercises.json"

CONFIG_TEMPLATE = '''\
# nbgrader configuration of the course {course_id!r}, written by `kitgrade init`.
# Paths are taken from where this file is, so the course folder can be moved.
import os

c = get_config()
here = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = here
c.CourseDirectory.course_id = {course_id!r}
# The gradebook: nbgrader's embedded sqlite default, kept in the course directory.
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "gradebook.db")
c.Exchange.root = {exchange}

# Deleted test cells are put back from the gradebook (and run) rather than lost.
c.OverwriteCells.add_missing_cells = True
c.Execute.timeout = {timeout}

# The kit's own settings (see grader/foundations/settings.py).
c.KitGrade.workers = 0            # 0: one worker per CPU core
c.KitGrade.cell_timeout = {timeout}
c.KitGrade.memory_limit_mb = 2048
# Never readable by student code while it is graded (besides this course directory).
c.KitGrade.protected_paths = [{exercises!r}, c.Exchange.root]
'''


@dataclass
class InitResult:
    course: Course
    created: bool
    added: list[str] = field(default_factory=list)      # assignments copied in
    updated: list[str] = field(default_factory=list)    # files replaced by a newer exercise
    kept: list[str] = field(default_factory=list)       # files the instructor changed, left as they are


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kit_exercises() -> Path:
    """The kit's own exercises, installed with it (``course_files``): what ``init`` stages by default."""
    import course_files

    return course_files.exercises()


def exercise_folders(exercises: Path) -> list[Path]:
    """The assignments of an exercises folder: each sub-folder holding a notebook."""
    return [p for p in sorted(exercises.iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))
            and list(p.glob("*.ipynb"))]


def check_init(root: Path, course_id: str | None, exercises: Path, exchange: Path | None, force: bool) -> None:
    """Refuse, before anything is written, what ``init`` must not do."""
    if not exercises.is_dir():
        raise UsageError(f"{exercises}: no such folder of exercises (--exercises: a folder with one folder per assignment)")
    if not exercise_folders(exercises):
        raise UsageError(f"{exercises} holds no exercises (expected one folder per assignment, each with a .ipynb)")
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} is a file; init needs a new or empty folder")
    if (root / CONFIG_FILE).exists():
        existing = Course(root)
        if course_id is not None and course_id != existing.course_id:
            raise UsageError(f"{root} is already the course {existing.course_id!r}; --course-id {course_id!r} would "
                             f"contradict it (to rename the course, edit CourseDirectory.course_id in {CONFIG_FILE})")
        configured = existing.config().Exchange.get("root")
        if exchange is not None and not (isinstance(configured, str) and Path(configured).resolve() == exchange.resolve()):
            current = configured if isinstance(configured, str) else "nbgrader's default"
            raise UsageError(f"{root} is already a course (its exchange: {current}); --exchange applies to a new "
                             f"course only (edit Exchange.root in {CONFIG_FILE} to change it)")
        if not force:
            raise UsageError(f"{root} is already a course ({existing.course_id!r}); nothing changed. To add or update "
                             "the exercises in its source/, run init again with --force (files you edited are kept)")
        return
    if root.is_dir() and any(root.iterdir()) and not force:
        names = sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir())
        shown = ", ".join(names[:6]) + (f", ... ({len(names)} in all)" if len(names) > 6 else "")
        raise UsageError(f"{root} is not empty ({shown}) and is not a course; nothing written. Choose a new folder, "
                         "or pass --force to make the course beside what is there (nothing is overwritten)")


def init_course(root: Path, course_id: str | None, exercises: Path, *, exchange: Path | None = None,
                timeout: float = CELL_TIMEOUT, force: bool = False) -> InitResult:
    """Make (or, with ``force``, add exercises to) a course in nbgrader's layout.

    >>> init_course(Path("course"), "ad101", Path("exercises"))  # doctest: +SKIP
    """
    root, exercises = Path(root).resolve(), Path(exercises).resolve()
    exchange = Path(exchange).resolve() if exchange else None
    check_init(root, course_id, exercises, exchange, force)
    created = not (root / CONFIG_FILE).exists()
    root.mkdir(parents=True, exist_ok=True)
    if created:
        course_id = course_id or DEFAULT_COURSE_ID
        exchange_expr = repr(str(exchange)) if exchange else 'os.path.join(here, "exchange")'
        (root / CONFIG_FILE).write_text(CONFIG_TEMPLATE.format(course_id=course_id, exchange=exchange_expr,
                                                               timeout=timeout, exercises=str(exercises)))
    course = Course(root)
    exchange_root = course.config().Exchange.get("root")
    if created and isinstance(exchange_root, str):
        Path(exchange_root).mkdir(parents=True, exist_ok=True)
    for step in ("source", "release", "submitted", "autograded", "feedback"):
        course.path(step).mkdir(exist_ok=True)
    result = InitResult(course, created)
    stage_exercises(course, exercises, result)
    from nbgrader.api import Gradebook

    ensure_nbgrader_tools_on_path()
    with Gradebook(course.db_url, course.course_id) as gradebook:
        for assignment in course.assignments():
            gradebook.update_or_create_assignment(assignment)
    return result


def stage_exercises(course: Course, exercises: Path, result: InitResult) -> None:
    """Copy each exercise into ``source/``; files the instructor changed are kept and reported."""
    manifest_path = course.root / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    for folder in exercise_folders(exercises):
        destination = course.path("source", folder.name)
        is_new = not destination.exists()
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if not path.is_file() or path.is_symlink() or any(part in IGNORED for part in relative.parts):
                continue
            target = destination / relative
            key = str(target.relative_to(course.root))
            digest = _digest(path)
            if target.exists():
                current = _digest(target)
                if current == digest:
                    manifest[key] = digest
                    continue
                if manifest.get(key) != current:  # not the copy init made: the instructor's work
                    result.kept.append(key)
                    continue
                result.updated.append(key)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
            manifest[key] = digest
        if is_new:
            result.added.append(folder.name)
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    os.makedirs(course.root / KIT_DIR, exist_ok=True)
