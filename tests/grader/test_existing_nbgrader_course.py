"""A course made by ``nbgrader quickstart`` (nbgrader's defaults: no gradebook URL, no exchange),
with a kit exercise copied into its source/, graded end to end by kitgrade; then read by plain
nbgrader (``nbgrader export`` gives the same scores), by the formgrader's API (``NbGraderAPI``),
after a manual grade as the formgrader records it, and exported for Canvas's gradebook import."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from course_snapshots import ASSIGNMENT, FIXTURES, snapshot
from grader.cli import main as kitgrade
from grader_fixtures import cases

BIN = Path(sys.executable).parent
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
#: Who hands in what (a Canvas download), and the score each must get out of 7.
STUDENTS = {"doejane": (cases.solution, 7.0, "12345"), "smithbob": (cases.partial, 4.0, "23456"),
            "leemin": (cases.blank, 0.0, "34567")}


def _env() -> dict:
    return dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """``nbgrader quickstart course101``, the sample exercise in source/, released, collected, autograded."""
    home = tmp_path_factory.mktemp("instructor")
    subprocess.run([str(BIN / "nbgrader"), "quickstart", "course101"], cwd=home, env=_env(), check=True,
                   capture_output=True, timeout=300)
    root = home / "course101"
    assert not any(line.startswith("c.CourseDirectory.db_url") for line in (root / "nbgrader_config.py").read_text().splitlines())
    shutil.copytree(FIXTURES / "exercises" / ASSIGNMENT, root / "source" / ASSIGNMENT)
    assert kitgrade(["release", ASSIGNMENT, "--course", str(root), "--no-exchange"]) == 0
    source = nbformat.read(root / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    release = nbformat.read(root / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    downloads = home / "submissions.zip"
    with zipfile.ZipFile(downloads, "w") as archive:
        for student, (build, _, canvas_id) in STUDENTS.items():
            archive.writestr(f"{student}_{canvas_id}_99{canvas_id}_{NOTEBOOK}", nbformat.writes(build(source, release)))
    assert kitgrade(["collect", ASSIGNMENT, "--course", str(root), "--from", str(downloads)]) == 0
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(root), "--quiet"]) == 0
    return root


def nbgrader_csv(course: Path, tmp_path: Path) -> dict[str, float]:
    """Scores as plain ``nbgrader export`` writes them, run in the course as an instructor would."""
    out = tmp_path / "nbgrader_grades.csv"
    subprocess.run([str(BIN / "nbgrader"), "export", "--to", str(out)], cwd=course, env=_env(), check=True,
                   capture_output=True, timeout=300)
    return {row["student_id"]: float(row["score"]) for row in csv.DictReader(open(out)) if row["assignment"] == ASSIGNMENT}


def formgrader_api(course: Path):
    """The API the formgrader's handlers call, configured as nbgrader configures it in the course."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def test_kitgrade_grades_a_quickstart_course_with_nbgraders_default_gradebook(course):
    import json

    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: r["score"] for s, r in report.items()} == {s: score for s, (_, score, _) in STUDENTS.items()}
    assert (course / "gradebook.db").is_file()  # nbgrader's default place, from CourseDirectory's default db_url


def test_plain_nbgrader_export_gives_the_same_scores(course, tmp_path):
    assert nbgrader_csv(course, tmp_path) == {s: score for s, (_, score, _) in STUDENTS.items()}


def test_the_formgrader_api_lists_every_graded_submission(course):
    api = formgrader_api(course)
    submissions = {s["student"]: s for s in api.get_submissions(ASSIGNMENT)}
    assert {s: submissions[s]["score"] for s in STUDENTS} == {s: score for s, (_, score, _) in STUDENTS.items()}
    assert all(submissions[s]["autograded"] for s in STUDENTS)
    assert api.get_assignment(ASSIGNMENT)["num_submissions"] == len(STUDENTS)


def test_canvas_export_has_canvas_columns_ids_from_the_download_and_nbgraders_scores(course, tmp_path):
    assert kitgrade(["export", "--course", str(course)]) == 0
    rows = list(csv.reader(open(course / "grades_lms.csv")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT]
    assert rows[1] == ["Points Possible", "", "", "", "", "7"]
    by_id = {row[1]: row for row in rows[2:]}
    plain = nbgrader_csv(course, tmp_path)
    for student, (_, _, canvas_id) in STUDENTS.items():
        assert float(by_id[canvas_id][5]) == plain[student]


def test_canvas_export_with_a_roster_fills_names_sis_ids_and_sections(course, tmp_path):
    roster = tmp_path / "canvas_gradebook_export.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
                      '"Doe, Jane",12345,S001,doejane,Section 1\n"Smith, Bob",23456,S002,smithbob,Section 2\n'
                      '"Lee, Min",34567,S003,leemin,Section 2\n"Park, Ana",45678,S004,apark,Section 1\n')
    assert kitgrade(["export", "--course", str(course), "--roster", str(roster)]) == 0
    rows = {row[0]: row for row in csv.reader(open(course / "grades_lms.csv"))}
    assert rows["Doe, Jane"] == ["Doe, Jane", "12345", "S001", "doejane", "Section 1", "7"]
    assert rows["Park, Ana"] == ["Park, Ana", "45678", "S004", "apark", "Section 1", "0"]  # enrolled, no submission


def test_a_manual_grade_in_the_formgrader_reaches_feedback_and_exports_and_the_dry_run_shows_it(course, tmp_path, capsys):
    from nbgrader.api import Gradebook

    assert kitgrade(["export", "--course", str(course)]) == 0
    capsys.readouterr()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "course101") as gradebook:
        # what the formgrader's grade handler does when a grader overrides a score
        grade = gradebook.find_grade("test_mean_abs", ASSIGNMENT, ASSIGNMENT, "smithbob")
        grade.manual_score = 3
        gradebook.db.commit()
    before = snapshot(course)
    assert kitgrade(["export", "--course", str(course), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert snapshot(course) == before
    assert "1 change(s)" in out and f"{ASSIGNMENT}: 4 -> 5" in out
    assert nbgrader_csv(course, tmp_path)["smithbob"] == 5.0
    assert kitgrade(["feedback", ASSIGNMENT, "--course", str(course)]) == 0
    assert "Score: 5.0 / 7.0" in (course / "feedback" / "smithbob" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    # grading the student again keeps the grader's manual score, as nbgrader does
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--student", "smithbob", "--quiet"]) == 0
    assert nbgrader_csv(course, tmp_path)["smithbob"] == 5.0


def test_kitgrade_finds_the_course_from_inside_it_as_nbgrader_does(course, monkeypatch, capsys):
    monkeypatch.chdir(course)
    assert kitgrade(["feedback", ASSIGNMENT]) == 0
    assert "3 feedback file(s)" in capsys.readouterr().out
