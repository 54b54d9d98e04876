"""The instructor's round trip, end to end, on the sample assignments in ``tests/grader/grader_fixtures``.

One course is initialised, released and graded for the whole module: every simulated submission
(honest, broken, or cheating; see ``grader_fixtures/cases.py``) goes through the exchange or an LMS
zip, one ``autograde`` run grades them all, and each test checks one behaviour of the result.
No network and no JupyterHub: nbgrader's exchange is a local folder.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.cli import main as kitgrade
from grader.course import Course

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grader_fixtures import cases as submission_cases  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "grader_fixtures"
ASSIGNMENT = "sample_ex"
#: Students who hand in through an LMS zip rather than nbgrader's exchange.
VIA_ZIP = {"renamed", "extra", "wrong_nbformat"}


def _files(content, assignment=ASSIGNMENT) -> dict:
    """A submission as file name -> content (a builder may return one notebook or several files)."""
    if isinstance(content, dict) and not isinstance(content, nbformat.NotebookNode):
        return content
    return {f"{assignment}.ipynb": content}


def _write_submission(folder: Path, content, assignment=ASSIGNMENT) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    files = _files(content, assignment)
    for name, data in files.items():
        if isinstance(data, nbformat.NotebookNode):
            data = nbformat.writes(data).encode()
        (folder / name).write_bytes(data)


def _digest(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    root = tmp_path_factory.mktemp("course")
    exchange = tmp_path_factory.mktemp("exchange")
    assert kitgrade(["init", str(root), "--course-id", "ad101", "--exercises", str(FIXTURES / "exercises"),
                     "--exchange", str(exchange)]) == 0
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text().replace("c.KitGrade.cell_timeout = 30", "c.KitGrade.cell_timeout = 4")
                      .replace("c.KitGrade.memory_limit_mb = 2048", "c.KitGrade.memory_limit_mb = 1024"))
    assert kitgrade(["release", "--course", str(root)]) == 0
    return Course(root)


@pytest.fixture(scope="module")
def expected(course):
    return submission_cases.cases(course.root)


@pytest.fixture(scope="module")
def submissions(course, expected, tmp_path_factory):
    """Hand in every case (exchange or LMS zip), collect, and remember the submitted files' digests."""
    source = nbformat.read(course.path("source", ASSIGNMENT, f"{ASSIGNMENT}.ipynb"), as_version=4)
    release = nbformat.read(course.path("release", ASSIGNMENT, f"{ASSIGNMENT}.ipynb"), as_version=4)
    inbound = Path(course.config().Exchange.root) / "ad101" / "inbound"
    downloads = io.BytesIO()
    with zipfile.ZipFile(downloads, "w") as archive:
        for number, (student, (build, _, _)) in enumerate(expected.items()):
            content = build(source, release)
            if student in VIA_ZIP:  # Canvas's names: a user id per student
                for name, data in _files(content).items():
                    data = nbformat.writes(data).encode() if isinstance(data, nbformat.NotebookNode) else data
                    archive.writestr(f"{student.replace('_', '-')}_{1234 + number}_5678_{name}", data)
            else:
                _write_submission(inbound / f"{student}+{ASSIGNMENT}+2026-01-15 10:00:00.000000 UTC+x1", content)
    zip_path = tmp_path_factory.mktemp("lms") / "downloads.zip"
    zip_path.write_bytes(downloads.getvalue())
    assert kitgrade(["collect", ASSIGNMENT, "--course", str(course.root)]) == 0
    assert kitgrade(["collect", ASSIGNMENT, "--course", str(course.root), "--from", str(zip_path)]) == 0
    return {"zip": zip_path, "before": _digest(course.path("submitted"))}


def _student_id(student: str) -> str:
    return student.replace("_", "-") if student in VIA_ZIP else student


@pytest.fixture(scope="module")
def graded(course, submissions):
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course.root), "--quiet"]) == 0
    return json.loads(course.path("reports", f"{ASSIGNMENT}.json").read_text())


# ---- release ------------------------------------------------------------------------------------
def test_init_stages_every_exercise_in_nbgrader_layout(course):
    assert course.assignments() == ["build_your_own", "sample_ex"]
    for name in ("nbgrader_config.py", "gradebook.db", "source/sample_ex/sample_ex.ipynb"):
        assert course.path(name).exists()


def test_release_strips_solutions_and_hidden_tests(course):
    released = course.path("release", ASSIGNMENT, f"{ASSIGNMENT}.ipynb").read_text()
    assert "BEGIN SOLUTION" not in released and "HIDDEN TESTS" not in released
    assert "raise NotImplementedError" in released


def test_release_refuses_an_exercise_whose_solution_fails(course, tmp_path):
    broken = tmp_path / "exercises" / "broken_ex"
    shutil.copytree(FIXTURES / "exercises" / ASSIGNMENT, broken)
    path = broken / f"{ASSIGNMENT}.ipynb"
    path.write_text(path.read_text().replace("return x * x", "return x + x"))
    root = tmp_path / "course2"
    assert kitgrade(["init", str(root), "--exercises", str(tmp_path / "exercises")]) == 0
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 1


