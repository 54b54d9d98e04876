"""Which submissions a run grades: those in ``submitted/`` (or the students named), less those the
ledger holds as graded and unchanged (unless the run is forced)."""

from __future__ import annotations

from ..course import Course
from .ledger import Ledger


def submitted_students(course: Course, assignment: str) -> list[str]:
    submitted = course.path("submitted")
    if not submitted.exists():
        return []
    return sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir())


def pick(ledger: Ledger, students: list[str], results: dict, force: bool) -> list[str]:
    """The students to grade; each one kept from an earlier run gets the reasons recorded then."""
    to_grade = []
    for student in students:
        reasons = None if force else ledger.graded(student)
        if reasons is None:
            to_grade.append(student)
        else:  # graded as it is now by an earlier run: kept
            results[student].reasons += reasons
    return to_grade
