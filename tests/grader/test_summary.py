"""``kitgrade summary`` on a batch graded by the real ``kitgrade autograde``.

The batch of the sample exercise: two correct, one blank, two groups of two students who make
the same mistake in ``derivative`` (each group fails the same check the same way), one late, one
who edited a test cell, one whose answer runs past the cell time limit.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import nbformat
import pytest

from kit_paths import ROOT
from grader.cli import main as kitgrade
from grader.commands.summary import failure_key, flag_of

FIXTURES = Path(__file__).resolve().parent / "grader_fixtures"
ASSIGNMENT = "sample_ex"
ARTIFACTS = ROOT / "artifacts" / "summary"
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")

pytestmark = pytest.mark.timeout(600)

# grade_id -> the answer cell's source, for each kind of submission (None: the solution)
DERIVATIVE_ZERO = "def derivative(f, x, h=1e-6):\n    return 0.0"
DERIVATIVE_TWICE = "def derivative(f, x, h=1e-6):\n    return (f(x + h) - f(x - h)) / h"
SUBMISSIONS = {
    "ann": {}, "bob": {},
    "cal": "blank",
    "dan": {"derivative": DERIVATIVE_ZERO}, "eve": {"derivative": DERIVATIVE_ZERO},
    "fay": {"derivative": DERIVATIVE_TWICE}, "gus": {"derivative": DERIVATIVE_TWICE},
    "hal": {},  # late
    "ivy": "tamper",
    "jon": {"square": "import time\ntime.sleep(10)\ndef square(x):\n    return x * x"},
}


def _answers(source):
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
            if c.metadata.get("nbgrader", {}).get("solution")}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A course with the batch graded, and the first summary's output."""
    from nbgrader.api import Gradebook

    tmp = tmp_path_factory.mktemp("summary")
    root, exercises = tmp / "course", tmp / "exercises"
    shutil.copytree(FIXTURES / "exercises" / ASSIGNMENT, exercises / ASSIGNMENT)
    assert kitgrade(["init", str(root), "--course-id", "s101", "--exercises", str(exercises)]) == 0
    with open(root / "nbgrader_config.py", "a") as handle:
        handle.write('\nc.KitGrade.workers = 2\nc.KitGrade.cell_timeout = 3\n'
                     'c.LateSubmissionPlugin.penalty_method = "zero"\n')
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        gradebook.update_or_create_assignment(ASSIGNMENT, duedate="2026-01-15 12:00:00 UTC")
    release = nbformat.read(root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    solutions = _answers(nbformat.read(root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4))
    for student, kind in SUBMISSIONS.items():
        nb = nbformat.from_dict(json.loads(json.dumps(release)))
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if kind == "tamper" and grade_id == "test_square":
                cell.source = "pass  # nothing to test"
            elif grade_id in solutions and kind != "blank":
                cell.source = {**solutions, **(kind if isinstance(kind, dict) else {})}[grade_id]
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
        when = "2026-01-16 09:00:00.000000 UTC" if student == "hal" else "2026-01-15 11:00:00.000000 UTC"
        (folder / "timestamp.txt").write_text(when)
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(root), "--quiet"]) == 0
    return root


