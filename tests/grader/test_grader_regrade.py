"""``kitgrade autograde --force`` after the tests changed: everyone graded again, and every grade that
changed listed (student, notebook and cell, old -> new); a regrade that changes nothing says so."""

from __future__ import annotations

import nbformat
import pytest

from cluster_support import ASSIGNMENT, make_course
from grader.cli import main as kitgrade
from grader_fixtures import cases

pytestmark = pytest.mark.grader


def test_a_forced_regrade_after_the_tests_changed_lists_every_grade_it_changed(tmp_path, capsys):
    course = make_course(tmp_path, {"alice": cases.solution, "carol": cases.partial})
    args = ["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]
    assert kitgrade(args) == 0
    first = capsys.readouterr().out
    assert "regraded" not in first and "carol" in first and "4 / 7" in first, first

    assert kitgrade([*args, "--force"]) == 0  # the same tests: nothing moves
    assert "regraded 2 submission(s): no grade changed" in capsys.readouterr().out

    # the instructor drops the negative-only case of test_mean_abs (carol's code fails only that one)
    source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(source, as_version=4)
    test = cases.cell(nb, "test_mean_abs")
    test.source = test.source.replace("([-2, -4], 3.0)", "([2, 4], 3.0)")
    nbformat.write(nb, source)
    assert kitgrade(["release", ASSIGNMENT, "--course", str(course), "--no-exchange"]) == 0
    capsys.readouterr()
    assert kitgrade([*args, "--force"]) == 0
    out = capsys.readouterr().out
    assert "regraded 2 submission(s): 1 grade(s) changed, of 1 student(s):" in out, out
    assert f"  carol: {ASSIGNMENT}, test_mean_abs: 2 -> 3" in out, out
    assert "alice:" not in out.split("regraded", 1)[1], out
