"""``kitgrade collect --from``: LMS downloads (Canvas, Moodle, Blackboard, folders) into submitted/.

Names are parsed, never used as paths; links, devices and unsafe zip entries are never followed;
files that name no student are listed and left out; two origins for one student are a conflict
that leaves that student's earlier submission as it was.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import zipfile
from pathlib import Path

import nbformat
import pytest

from course_snapshots import ASSIGNMENT, copy_course, make_course, snapshot
from grader.cli import main as kitgrade

NOTEBOOK = f"{ASSIGNMENT}.ipynb"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("template") / "course")


@pytest.fixture
def course(template, tmp_path) -> Path:
    return copy_course(template, tmp_path / "course")


def notebook_bytes(course: Path, marker: str) -> bytes:
    """The released notebook with a marker, so each student's file can be told apart."""
    nb = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    nb.metadata["marker"] = marker
    return nbformat.writes(nb).encode()


def make_zip(path: Path, entries: dict[str, bytes], symlinks: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return path


def collect(course: Path, source: Path, *extra: str) -> int:
    return kitgrade(["collect", ASSIGNMENT, "--course", str(course), "--from", str(source), *extra])


def submitted(course: Path) -> dict[str, bytes]:
    return {p.parent.parent.name: p.read_bytes() for p in (course / "submitted").glob(f"*/{ASSIGNMENT}/*.ipynb")}


def marker(data: bytes) -> str:
    return nbformat.reads(data.decode(), as_version=4).metadata.get("marker")


# ---- the LMSs' own names ----------------------------------------------------------------------------
def test_canvas_names_give_the_student_and_the_canvas_user_id(course, tmp_path, capsys):
    source = make_zip(tmp_path / "submissions.zip", {
        f"doejane_12345_67890_{NOTEBOOK}": notebook_bytes(course, "jane"),
        f"smithbob_LATE_23456_78901_{NOTEBOOK}": notebook_bytes(course, "bob"),
    })
    assert collect(course, source) == 0
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"doejane": "jane", "smithbob": "bob"}
    assert "marked LATE by Canvas: smithbob" in out
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "ad101") as gradebook:
        assert {s.id: s.lms_user_id for s in gradebook.students} == {"doejane": "12345", "smithbob": "23456"}


def test_blackboard_names_give_the_username_and_the_attempt_time(course, tmp_path, capsys):
    source = make_zip(tmp_path / "gradebook_ad101.zip", {
        f"Problem Set 1_jdoe_attempt_2026-01-15-10-00-00_{NOTEBOOK}": notebook_bytes(course, "first"),
        f"Problem Set 1_jdoe_attempt_2026-01-16-09-30-00_{NOTEBOOK}": notebook_bytes(course, "second"),
        "Problem Set 1_jdoe_attempt_2026-01-16-09-30-00.txt": b"Name: Jane Doe\nSubmission Field: ...",
    })
    assert collect(course, source) == 0
    out = capsys.readouterr().out
    assert marker(submitted(course)["jdoe"]) == "second"
    assert (course / "submitted" / "jdoe" / ASSIGNMENT / "timestamp.txt").read_text().startswith("2026-01-16 09:30:00")
    assert "an older Blackboard attempt of jdoe" in out and ".txt" not in out


def test_moodle_folders_need_a_roster_and_are_matched_by_full_name(course, tmp_path, capsys):
    folder = tmp_path / "moodle"
    for name, mark in (("Jane Doe_881_assignsubmission_file", "jane"), ("José Núñez_882_assignsubmission_file", "jose")):
        (folder / name).mkdir(parents=True)
        (folder / name / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
    before = snapshot(course / "submitted")
    assert collect(course, folder) == 2
    assert "Moodle download names students by full name; pass --roster" in capsys.readouterr().err
    assert snapshot(course / "submitted") == before
    roster = tmp_path / "students.csv"
    roster.write_text("id,first_name,last_name,email\njdoe,Jane,Doe,jdoe@uni.edu\njnunez,José,Núñez,jn@uni.edu\n"
                      "mlee,Min,Lee,ml@uni.edu\n", encoding="utf-8")
    assert collect(course, folder, "--roster", str(roster)) == 0
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"jdoe": "jane", "jnunez": "jose"}
    assert "in the roster, nothing submitted: mlee" in out