def _summary(capsys, course, *options):
    capsys.readouterr()
    status = kitgrade(["summary", ASSIGNMENT, "--course", str(course), *options])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out, (course / "reports" / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")


def test_the_summary_groups_mistakes_and_flags_what_needs_a_look(graded, capsys):
    report = json.loads((graded / "reports" / f"{ASSIGNMENT}.json").read_text())
    out, page = _summary(capsys, graded)
    table = out.splitlines()
    # the distribution: correct 7, blank 0, wrong derivative 5, late 0 (zero penalty),
    # tampering restored and graded 7, the timeout loses test_square (5)
    scores = {s: e["score"] for s, e in report.items()}
    assert scores == {"ann": 7, "bob": 7, "cal": 0, "dan": 5, "eve": 5, "fay": 5, "gus": 5, "hal": 0,
                      "ivy": 7, "jon": 5}, scores
    stats = "10 submissions; mean 4.60 / 7, median 5, scored zero: 2"
    assert stats in out and stats in page
    # per test: pass rate and points
    assert any(line.split()[:3] == ["test_derivative", "5/10", "10/20"] for line in table), out
    assert any(line.split()[:3] == ["test_square", "8/10", "16/20"] for line in table), out
    assert "test_derivative: pass rate 5/10, points 10/20" in page
    # the two common mistakes, each a group of its two students; the blank one fails alone
    zero = next(line for line in table if "[dan, eve]" in line)
    twice = next(line for line in table if "[fay, gus]" in line)
    assert zero.split()[0] == "2x" and "array(0.)" in zero, out
    assert twice.split()[0] == "2x" and "array(2.)" in twice, out
    assert "2: dan, eve" in page and "2: fay, gus" in page and "1: cal" in page
    # the submissions that need a human look, each with its reason
    look = out.split("Submissions that need a human look:")[1]
    assert any(line.split()[:2] == ["hal", "late"] and "late: 7 point(s) deducted" in line
               for line in look.splitlines()), out
    assert any(line.split()[:2] == ["ivy", "tampering"] and "test_square" in line and "edited" in line
               for line in look.splitlines()), out
    assert any(line.split()[:2] == ["jon", "timeout"] and "longer than 3 s" in line for line in look.splitlines()), out
    assert not any(line.split()[:1] in (["ann"], ["dan"], ["cal"]) for line in look.splitlines()), out
    assert "<td>hal</td><td>late</td>" in page and "<td>ivy</td><td>tampering</td>" in page
    assert "<td>jon</td><td>timeout</td>" in page
    # time per submission: the one that hit the cell limit (3 s) is the longest, named with its time
    timing = next(line for line in table if line.startswith("Time per submission: median"))
    longest = timing.split("longest ", 1)[1].split(", ")
    assert longest[0].startswith("jon ") and float(longest[0].split()[1]) >= 3.0, timing
    assert all(0 < report[s]["seconds"] for s in report), report
    assert "longest jon" in page
    # the figures are in the page; the hidden tests' source is not
    assert page.count("src='data:image/png;base64,") == 2
    assert "square(-2.5)" not in page and "lambda x: x ** 3" not in page
    assert "hidden tests not shown" in page and "assert square(3) == 9" in page


def test_hidden_tests_chinese_and_a_rerun(graded, capsys):
    from graph_explorer.fonts import find_chinese_font

    _summary(capsys, graded)  # the summary this one is compared with
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, page = _summary(capsys, graded, "--show-hidden-tests", "--lang", "zh")
    if find_chinese_font():  # the figures' Chinese labels are drawn, not boxes
        assert not [w for w in caught if "missing from font" in str(w.message)], caught[0].message
    assert "square(-2.5)" in page and "lambda x: x ** 3" in page
    assert "sample_ex 成绩摘要" in out and "需要人工查看的提交" in page and "迟交" in page
    assert "没有变化" in out  # the same grades as the last summary
    assert "square(-2.5)" not in (graded / "reports" / f"{ASSIGNMENT}.summary.json").read_text()
    # dan fixes his derivative; a rerun for him, then the summary says what changed
    notebook = graded / "submitted" / "dan" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    solutions = _answers(nbformat.read(graded / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4))
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "derivative":
            cell.source = solutions["derivative"]
    nbformat.write(nb, notebook)
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(graded), "--student", "dan", "--quiet"]) == 0
    out, page = _summary(capsys, graded)
    assert "dan: 5 -> 7" in out and "test_derivative: 5/10 -> 6/10" in out
    assert "<li>dan: 5 -&gt; 7</li>" in page
    assert "1x" in next(line for line in out.splitlines() if "[eve]" in line)


