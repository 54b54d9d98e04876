"""The instructor's report of an autograde run: every student's score, and every reason.

A score is nbgrader's (the gradebook's); where written answers still wait for a manual grade
(``grader.notebook.manual_grades``) the report says how many points wait, and that the score is not final.
"""

from __future__ import annotations

import csv
import io
import json
import warnings

from nbgrader.api import Gradebook, MissingEntry

from ..foundations.atomic import write_json, write_whole
from ..course import Course
from ..foundations.faults import describe
from ..notebook.manual_grades import awaiting_in, kept_for_review_in, points
from ..foundations.student_text import for_spreadsheet, for_terminal
from .ledger import Ledger
from .results import ReportNotWritten, StudentResult

#: How every output names a grade the gradebook holds whose submission is gone from ``submitted/``.
NO_LONGER_SUBMITTED = "in the gradebook but no longer submitted"


def final_score(submission) -> float:
    """A submission's score as nbgrader's own export computes it: points minus the late penalty."""
    return max(0.0, submission.score - (submission.late_submission_penalty or 0.0))


def collect_scores(course: Course, assignment: str, results: dict) -> None:
    """Fill in each result's score, maximum and waiting answers from the gradebook (nbgrader's numbers)."""
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
                result.awaiting_manual = [a.as_dict() for a in awaiting_in(submission)]
                result.manual_kept = kept_for_review_in(submission)
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


def finish_report(run) -> dict[str, StudentResult]:
    """The last step of a run: every score read from the gradebook, the report written; the results."""
    course, assignment, results = run.course, run.assignment, run.results
    # a grade whose submission is gone stays (it is the gradebook's), and the report says so
    for student, why in no_longer_submitted(course, assignment).items():
        results[student] = StudentResult(student, reasons=[why], submitted=False)
    collect_scores(course, assignment, results)
    try:
        course.path("reports").mkdir(exist_ok=True)
        write_json(course.path("reports", f"{assignment}-tests.json"), dict(sorted(run.how_tested.items())))
        write_report(course, assignment, results)
    except OSError as error:
        raise ReportNotWritten(f"the grades are in the gradebook, but the report could not be written, because "
                               f"{describe(error, course.path('reports')) or error}; once that is put right, run "
                               f"`kitgrade autograde {assignment}` again (it grades no one again, and writes the "
                               "report)", results) from None
    return results


def write_report(course: Course, assignment: str, results: dict) -> None:
    """Write ``reports/<assignment>.csv`` and ``.json``: this run's students updated, the others kept.

    A student the report knew and this run did not grade (``--student``, or a rerun) keeps their
    line; a student not graded because of a fault of the grader has no score, only the reason.
    """
    path = course.path("reports", f"{assignment}.json")
    entries = {}
    if path.exists():
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            entries = {}
    for r in results.values():
        # a student this run did not run again (already graded, unchanged) keeps the time it took
        seconds = getattr(r, "seconds", 0.0) or entries.get(r.student, {}).get("seconds", 0.0)
        entries[r.student] = entry(r.score if r.graded else None, r.max_score, r.reasons, r.awaiting_manual, seconds)
    write_entries(course, assignment, entries)


def entry(score: float | None, max_score: float, reasons: list[str], awaiting: list[dict], seconds: float) -> dict:
    """One student's line of the report. ``score`` is nbgrader's (None: not graded); ``awaiting_manual``
    lists the answers still waiting for a manual grade, whose points the score counts as 0, and
    ``final`` says whether the score is the final one (graded, nothing waiting)."""
    return {"score": score, "max_score": max_score, "reasons": list(reasons),
            "awaiting_manual": list(awaiting), "awaiting_manual_points": points(awaiting),
            "final": score is not None and not awaiting, "seconds": round(seconds, 2)}


def write_entries(course: Course, assignment: str, entries: dict) -> None:
    """Write ``reports/<assignment>.json`` and ``.csv`` from the report's entries."""
    folder = course.path("reports")
    folder.mkdir(exist_ok=True)
    table = io.StringIO(newline="")
    writer = csv.writer(table)
    writer.writerow(["student", "score", "max_score", "awaiting_manual_points", "reasons"])
    for student, item in sorted(entries.items()):
        score = "" if item["score"] is None else f"{item['score']:g}"
        waiting = item.get("awaiting_manual_points") or 0
        row = [student, score, f"{item['max_score']:g}", f"{waiting:g}" if waiting else "", " | ".join(item["reasons"])]
        writer.writerow([for_spreadsheet(for_terminal(cell)) for cell in row])  # student text: never a formula or an escape
    write_whole(folder / f"{assignment}.csv", table.getvalue())
    write_json(folder / f"{assignment}.json", entries)


