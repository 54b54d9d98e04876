"""``release_feedback``: each student's feedback into nbgrader's exchange, where only they find it."""

from __future__ import annotations

import shutil

from ..course import Course


def release_feedback(course: Course, assignment: str, students: list[str] | None = None,
                     log_level: str = "ERROR") -> tuple[list[str], list[str]]:
    """``nbgrader release_feedback`` for every student with feedback (or ``students``).

    Returns the students whose feedback was released and those skipped: nbgrader names each
    released file by a hash of the submission's secret, which only a submission that came
    through the exchange has (not one collected from LMS downloads).
    """
    from nbgrader.apps.api import NbGraderAPI

    released, skipped = [], []
    for folder in sorted(course.path("feedback").glob(f"*/{assignment}")):
        student = folder.parent.name
        if students and student not in students:
            continue
        # the kit's autograde stages notebooks and timestamp only: the secret comes from the collected
        # submission (always the newest: a resubmission has a new secret)
        for name in ("submission_secret.txt", "timestamp.txt"):
            collected = course.path("submitted", student, assignment, name)
            if collected.is_file():
                shutil.copy(collected, folder / name)
        ready = (folder / "submission_secret.txt").is_file() and (folder / "timestamp.txt").is_file()
        (released if ready and list(folder.glob("*.html")) else skipped).append(student)
    if not released:
        return released, skipped
    others = [p.name for p in course.path("feedback").iterdir() if p.name not in released]
    api = NbGraderAPI(coursedir=course.coursedir(student_id_exclude=",".join(sorted(others))), config=course.config())
    api.log.setLevel(log_level)
    result = api.release_feedback(assignment)
    if not result.get("success"):
        raise RuntimeError(f"nbgrader release_feedback failed: {result.get('error') or result.get('log')}")
    return released, skipped
