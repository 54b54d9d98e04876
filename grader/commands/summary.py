"""``kitgrade summary``: what a class got wrong, at a glance, after ``kitgrade autograde``.

It reads what autograde left: ``reports/<assignment>.json`` (each student's reasons), the
gradebook (each student's score as it is now, manual grades included, and each cell's score) and
the autograded notebooks (each failed test's message), and writes ``reports/<assignment>.html``
(one file, figures embedded) and a table for the terminal. Written answers that wait for a manual
grade are counted per student and for the class: until they are graded, a score is not final.
The summary's data is kept in ``reports/<assignment>.summary.json``; a rerun says what changed.
Hidden-test source is left out unless asked for: the page is meant for teaching assistants.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from ..course import Course
from ..foundations.errors import UsageError
from ..notebook.notebook_outputs import gate_notebook
from ..foundations.atomic import write_whole
from ..autograde.report import NO_LONGER_SUBMITTED, no_longer_submitted, refresh_report
from .summary_page import TEXT, terminal_table, to_html

# A message of grader.checks.check: "WHAT: expected E, got G, for input I".
CHECK_MESSAGE = re.compile(r"^(?P<what>.+?): expected (?P<expected>.*), got (?P<got>.*), for input (?P<input>.*)$", re.S)
# The reasons that need a human look, by what the report's reason says.
FLAGS = [("tampering", ("relies on", "was edited", "changed nbgrader metadata", "deleted or renamed",
                        "cell type changed", "appears more than once", "unknown id")),
         ("timeout", ("longer than",)), ("refused", ("denied:",)), ("late", ("late:",)),
         ("not graded", ("not graded, because",)), ("no longer submitted", (NO_LONGER_SUBMITTED,))]

def flag_of(reason: str) -> str | None:
    """The kind of human look a report reason asks for (None: it asks for none)."""
    return next((kind for kind, marks in FLAGS if any(mark in reason for mark in marks)), None)


def failure_key(message: str) -> dict:
    """How a failure message is grouped: by WHAT, expected and got for the grader's checks, else by its text."""
    match = CHECK_MESSAGE.match(message.strip())
    if match:
        return {"what": match["what"], "expected": match["expected"], "got": match["got"]}
    return {"what": " ".join(message.split()), "expected": None, "got": None}