# ---- autograde: every case ----------------------------------------------------------------------
@pytest.mark.parametrize("student", list(submission_cases.cases(Path("/course")).keys()))
def test_each_submission_gets_its_expected_score_and_reason(graded, expected, student):
    _, score, reason = expected[student]
    result = graded[_student_id(student)]
    assert result["score"] == score, result["reasons"]
    assert result["max_score"] == 7
    if reason is None:
        assert result["reasons"] == []
    else:
        assert any(reason in r for r in result["reasons"]), result["reasons"]


def test_submitted_files_stay_untouched(course, submissions, graded):
    assert _digest(course.path("submitted")) == submissions["before"]


def test_gradebook_holds_the_same_scores_as_the_report(course, graded):
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, course.course_id) as gradebook:
        for student, result in graded.items():
            assert gradebook.find_submission(ASSIGNMENT, student).score == result["score"]


def test_autograded_notebooks_are_written_by_nbgrader(course, graded):
    notebook = nbformat.read(course.path("autograded", "partial", ASSIGNMENT, f"{ASSIGNMENT}.ipynb"), as_version=4)
    partial_cell = submission_cases.cell(notebook, "test_mean_abs")
    assert partial_cell.outputs[0]["data"]["text/plain"] == "2.0"


# ---- feedback and export ------------------------------------------------------------------------
def test_feedback_is_html_per_student_and_hides_hidden_tests_unless_asked(course, graded):
    def page():
        return course.path("feedback", "partial", ASSIGNMENT, f"{ASSIGNMENT}.html").read_text()

    assert kitgrade(["feedback", ASSIGNMENT, "--course", str(course.root)]) == 0
    assert "BEGIN HIDDEN TESTS" not in page() and "details hidden" in page()  # the default hides them
    assert kitgrade(["feedback", ASSIGNMENT, "--course", str(course.root), "--show-hidden-tests"]) == 0
    assert "BEGIN HIDDEN TESTS" in page()
    assert kitgrade(["feedback", ASSIGNMENT, "--course", str(course.root), "--hide-hidden-tests"]) == 0
    assert "BEGIN HIDDEN TESTS" not in page() and "details hidden" in page()
    assert len(list(course.path("feedback").glob(f"*/{ASSIGNMENT}/*.html"))) == len(graded)


def test_export_writes_nbgrader_csv_and_lms_csv(course, graded):
    assert kitgrade(["export", "--course", str(course.root)]) == 0
    rows = list(csv.DictReader(open(course.path("grades.csv"))))
    assert {r["student_id"]: float(r["score"]) for r in rows if r["assignment"] == ASSIGNMENT}["partial"] == 4
    lms = list(csv.reader(open(course.path("grades_lms.csv"))))
    column = lms[0].index(ASSIGNMENT)
    assert lms[1][column] == "7"  # Points Possible
    assert {row[0]: row[column] for row in lms[2:]}["solution"] == "7"


# ---- build-your-own policy ----------------------------------------------------------------------
def test_forbidden_import_is_refused_in_student_code_but_allowed_in_tests(course, tmp_path):
    release = nbformat.read(course.path("release", "build_your_own", "build_your_own.ipynb"), as_version=4)
    honest = submission_cases.answered(release, mul_backward="def mul_backward(a, b, grad):\n    return grad * b, grad * a")
    cheat = submission_cases.answered(release, mul_backward="import autograd_core\n"
                                      "def mul_backward(a, b, grad):\n    return grad * b, grad * a")
    sneaky = submission_cases.answered(release, mul_backward="import importlib\n"
                                       "ref = importlib.import_module('autograd' + '_core')\n"
                                       "def mul_backward(a, b, grad):\n    return grad * b, grad * a")
    for student, nb in (("honest", honest), ("cheat", cheat), ("sneaky", sneaky)):
        _write_submission(course.path("submitted", student, "build_your_own"), nb, "build_your_own")
    try:
        assert kitgrade(["autograde", "build_your_own", "--course", str(course.root), "--quiet",
                         "--student", "honest", "--student", "cheat", "--student", "sneaky"]) == 0
        report = json.loads(course.path("reports", "build_your_own.json").read_text())
    finally:
        for student in ("honest", "cheat", "sneaky"):
            shutil.rmtree(course.path("submitted", student))
    assert report["honest"]["score"] == 4 and report["honest"]["reasons"] == []
    for student in ("cheat", "sneaky"):
        assert report[student]["score"] == 0
        assert any("forbids" in r for r in report[student]["reasons"]), report[student]["reasons"]