#: why the score of a student whose grading stopped halfway is not shown (the ledger's mark, see ``Ledger``)
HALFWAY = "a grading stopped halfway (the machine failed or the run was killed); run autograde again to grade it"


def refresh_report(course: Course, assignment: str) -> dict:
    """The report with every graded student's score and waiting answers read again from the gradebook
    (a grader may have given manual grades since autograde wrote it); rewritten if anything changed."""
    path = course.path("reports", f"{assignment}.json")
    try:
        entries = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(entries, dict) or not entries:
        return {}
    fresh, ledger = {}, Ledger(course, assignment)
    with Gradebook(course.db_url, course.course_id) as gradebook:
        try:
            maximum = gradebook.find_assignment(assignment).max_score
        except MissingEntry:
            return entries
        for student, item in entries.items():
            score = item.get("score")
            awaiting = item.get("awaiting_manual", [])
            if score is not None and ledger.unfinished(student):  # what the gradebook holds is part of a grading
                score, awaiting = None, []
                reasons = [r for r in item.get("reasons", []) if HALFWAY not in r]
                item = {**item, "reasons": [*reasons, f"not graded, because {HALFWAY}"]}
            if score is not None:
                try:
                    submission = gradebook.find_submission(assignment, student)
                    score, awaiting = final_score(submission), [a.as_dict() for a in awaiting_in(submission)]
                except MissingEntry:
                    pass
            fresh[student] = entry(score, maximum, item.get("reasons", []), awaiting, item.get("seconds", 0.0))
    if fresh != entries:
        write_entries(course, assignment, fresh)
    return fresh


def format_report(assignment: str, results: dict) -> str:
    """A plain-text table for the terminal; a score with answers still waiting for a manual grade says so."""
    submitted = sum(getattr(r, "submitted", True) for r in results.values())
    lines = [f"{assignment}: {submitted} submission(s)"]
    width = max([len(s) for s in results] + [7])
    for result in sorted(results.values(), key=lambda r: r.student):
        score = f"{result.score:>6g}" if result.graded else "   not graded"
        line = f"  {for_terminal(result.student):<{width}}  {score} / {result.max_score:<6g}"
        waiting = points(result.awaiting_manual) if result.graded else 0
        if waiting:
            line += f"  not final: {waiting:g} point(s) await manual grading"
        lines.append(line.rstrip())
        for reason in result.reasons:
            lines.append(f"  {'':<{width}}    - {for_terminal(reason)}")  # one line each, whatever it quotes
        if result.graded and result.manual_kept:
            lines.append(f"  {'':<{width}}    - {result.manual_kept} manual grade(s) kept through the regrade (in the "
                         "score); nbgrader flags them for a review in the formgrader")
    lines += _changes(results)
    waiting = {r.student: points(r.awaiting_manual) for r in results.values() if r.graded and r.awaiting_manual}
    if waiting:
        cells = sorted({a["cell"] for r in results.values() if r.graded for a in r.awaiting_manual})
        lines.append(f"{sum(waiting.values()):g} point(s) of {len(waiting)} submission(s) await manual grading "
                     f"({', '.join(cells)}): their scores above are the automatic part only, not the final score; "
                     "grade these answers in nbgrader's formgrader (docs/grading.md)")
    return "\n".join(lines)


def _changes(results: dict) -> list[str]:
    """The grades a regrade changed (student, notebook and cell, old -> new), or that it changed none."""
    regraded = [r for r in results.values() if getattr(r, "regraded", False)]
    if not regraded:
        return []
    changed = sorted((r for r in regraded if r.changed), key=lambda r: r.student)
    if not changed:
        return [f"regraded {len(regraded)} submission(s): no grade changed"]
    lines = [f"regraded {len(regraded)} submission(s): {sum(len(r.changed) for r in changed)} grade(s) changed, "
             f"of {len(changed)} student(s):"]
    for result in changed:
        lines += [f"  {for_terminal(result.student)}: {for_terminal(str(change))}" for change in result.changed]
    return lines