def _failures(course: Course, assignment: str, student: str) -> dict[str, str]:
    """grade_id -> the error message of each failed test cell of a student's autograded notebooks."""
    found = {}
    for path in sorted(course.path("autograded", student, assignment).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        gate_notebook(nb)  # one autograded before outputs were checked may hold what stops the summary
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            if grade_id and errors:  # the message only, never the traceback (it quotes the test's source)
                ename, evalue = errors[0].get("ename", "Error"), errors[0].get("evalue", "")
                found[grade_id] = evalue if CHECK_MESSAGE.match(evalue.strip()) else f"{ename}: {evalue}".rstrip(": ")
    return found


def _hidden_regions(course: Course) -> re.Pattern:
    """The lines from a hidden-test delimiter to its end, as the course's nbgrader finds them
    (``ClearHiddenTests``, configured: a course may choose its own delimiters)."""
    from nbgrader.preprocessors import ClearHiddenTests

    clear = ClearHiddenTests(config=course.config())
    begin, end = re.escape(clear.begin_test_delimeter), re.escape(clear.end_test_delimeter)
    return re.compile(rf"[^\n]*{begin}.*?{end}[^\n]*", re.S)


def _test_sources(course: Course, assignment: str, show_hidden: bool) -> dict[str, str]:
    sources, hidden = {}, _hidden_regions(course)
    for path in course.source_notebooks(assignment):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and not meta.get("solution"):
                text = cell.source
                sources[meta["grade_id"]] = text if show_hidden else hidden.sub("{hidden}", text)
    return sources


def gather(course: Course, assignment: str, show_hidden: bool = False) -> dict:
    """Everything the summary shows, as plain data (it is also what the next run compares with)."""
    course.require_assignment(assignment)
    report_path = course.path("reports", f"{assignment}.json")
    report = refresh_report(course, assignment)  # the scores as they are now: manual grades given since count
    graded = {s: e for s, e in report.items() if e.get("score") is not None}
    if not graded:
        raise UsageError(f"nothing graded of {assignment} yet (no scores in {report_path}); "
                         f"run `kitgrade autograde {assignment}` first")
    scores = [e["score"] for e in graded.values()]
    maximum = max(e["max_score"] for e in report.values())
    tests: dict[str, dict] = {}
    written: dict[str, dict] = {}
    with Gradebook(course.db_url, course.course_id) as gradebook:
        for notebook in gradebook.find_assignment(assignment).notebooks:
            by_hand = {c.name for c in notebook.solution_cells} | {c.name for c in notebook.task_cells}
            for cell in sorted([*notebook.grade_cells, *notebook.task_cells], key=lambda c: c.name):
                if cell.name in by_hand:  # an answer a person grades, not a test
                    written[cell.name] = {"id": cell.name, "notebook": notebook.name, "max_score": cell.max_score,
                                          "count": 0, "graded": 0, "awaiting": 0, "blank": 0, "points": 0.0}
                elif cell.cell_type == "code":
                    tests[cell.name] = {"id": cell.name, "notebook": notebook.name, "max_score": cell.max_score,
                                        "passed": 0, "count": 0, "points": 0.0, "failures": defaultdict(list)}
            for student in sorted(graded):
                try:
                    grades = gradebook.find_submission_notebook(notebook.name, assignment, student).grades
                except MissingEntry:
                    continue
                for grade in grades:
                    if grade.name in tests:
                        test, score = tests[grade.name], grade.score or 0.0
                        test["count"] += 1
                        test["points"] += score
                        test["passed"] += score >= grade.max_score
                    elif grade.name in written:
                        answer = written[grade.name]
                        answer["count"] += 1
                        answer["points"] += grade.score or 0.0
                        if grade.manual_score is not None:
                            answer["graded"] += 1
                        elif grade.auto_score is None:
                            answer["awaiting"] += 1
                        else:  # left as released: nbgrader scored it 0 by itself
                            answer["blank"] += 1
    for student in sorted(graded):
        for grade_id, message in _failures(course, assignment, student).items():
            if grade_id in tests:
                tests[grade_id]["failures"][json.dumps(failure_key(message))].append(student)
    sources = _test_sources(course, assignment, show_hidden)
    for test in tests.values():
        groups = [{**json.loads(key), "students": students} for key, students in test.pop("failures").items()]
        test["groups"] = sorted(groups, key=lambda g: (-len(g["students"]), g["what"]))
        test["source"] = sources.get(test["id"], "")
    awaiting = {s: e["awaiting_manual_points"] for s, e in sorted(graded.items()) if e.get("awaiting_manual_points")}
    flags = []
    for student, item in sorted(report.items()):
        flags += [{"student": student, "kind": flag_of(r), "reason": r} for r in item.get("reasons", []) if flag_of(r)]
        if student in awaiting:  # written answers nobody has graded yet
            cells = ", ".join(a["cell"] for a in item["awaiting_manual"])
            flags.append({"student": student, "kind": "manual", "points": awaiting[student], "cells": cells,
                          "reason": TEXT["en"]["waiting"].format(points=awaiting[student], cells=cells)})
    # a submission deleted since the last run: said here too, whether or not autograde ran since
    flagged = {f["student"] for f in flags if f["kind"] == "no longer submitted"}
    flags += [{"student": s, "kind": "no longer submitted", "reason": why}
              for s, why in no_longer_submitted(course, assignment).items() if s not in flagged]
    return {"assignment": assignment, "max_score": maximum, "submissions": len(report), "graded": len(graded),
            "awaiting_manual": awaiting, "written": list(written.values()),
            "scores": {s: e.get("score") for s, e in sorted(report.items())},
            "mean": statistics.mean(scores), "median": statistics.median(scores),
            "zeros": sum(1 for s in scores if s == 0), "tests": list(tests.values()), "flags": flags,
            "seconds": {s: e["seconds"] for s, e in sorted(report.items()) if isinstance(e.get("seconds"), (int, float))
                        and e["seconds"] > 0}}


def changes(previous: dict | None, data: dict) -> list[str] | None:
    """What changed since the previous summary (None: there was none)."""
    if previous is None:
        return None
    lines = []
    before, after = previous.get("scores", {}), data["scores"]
    for student in sorted(set(before) | set(after)):
        old, new = before.get(student, "-"), after.get(student, "-")
        if old != new:
            lines.append(f"{student}: {_num(old)} -> {_num(new)}")
    old_tests = {t["id"]: t for t in previous.get("tests", [])}
    for test in data["tests"]:
        old = old_tests.get(test["id"])
        if old and (old["passed"], old["count"]) != (test["passed"], test["count"]):
            lines.append(f"{test['id']}: {old['passed']}/{old['count']} -> {test['passed']}/{test['count']}")
    old_flags = {(f["student"], f["reason"]) for f in previous.get("flags", [])}
    new_flags = {(f["student"], f["reason"]) for f in data["flags"]}
    lines += [f"+ {s}: {r}" for s, r in sorted(new_flags - old_flags)]
    lines += [f"- {s}: {r}" for s, r in sorted(old_flags - new_flags)]
    return lines


def _num(value) -> str:
    return "-" if value is None else value if isinstance(value, str) else f"{value:g}"


def summarize(course: Course, assignment: str, lang: str = "en", show_hidden: bool = False) -> tuple[str, Path]:
    """Write reports/<assignment>.html and .summary.json; return the terminal table and the page's path."""
    data = gather(course, assignment, show_hidden)
    kept = course.path("reports", f"{assignment}.summary.json")
    try:
        previous = json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else None
    except (OSError, ValueError):
        previous = None
    data["changes"] = changes(previous, data)
    page = course.path("reports", f"{assignment}.html")
    write_whole(page, to_html(data, lang))  # whole or not at all, on a full disk too
    keep = {**data, "tests": [{k: v for k, v in test.items() if k != "source"} for test in data["tests"]]}
    keep.pop("changes")
    write_whole(kept, json.dumps(keep, indent=1, ensure_ascii=False))
    return terminal_table(data, lang), page
