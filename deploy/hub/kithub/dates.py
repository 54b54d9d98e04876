"""Due dates and extensions: each course's ``due`` and ``extensions`` (class.json) into its gradebook, as
nbgrader keeps them (the assignment's ``duedate``, the submission's ``extension``); autograde then marks
late work and applies the course's ``late_penalty``.

Root runs ``apply_dates``; the gradebook is written by the course's grader account, which owns it
(``python -m kithub.dates COURSE_JSON`` in the course directory: ``main`` below).
"""
from __future__ import annotations

import datetime
import json
import sys
from dataclasses import asdict

from .accounts import as_account
from .errors import run
from .spec import ClassSpec


def apply_dates(spec: ClassSpec) -> None:
    """Each course's due dates and per-student extensions into its gradebook, as its grader account."""
    for course in spec.courses:
        run([str(spec.python), "-I", "-m", "kithub.dates", json.dumps(asdict(course))],
            **{**as_account(course.grader, spec), "cwd": str(course.directory(spec))})


def write_dates(course: dict, gradebook_url: str = "sqlite:///gradebook.db") -> None:
    """The course's dates into its gradebook (run as its grader, in the course directory)."""
    from nbgrader.api import Gradebook
    from nbgrader.utils import parse_utc

    with Gradebook(gradebook_url, course["course_id"]) as gradebook:
        for assignment in course["assignments"]:
            due = course["due"].get(assignment)
            gradebook.update_or_create_assignment(assignment, duedate=parse_utc(due) if due else None)
            for student, hours in course["extensions"].get(assignment, {}).items():
                gradebook.update_or_create_student(student)
                gradebook.update_or_create_submission(assignment, student, extension=datetime.timedelta(hours=hours))


def main(argv: list[str] | None = None) -> int:
    [course] = sys.argv[1:] if argv is None else argv
    write_dates(json.loads(course))
    return 0


if __name__ == "__main__":
    sys.exit(main())
