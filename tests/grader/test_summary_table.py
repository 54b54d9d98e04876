"""``kitgrade summary``'s table in the terminal: its columns stay in line whatever the length of a test's
or a written answer's name (ps1's ``test_elementwise_derivative`` is longer than the default column)."""
from __future__ import annotations

import re

import pytest

from grader.summary_page import terminal_table


def _test(name: str, passed: int) -> dict:
    return {"id": name, "notebook": "autograd_basics", "max_score": 1.0, "passed": passed, "count": 3,
            "points": float(passed), "groups": []}


def _written(name: str) -> dict:
    return {"id": name, "notebook": "autograd_basics", "max_score": 2.0, "count": 3, "graded": 0, "awaiting": 2,
            "blank": 1, "points": 0.0}


SUMMARY = {  # the shape of reports/<assignment>.summary.json, as a graded ps1 leaves it
    "assignment": "ps1_autograd_basics", "max_score": 16.0, "submissions": 3, "graded": 3,
    "awaiting_manual": {}, "scores": {"alice": 11.0, "bob": 0.0, "carol": 10.0}, "mean": 7.0, "median": 10.0,
    "zeros": 1, "flags": [], "seconds": {"alice": 2.2, "bob": 2.6, "carol": 0.5},
    "tests": [_test("test_backward_again", 2), _test("test_elementwise_derivative", 2), _test("test_sin_plot", 1),
              _test("test_a_test_name_far_longer_than_any_column", 3)],
    "written": [_written("written_second_derivative"), _written("written_answer_with_a_name_longer_than_the_column")],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_columns_stay_in_line_under_long_names(lang):
    lines = terminal_table(SUMMARY, lang).splitlines()
    rows = [line for line in lines if re.match(r"  test_", line)]
    assert len(rows) == 4
    assert len({re.search(r"\d/3 ", row).start() for row in rows}) == 1, rows  # the pass rates, one column
    assert all(row.startswith(f"  {test['id']} ") for row, test in zip(rows, SUMMARY["tests"]))
    written = [line for line in lines if line.startswith("  written_")]
    assert len(written) == 2
    assert len({re.search(r"0/3 ", row).start() for row in written}) == 1, written  # graded by hand, one column
