"""``kitgrade release`` says what it did to nbgrader's exchange, never leaves a stale copy there
without a word, and uses the exchange of the course where it is now (a moved course)."""

from __future__ import annotations

import shutil
from pathlib import Path

from course_snapshots import ASSIGNMENT, FIXTURES
from grader.cli import main as kitgrade

NOTEBOOK = f"{ASSIGNMENT}.ipynb"


def release(course: Path, capsys) -> str:
    assert kitgrade(["release", ASSIGNMENT, "--course", str(course)]) == 0
    return capsys.readouterr().out


def test_release_reports_new_unchanged_and_updated_and_the_exchange_follows_source(tmp_path, capsys):
    course = tmp_path / "course"
    assert kitgrade(["init", str(course), "--course-id", "ad101", "--exercises", str(FIXTURES / "exercises")]) == 0
    outbound = course / "exchange" / "ad101" / "outbound" / ASSIGNMENT / NOTEBOOK
    assert "(first release)" in release(course, capsys)
    first = outbound.read_bytes()
    assert "(the exchange already held this version)" in release(course, capsys)
    source = course / "source" / ASSIGNMENT / NOTEBOOK
    source.write_text(source.read_text().replace("# Sample exercise", "# Sample exercise (corrected)"))
    assert "(updated: it held an older version" in release(course, capsys)
    assert outbound.read_bytes() != first and "(corrected)" in outbound.read_text()
    assert outbound.read_bytes() == (course / "release" / ASSIGNMENT / NOTEBOOK).read_bytes()

    moved = tmp_path / "elsewhere" / "course"
    moved.parent.mkdir()
    shutil.move(str(course), moved)
    source = moved / "source" / ASSIGNMENT / NOTEBOOK
    source.write_text(source.read_text().replace("(corrected)", "(corrected twice)"))
    assert "(updated" in release(moved, capsys)
    assert "(corrected twice)" in (moved / "exchange" / "ad101" / "outbound" / ASSIGNMENT / NOTEBOOK).read_text()
    assert not course.exists()  # nothing recreated at the old place
