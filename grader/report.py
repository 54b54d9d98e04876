"""The instructor's report of an autograde run: every student's score, and every reason."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .course import Course

#: How every output names a grade the gradebook holds whose submission is gone from ``submitted/``.
NO_LONGER_SUBMITTED = "in the gradebook but no longer submitted"


def final_score(submission) -> float:
    """A submission's score as nbgrader's own export computes it: points minus the late penalty."""
    return max(0.0, submission.score - (submission.late_submission_penalty or 0.0))


def collect_scores(course: Course, assignment: str, results: dict) -> None:
    """Fill in each result's score and maximum from the gradebook (nbgrader's numbers)."""
    with Gradebook(course.db_url, course.course_id) as gradebook:
        maximum = gradebook.find_assignment(assignment).max_score
        for student, result in results.items():
            result.max_score = maximum
            if not result.graded:
                continue
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                submission = None
            if submission is not None:
                result.score = final_score(submission)
                penalty = submission.late_submission_penalty or 0.0
                if penalty:
                    result.reasons.append(f"late: {penalty:g} point(s) deducted by the course's late policy "
                                          f"(raw score {submission.score:g})")
            else:
                result.score = 0.0
                result.reasons.append("no grade recorded by nbgrader")


def no_longer_submitted(course: Course, assignment: str) -> dict[str, str]:
    """Students with a submission of ``assignment`` in the gradebook and none in ``submitted/``, each
    with the sentence every output gives: the grade stays (it is the gradebook's), and it is said."""
    import warnings

    with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gradebook:
        warnings.simplefilter("ignore")
        try:
            recorded = {s.student.id for s in gradebook.find_assignment(assignment).submissions}
        except MissingEntry:
            return {}
    present = set(course.students_with("submitted", assignment))
    return {student: f"{NO_LONGER_SUBMITTED} ({course.path('submitted', student, assignment).relative_to(course.root)}"
                     f" is gone): the gradebook keeps the grade of an earlier run, and so do the exports"
            for student in sorted(recorded - present)}


def write_report(course: Course, assignment: str, results: dict) -> None:
    """Write ``reports/<assignment>.csv`` and ``.json``: this run's students updated, the others kept.

    A student the report knew and this run did not grade (``--student``, or a rerun) keeps their
    line; a student not graded because of a fault of the grader has no score, only the reason.
    """
    folder = course.path("reports")
    folder.mkdir(exist_ok=True)
    path = folder / f"{assignment}.json"
    entries = {}
    if path.exists():
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            entries = {}
    for r in results.values():
        # a student this run did not run again (already graded, unchanged) keeps the time it took
        seconds = getattr(r, "seconds", 0.0) or entries.get(r.student, {}).get("seconds", 0.0)
        entries[r.student] = {"score": r.score if r.graded else None, "max_score": r.max_score, "reasons": r.reasons,
                              "seconds": round(seconds, 2)}
    table = io.StringIO(newline="")
    writer = csv.writer(table)
    writer.writerow(["student", "score", "max_score", "reasons"])
    for student, entry in sorted(entries.items()):
        score = "" if entry["score"] is None else f"{entry['score']:g}"
        writer.writerow([student, score, f"{entry['max_score']:g}", " | ".join(entry["reasons"])])
    write_whole(folder / f"{assignment}.csv", table.getvalue())
    write_json(path, entries)


def write_whole(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a full disk or a stopped run leaves the previous file as it was."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(temporary, "w", newline="", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_json(path: Path, data) -> None:
    write_whole(path, json.dumps(data, indent=1))


def format_report(assignment: str, results: dict) -> str:
    """A plain-text table for the terminal."""
    submitted = sum(getattr(r, "submitted", True) for r in results.values())
    lines = [f"{assignment}: {submitted} submission(s)"]
    width = max([len(s) for s in results] + [7])
    for result in sorted(results.values(), key=lambda r: r.student):
        score = f"{result.score:>6g}" if result.graded else "   not graded"
        lines.append(f"  {result.student:<{width}}  {score} / {result.max_score:<6g}")
        for reason in result.reasons:
            lines.append(f"  {'':<{width}}    - {reason}")
    return "\n".join(lines)
