"""Each exercise as a student receives it, made by nbgrader's own ``generate_assignment``.

    python -m course_files.student_versions          # (re)make course_files/student/ if its exercises changed
    python -m course_files.student_versions --check  # exit 1 if it is missing or out of date

nbgrader's ``GenerateAssignment`` converter runs on a throwaway course holding the exercises: the
solutions become ``raise NotImplementedError()`` / "YOUR ANSWER HERE", the hidden tests are
removed, the cells are locked and checksummed, exactly as ``kitgrade release`` releases them.
Only nbgrader's defaults apply (no ``nbgrader_config.py`` of the machine is read), so the result
is the same everywhere. ``SOURCES.json`` records the digest of every exercise file it was made
from: a copy whose digests match is up to date and is never made again (a built package always
matches; in a checkout, editing an exercise makes it stale).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from . import IGNORED

SOURCES = "SOURCES.json"
LOCK = ".student-versions.lock"
NBGRADER = "nbgrader>=0.9,<0.10"


def ensure_nbgrader_tools_on_path() -> None:
    """nbgrader runs ``alembic`` by name when it creates a gradebook; find it beside this Python
    (a venv's ``bin/``, not on ``PATH`` when the venv is not activated)."""
    bin_dir = os.path.dirname(os.path.abspath(sys.executable))
    if shutil.which("alembic") is None and os.path.exists(os.path.join(bin_dir, "alembic")):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def _exercise_folders(exercises: Path) -> list[Path]:
    from . import exercise_folders

    return exercise_folders(exercises)


def _files(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.rglob("*")) if p.is_file()
            and not any(part in IGNORED for part in p.relative_to(folder).parts)]


def source_digests(exercises: Path) -> dict[str, str]:
    """``{"<assignment>/<file>": sha256}`` of every file of every exercise."""
    return {f"{folder.name}/{path.relative_to(folder).as_posix()}": hashlib.sha256(path.read_bytes()).hexdigest()
            for folder in _exercise_folders(exercises) for path in _files(folder)}


#: The files' stat signatures (``_signature``) found up to date in this process: a copy whose
#: exercise files and record have not changed since is not hashed again (every ``exercise_list``
#: asks, and hashing them all took longer than the rest of a ``kitgrade check``'s start).
_VERIFIED: set[tuple] = set()


def _signature(exercises: Path, student: Path) -> tuple | None:
    """What says that no file changed: each exercise file's and the record's path, time and size."""
    try:
        files = [student / SOURCES] + [path for folder in _exercise_folders(exercises) for path in _files(folder)]
        return tuple((str(path), stat.st_mtime_ns, stat.st_size) for path in files for stat in [path.stat()])
    except OSError:
        return None


def up_to_date(exercises: Path, student: Path) -> bool:
    try:
        made_from = json.loads((student / SOURCES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return made_from == source_digests(exercises)


def ensure_student_versions(exercises: Path, student: Path) -> Path:
    """``student``, made from ``exercises`` first if it is missing or out of date (checked by the
    files' digests, once a process for files that have not changed since)."""
    signature = _signature(exercises, student)
    if signature is not None and signature in _VERIFIED:
        return student
    if up_to_date(exercises, student):
        if signature is not None:
            _VERIFIED.add(signature)
        return student
    try:
        lock = open(student.parent / LOCK, "a")
    except OSError as error:  # an installed package is never out of date: one that is was changed by hand
        raise RuntimeError(f"the student versions in {student} do not match the exercises beside them and cannot be "
                           f"made again there ({error.strerror}); reinstall the kit") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be making them right now
        if not up_to_date(exercises, student):
            make_student_versions(exercises, student)
    return student


def make_student_versions(exercises: Path, student: Path) -> None:
    """Write every exercise's student version into ``student`` (replacing what is there, whole)."""
    try:
        from nbgrader.converters import GenerateAssignment
        from nbgrader.coursedir import CourseDirectory
        from traitlets.config import Config
    except ImportError:
        raise RuntimeError(f"making the exercises' student versions (course_files/student/) needs nbgrader: pip install "
                           f"'{NBGRADER}'") from None
    ensure_nbgrader_tools_on_path()
    digests = source_digests(exercises)
    with tempfile.TemporaryDirectory(prefix="student-versions-") as temporary:
        course = Path(temporary)
        config = Config()
        config.CourseDirectory.root = str(course)
        config.CourseDirectory.db_url = f"sqlite:///{course / 'gradebook.db'}"
        for folder in _exercise_folders(exercises):
            shutil.copytree(folder, course / "source" / folder.name, ignore=shutil.ignore_patterns(*IGNORED))
            coursedir = CourseDirectory(config=config)
            coursedir.assignment_id = folder.name
            converter = GenerateAssignment(coursedir=coursedir, config=config)
            converter.log.setLevel("ERROR")
            converter.force = True
            converter.start()
        made = course / "release"
        (made / SOURCES).write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        staged = Path(tempfile.mkdtemp(prefix=".student-", dir=student.parent))
        shutil.copytree(made, staged, dirs_exist_ok=True)
        staged.chmod(0o755)  # (mkdtemp's folder is the owner's alone)
        old = student.with_name(student.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if student.exists():
            student.rename(old)
        staged.rename(student)
        shutil.rmtree(old, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    from . import STUDENT, exercises, root

    parser = argparse.ArgumentParser(prog="python -m course_files.student_versions", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the student versions are missing or out of date")
    args = parser.parse_args(argv)
    student = root() / STUDENT
    if args.check:
        fresh = up_to_date(exercises(), student)
        print(f"{student}: " + ("up to date" if fresh else "missing or out of date: python -m course_files.student_versions"))
        return 0 if fresh else 1
    ensure_student_versions(exercises(), student)
    print(f"{student}: up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
