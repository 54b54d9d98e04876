"""``kitgrade summary``'s table in the terminal: its columns stay in line whatever the length of a test's
or a written answer's name (ps1's ``test_elementwise_derivative`` is longer than the default column)."""
from __future__ import annotations

import re

import pytest

from grader.commands.summary_page import terminal_table


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


def _shown(text: str) -> int:
    """Columns ``text`` takes in a terminal (a Chinese character, two)."""
    import unicodedata
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_header_ends_where_its_column_does_in_both_languages(lang):
    lines = terminal_table(SUMMARY, lang).splitlines()
    header = lines[lines.index(next(line for line in lines if line.startswith("  test_"))) - 1]
    row = next(line for line in lines if line.startswith("  test_backward_again"))
    # the pass rate's column ends under the header's second cell, the points' under the third
    rate_end, points_end = re.search(r"\d/3", row).end(), re.search(r"\d/3\s+\d", row).end()
    cells = list(re.finditer(r"\S+", header))
    assert _shown(header[:cells[-2].end()]) == rate_end, (header, row)
    assert _shown(header[:cells[-1].end()]) - rate_end > 0 and abs(_shown(header[:cells[-1].end()]) - points_end) <= 5