def test_a_canvas_roster_maps_canvas_ids_and_leaves_out_strangers(course, tmp_path, capsys):
    roster = tmp_path / "canvas_export.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Problem Set 1 (555)\n"
                      "    Points Possible,,,,,7\n"
                      '"Doe, Jane",12345,S001,jdoe,Section 1,\n'
                      '"Lee, Min",34567,S003,mlee,Section 2,\n')
    source = make_zip(tmp_path / "submissions.zip", {
        f"doejane_12345_67890_{NOTEBOOK}": notebook_bytes(course, "jane"),
        f"eveeve_99999_11111_{NOTEBOOK}": notebook_bytes(course, "eve"),
    })
    assert collect(course, source, "--roster", str(roster)) == 0
    out = capsys.readouterr().out
    assert list(submitted(course)) == ["jdoe"]
    assert "Canvas user 99999 (eveeve) is not in the roster" in out and "nothing submitted: mlee" in out


# ---- names that are not a student, files that are not files ------------------------------------------
def test_a_file_named_like_no_lms_download_is_listed_not_made_a_student(course, tmp_path, capsys):
    source = make_zip(tmp_path / "downloads.zip", {
        f"doejane_12345_67890_{NOTEBOOK}": notebook_bytes(course, "jane"),
        "random_name.ipynb": notebook_bytes(course, "random"),
    })
    assert collect(course, source) == 0
    assert list(submitted(course)) == ["doejane"]
    assert "random_name.ipynb: named like no LMS download" in capsys.readouterr().out


def test_dot_dot_and_unsafe_zip_paths_are_never_a_student_or_a_path(course, tmp_path, capsys):
    source = make_zip(tmp_path / "downloads.zip", {
        f"doejane_12345_67890_{NOTEBOOK}": notebook_bytes(course, "jane"),
        f".._{NOTEBOOK}": notebook_bytes(course, "dots"),
        f"../evil_1_2_{NOTEBOOK}": notebook_bytes(course, "evil"),
        f"../{NOTEBOOK}": notebook_bytes(course, "evil"),
        f"/abs/{NOTEBOOK}": notebook_bytes(course, "evil"),
    })
    outside = snapshot(course.parent)
    assert collect(course, source) == 0
    out = capsys.readouterr().out
    assert list(submitted(course)) == ["doejane"]
    assert out.count("an unsafe path in the zip") == 3 and f".._{NOTEBOOK}: named like no LMS download" in out
    changed = {p for p in set(snapshot(course.parent)) ^ set(outside)}
    assert all(p.startswith(str(course / "submitted")) or p.startswith(str(course / ".kitgrade")) for p in changed), changed


def test_links_and_devices_in_a_folder_are_never_followed(course, tmp_path, capsys):
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "alice").mkdir()
    (folder / "alice" / NOTEBOOK).write_bytes(notebook_bytes(course, "alice"))
    (folder / "mallory").mkdir()
    (folder / "mallory" / NOTEBOOK).symlink_to(course / "source" / ASSIGNMENT / NOTEBOOK)
    (folder / "trudy").mkdir()
    os.link(course / "source" / ASSIGNMENT / NOTEBOOK, folder / "trudy" / NOTEBOOK)
    (folder / "oscar").mkdir()
    os.mkfifo(folder / "oscar" / NOTEBOOK)
    (folder / "eve").symlink_to(course / "source" / ASSIGNMENT, target_is_directory=True)
    assert collect(course, folder) == 0
    out = capsys.readouterr().out
    assert list(submitted(course)) == ["alice"]
    assert f"mallory/{NOTEBOOK}: a symbolic link; not followed" in out
    assert f"trudy/{NOTEBOOK}: a hard link" in out
    assert f"oscar/{NOTEBOOK}: not a regular file" in out
    assert "eve: a symbolic link to a folder; not followed" in out


def test_a_symlink_entry_in_a_zip_is_not_followed(course, tmp_path, capsys):
    source = make_zip(tmp_path / "downloads.zip", {f"doejane_12345_67890_{NOTEBOOK}": notebook_bytes(course, "jane")},
                      symlinks={f"mallory_1_2_{NOTEBOOK}": str(course / "source" / ASSIGNMENT / NOTEBOOK)})
    assert collect(course, source) == 0
    assert list(submitted(course)) == ["doejane"]
    assert f"mallory_1_2_{NOTEBOOK}: a symbolic link; not followed" in capsys.readouterr().out


