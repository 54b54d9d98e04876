"""A line of the grading record (deploy/hub/kithub/grading_record.py) from whatever a grader's request
carries: one line, valid UTF-8, written whole, and in nbgrader's log too."""
from __future__ import annotations

import json

from kithub.grading_record import append, field, line_of


def test_a_comment_with_tabs_breaks_and_a_lone_surrogate_is_one_line_of_valid_utf8(tmp_path):
    comment = json.loads('"good\\tbut\\nsee \\ud800 here"')  # what a PUT's JSON body can hold
    line = line_of("ta-one", "comment", "s01", "ps1/autograd_basics", "cell-3", f"{field('')} -> {field(comment)}")
    record = tmp_path / "grading-record.log"
    assert append(record, line) == line
    written = record.read_bytes()
    text = written.decode("utf-8")  # strict: no lone surrogate reached the file
    assert text.count("\n") == 1 and text.endswith("\n")
    assert "\\ud800" in text and "ta-one\tcomment\ts01" in text
    assert (record.stat().st_mode & 0o777) == 0o600
