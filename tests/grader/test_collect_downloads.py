"""``kitgrade collect --from``: LMS downloads (Canvas, Moodle, Blackboard, folders) into submitted/.

Names are parsed, never used as paths; links, devices and unsafe zip entries are never followed;
files that name no student are listed and left out; two origins for one student are a conflict
that leaves that student's earlier submission as it was.
"""

from __future__ import annotations

import csv
import io
import os
import signal
import stat
import subprocess
import sys
import time
import unicodedata
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
    assert "an older attempt of jdoe (kept 2026-01-16 09:30:00)" in out and ".txt" not in out


def test_moodle_folders_are_matched_by_full_name_through_the_roster(course, tmp_path, capsys):
    folder = tmp_path / "moodle"
    # Moodle's own folder names (a trailing underscore), one of them as a Mac's zip stores it (NFD)
    for name, mark in (("Jane Doe_881_assignsubmission_file_", "jane"),
                       (unicodedata.normalize("NFD", "José Núñez_882_assignsubmission_file_"), "jose")):
        (folder / name).mkdir(parents=True)
        (folder / name / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
    roster = tmp_path / "students.csv"
    roster.write_text("id,first_name,last_name,email\njdoe,Jane,Doe,jdoe@uni.edu\njnunez,José,Núñez,jn@uni.edu\n"
                      "mlee,Min,Lee,ml@uni.edu\n", encoding="utf-8")
    assert collect(course, folder, "--roster", str(roster)) == 0
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"jdoe": "jane", "jnunez": "jose"}
    assert "in the roster, nothing submitted: mlee" in out


def test_moodle_full_names_without_a_roster_are_mapped_to_ids_and_listed(course, tmp_path, capsys):
    folder = tmp_path / "moodle"
    for name, mark in (("Jane Doe_881_assignsubmission_file_", "jane"),
                       (unicodedata.normalize("NFD", "José Núñez_882_assignsubmission_file_"), "jose")):
        (folder / name).mkdir(parents=True)
        (folder / name / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
    assert collect(course, folder) == 0
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"jane_doe": "jane", "jose_nunez": "jose"}
    assert "LMS names that are not student ids, collected as: 'Jane Doe' -> jane_doe; 'José Núñez' -> jose_nunez" in out


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
def test_a_student_folder_inside_another_students_folder_is_theirs_not_the_classmates(course, tmp_path, capsys):
    download = tmp_path / "download"
    (download / "calice").mkdir(parents=True)
    (download / "calice" / NOTEBOOK).write_bytes(notebook_bytes(course, "calice's own"))
    (download / "cmallory" / "calice").mkdir(parents=True)
    (download / "cmallory" / "calice" / NOTEBOOK).write_bytes(notebook_bytes(course, "blank, by cmallory"))
    assert collect(course, download) == 0
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"calice": "calice's own"}
    assert f"cmallory/calice/{NOTEBOOK}: inside a sub-folder of 'cmallory'" in out


def test_the_same_student_in_two_sections_is_a_conflict(course, tmp_path, capsys):
    folder = tmp_path / "downloads"
    for section, mark in (("sec1", "one"), ("sec2", "two")):
        (folder / section / "jdoe").mkdir(parents=True)
        (folder / section / "jdoe" / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
    (folder / "sec2" / "mlee").mkdir()
    (folder / "sec2" / "mlee" / NOTEBOOK).write_bytes(notebook_bytes(course, "min"))
    (folder / "README.txt").write_text("sections 1 and 2")  # a file of the instructor's beside the sections
    assert collect(course, folder) == 1
    out = capsys.readouterr().out
    assert list(submitted(course)) == ["mlee"]
    assert "jdoe: files from 2 places map to this student" in out and "sec1/" in out and "sec2/" in out


def test_lms_names_that_are_not_ids_are_mapped_and_listed_and_an_exact_id_keeps_its_own(course, tmp_path, capsys):
    folder = tmp_path / "downloads"
    for name in ("Jane Doe", "José", "jose"):
        (folder / name).mkdir(parents=True)
        (folder / name / NOTEBOOK).write_bytes(notebook_bytes(course, name))
    assert collect(course, folder) == 1
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"jane_doe": "Jane Doe", "jose": "jose"}
    assert "collected as: 'Jane Doe' -> jane_doe" in out
    assert (f"jose: set aside José/{NOTEBOOK} (folder José/): it could be jose's, whose own submission (folder jose/) "
            "is collected; if it is another student's, pass --roster or collect it into their folder by hand") in out


def test_names_that_differ_only_in_case_are_two_students_each_collected_and_said(course, tmp_path, capsys):
    folder = tmp_path / "downloads"
    for name in ("JDOE", "jdoe"):
        (folder / name).mkdir(parents=True)
        (folder / name / NOTEBOOK).write_bytes(notebook_bytes(course, name))
    assert collect(course, folder) == 0
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"JDOE": "JDOE", "jdoe": "jdoe"}
    assert "note: JDOE, jdoe differ only in case" in out


