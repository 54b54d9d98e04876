"""A submission's time, as autograde reads it: lateness reaches every output, and a time that cannot
be read is a reason, never a silent zero."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course_snapshots import ASSIGNMENT, copy_course, make_course
from grader.cli import main as kitgrade
from test_grader_faults import _solution

DUE = "2026-01-15 12:00:00 UTC"
ON_TIME, LATE = "2026-01-15 11:00:00.000000 UTC", "2026-01-16 09:00:00.000000 UTC"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    course = make_course(tmp_path_factory.mktemp("lateness") / "course")
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write('\nc.KitGrade.workers = 2\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    return course


@pytest.fixture
def course(template, tmp_path) -> Path:
    return copy_course(template, tmp_path / "course")


def hand_in(course: Path, when: dict[str, str]) -> None:
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for student, time in when.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(_solution(release, source), folder / f"{ASSIGNMENT}.ipynb")
        (folder / "timestamp.txt").write_text(time)


def report(course: Path) -> dict:
    return json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())


def canvas(course: Path) -> dict[str, str]:
    with open(course / "grades_lms.csv") as handle:
        return {row["Student"]: row[ASSIGNMENT] for row in csv.DictReader(handle) if row["Student"] != "Points Possible"}


def test_a_due_date_set_after_grading_is_applied_by_the_next_run_and_shown_everywhere(course, capsys):
    hand_in(course, {"early": ON_TIME, "late": LATE})
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 0
    assert report(course)["late"]["score"] == 7  # no due date yet: nobody is late
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:  # as the formgrader sets it
        gradebook.update_or_create_assignment(ASSIGNMENT, duedate=DUE)
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 0
    entry = report(course)["late"]
    assert entry["score"] == 0 and any("late: 7 point(s) deducted" in r for r in entry["reasons"]), entry
    assert report(course)["early"] == {**report(course)["early"], "score": 7, "reasons": []}
    assert "late: 7 point(s) deducted" in capsys.readouterr().out
    assert kitgrade(["export", "--course", str(course)]) == 0
    assert canvas(course) == {"early": "7", "late": "0"}


def test_a_timestamp_that_is_not_a_time_leaves_the_student_not_graded_with_the_reason(course, capsys):
    hand_in(course, {"early": ON_TIME, "odd": "tomorrow morning"})
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 1
    out = capsys.readouterr().out
    entry = report(course)["odd"]
    assert entry["score"] is None, entry
    assert any("timestamp.txt holds" in r and "which is not a time" in r and "correct it or remove it" in r
               for r in entry["reasons"]), entry
    assert "odd" in out and "not graded" in out
    assert report(course)["early"]["score"] == 7
    (course / "submitted" / "odd" / ASSIGNMENT / "timestamp.txt").write_text(ON_TIME)  # put right: graded
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 0
    assert report(course)["odd"]["score"] == 7
