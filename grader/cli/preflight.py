"""Before a command writes anything: its course found, and every place it writes checked."""

from __future__ import annotations

import os
from pathlib import Path

from ..course import Course
from ..foundations.faults import require_gradebook, require_writable


def find_course(args) -> Course:
    """The course, with the working directory moved into it: nbgrader resolves some settings
    (``IncludeHeaderFooter.header``, ...) from the working directory, as when run in the course."""
    course = Course.find(args.course)
    os.chdir(course.root)
    args.found_course = course  # a fault that stops the command halfway names this course's files
    return course


def will_write(course: Course, command: str, *places: Path, gradebook: str = "write") -> None:
    """Before anything is written: the places the command writes can be written, and the gradebook
    can be read (``gradebook="read"``) or written, neither damaged nor locked by another process."""
    book = course.gradebook_path
    require_writable(command, *places, *([book] if book is not None and gradebook == "write" else []))
    require_gradebook(book, write=gradebook == "write")
