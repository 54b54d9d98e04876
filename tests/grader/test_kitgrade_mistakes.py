"""Every mistake an instructor can make with kitgrade ends in one or two lines that say what was wrong
and what exists, exit status 2, and nothing changed on disk (a bug of the kit says so, exit 3, and
keeps its traceback in a log file)."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from course_snapshots import ASSIGNMENT, FIXTURES, copy_course, make_course, snapshot
from grader.cli import main as kitgrade
from grader.course import Course


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("template") / "course")


@pytest.fixture
def course(template, tmp_path) -> Path:
    return copy_course(template, tmp_path / "course")


def refused(argv, capsys, *watched: Path) -> str:
    """Run kitgrade; assert exit status 2, nothing changed under ``watched``; return stderr."""
    before = snapshot(*watched)
    status = kitgrade(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert snapshot(*watched) == before
    assert "Traceback" not in err and 0 < len(err.strip().splitlines()) <= 2, err
    return err


def submit(course: Path, student: str, notebook=None) -> None:
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(notebook or release, folder / f"{ASSIGNMENT}.ipynb")


# ---- assignments, students and folders that do not exist -----------------------------------------
@pytest.mark.parametrize("command", [["autograde", "sampel_ex"], ["feedback", "sampel_ex"], ["release", "sampel_ex"],
                                     ["collect", "sampel_ex"]])
def test_a_misspelled_assignment_names_the_known_ones(course, capsys, command):
    submit(course, "alice")
    err = refused([*command, "--course", str(course)], capsys, course)
    assert "no assignment 'sampel_ex'" in err and "build_your_own, sample_ex" in err


def test_collect_of_a_misspelled_assignment_creates_no_stray_folder(course, capsys, tmp_path):
    downloads = tmp_path / "downloads" / "alice"
    downloads.mkdir(parents=True)
    (downloads / f"{ASSIGNMENT}.ipynb").write_text("{}")
    refused(["collect", "sampel_ex", "--course", str(course), "--from", str(downloads.parent)], capsys, course)
    assert not list(course.glob("submitted/*/sampel_ex"))


def test_a_folder_that_is_not_a_course(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("x")
    err = refused(["autograde", ASSIGNMENT, "--course", str(tmp_path)], capsys, tmp_path)
    assert f"{tmp_path} is not an nbgrader course (no nbgrader_config.py)" in err


def test_the_working_folder_that_is_not_a_course(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "no-jupyter-config"))
    err = refused(["release"], capsys, tmp_path)
    assert "is not an nbgrader course" in err and "--course DIR" in err


@pytest.mark.parametrize("argv", [["autograde", ASSIGNMENT], ["summary", ASSIGNMENT], ["release"],
                                  ["check", "notebook.ipynb"], ["autograde", ASSIGNMENT, "--course", "."]])
def test_a_command_started_in_a_folder_removed_meanwhile_says_so(tmp_path, capsys, monkeypatch, argv):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    status = kitgrade(argv)
    assert (status, capsys.readouterr().err) == (2, f"kitgrade {argv[0]}: the current folder no longer exists (it was "
                                                    "removed or moved); cd into one that does and run the command again\n")


def test_a_course_without_source(course, capsys):
    shutil.rmtree(course / "source")
    err = refused(["release", "--course", str(course)], capsys, course)
    assert "has no source/ folder" in err


def test_an_assignment_not_released_yet(course, capsys):
    shutil.rmtree(course / "release" / ASSIGNMENT)
    submit_folder = course / "submitted" / "alice" / ASSIGNMENT
    submit_folder.mkdir(parents=True)
    (submit_folder / f"{ASSIGNMENT}.ipynb").write_text("{}")
    for command in ("autograde", "collect"):
        err = refused([command, ASSIGNMENT, "--course", str(course)], capsys, course)
        assert f"{ASSIGNMENT} is not released yet" in err and f"kitgrade release {ASSIGNMENT}" in err


def test_an_empty_submitted_folder(course, capsys):
    err = refused(["autograde", ASSIGNMENT, "--course", str(course)], capsys, course)
    assert "nothing to grade" in err and f"kitgrade collect {ASSIGNMENT}" in err


def test_autograde_of_a_student_without_a_submission_records_nothing(course, capsys):
    submit(course, "alice")
    err = refused(["autograde", ASSIGNMENT, "--course", str(course), "--student", "nobody"], capsys, course)
    assert "from 'nobody'" in err and "submitted: alice" in err
    from nbgrader.api import Gradebook

    with Gradebook(Course(course).db_url, "ad101") as gradebook:
        assert [s.id for s in gradebook.students] == []


def test_export_before_autograde_says_who_is_submitted_and_not_graded(course, capsys):
    """Nothing of the assignment in the gradebook yet: no zero goes to the LMS, and export says why."""
    submit(course, "alice")
    assert kitgrade(["export", "--course", str(course)]) == 0
    assert f"note: {ASSIGNMENT}: submitted but not graded: alice (empty in the Canvas file" in capsys.readouterr().out
    assert "alice" not in (course / "grades_lms.csv").read_text()


def test_feedback_before_autograde(course, capsys):
    submit(course, "alice")
    err = refused(["feedback", ASSIGNMENT, "--course", str(course)], capsys, course)
    assert "no autograded submission" in err


def test_workers_must_not_be_negative(course, capsys):
    submit(course, "alice")
    before = snapshot(course)
    with pytest.raises(SystemExit) as stopped:
        kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--workers", "-2"])
    assert stopped.value.code == 2 and "expected a number of workers >= 0 (0: one per core)" in capsys.readouterr().err
    assert snapshot(course) == before


def test_workers_0_is_one_per_core_as_in_the_settings(course, monkeypatch):
    from grader.autograde.executors import LocalExecutor
    from grader.foundations.settings import default_workers

    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 1\n")
    submit(course, "alice")
    submit(course, "bob")
    pools = []
    start = LocalExecutor.start
    monkeypatch.setattr(LocalExecutor, "start", lambda self, *args: pools.append(self.workers) or start(self, *args))
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet", "--workers", "0"]) == 0
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet", "--force"]) == 0
    assert pools == [min(default_workers(), 2), 1]  # never more workers than notebooks


# ---- collect and check: files that are not what they should be -----------------------------------
def test_collect_from_a_file_that_is_not_a_zip(course, capsys, tmp_path):
    fake = tmp_path / "notzip.zip"
    fake.write_text("these are not the downloads")
    err = refused(["collect", ASSIGNMENT, "--course", str(course), "--from", str(fake)], capsys, course)
    assert "is neither a folder nor a zip archive" in err


def test_collect_from_a_path_that_does_not_exist(course, capsys, tmp_path):
    err = refused(["collect", ASSIGNMENT, "--course", str(course), "--from", str(tmp_path / "gone.zip")], capsys, course)
    assert "no such file or folder" in err


def test_check_of_a_file_that_is_not_a_notebook(tmp_path, capsys):
    essay = tmp_path / "essay.pdf"
    essay.write_bytes(b"%PDF-1.4 not a notebook")
    err = refused(["check", str(essay)], capsys, tmp_path)
    assert "is not a Jupyter notebook (.ipynb)" in err and "corrupted" not in err
    err = refused(["check", str(tmp_path / "missing.ipynb")], capsys, tmp_path)
    assert "no such file" in err


# ---- init never destroys work ------------------------------------------------------------------
def test_init_again_on_a_course_refuses_and_keeps_edits(course, capsys):
    source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    source.write_text(source.read_text().replace("return x * x", "return x ** 2"))
    err = refused(["init", str(course), "--exercises", str(FIXTURES / "exercises")], capsys, course)
    assert "is already a course ('ad101')" in err and "--force" in err


def test_init_with_another_course_id_is_a_contradiction(course, capsys):
    err = refused(["init", str(course), "--course-id", "other", "--exercises", str(FIXTURES / "exercises"), "--force"],
                  capsys, course)
    assert "is already the course 'ad101'" in err and "--course-id 'other'" in err


def test_init_into_a_folder_with_files_refuses(tmp_path, capsys):
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / "chapter1.tex").write_text("...")
    err = refused(["init", str(folder), "--exercises", str(FIXTURES / "exercises")], capsys, tmp_path)
    assert "is not empty (chapter1.tex)" in err and "--force" in err


def test_init_force_adds_new_exercises_and_keeps_what_the_instructor_changed(course, tmp_path, capsys):
    exercises = tmp_path / "exercises"
    shutil.copytree(FIXTURES / "exercises", exercises)
    (exercises / ASSIGNMENT / "data.csv").write_text("1,2\n")
    shutil.copytree(exercises / ASSIGNMENT, exercises / "sample_two")
    edited = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    edited.write_text(edited.read_text().replace("return x * x", "return x ** 2"))
    mine = edited.read_bytes()
    config = (course / "nbgrader_config.py").read_bytes()
    assert kitgrade(["init", str(course), "--exercises", str(exercises), "--force"]) == 0
    out = capsys.readouterr().out
    assert edited.read_bytes() == mine and f"kept source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb" in out
    assert (course / "source" / ASSIGNMENT / "data.csv").read_text() == "1,2\n"
    assert (course / "source" / "sample_two" / f"{ASSIGNMENT}.ipynb").is_file() and "added sample_two" in out
    assert (course / "nbgrader_config.py").read_bytes() == config


def test_init_force_updates_a_file_the_instructor_did_not_change(course, tmp_path, capsys):
    exercises = tmp_path / "exercises"
    shutil.copytree(FIXTURES / "exercises", exercises)
    newer = exercises / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    newer.write_text(newer.read_text().replace("return x * x", "return x*x"))
    assert newer.read_bytes() != (FIXTURES / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()
    assert kitgrade(["init", str(course), "--exercises", str(exercises), "--force"]) == 0
    assert (course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() == newer.read_bytes()
    assert "updated 1 file(s)" in capsys.readouterr().out


# ---- the configuration -----------------------------------------------------------------------------
@pytest.mark.parametrize("line, expected", [
    ("c.KitGrade.cell_timeout = 'ten'", "c.KitGrade.cell_timeout = 'ten' is not valid; expected a float"),
    ("c.KitGrade.workers = -2", "c.KitGrade.workers = -2 is not valid; expected an int >= 0"),
    ("c.Execute.timeout = 'long'", "c.Execute.timeout = 'long' is not valid; expected an int"),
    ("c.KitGrade.protected_paths = '/srv'", "c.KitGrade.protected_paths = '/srv' is not valid; expected a list"),
    ("c.KitGrade.cell_timout = 3", "c.KitGrade.cell_timout is not a setting; the kit's settings are "),
    ("c.KitGrade.cell_timeout = = 3", "nbgrader_config.py, line {n}: SyntaxError"),
    ("c.KitGrade.cell_timeout = tem", "nbgrader_config.py, line {n}: NameError: name 'tem' is not defined"),
])
def test_a_config_error_names_the_file_the_setting_and_what_is_expected(course, capsys, line, expected):
    config = course / "nbgrader_config.py"
    lines = config.read_text().splitlines()
    config.write_text("\n".join(lines + [line]) + "\n")
    err = refused(["autograde", ASSIGNMENT, "--course", str(course)], capsys, course)
    assert expected.format(n=len(lines) + 1) in err and str(config) in err


def test_a_moved_course_whose_config_names_the_old_folder(course, capsys, tmp_path):
    config = course / "nbgrader_config.py"
    config.write_text(config.read_text().replace("c.CourseDirectory.root = here",
                                                 f"c.CourseDirectory.root = {str(tmp_path / 'old_place')!r}"))
    err = refused(["release", "--course", str(course)], capsys, course, tmp_path / "old_place")
    assert f"sets CourseDirectory.root = '{tmp_path / 'old_place'}', but the course is {course}" in err


def test_release_to_an_exchange_that_does_not_exist(course, capsys):
    shutil.rmtree(course / "exchange")
    err = refused(["release", ASSIGNMENT, "--course", str(course)], capsys, course)
    assert f"the exchange folder {course / 'exchange'} (Exchange.root) does not exist" in err and "--no-exchange" in err


# ---- a bug of the kit ------------------------------------------------------------------------------
def test_a_bug_says_where_to_report_it_and_keeps_the_traceback(course, capsys, monkeypatch):
    import grader.cli

    def broken(args):
        raise KeyError("an internal mix-up")

    parser = grader.cli.build_parser
    monkeypatch.setattr(grader.cli, "build_parser", lambda: _with_handler(parser(), "export", broken))
    (course / ".kitgrade").mkdir(exist_ok=True)
    status = kitgrade(["export", "--course", str(course)])
    err = capsys.readouterr().err
    assert status == 3 and "internal error (KeyError" in err and "please report it" in err
    log = Path(err.split("with the log ")[1].strip())
    assert log.parent == course / ".kitgrade" / "logs"
    assert "Traceback" in log.read_text() and "an internal mix-up" in log.read_text()


def _with_handler(parser, command, handler):
    parser._subparsers._group_actions[0].choices[command].set_defaults(handler=handler)
    return parser


def test_the_course_is_found_through_the_users_nbgrader_config_as_on_a_grader_account(course, tmp_path, capsys,
                                                                                       monkeypatch):
    jupyter = tmp_path / "jupyter-config"
    jupyter.mkdir()
    (jupyter / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(jupyter))
    monkeypatch.chdir(tmp_path)
    err = refused(["autograde", "sampel_ex"], capsys, course)
    assert f"no assignment 'sampel_ex' in {course / 'source'}" in err
    (jupyter / "nbgrader_config.py").write_text(f"c = get_config()\nc.CourseDirectory.root = {str(tmp_path / 'gone')!r}\n")
    err = refused(["autograde", ASSIGNMENT], capsys, course)
    assert f"sets CourseDirectory.root = '{tmp_path / 'gone'}', which does not exist" in err


def test_a_source_notebook_edited_after_the_release_is_noticed(course):
    import os
    import time

    assert Course(course).changed_since_release(ASSIGNMENT) == []
    source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    later = time.time() + 5
    os.utime(source, (later, later))
    assert Course(course).changed_since_release(ASSIGNMENT) == [f"{ASSIGNMENT}.ipynb"]


def test_a_bare_kitgrade_shows_its_commands(capsys):
    assert kitgrade([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kitgrade") and all(c in out for c in ("init", "release", "autograde", "check"))
