"""``kitgrade export``: an assignment nobody has submitted yet gives nobody a 0, in either file.

nbgrader's CSV (``grades.csv``) lists every assignment of the gradebook for every student: one
nobody has submitted (not collected yet) has empty scores there, and the Canvas file leaves it out;
the command says so. A student who did not submit an assignment others did still gets nbgrader's 0.
"""
from __future__ import annotations

import csv

import pytest

from course_snapshots import ASSIGNMENT, make_course
from grader.cli import main as kitgrade


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own session, used as nbgrader does
def test_an_assignment_nobody_submitted_is_empty_in_grades_csv_and_left_out_of_the_lms_file(tmp_path, capsys):
    from nbgrader.api import Gradebook

    from grader.course import Course

    course = Course(make_course(tmp_path / "course"))
    others = [a for a in course.assignments() if a != ASSIGNMENT]
    assert others, "the sample course has a second assignment (nothing would be tested)"
    with Gradebook(course.db_url, course.course_id) as gradebook:
        for student in ("alice", "bob"):
            gradebook.add_student(student)
        gradebook.add_submission(ASSIGNMENT, "alice")  # alice handed in the sample; bob did not, nor anyone the others
    # (the bare submission's autograded cells look like answers waiting for a person: exported anyway)
    assert kitgrade(["export", "--course", str(course.root), "--allow-manual-pending"]) == 0
    out = capsys.readouterr().out
    assert f"note: nothing submitted yet of {', '.join(sorted(others))}: empty scores in grades.csv, left out of " \
           "grades_lms.csv" in out, out
    rows = list(csv.DictReader(open(course.root / "grades.csv", encoding="utf-8")))
    scores = {(r["assignment"], r["student_id"]): r["score"] for r in rows}
    assert scores[(ASSIGNMENT, "alice")] == "0.0" and scores[(ASSIGNMENT, "bob")] == "0.0"  # nbgrader's 0 for bob
    for assignment in others:
        assert scores[(assignment, "alice")] == scores[(assignment, "bob")] == ""  # it was 0.0 for both
        assert all(r["raw_score"] == "" for r in rows if r["assignment"] == assignment)
    lms = list(csv.reader(open(course.root / "grades_lms.csv", encoding="utf-8")))
    assert lms[0][5:] == [ASSIGNMENT]


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_a_student_who_took_the_exercise_in_the_other_language_gets_no_zero_for_this_one(tmp_path, capsys):
    """ps1 and ps1_zh are one exercise in two languages: alice hands in the English one, li the Chinese
    one, bob neither. Each has an empty cell for the language they did not take; bob gets nbgrader's 0 in both."""
    from nbgrader.api import Gradebook

    from grader.course import Course

    course = Course(make_course(tmp_path / "course"))
    chinese = ASSIGNMENT + "_zh"
    with Gradebook(course.db_url, course.course_id) as gradebook:
        gradebook.add_assignment(chinese)
        for student in ("alice", "li", "bob"):
            gradebook.add_student(student)
        gradebook.add_submission(ASSIGNMENT, "alice")
        gradebook.add_submission(chinese, "li")
    assert kitgrade(["export", "--course", str(course.root), "--allow-manual-pending"]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(open(course.root / "grades.csv", encoding="utf-8")))
    scores = {(r["assignment"], r["student_id"]): r["score"] for r in rows}
    assert scores[(ASSIGNMENT, "alice")] == "0.0" and scores[(chinese, "li")] == "0.0"  # (bare submissions score 0)
    assert scores[(chinese, "alice")] == scores[(ASSIGNMENT, "li")] == ""  # it was 0.0 for both
    assert scores[(ASSIGNMENT, "bob")] == scores[(chinese, "bob")] == "0.0"
    lms = list(csv.reader(open(course.root / "grades_lms.csv", encoding="utf-8")))
    header, by_name = lms[0], {row[0]: row for row in lms[2:]}
    cell = {(a, s): by_name[s][header.index(a)] for a in (ASSIGNMENT, chinese) for s in ("alice", "li", "bob")}
    assert cell[(ASSIGNMENT, "alice")] == "0" and cell[(chinese, "li")] == "0"
    assert cell[(chinese, "alice")] == cell[(ASSIGNMENT, "li")] == ""
    assert cell[(ASSIGNMENT, "bob")] == cell[(chinese, "bob")] == "0"


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_a_new_kit_is_not_taken_for_a_new_submission(tmp_path, capsys, monkeypatch):
    """The grading record keeps the submission's own digest beside everything the grade depends on:
    after an upgrade of the kit, export says the grade came from another version, not that the
    student submitted again; a changed file is still a new submission."""
    from nbgrader.api import Gradebook

    from grader.autograde import Ledger, ledger
    from grader.course import Course

    course = Course(make_course(tmp_path / "course"))
    with Gradebook(course.db_url, course.course_id) as gradebook:
        gradebook.add_student("alice")
        gradebook.add_submission(ASSIGNMENT, "alice")
    handed_in = course.path("submitted", "alice", ASSIGNMENT)
    handed_in.mkdir(parents=True)
    (handed_in / "answers.ipynb").write_text('{"cells": []}')
    Ledger(course, ASSIGNMENT).record("alice", [])

    def notes():
        assert kitgrade(["export", "--course", str(course.root), "--allow-manual-pending"]) == 0
        return [line for line in capsys.readouterr().out.splitlines() if line.startswith(f"note: {ASSIGNMENT}:") and "alice" in line]

    assert notes() == []
    kit = ledger.kit_versions()
    monkeypatch.setattr(ledger, "kit_versions", lambda: {**kit, "autograd-kit": kit["autograd-kit"] + "-newer"})
    assert notes() == [f"note: {ASSIGNMENT}: graded with another version of the kit or nbgrader, or before the course's "
                       "configuration, source or due date changed: alice (exported with that grade; their submissions "
                       f"are unchanged): `kitgrade autograde {ASSIGNMENT}` grades them again as things are now"]
    (handed_in / "answers.ipynb").write_text('{"cells": [], "metadata": {}}')
    assert notes() == [f"note: {ASSIGNMENT}: submitted again since graded: alice (exported with the grade of the "
                       f"earlier submission): run `kitgrade autograde {ASSIGNMENT}`"]