def test_a_roster_takes_a_name_in_another_case_unless_the_exact_id_is_there_too(course, tmp_path, capsys):
    roster = tmp_path / "students.csv"
    roster.write_text("id,first_name,last_name\njdoe,Jane,Doe\nmlee,Min,Lee\n", encoding="utf-8")
    only = tmp_path / "only"
    (only / "JDoe").mkdir(parents=True)
    (only / "JDoe" / NOTEBOOK).write_bytes(notebook_bytes(course, "jane"))
    assert collect(course, only, "--roster", str(roster)) == 0
    assert {s: marker(d) for s, d in submitted(course).items()} == {"jdoe": "jane"}
    assert "'JDoe' -> jdoe" in capsys.readouterr().out
    both = tmp_path / "both"
    for name, mark in (("jdoe", "jane"), ("JDOE", "someone")):
        (both / name).mkdir(parents=True)
        (both / name / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
    assert collect(course, both, "--roster", str(roster)) == 1
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"jdoe": "jane"}
    assert f"jdoe: set aside JDOE/{NOTEBOOK}" in out


# ---- identity from what the LMS wrote, never from a name a student chose ------------------------------
def test_a_blackboard_upload_named_as_a_classmates_attempt_is_the_uploaders(course, tmp_path, capsys):
    forged = f"x_calice_attempt_2026-01-20-10-00-00_{NOTEBOOK}"  # the name cmallory gave her upload
    source = make_zip(tmp_path / "gradebook.zip", {
        f"Problem Set 1_calice_attempt_2026-01-15-10-00-00_{NOTEBOOK}": notebook_bytes(course, "calice's own"),
        f"Problem Set 1_cmallory_attempt_2026-01-15-11-00-00_{forged}": notebook_bytes(course, "blank, by cmallory"),
    })
    assert collect(course, source) == 0
    assert marker(submitted(course)["calice"]) == "calice's own"
    assert (course / "submitted" / "cmallory" / ASSIGNMENT / forged).is_file()  # hers, an extra notebook


def test_a_canvas_upload_named_like_another_lms_download_of_a_classmate_is_the_uploaders(course, tmp_path, capsys):
    forged = f"x_doejane_attempt_2026-01-20-10-00-00_{NOTEBOOK}"
    source = make_zip(tmp_path / "submissions.zip", {
        f"doejane_12345_67890_{NOTEBOOK}": notebook_bytes(course, "jane"),
        f"smithbob_23456_78901_{NOTEBOOK}": notebook_bytes(course, "bob"),
        f"mallorym_99999_11111_{forged}": notebook_bytes(course, "blank, by mallory"),
    })
    assert collect(course, source) == 0
    assert {s: marker(d) for s, d in submitted(course).items()} == {"doejane": "jane", "smithbob": "bob",
                                                                   "mallorym": "blank, by mallory"}
    assert (course / "submitted" / "mallorym" / ASSIGNMENT / forged).is_file()  # hers, an extra notebook


def test_a_canvas_user_who_takes_a_classmates_name_gets_an_id_of_their_own(course, tmp_path, capsys):
    first = make_zip(tmp_path / "first.zip", {f"doejane_12345_67890_{NOTEBOOK}": notebook_bytes(course, "jane")})
    assert collect(course, first) == 0
    later = make_zip(tmp_path / "later.zip", {  # mallory renamed herself in Canvas; her user id is hers
        f"doejane_12345_67891_{NOTEBOOK}": notebook_bytes(course, "jane, again"),
        f"doejane_99999_67892_{NOTEBOOK}": notebook_bytes(course, "mallory"),
        f"doe-jane_88888_67893_{NOTEBOOK}": notebook_bytes(course, "another"),
    })
    assert collect(course, later) == 0
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {
        "doejane": "jane, again", "doejane-99999": "mallory", "doe-jane": "another"}
    assert "Canvas user 99999 ('doejane') -> doejane-99999, as 'doejane' is another Canvas user's id" in out
    assert "note: doe-jane, doejane, doejane-99999 differ only in case, accents or punctuation" not in out
    assert "note: doe-jane, doejane differ only in case, accents or punctuation" in out


def test_two_canvas_users_of_one_name_in_one_download_are_both_collected(course, tmp_path, capsys):
    source = make_zip(tmp_path / "submissions.zip", {
        f"doejane_12345_67890_{NOTEBOOK}": notebook_bytes(course, "one"),
        f"doejane_54321_67891_{NOTEBOOK}": notebook_bytes(course, "two"),
    })
    assert collect(course, source) == 0
    assert {s: marker(d) for s, d in submitted(course).items()} == {"doejane-12345": "one", "doejane-54321": "two"}


# ---- newest wins; a collect cut short is resumed -----------------------------------------------------
def test_a_later_blackboard_attempt_replaces_the_earlier_and_an_older_one_does_not(course, tmp_path, capsys):
    def attempt(stamp, mark):
        return make_zip(tmp_path / f"{stamp}.zip", {
            f"Problem Set 1_jdoe_attempt_{stamp}_{NOTEBOOK}": notebook_bytes(course, mark)})

    assert collect(course, attempt("2026-01-15-10-00-00", "first")) == 0
    assert collect(course, attempt("2026-01-16-10-00-00", "second")) == 0
    assert "replaced the earlier submission of: jdoe" in capsys.readouterr().out
    assert collect(course, attempt("2026-01-15-12-00-00", "stale")) == 0
    out = capsys.readouterr().out
    assert marker(submitted(course)["jdoe"]) == "second"
    assert "an older attempt (time 2026-01-15 12:00:00, submitted/ has 2026-01-16 10:00:00)" in out