def test_a_download_with_no_submission_names_the_expected_names(course, tmp_path, capsys):
    source = make_zip(tmp_path / "downloads.zip", {"notes.txt": b"x", "random_name.ipynb": b"{}"})
    before = snapshot(course)
    assert collect(course, source) == 2
    err = capsys.readouterr().err
    assert snapshot(course) == before
    assert f"doejane_12345_67890_{NOTEBOOK} (Canvas)" in err and f"jdoe/{NOTEBOOK}" in err and "Traceback" not in err


# ---- conflicts: never merged, never overwritten -------------------------------------------------------
def test_a_student_folder_inside_another_students_folder_does_not_overwrite_them(course, tmp_path, capsys):
    first = tmp_path / "first"
    (first / "calice").mkdir(parents=True)
    (first / "calice" / NOTEBOOK).write_bytes(notebook_bytes(course, "calice's own"))
    assert collect(course, first) == 0
    calice = submitted(course)["calice"]
    second = tmp_path / "second"
    (second / "calice").mkdir(parents=True)
    (second / "calice" / NOTEBOOK).write_bytes(notebook_bytes(course, "calice's own"))
    (second / "cmallory" / "calice").mkdir(parents=True)
    (second / "cmallory" / "calice" / NOTEBOOK).write_bytes(notebook_bytes(course, "blank, by cmallory"))
    assert collect(course, second) == 1
    out = capsys.readouterr().out
    assert submitted(course)["calice"] == calice
    assert "calice: files from 2 places map to this student" in out and "in cmallory/" in out


def test_the_same_student_in_two_sections_is_a_conflict(course, tmp_path, capsys):
    folder = tmp_path / "downloads"
    for section, mark in (("sec1", "one"), ("sec2", "two")):
        (folder / section / "jdoe").mkdir(parents=True)
        (folder / section / "jdoe" / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
    (folder / "sec2" / "mlee").mkdir()
    (folder / "sec2" / "mlee" / NOTEBOOK).write_bytes(notebook_bytes(course, "min"))
    assert collect(course, folder) == 1
    out = capsys.readouterr().out
    assert list(submitted(course)) == ["mlee"]
    assert "jdoe: files from 2 places map to this student" in out and "sec1/" in out and "sec2/" in out


def test_names_that_differ_in_case_spaces_or_accents_are_reported_not_merged(course, tmp_path, capsys):
    folder = tmp_path / "downloads"
    for name in ("Jane Doe", "josé", "JDOE", "jdoe", "jose"):
        (folder / name).mkdir(parents=True)
        (folder / name / NOTEBOOK).write_bytes(notebook_bytes(course, name))
    assert collect(course, folder) == 1
    out = capsys.readouterr().out
    assert list(submitted(course)) == ["jose"]
    assert "JDOE: differs from 'jdoe' only in case" in out and "jdoe: differs from 'JDOE'" in out
    assert "'Jane Doe' is not a student id" in out and "'josé' is not a student id" in out


def test_a_new_spelling_of_an_already_submitted_student_is_a_conflict(course, tmp_path, capsys):
    first = tmp_path / "first"
    (first / "jdoe").mkdir(parents=True)
    (first / "jdoe" / NOTEBOOK).write_bytes(notebook_bytes(course, "lower"))
    assert collect(course, first) == 0
    second = tmp_path / "second"
    (second / "JDoe").mkdir(parents=True)
    (second / "JDoe" / NOTEBOOK).write_bytes(notebook_bytes(course, "upper"))
    assert collect(course, second) == 1
    assert "submitted/ already holds 'jdoe'" in capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"jdoe": "lower"}


def test_collecting_a_newer_download_replaces_that_students_submission_and_says_so(course, tmp_path, capsys):
    for mark in ("old", "new"):
        folder = tmp_path / mark
        (folder / "jdoe").mkdir(parents=True)
        (folder / "jdoe" / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
        assert collect(course, folder) == 0
    assert marker(submitted(course)["jdoe"]) == "new"
    assert "replaced the earlier submission of: jdoe" in capsys.readouterr().out
