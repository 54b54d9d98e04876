"""Helpers for tests of kitgrade's commands: a small course made once, copies of it, and snapshots
of a folder tree that show whether a command changed anything on disk."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "grader_fixtures"
ASSIGNMENT = "sample_ex"


def snapshot(*folders: Path) -> dict:
    """Every file and folder under ``folders``: kind, content digest, mode (links are listed, not followed)."""
    state = {}
    for folder in folders:
        if not folder.exists():
            state[str(folder)] = "absent"
            continue
        for path in sorted([folder, *folder.rglob("*")]):
            if path.is_symlink():
                state[str(path)] = ("link", str(path.readlink()))
            elif path.is_dir():
                state[str(path)] = ("dir", path.stat().st_mode)
            elif path.is_file():
                state[str(path)] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode)
            else:
                state[str(path)] = ("other", path.stat().st_mode)
    return state


def copy_course(template: Path, destination: Path) -> Path:
    """A private copy of a course made by ``kitgrade init`` (its paths follow the copy)."""
    shutil.copytree(template, destination, symlinks=True)
    return destination


def make_course(root: Path) -> Path:
    """``kitgrade init`` of the sample exercises, with the sample assignment generated into release/
    (nbgrader's ``generate_assignment`` only: these tests need a released assignment, not its proof)."""
    from grader.cli import main as kitgrade
    from grader.course import Course
    from grader.commands.release import generate_release

    assert kitgrade(["init", str(root), "--course-id", "ad101", "--exercises", str(FIXTURES / "exercises")]) == 0
    generate_release(Course(root), ASSIGNMENT)
    return root