def test_a_later_canvas_upload_replaces_the_earlier_and_an_older_one_does_not(course, tmp_path, capsys):
    def upload(attachment, mark):
        return make_zip(tmp_path / f"{attachment}.zip", {f"doejane_12345_{attachment}_{NOTEBOOK}": notebook_bytes(course, mark)})

    assert collect(course, upload(500, "first")) == 0
    assert collect(course, upload(700, "second")) == 0
    assert collect(course, upload(600, "between")) == 0
    out = capsys.readouterr().out
    assert marker(submitted(course)["doejane"]) == "second"
    assert "an older attempt (upload number 600, submitted/ has 700)" in out


def test_a_second_download_that_says_nothing_of_time_is_a_conflict_not_a_guess(course, tmp_path, capsys):
    for mark in ("old", "new"):
        folder = tmp_path / mark
        (folder / "jdoe").mkdir(parents=True)
        (folder / "jdoe" / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
        (folder / "mlee").mkdir(parents=True)
        (folder / "mlee" / NOTEBOOK).write_bytes(notebook_bytes(course, "min"))
    assert collect(course, tmp_path / "old") == 0
    assert collect(course, tmp_path / "new") == 1
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"jdoe": "old", "mlee": "min"}
    assert ("jdoe: submitted/ already holds another notebook of this student, and nothing the LMS wrote says which "
            f"is newer; the earlier is kept: remove submitted/jdoe/{ASSIGNMENT} to take this one") in out


def test_a_collect_killed_halfway_is_resumed_by_collecting_again(course, tmp_path):
    students = 150
    source = make_zip(tmp_path / "submissions.zip", {
        f"student{i:03d}_{1000 + i}_{5000 + i}_{NOTEBOOK}": notebook_bytes(course, f"s{i}") for i in range(students)})
    command = [sys.executable, "-m", "grader.cli", "collect", ASSIGNMENT, "--course", str(course), "--from", str(source)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while process.poll() is None and not any((course / "submitted").glob("*")):
            time.sleep(0.001)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    halfway = len(list((course / "submitted").glob("*")))
    assert process.returncode == -signal.SIGKILL and halfway < students, (process.returncode, halfway)
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {s: marker(d) for s, d in submitted(course).items()} == {f"student{i:03d}": f"s{i}" for i in range(students)}


def test_a_roster_id_that_cannot_be_a_folder_name_is_refused_before_anything_is_written(course, tmp_path, capsys):
    roster = tmp_path / "students.csv"
    roster.write_text("id,first_name,last_name\njdoe,Jane,Doe\n../../evil,Eve,Il\n", encoding="utf-8")
    folder = tmp_path / "downloads"
    (folder / "jdoe").mkdir(parents=True)
    (folder / "jdoe" / NOTEBOOK).write_bytes(notebook_bytes(course, "jane"))
    before = snapshot(course)
    assert collect(course, folder, "--roster", str(roster)) == 2
    err = capsys.readouterr().err
    assert "'../../evil' (Eve Il) cannot be a student id: nbgrader makes it a folder name" in err
    assert snapshot(course) == before and "Traceback" not in err


def test_two_moodle_participants_of_one_full_name_are_set_aside_and_the_class_collected(course, tmp_path, capsys):
    folder = tmp_path / "moodle"
    for name, mark in (("Jane Doe_881_assignsubmission_file_", "jane"), ("Jane Doe_883_assignsubmission_file_", "copy"),
                       ("Min Lee_882_assignsubmission_file_", "min")):
        (folder / name).mkdir(parents=True)
        (folder / name / NOTEBOOK).write_bytes(notebook_bytes(course, mark))
    assert collect(course, folder) == 1
    out = capsys.readouterr().out
    assert {s: marker(d) for s, d in submitted(course).items()} == {"min_lee": "min"}
    assert "jane_doe: files from 2 places map to this student: moodle participant 881 in Jane Doe_881" in out


def test_a_damaged_record_of_earlier_collects_costs_nothing(course, tmp_path, capsys):
    first = make_zip(tmp_path / "first.zip", {f"doejane_12345_500_{NOTEBOOK}": notebook_bytes(course, "first")})
    assert collect(course, first) == 0
    record = course / ".kitgrade" / "collected" / f"{ASSIGNMENT}.json"
    record.write_text('{"doejane": {"collected": {"origin": 1, "attempt": "x"}}, "x": []}')
    later = make_zip(tmp_path / "later.zip", {f"doejane_12345_700_{NOTEBOOK}": notebook_bytes(course, "later")})
    assert collect(course, later) == 1  # judged by submitted/ alone: nothing there says which is newer
    out = capsys.readouterr().out
    assert marker(submitted(course)["doejane"]) == "first" and "nothing the LMS wrote says which is newer" in out
