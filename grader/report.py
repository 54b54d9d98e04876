"""The instructor's report of an autograde run: every student's score, and every reason."""

from __future__ import annotations

import csv
import json

from nbgrader.api import Gradebook, MissingEntry

from .course import Course


def collect_scores(course: Course, assignment: str, results: dict) -> None:
    """Fill in each result's score and maximum from the gradebook (nbgrader's numbers)."""
    with Gradebook(course.db_url, course.course_id) as gradebook:
        maximum = gradebook.find_assignment(assignment).max_score
        for student, result in results.items():
            result.max_score = maximum
            try:
                result.score = gradebook.find_submission(assignment, student).score
            except MissingEntry:
                result.score = 0.0
                result.reasons.append("no grade recorded by nbgrader")


def write_report(course: Course, assignment: str, results: dict) -> None:
    """Write ``reports/<assignment>.csv`` and ``.json``."""
    folder = course.path("reports")
    folder.mkdir(exist_ok=True)
    with open(folder / f"{assignment}.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "score", "max_score", "reasons"])
        for result in sorted(results.values(), key=lambda r: r.student):
            writer.writerow([result.student, f"{result.score:g}", f"{result.max_score:g}", " | ".join(result.reasons)])
    with open(folder / f"{assignment}.json", "w", encoding="utf-8") as handle:
        json.dump({r.student: {"score": r.score, "max_score": r.max_score, "reasons": r.reasons}
                   for r in results.values()}, handle, indent=1)


def format_report(assignment: str, results: dict) -> str:
    """A plain-text table for the terminal."""
    lines = [f"{assignment}: {len(results)} submission(s)"]
    width = max([len(s) for s in results] + [7])
    for result in sorted(results.values(), key=lambda r: r.student):
        lines.append(f"  {result.student:<{width}}  {result.score:>6g} / {result.max_score:<6g}")
        for reason in result.reasons:
            lines.append(f"  {'':<{width}}    - {reason}")
    return "\n".join(lines)
