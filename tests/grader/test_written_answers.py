"""Written answers graded by hand (problem set 1's manually graded answer cells) through kitgrade.

One course: ps1 released by ``kitgrade release`` (nbgrader's ``generate_assignment``, then the
proof), three students, one ``kitgrade autograde`` run over the real nbgrader:

* alice answers everything (the instructor's code and written answers): 11 points from the tests,
  5 waiting for a person;
* bob hands in the blank release: 0, and nothing waits (nbgrader scores an unchanged answer 0);
* carol solves the code and writes only task 1 (b): 11 points, 2 waiting.

The tests check what autograde, the report, ``summary``, ``export`` and ``check`` say while points
wait, and, on a copy of the course graded by hand as the formgrader records it, that the scores
become final everywhere and that a rerun of autograde keeps the manual grades.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import shutil

import nbformat
import pytest

from kit_paths import ROOT
from course_snapshots import copy_course, snapshot
from grader.cli import main as kitgrade

ASSIGNMENT, NOTEBOOK = "ps1_autograd_basics", "autograd_basics"
WRITTEN = {"written_second_derivative": 2.0, "written_control_flow": 3.0}
CARELESS_ANSWER = "Because `create_graph=True` records the backward pass as a graph of its own."
#: what each student leaves waiting for a manual grade
WAITING = {"alice": {"written_control_flow": 3.0, "written_second_derivative": 2.0}, "bob": {},
           "carol": {"written_second_derivative": 2.0}}
#: the manual grades the instructor gives (tests that grade by hand)
MANUAL = {("alice", "written_second_derivative"): 2.0, ("alice", "written_control_flow"): 2.5,
          ("carol", "written_second_derivative"): 1.0}


def _solutions(source) -> dict[str, str]:
    return {c.metadata["nbgrader"]["grade_id"]: "\n".join(
        line for line in c.source.splitlines() if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
        for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}


def _run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = kitgrade(argv)
    return status, out.getvalue(), err.getvalue()


def _gradebook(root):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{root / 'gradebook.db'}")


def _report(root) -> dict:
    return json.loads((root / "reports" / f"{ASSIGNMENT}.json").read_text())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(course, autograde's output): ps1 released, three submissions, one autograde run."""
    tmp = tmp_path_factory.mktemp("written")
    shutil.copytree(ROOT / "exercises" / ASSIGNMENT, tmp / "exercises" / ASSIGNMENT)
    root = tmp / "course"
    assert kitgrade(["init", str(root), "--course-id", "w101", "--exercises", str(tmp / "exercises")]) == 0
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
    source = nbformat.read(root / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    release = nbformat.read(root / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    solutions = _solutions(source)
    code = {k: v for k, v in solutions.items() if k not in WRITTEN}
    answers = {"alice": solutions, "bob": {}, "carol": {**code, "written_second_derivative": CARELESS_ANSWER}}
    for student, answer in answers.items():
        nb = nbformat.from_dict(json.loads(json.dumps(release)))
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answer:
                cell.source = answer[grade_id]
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{NOTEBOOK}.ipynb")
    status, out, err = _run(["autograde", ASSIGNMENT, "--course", str(root), "--quiet"])
    assert status == 0, out + err
    return root, out


@pytest.fixture(scope="module")
def hand_graded(graded, tmp_path_factory):
    """A copy of the graded course whose written answers were graded as the formgrader records a grade."""
    root = copy_course(graded[0], tmp_path_factory.mktemp("hand_graded") / "course")
    with _gradebook(root) as gradebook:
        for (student, cell), score in MANUAL.items():
            grade = gradebook.find_grade(cell, NOTEBOOK, ASSIGNMENT, student)
            grade.manual_score = score  # nbgrader's formgrader: GradeHandler.put
            grade.needs_manual_grade = False
        gradebook.db.commit()
    return root


def test_autograde_flags_the_written_answers_and_says_the_scores_are_not_final(graded):
    root, out = graded
    with _gradebook(root) as gradebook:
        for student, waiting in WAITING.items():
            grades = {g.name: g for g in gradebook.find_submission_notebook(NOTEBOOK, ASSIGNMENT, student).grades}
            for cell, points in WRITTEN.items():
                grade = grades[cell]
                assert grade.max_score == points
                if cell in waiting:  # nbgrader's own flag: an answer for a person to grade
                    assert grade.needs_manual_grade and grade.auto_score is None and grade.manual_score is None
                else:  # left as released: nbgrader scored it 0 by itself
                    assert grade.auto_score == 0 and not grade.needs_manual_grade, (student, cell)
    report = _report(root)
    assert {s: (e["score"], e["max_score"], e["awaiting_manual_points"], e["final"]) for s, e in report.items()} == {
        "alice": (11, 16, 5, False), "bob": (0, 16, 0, True), "carol": (11, 16, 2, False)}
    for student, waiting in WAITING.items():
        assert report[student]["awaiting_manual"] == [{"notebook": NOTEBOOK, "cell": cell, "points": points}
                                                      for cell, points in sorted(waiting.items())]
    assert re.search(r"^ +alice +11 / 16 +not final: 5 point\(s\) await manual grading$", out, re.M), out
    assert re.search(r"^ +bob +0 / 16$", out, re.M), out
    assert re.search(r"^ +carol +11 / 16 +not final: 2 point\(s\) await manual grading$", out, re.M), out
    assert ("7 point(s) of 2 submission(s) await manual grading (written_control_flow, written_second_derivative): "
            "their scores above are the automatic part only, not the final score") in out
    rows = list(csv.DictReader(open(root / "reports" / f"{ASSIGNMENT}.csv")))
    assert {r["student"]: (r["score"], r["awaiting_manual_points"]) for r in rows} == {
        "alice": ("11", "5"), "bob": ("0", ""), "carol": ("11", "2")}


def test_summary_counts_the_points_awaiting_manual_grading(graded):
    root, _ = graded
    status, out, err = _run(["summary", ASSIGNMENT, "--course", str(root)])
    assert status == 0, err
    page = (root / "reports" / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    stats = ("3 submissions; mean 7.33 / 16, median 11, scored zero: 1; "
             "not final: 7 point(s) of 2 submission(s) await manual grading")
    assert stats in out and stats in page
    table = [line.split() for line in out.splitlines()]
    # per answer: graded by hand, awaiting, left blank (scored 0), points given so far
    assert ["written_control_flow", "0/3", "1", "2", "0/9"] in table, out
    assert ["written_second_derivative", "0/3", "2", "1", "0/6"] in table, out
    assert sum(1 for row in table if row[:1] == ["written_control_flow"]) == 1, "a written answer is no test"
    look = out.split("Submissions that need a human look:")[1].split("\n\n")[0]
    assert re.search(r"^ +alice +by hand +5 point\(s\) await manual grading: written_control_flow, "
                     r"written_second_derivative$", look, re.M), out
    assert re.search(r"^ +carol +by hand +2 point\(s\) await manual grading: written_second_derivative$", look, re.M)
    assert "bob" not in look
    assert "<table id='written'>" in page and "<td>alice</td><td>by hand</td>" in page
    status, out, _ = _run(["summary", ASSIGNMENT, "--course", str(root), "--lang", "zh"])
    assert status == 0 and "尚非最终成绩：2 份提交共 7 分待人工评分" in out and "5 分待人工评分" in out


def test_summary_says_a_script_task_left_blank_is_not_answered_yet(graded):
    """Task 5 is a script cell, not a function: bob's blank release reads as his blank functions do."""
    from grader.course import Course
    from grader.commands.summary import gather

    tests = {test["id"]: test for test in gather(Course(graded[0]), ASSIGNMENT)["tests"]}
    for grade_id in ("test_sin_points", "test_sin_derivative", "test_sin_plot", "test_second_derivative"):
        groups = [g for g in tests[grade_id]["groups"] if "bob" in g["students"]]
        assert [g["what"] for g in groups] == ["StudentCodeError: not answered yet: the task still raises "
                                               "NotImplementedError, as it was handed out"], (grade_id, groups)


def test_export_refuses_scores_missing_their_manual_part_unless_told(graded, tmp_path):
    root, _ = graded
    before = snapshot(root)
    status, out, err = _run(["export", "--course", str(root)])
    assert status == 1 and out == "" and snapshot(root) == before  # nothing written
    assert "Traceback" not in err and err.startswith("kitgrade export: not exported: written answers wait")
    assert "  ps1_autograd_basics: 2 student(s), 7 point(s): alice (5), carol (2)\n" in err
    assert "--allow-manual-pending" in err
    status, out, _ = _run(["export", "--course", str(root), "--dry-run"])
    assert status == 0 and snapshot(root) == before and "alice (5), carol (2)" in out
    grades, lms = tmp_path / "grades.csv", tmp_path / "lms.csv"
    status, out, _ = _run(["export", "--course", str(root), "--csv", str(grades), "--lms-csv", str(lms),
                           "--allow-manual-pending"])
    assert status == 0
    assert "warning: exported without their manual part" in out and "alice (5), carol (2)" in out
    assert {row[0]: row[5] for row in list(csv.reader(open(lms)))[2:]} == {"alice": "11", "bob": "0", "carol": "11"}


def test_check_lists_the_written_answers_and_counts_only_the_tests(graded, tmp_path):
    mine = tmp_path / f"{NOTEBOOK}.ipynb"
    shutil.copy(graded[0] / "submitted" / "carol" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", mine)
    before = mine.read_bytes()
    status, out, _ = _run(["check", str(mine)])
    assert status == 0, out  # the tests pass; the written answers are not the check's to judge
    assert re.search(r"^WRITTEN written_second_derivative +-/2  answered; your instructor grades it$", out, re.M), out
    assert re.search(r"^WRITTEN written_control_flow +-/3  not answered yet: left as released, it scores 0$", out, re.M)
    # carol's copy is the kit's own exercise as released: its hidden tests, from the installed kit, run too
    assert ("total: 11/11 (visible and hidden tests of the kit's exercise ps1_autograd_basics; a hidden check says "
            "only how many passed; 5 more point(s) for written answers, graded by your instructor)") in out
    assert mine.read_bytes() == before


def test_hand_graded_scores_are_final_in_the_summary_the_report_and_the_export(hand_graded):
    status, out, err = _run(["summary", ASSIGNMENT, "--course", str(hand_graded)])
    assert status == 0, err
    assert "3 submissions; mean 9.17 / 16, median 12, scored zero: 1\n" in out  # 15.5, 0 and 12
    assert ["written_control_flow", "1/3", "0", "2", "2.5/9"] in [line.split() for line in out.splitlines()]
    look = out.split("Submissions that need a human look:")[1].split("\n\n")[0]
    assert look.split() == ["none"], out
    report = _report(hand_graded)  # the summary read the gradebook and brought the report up to date
    assert {s: (e["score"], e["awaiting_manual"], e["final"]) for s, e in report.items()} == {
        "alice": (15.5, [], True), "bob": (0, [], True), "carol": (12, [], True)}
    status, out, err = _run(["export", "--course", str(hand_graded)])
    assert status == 0 and "warning" not in out, err
    rows = list(csv.reader(open(hand_graded / "grades_lms.csv")))
    assert rows[1][5] == "16" and {row[0]: row[5] for row in rows[2:]} == {"alice": "15.5", "bob": "0", "carol": "12"}


def test_a_rerun_of_autograde_keeps_the_manual_grades(hand_graded):
    status, out, err = _run(["autograde", ASSIGNMENT, "--course", str(hand_graded), "--quiet",
                             "--student", "alice", "--student", "carol"])
    assert status == 0, out + err
    with _gradebook(hand_graded) as gradebook:
        for (student, cell), score in MANUAL.items():
            grade = gradebook.find_grade(cell, NOTEBOOK, ASSIGNMENT, student)
            assert grade.manual_score == score and grade.auto_score is None
            assert grade.needs_manual_grade  # nbgrader flags a kept manual grade for a review
    assert re.search(r"^ +alice +15.5 / 16$", out, re.M) and re.search(r"^ +carol +12 / 16$", out, re.M), out
    assert "2 manual grade(s) kept through the regrade" in out and "1 manual grade(s) kept through the regrade" in out
    report = _report(hand_graded)
    assert (report["alice"]["score"], report["alice"]["final"]) == (15.5, True)
    assert (report["carol"]["score"], report["carol"]["final"]) == (12, True)