# ---- check (the student's side) -----------------------------------------------------------------
def test_check_prints_every_visible_test(course, tmp_path, capsys):
    release = nbformat.read(course.path("release", ASSIGNMENT, f"{ASSIGNMENT}.ipynb"), as_version=4)
    path = tmp_path / "mine.ipynb"
    nbformat.write(submission_cases.partial(None, release), path)
    before = path.read_bytes()
    assert kitgrade(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "PASS    test_square" in out and "PARTIAL test_mean_abs    2/3" in out and "FAIL    test_derivative" in out
    assert "total: 4/7" in out
    assert path.read_bytes() == before


def test_check_accepts_a_complete_notebook(course, tmp_path, capsys):
    release = nbformat.read(course.path("release", ASSIGNMENT, f"{ASSIGNMENT}.ipynb"), as_version=4)
    path = tmp_path / "done.ipynb"
    nbformat.write(submission_cases.solution(None, release), path)
    assert kitgrade(["check", str(path)]) == 0
    assert "total: 7/7" in capsys.readouterr().out


# ---- what plain nbgrader does with the same submissions ------------------------------------------
HONEST = ("solution", "partial", "blank")


def test_plain_nbgrader_agrees_on_honest_work_and_misgrades_the_tampering_cases(course, submissions, graded, tmp_path):
    """Plain ``nbgrader autograde`` 0.9 on copies: same grades for honest work; the cheats score
    higher and the warnings lower than they deserve."""
    plain = tmp_path / "plain"
    shutil.copytree(course.root, plain, ignore=shutil.ignore_patterns(".kitgrade", "autograded", "feedback"))
    config = plain / "nbgrader_config.py"
    config.write_text(config.read_text().replace("here = os.path.dirname(os.path.abspath(__file__))",
                                                 f"here = {str(plain)!r}"))
    students = sorted([*submission_cases.PLAIN_NBGRADER_WRONG, *HONEST])
    for student in os.listdir(plain / "submitted"):
        if student not in students:
            shutil.rmtree(plain / "submitted" / student)
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "autograde", ASSIGNMENT, "--force"],
                   cwd=plain, env=env, capture_output=True, check=False, timeout=300)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{plain / 'gradebook.db'}", "ad101") as gradebook:
        plain_scores = {s: gradebook.find_submission(ASSIGNMENT, s).score for s in students}
    assert {s: plain_scores[s] for s in HONEST} == {s: graded[s]["score"] for s in HONEST}
    assert {s: plain_scores[s] for s in submission_cases.PLAIN_NBGRADER_WRONG} == submission_cases.PLAIN_NBGRADER_WRONG


# ---- the kit's own exercises --------------------------------------------------------------------
REAL_EXERCISES = Path(__file__).resolve().parents[2] / "exercises"


def _real_assignments() -> list[str]:
    if not REAL_EXERCISES.is_dir():
        return []
    return sorted(p.name for p in REAL_EXERCISES.iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")) and list(p.glob("*.ipynb")))


@pytest.mark.skipif(not _real_assignments(), reason="no exercises in exercises/ yet")
def test_init_stages_the_kits_exercises_and_release_proves_them(tmp_path):
    root = tmp_path / "course"
    assert kitgrade(["init", str(root)]) == 0
    course = Course(root)
    assert course.assignments() == _real_assignments()
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
    for assignment in course.assignments():
        for source in course.source_notebooks(assignment):
            for student, path in (("instructor", source), ("nobody", course.path("release", assignment, source.name))):
                _write_submission(course.path("submitted", student, assignment),
                                  nbformat.read(path, as_version=4), source.stem)
        assert kitgrade(["autograde", assignment, "--course", str(root), "--quiet"]) == 0
        report = json.loads(course.path("reports", f"{assignment}.json").read_text())
        # every automatic point; the written answers (graded by hand) wait for a person
        instructor = report["instructor"]
        assert instructor["score"] + instructor["awaiting_manual_points"] == instructor["max_score"] > 0, instructor
        assert instructor["final"] is (not instructor["awaiting_manual"]), instructor
        assert report["nobody"]["score"] == 0 and report["nobody"]["final"], report["nobody"]


def test_magics_and_shell_lines_of_an_honest_notebook_are_no_finding_of_tampering(graded):
    reasons = graded["honest_magics"]["reasons"]
    assert not [r for r in reasons if "relies on" in r or "tamper" in r.lower()], reasons


def test_the_check_command_refuses_a_forbidden_import_as_autograde_does(course, tmp_path):
    """``kitgrade check`` as a student runs it (its zygote started first by the command, its worker
    forked from it): the exercise's forbidden module is not loaded for the student's code, and an
    import of it is refused, plainly or through importlib."""
    release = nbformat.read(course.path("release", "build_your_own", "build_your_own.ipynb"), as_version=4)
    honest = submission_cases.answered(release, mul_backward="def mul_backward(a, b, grad):\n    return grad * b, grad * a")
    sneaky = submission_cases.answered(release, mul_backward="import importlib\n"
                                       "ref = importlib.import_module('autograd' + '_core')\n"
                                       "def mul_backward(a, b, grad):\n    return grad * b, grad * a")
    said = {}
    for name, nb in (("honest", honest), ("sneaky", sneaky)):
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
        done = subprocess.run([sys.executable, "-m", "grader.cli", "check", f"{name}.ipynb"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        said[name] = done.returncode, done.stdout
    assert said["honest"][0] == 0, said["honest"]
    assert said["sneaky"][0] == 1 and "forbids" in said["sneaky"][1], said["sneaky"]