def test_mistakes_are_one_line_and_exit_2(graded, tmp_path, capsys):
    capsys.readouterr()
    assert kitgrade(["summary", "sample", "--course", str(graded)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no assignment 'sample'" in err and "sample_ex" in err
    # a course with nothing graded yet
    fresh = tmp_path / "fresh"
    shutil.copytree(FIXTURES / "exercises" / ASSIGNMENT, tmp_path / "ex" / ASSIGNMENT)
    assert kitgrade(["init", str(fresh), "--exercises", str(tmp_path / "ex")]) == 0
    capsys.readouterr()
    assert kitgrade(["summary", ASSIGNMENT, "--course", str(fresh)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing graded of sample_ex yet" in err and "Traceback" not in err


def test_a_check_message_is_grouped_by_what_expected_and_got():
    one = failure_key("grad of x**2: expected 4.0, got 2.0, for input x=2.0")
    other = failure_key("grad of x**2: expected 4.0, got 2.0, for input x=7.0")
    assert one == other == {"what": "grad of x**2", "expected": "4.0", "got": "2.0"}
    assert failure_key("AssertionError") == {"what": "AssertionError", "expected": None, "got": None}


def test_each_kind_of_reason_is_flagged():
    assert flag_of("nb: student code changed what this test relies on (put back before it ran): np") == "tampering"
    assert flag_of("nb: denied: open('/etc/passwd')") == "refused"
    assert flag_of("nb: the notebook ran longer than its limit of 300 s") == "timeout"
    assert flag_of("not graded, because the grader failed; run autograde again to grade it") == "not graded"
    assert flag_of("late: 2 point(s) deducted by the course's late policy (raw score 7)") == "late"
    assert flag_of("cell 'test_a': stderr output (warnings) kept, not counted as a failure") is None


def test_the_page_in_chromium(graded, capsys):
    from browser_support import CHROMIUM_ARGS, find_chromium

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install -e '.[test]')")
    _summary(capsys, graded)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        executable = find_chromium()
        if executable is None and not os.path.exists(playwright.chromium.executable_path) and not IN_CI:
            pytest.skip("no Chromium found (apt-get install chromium, or set KIT_CHROMIUM=/path/to/chrome)")
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 900})
            page.goto((graded / "reports" / f"{ASSIGNMENT}.html").as_uri())
            assert page.locator("h1").inner_text() == "Summary of sample_ex"
            widths = page.eval_on_selector_all("img", "images => images.map(i => i.naturalWidth)")
            assert len(widths) == 2 and all(w > 200 for w in widths), widths
            assert page.locator("#flags tr").count() == 4  # a header and hal, ivy, jon
            page.screenshot(path=str(ARTIFACTS / "summary.png"), full_page=True)
        finally:
            browser.close()
    assert (ARTIFACTS / "summary.png").stat().st_size > 10_000


def test_the_summary_hides_the_hidden_tests_a_course_delimits_its_own_way(tmp_path):
    """A course may name its own hidden-test delimiters (``ClearHiddenTests``): the summary hides
    what nbgrader's release removes, not only the default ``### BEGIN HIDDEN TESTS``."""
    from types import SimpleNamespace

    from traitlets.config import Config

    from grader.commands.summary import _test_sources

    config = Config()
    config.ClearHiddenTests.begin_test_delimeter = "BEGIN SECRET CHECKS"
    config.ClearHiddenTests.end_test_delimeter = "END SECRET CHECKS"
    source = "assert square(3) == 9\n# BEGIN SECRET CHECKS\nassert square(-2.5) == 6.25\n# END SECRET CHECKS"
    path = tmp_path / "square.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        source, metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "test_square"}})]), path)
    course = SimpleNamespace(config=lambda: config, source_notebooks=lambda assignment: [path])
    assert _test_sources(course, "ps", show_hidden=False) == {"test_square": "assert square(3) == 9\n{hidden}"}
    assert _test_sources(course, "ps", show_hidden=True) == {"test_square": source}
