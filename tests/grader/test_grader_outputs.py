"""What a notebook hands nbgrader, and every page a student receives (docs/threat-model.md, "What a
notebook's outputs hold", "Pages a student receives", "Files the release leaves out").

A class of one assignment with a trusted test whose hidden checks fail for most students is
graded, given feedback and checked: notebooks whose outputs nbgrader or nbconvert cannot take (an
execution count of ``true``, ``-7`` or ``"seven"``, a number under ``text/markdown`` or
``image/svg+xml``, a picture attached to no cell) are graded on their answers and given a page
that says what was not kept; no page shows a hidden check's input or expected value; a file the
release leaves out (``CourseDirectory.ignore``, ``include``) never reaches a notebook. Then the
parts alone: the gate on each shape, a submitted file's saved outputs, the "not graded" page,
the files nbgrader's release picks (compared with a real release), formulas as MathML.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import nbformat
import pytest

from course_snapshots import copy_course
from grader.cli import main as kitgrade
from grader.foundations.student_text import CSP_META

pytestmark = pytest.mark.timeout(900)

ASSIGNMENT = "shapes"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
TEST = """check_close("square(3)", student("square(3)"), 9.0, {"x": 3})
### BEGIN HIDDEN TESTS
_got = student_batch(["square(-2.5)", "square(7)"])
check_close("square of a hidden number", _got[0], 6.25, {"x": -2.5})
check_close("square of a hidden number", _got[1], 49.0, {"x": 7})
### END HIDDEN TESTS"""
#: what a page must never show by default: the hidden checks' inputs and expected values
HIDDEN = ("6.25", "-2.5", "49.0", "BEGIN HIDDEN TESTS")
RIGHT = "def square(x):\n    return x * x"
WRONG = "def square(x):\n    return x * x if x == 3 else 0"  # the visible check passes, the hidden ones fail
PUBLISH = "from IPython.display import publish_display_data\npublish_display_data({{{mime!r}: 5, 'text/plain': 'five'}})"
# what the student's process sends is the student's: here an output with a count of "seven", past IPython
FORGED_COUNT = """import sys
cells = type(sys.stdout).write.__closure__
recorder = next(c.cell_contents for c in cells if type(c.cell_contents).__name__ == "OutputRecorder")
recorder.add({"output_type": "execute_result", "execution_count": "seven", "data": {"text/plain": "7"}, "metadata": {}})"""
READS = """import os
print("FILES", sorted(os.listdir(".")))
for name in ("data.csv", "answers_key.txt", "notes.txt"):
    try:
        print("READ", name, open(name).read())
    except OSError as error:
        print("NOT", name, type(error).__name__)"""
#: student -> (answer, a cell of their own, a markdown cell of their own)
STUDENTS = {
    "honest": (RIGHT, "print('hi')", "My answer: $y = x^2$."),
    "count_true": (WRONG, "get_ipython().execution_count = True\n42", None),
    "count_negative": (WRONG, "get_ipython().execution_count = -7\n42", None),
    "count_text": (WRONG, FORGED_COUNT, None),
    "markdown_number": (RIGHT, PUBLISH.format(mime="text/markdown"), None),
    "svg_number": (RIGHT, PUBLISH.format(mime="image/svg+xml"), None),
    "lost_picture": (WRONG, "print('see below')", "My plot: ![plot](attachment:plot.png)"),
    "reads_files": (RIGHT, READS, None),
    # a size that would be written into the page unquoted; a notebook language that is not one;
    # a picture attached empty
    "odd_shapes": (RIGHT, "from IPython.display import publish_display_data\npublish_display_data({'image/png': "
                          "'iVBORw0KGgo='}, metadata={'image/png': {'width': '1 onerror=alert(1)'}})",
                   "Empty: ![a](attachment:a.png)"),
}
SCORES = {"honest": 3, "markdown_number": 3, "svg_number": 3, "reads_files": 3, "odd_shapes": 3}  # the others: 0


def _source_notebook():
    def cell(kind, grade_id, source, **flags):
        meta = {"nbgrader": {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3,
                             "solution": False, **flags}}
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        return make(source, metadata=meta)

    return nbformat.v4.new_notebook(cells=[
        cell("markdown", "intro", "# Shapes\nSquare a number: $y = x^2$.", locked=True),
        cell("code", "imports", "import numpy as np\nfrom grader.checks import check_close, student, student_batch",
             locked=True),
        cell("code", "square", "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION",
             solution=True),
        cell("code", "test_square", TEST, grade=True, locked=True, points=3),
    ], metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                 "language_info": {"name": "python"}})


def make_shapes_course(root: Path) -> Path:
    """``kitgrade init`` of the one-notebook assignment above, its data files (one released, two
    left out by the course's ``ignore`` and ``include``), generated into release/."""
    from grader.course import Course
    from grader.commands.release import generate_release

    exercises = root / "exercises"
    (exercises / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(_source_notebook(), exercises / ASSIGNMENT / NOTEBOOK)
    course = root / "course"
    assert kitgrade(["init", str(course), "--course-id", "ad101", "--exercises", str(exercises)]) == 0
    (course / "source" / ASSIGNMENT / "data.csv").write_text("x,y\n3,9\n")
    (course / "source" / ASSIGNMENT / "answers_key.txt").write_text("KEPT-BACK: square(-2.5) = 6.25")
    (course / "source" / ASSIGNMENT / "notes.txt").write_text("NOT-INCLUDED")
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 1\n"
                     "c.CourseDirectory.ignore = ['.ipynb_checkpoints', '*.pyc', '__pycache__', 'feedback', 'answers_*']\n"
                     "c.CourseDirectory.include = ['*.ipynb', '*.csv']\n")
    generate_release(Course(course), ASSIGNMENT)
    return course


def _submission(release, answer: str, own_code: str, own_markdown: str | None):
    nb = nbformat.from_dict(json.loads(json.dumps(release)))
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "square":
            cell.source = answer
    nb.cells.insert(2, nbformat.v4.new_code_cell(own_code))
    if own_markdown:
        nb.cells.append(nbformat.v4.new_markdown_cell(own_markdown))
    if "attachment:a.png" in (own_markdown or ""):
        nb.cells[-1].attachments = {"a.png": {}}
        nb.metadata["kitgrade"] = "zh"
    return nb


def _run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = kitgrade(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def shapes_course(tmp_path_factory) -> Path:
    """The course, released, nobody graded (not to be changed: copy it)."""
    return make_shapes_course(tmp_path_factory.mktemp("outputs"))


@pytest.fixture(scope="module")
def graded(shapes_course, tmp_path_factory):
    """The class graded and given feedback: (course, report, autograde's run, feedback's run)."""
    course = copy_course(shapes_course, tmp_path_factory.mktemp("graded") / "course")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student, (answer, own_code, own_markdown) in STUDENTS.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(_submission(release, answer, own_code, own_markdown), folder / NOTEBOOK)
    autograde = _run("autograde", ASSIGNMENT, "--course", str(course), "--quiet")
    feedback = _run("feedback", ASSIGNMENT, "--course", str(course))
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    return course, report, autograde, feedback


def _pages(course: Path, student: str) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((course / "feedback" / student / ASSIGNMENT).glob("*.html"))}


def _printed(course: Path, student: str) -> str:
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / NOTEBOOK, as_version=4)
    return json.dumps(nb.cells[2].get("outputs", []))


# ---- the class, end to end ---------------------------------------------------------------------------
def test_every_notebook_is_graded_on_its_answers_whatever_its_outputs(graded):
    _, report, (status, out, err), _ = graded
    assert status == 0, out + err
    scores = {student: entry["score"] for student, entry in report.items()}
    assert scores == {student: SCORES.get(student, 0) for student in STUDENTS}, out + err
    assert all(entry["final"] for entry in report.values()), report  # nothing left "awaiting a manual grade"
    assert "Traceback" not in out + err


@pytest.mark.parametrize("student, shown", [("count_true", "True"), ("count_negative", "-7"), ("count_text", "'seven'")])
def test_an_execution_count_that_is_not_a_count_is_recorded_as_none_and_said(graded, student, shown):
    course, report, _, _ = graded
    reasons = " | ".join(report[student]["reasons"])
    assert "execution counts that are not whole numbers from 0 were recorded as none" in reasons, reasons
    assert f"({shown} in " in reasons, reasons
    nb = json.loads((course / "autograded" / student / ASSIGNMENT / NOTEBOOK).read_text())
    counts = [c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code"]
    counts += [o.get("execution_count") for c in nb["cells"] for o in c.get("outputs", []) if "execution_count" in o]
    assert all(c is None or (type(c) is int and c >= 0) for c in counts), counts


@pytest.mark.parametrize("student, mime", [("markdown_number", "text/markdown"), ("svg_number", "image/svg+xml")])
def test_a_mime_value_that_is_not_text_is_not_kept_and_the_page_says_why(graded, student, mime):
    course, report, _, (status, out, err) = graded
    assert status == 0, out + err
    why = f"its '{mime}' value is int, not text"
    assert any(why in reason for reason in report[student]["reasons"]), report[student]
    page = _pages(course, student)[f"{ASSIGNMENT}.html"]
    assert "MalformedOutput: an output was not kept: " + why in page


def test_no_page_shows_a_hidden_checks_input_or_expected_value(graded):
    course, report, _, _ = graded
    for student in STUDENTS:
        for name, page in _pages(course, student).items():
            text = re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", page, flags=re.S))  # its words
            assert not [h for h in HIDDEN if h in text], (student, name, [h for h in HIDDEN if h in text])
    assert "0 of 2 hidden checks passed" in _pages(course, "count_true")[f"{ASSIGNMENT}.html"]
    assert any("expected 6.25" in reason for reason in report["count_true"]["reasons"])  # the instructor's, only


def test_every_page_carries_the_policy_first_and_no_script(graded):
    course, _, _, _ = graded
    pages = list((course / "feedback").glob(f"*/{ASSIGNMENT}/*.html"))
    assert len(pages) == len(STUDENTS)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert text[text.index("<head>") + len("<head>"):].startswith(CSP_META), page
        assert "<script" not in text, page


def test_a_picture_attached_to_no_cell_is_named_and_the_page_is_made(graded):
    course, _, _, _ = graded
    page = _pages(course, "lost_picture")[f"{ASSIGNMENT}.html"]
    assert "attachment:plot.png is not in the notebook" in page
    page = _pages(course, "odd_shapes")[f"{ASSIGNMENT}.html"]  # attached empty, and a language that is none
    assert "attachment:a.png is not in the notebook" in page and "Test cell" in page


def test_an_image_size_that_is_not_one_never_reaches_the_page(graded):
    course, report, _, _ = graded
    assert any("its metadata gives a width of '1 onerror=alert(1)', not a size" in r for r in report["odd_shapes"]["reasons"])
    assert "onerror" not in _pages(course, "odd_shapes")[f"{ASSIGNMENT}.html"].replace("1 onerror=alert(1)", "")


def test_the_page_names_its_test_cells_wraps_long_messages_and_shows_formulas_as_mathml(graded):
    course, _, _, _ = graded
    page = _pages(course, "honest")[f"{ASSIGNMENT}.html"]
    assert re.search(r"Test cell <code>test_square</code></a>", page)
    assert "white-space: pre-wrap" in page
    assert page.count("<math") >= 2 and "<msup><mi>x</mi><mn>2</mn></msup>" in page  # the intro's and the student's
    assert "$y = x^2$" not in page


def test_only_the_files_the_release_gives_reach_a_notebook(graded):
    course, _, _, _ = graded
    printed = _printed(course, "reads_files")
    assert "READ data.csv x,y" in printed, printed
    assert "KEPT-BACK" not in printed and "NOT answers_key.txt" in printed, printed
    assert "NOT-INCLUDED" not in printed and "NOT notes.txt" in printed, printed


def test_feedback_for_one_student_writes_only_theirs(graded, tmp_path):
    course = copy_course(graded[0], tmp_path / "course")
    before = {p: p.stat().st_mtime_ns for p in (course / "feedback").glob(f"*/{ASSIGNMENT}/*.html")}
    time.sleep(0.01)
    status, out, err = _run("feedback", ASSIGNMENT, "--course", str(course), "--student", "honest")
    assert status == 0, out + err
    changed = {p.parent.parent.name for p, mtime in before.items() if p.stat().st_mtime_ns != mtime}
    assert changed == {"honest"}, changed
    status, out, err = _run("feedback", ASSIGNMENT, "--course", str(course), "--student", "nobody")
    assert status == 2 and "'nobody': not graded by `kitgrade autograde shapes` yet" in err, err


def test_a_page_that_cannot_be_rendered_is_replaced_and_the_class_gets_its_feedback(graded, tmp_path, monkeypatch):
    """Whatever stops nbconvert on one notebook (here a fault put into the page's language filter
    for one student) costs that page only: a plain page with the score, the others written, every
    page with its policy, exit status 1 and the count."""
    from grader.feedback import exporter

    course = copy_course(graded[0], tmp_path / "course")
    real = exporter.notebook_language

    def failing_for_one(nb):
        if any("get_ipython().execution_count = -7" in c.source for c in nb.cells):
            raise RuntimeError("a page nbconvert cannot render")
        return real(nb)

    monkeypatch.setattr(exporter, "notebook_language", failing_for_one)
    shutil.rmtree(course / "feedback")
    status, out, err = _run("feedback", ASSIGNMENT, "--course", str(course))
    assert status == 1, out + err
    assert f"1 of {len(STUDENTS)} page(s) could not be rendered" in err and "count_negative/shapes: RuntimeError" in err, err
    plain = _pages(course, "count_negative")[f"{ASSIGNMENT}.html"]
    assert "could not be made from your notebook" in plain and "(Score: 0 / 3)" in plain
    assert "a page nbconvert cannot render" not in plain  # the why is the instructor's
    for student in STUDENTS:
        page = _pages(course, student)[f"{ASSIGNMENT}.html"]
        assert page[page.index("<head>") + len("<head>"):].startswith(CSP_META), student


def test_a_notebook_autograded_before_the_gate_stops_neither_feedback_nor_summary(graded, tmp_path):
    """A class autograded by an earlier kit may hold what the gate now keeps out: both commands check again."""
    course = copy_course(graded[0], tmp_path / "course")
    path = course / "autograded" / "honest" / ASSIGNMENT / NOTEBOOK
    nb = json.loads(path.read_text())
    test = next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "test_square")
    test["outputs"] = [{"output_type": "error", "ename": "AssertionError", "evalue": 5, "traceback": []},
                       {"output_type": "display_data", "data": {"text/markdown": 5}, "metadata": {}}]
    path.write_text(json.dumps(nb))
    status, out, err = _run("summary", ASSIGNMENT, "--course", str(course))
    assert status == 0, out + err
    status, out, err = _run("feedback", ASSIGNMENT, "--course", str(course), "--student", "honest")
    assert status == 0, out + err
    assert "MalformedOutput: an output was not kept: its &#x27;text/markdown&#x27; value is int" in \
        _pages(course, "honest")[f"{ASSIGNMENT}.html"].replace("'", "&#x27;")


def test_a_not_graded_page_says_why_and_shows_no_hidden_check_unless_asked(graded, tmp_path):
    """A student nbgrader could not grade gets the report's reasons, through the hidden-test policy."""
    course = copy_course(graded[0], tmp_path / "course")
    report_path = course / "reports" / f"{ASSIGNMENT}.json"
    report = json.loads(report_path.read_text())
    report["ungraded"] = {**report["count_true"], "score": None, "reasons": [
        *report["count_true"]["reasons"],  # the hidden checks' failures, with their inputs and expected values
        "shapes: cell 'test_square': student code changed what this test relies on: square(-2.5)",
        "not graded, because the disk is full (/course/autograded); run autograde again to grade it"]}
    report_path.write_text(json.dumps(report))
    for shown in (False, True):
        status, out, err = _run("feedback", ASSIGNMENT, "--course", str(course), *(["--show-hidden-tests"] * shown))
        assert status == 0, out + err
        page = _pages(course, "ungraded")["not_graded.html"]
        assert page[page.index("<head>") + len("<head>"):].startswith(CSP_META)
        assert "shapes: not graded / 3" in page and "the disk is full" in page
        if shown:
            assert "expected 6.25" in page and "x=-2.5" in page
        else:
            assert not [h for h in HIDDEN if h in page], page
            assert "cell &#x27;test_square&#x27;: details hidden (this cell holds hidden tests)" in page


def test_the_files_a_notebook_gets_are_those_nbgrader_releases(graded, tmp_path):
    """Compared with a real ``nbgrader release_assignment``: the same files, no notebook, and a
    folder the course leaves out with all it holds."""
    from grader.course import Course
    from grader.commands.release import generate_release, release_to_exchange
    from grader.notebook.released_files import released_paths

    course = copy_course(graded[0], tmp_path / "course")
    source = course / "source" / ASSIGNMENT
    (source / "answers_by_task").mkdir()
    (source / "answers_by_task" / "task1.csv").write_text("kept back")
    (source / "tables").mkdir()
    (source / "tables" / "values.csv").write_text("1,2")
    (source / "tables" / "readme.md").write_text("not included")
    generate_release(Course(course), ASSIGNMENT)  # as `kitgrade release` does: generated, then into the exchange
    assert release_to_exchange(Course(course), ASSIGNMENT)[0] in ("new", "updated")
    outbound = course / "exchange" / "ad101" / "outbound" / ASSIGNMENT
    released = sorted(p.relative_to(outbound) for p in outbound.rglob("*") if p.is_file() and p.suffix != ".ipynb")
    assert released == released_paths(Course(course), ASSIGNMENT) == [Path("data.csv"), Path("tables/values.csv")]


# ---- the parts alone -------------------------------------------------------------------------------
HONEST_OUTPUTS = [
    {"output_type": "stream", "name": "stdout", "text": "hi\n"},
    {"output_type": "execute_result", "execution_count": 3, "data": {"text/plain": "42"}, "metadata": {}},
    {"output_type": "execute_result", "execution_count": None, "data": {"text/plain": "42"}, "metadata": {}},
    {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
     "metadata": {"image/png": {"width": 640, "height": 480.5}, "needs_background": "light"}},
    {"output_type": "display_data", "data": {"image/jpeg": "AA=="}, "metadata": {"width": "50%", "height": "120px"}},
    {"output_type": "display_data", "data": {"text/html": "<table></table>", "text/plain": "df"}, "metadata": {}},
    {"output_type": "display_data", "data": {"application/json": {"a": [1, 2]}, "application/vnd.x+json": [1]},
     "metadata": {}},
    {"output_type": "error", "ename": "ValueError", "evalue": "no", "traceback": ["ValueError: no"]},
]
MALFORMED = [
    ({"output_type": "execute_result", "execution_count": True, "data": {"text/plain": "1"}, "metadata": {}},
     "its execution count True is not a whole number from 0"),
    ({"output_type": "execute_result", "execution_count": -7, "data": {"text/plain": "1"}, "metadata": {}},
     "its execution count -7 is not"),
    ({"output_type": "execute_result", "execution_count": "seven", "data": {"text/plain": "1"}, "metadata": {}},
     "its execution count 'seven' is not"),
    ({"output_type": "display_data", "data": {"text/markdown": 5}, "metadata": {}}, "'text/markdown' value is int"),
    ({"output_type": "display_data", "data": {"image/svg+xml": {"svg": 1}}, "metadata": {}}, "'image/svg+xml' value is dict"),
    ({"output_type": "display_data", "data": {"text/plain": ["a", "b"]}, "metadata": {}}, "'text/plain' value is list"),
    ({"output_type": "display_data", "data": {"text/html\"><b": "x"}, "metadata": {}}, "is no MIME type"),
    ({"output_type": "display_data", "data": {f"text/x{i}": "x" for i in range(40)}, "metadata": {}}, "40 MIME types"),
    ({"output_type": "display_data", "data": {"image/png": "AA=="}, "metadata": {"image/png": "wide"}},
     "its metadata for 'image/png' is not an object"),
    ({"output_type": "display_data", "data": {"image/png": "AA=="}, "metadata": {"filenames": {"image/png": "/etc/passwd"}}},
     "its metadata names files"),
    ({"output_type": "display_data", "data": {"image/png": "AA=="}, "metadata": {"image/png": {"width": '1" onerror="x'}}},
     "its metadata gives a width of '1\" onerror=\"x', not a size"),
    ({"output_type": "display_data", "data": {"image/png": "AA=="}, "metadata": {"height": True}}, "a height of True"),
    ({"output_type": "display_data", "data": {"text/plain": "x"}}, "it has no metadata"),
    ({"output_type": "stream", "name": "stdin", "text": "x"}, "stream 'stdin' is neither stdout nor stderr"),
    ({"output_type": "stream", "name": "stdout", "text": 5}, "its text is not text"),
    ({"output_type": "error", "ename": "E", "evalue": "v", "traceback": [1]}, "not an output as nbformat defines it"),
    ({"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["x"] * 500}, "at most 200 lines"),
    ({"output_type": "update_display_data", "data": {}, "metadata": {}}, "none of nbformat's"),
    ({"output_type": "display_data", "data": {"text/plain": "x"}, "metadata": {}, "transient": {}},
     "not an output as nbformat defines it"),
    ("text", "it is str, not an object"),
]


@pytest.mark.parametrize("output", HONEST_OUTPUTS, ids=lambda o: o["output_type"])
def test_an_output_as_jupyter_writes_it_passes_the_gate(output):
    from grader.notebook.notebook_outputs import output_problem

    assert output_problem(output) is None


@pytest.mark.parametrize("output, why", MALFORMED, ids=[why[:30] for _, why in MALFORMED])
def test_a_malformed_output_is_refused_with_its_reason(output, why):
    from grader.notebook.notebook_outputs import output_problem

    problem = output_problem(output)
    assert problem and why in problem, problem


def test_a_saved_notebook_may_split_its_text_into_lines():
    from grader.notebook.notebook_outputs import output_problem

    assert output_problem({"output_type": "stream", "name": "stdout", "text": ["a\n", "b"]}, stored=True) is None
    assert output_problem({"output_type": "display_data", "data": {"text/plain": ["a", 1]}, "metadata": {}}, stored=True)


def test_the_gate_leaves_a_notebook_nbformat_and_nbgrader_take():
    from grader.notebook.notebook_outputs import MAX_OUTPUTS_PER_CELL, gate_notebook

    test = nbformat.v4.new_code_cell("t", metadata={"nbgrader": {"grade_id": "test_x", "grade": True}})
    test.execution_count = True
    test.outputs = [json.loads(json.dumps(m)) for m, _ in MALFORMED] + [{"output_type": "stream", "name": "stdout", "text": "ok"}]
    flood = nbformat.v4.new_code_cell("flood")
    flood.outputs = [{"output_type": "stream", "name": "stdout", "text": "x"}] * (MAX_OUTPUTS_PER_CELL + 5)
    nb = nbformat.v4.new_notebook()
    nb.cells = [test, flood]  # (new_notebook would refuse them)
    findings = gate_notebook(nb)
    nbformat.validate(nb)  # strictly: the MIME bundles too
    assert test.execution_count is None and test.outputs[-1] == {"output_type": "stream", "name": "stdout", "text": "ok"}
    assert [o["output_type"] for o in test.outputs[:3]] == ["execute_result"] * 3  # a wrong count: the result is kept
    assert all(o.get("ename") == "MalformedOutput" for o in test.outputs[3:-1])
    assert len(flood.outputs) == MAX_OUTPUTS_PER_CELL + 1 and flood.outputs[-1]["ename"] == "MalformedOutput"
    assert findings[0].startswith("cell 'test_x': an output was not kept, because its 'text/markdown' value is int")
    refused = len(MALFORMED) - 3 + 1  # all but the three counts, and the flood
    assert findings[-2] == f"{refused - 10} more output(s) were not kept"  # at most ten, then a count
    assert findings[-1] == ("execution counts that are not whole numbers from 0 were recorded as none "
                            "(True in cell 'test_x')")


FORGED_SHAPES = FORGED_COUNT.rsplit("\n", 1)[0] + """
recorder.add({"output_type": "stream", "name": "stdin", "text": "typed"})
recorder.add({"output_type": "display_data", "data": {"text/markdown": 5}, "metadata": {}})"""


def test_an_output_the_sandbox_receives_is_held_to_the_gates_rule_and_said(tmp_path):
    """The supervisor and the gate apply one rule (``output_problem``): a stream nbformat has no
    name for is replaced and named in the findings, as a number under ``text/markdown`` is."""
    from grader.commands.check import check_notebook

    path = tmp_path / NOTEBOOK
    nbformat.write(_submission(_source_notebook(), RIGHT, FORGED_SHAPES, None), path)
    lines = []
    assert check_notebook(path, out=lines.append) == 0, lines
    notes = [line for line in lines if "an output was not kept" in line]
    assert notes == ["note: cell 2: an output was not kept, because its stream 'stdin' is neither stdout nor stderr",
                     "note: cell 2: an output was not kept, because its 'text/markdown' value is int, not text"], lines


def test_a_submitted_notebook_whose_saved_outputs_are_malformed_is_graded_and_says_so(tmp_path):
    """nbgrader clears saved outputs: they made the kit refuse the whole notebook ("invalid nbformat 4
    notebook", 0 points)."""
    from grader.notebook.submission import grade_ids, stage_submission

    nb = _source_notebook()
    nb.cells[2].execution_count = -7
    nb.cells[2].outputs = [{"output_type": "display_data", "data": {"text/markdown": 5}, "metadata": {}}]
    submitted = tmp_path / "submitted"
    submitted.mkdir()
    (submitted / NOTEBOOK).write_text(json.dumps(nb))
    findings = stage_submission(submitted, tmp_path / "staged", {ASSIGNMENT: grade_ids(nb)})
    assert findings == [f"{NOTEBOOK}: the outputs saved in it were malformed (cell 'square': the cell's execution count "
                        "-7 is not a whole number from 0); they were cleared, as grading runs the notebook again"]
    staged = nbformat.read(tmp_path / "staged" / NOTEBOOK, as_version=4)
    nbformat.validate(staged)
    assert [c.source for c in staged.cells] == [c.source for c in nb.cells]


#: shapes of a submitted notebook nbgrader's own chain stopped on (the notebook "not gradable", 0), or
#: the kit refused as "invalid": each graded now, with its finding
ODD_SHAPES = {
    "a grade id that is a list": (lambda d: d["cells"][2]["metadata"].update(nbgrader={"grade_id": ["a"], "solution": True}),
                                  "cell 2: its nbgrader marks are not nbgrader's"),
    "marks that are a string": (lambda d: d["cells"][2]["metadata"].update(nbgrader="x"),
                                "cell 2: its nbgrader marks are not nbgrader's (x); removed"),
    "schema version 99": (lambda d: d["cells"][3]["metadata"]["nbgrader"].update(schema_version=99),
                          "cell 'test_square': changed nbgrader metadata (schema_version); restored"),
    "schema version '3'": (lambda d: d["cells"][3]["metadata"]["nbgrader"].update(schema_version="3"),
                           "cell 'test_square': changed nbgrader metadata (schema_version); restored"),
    "collapsed: 'yes'": (lambda d: d["cells"][2]["metadata"].update(collapsed="yes"),
                         "metadata nbformat does not allow was removed (NotebookValidationError: 'yes' is not of type"),
    "a language_info of the wrong shape": (lambda d: d["metadata"].update(language_info={"name": 5}),
                                           "metadata nbformat does not allow was removed"),
}


@pytest.mark.parametrize("shape", ODD_SHAPES)
def test_a_submitted_notebook_nbgrader_would_stop_on_is_graded_and_says_why(shapes_course, shape):
    from grader.course import Course
    from grader.notebook.notebook_chains import sanitize
    from grader.notebook.submission import parse_submitted

    course = Course(shapes_course)
    data = json.loads((shapes_course / "release" / ASSIGNMENT / NOTEBOOK).read_text())
    change, why = ODD_SHAPES[shape]
    change(data)
    nb, reason, notes = parse_submitted(json.dumps(data).encode())
    assert reason is None and any(note.startswith(why) for note in notes), (reason, notes)
    sanitized, _ = sanitize(nb, course.config(), course.db_url, ASSIGNMENT, ASSIGNMENT, student="x")  # nbgrader's chain
    assert [c.source for c in sanitized.cells][-1] == TEST


def test_a_submitted_notebook_is_parsed_once(monkeypatch):
    """Its JSON is read once (``json.loads``), checked, and made nbformat's node from what was read."""
    from grader.notebook import submission

    calls = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda *a, **k: calls.append(1) or loads(*a, **k))
    nb, reason, notes = submission.parse_submitted(nbformat.writes(_source_notebook()).encode())
    assert reason is None and notes == [] and nb.cells[-1].source == TEST
    assert calls == [1]


def test_reasons_about_a_hidden_test_reach_a_student_as_details_hidden():
    from grader.feedback.pages import for_student

    reasons = ["ps1: cell 'test_a': hidden check failed (not shown to the student): f: expected 6.25, got 0, for input 2.5",
               "ps1: cell 'test_a': student code changed what this test relies on",
               "ps1: cell 'test_b': denied: open('/etc/shadow')",
               "ps1: cell 'test_c': hidden check failed (not shown to the student): g: expected 1",
               "ps1.ipynb: missing (scored 0)"]
    assert for_student(reasons, {"test_a"}) == [
        "ps1: cell 'test_a': details hidden (this cell holds hidden tests)",
        "ps1: cell 'test_b': denied: open('/etc/shadow')",
        "ps1: cell 'test_c': details hidden (this cell holds hidden tests)",
        "ps1.ipynb: missing (scored 0)"]
    assert for_student(reasons, {"test_a"}, show_hidden=True) == reasons
    assert for_student(reasons[:1], {"test_a"}, language="zh") == ["ps1: cell 'test_a': 详情已隐藏（这个单元含有隐藏测试）"]


def test_formulas_are_mathml_and_what_they_quote_is_text():
    from grader.feedback.formulas import latex_output, tex_to_mathml
    from grader.foundations.student_text import clean_html

    assert clean_html(tex_to_mathml(r"\frac{\partial L}{\partial x}")).startswith(
        '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mrow><mfrac>')
    quoted = clean_html(tex_to_mathml(r"\text{<script>alert(1)</script><img src=x onerror=alert(1)>}"))
    assert "<script" not in quoted and "<img" not in quoted and "&lt;script&gt;" in quoted
    assert tex_to_mathml(r"\frac{", written="$\\frac{$") == "<code>$\\frac{$</code>"  # unreadable: as written
    assert latex_output(r"$\displaystyle x^{2}$").startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">')
    assert 'display="block"' in latex_output(r"$$x$$") and latex_output("<b>x</b>") == "<pre>&lt;b&gt;x&lt;/b&gt;</pre>"


def test_markup_nested_thousands_deep_is_shown_as_text_not_parsed():
    """html5lib's time grows with the square of the nesting (``<ul><li>`` 5,000 deep: 24 s to clean)."""
    from grader.foundations.student_text import MAX_MARKUP_DEPTH, clean_html

    assert clean_html("<ul><li>" * 5000 + "x").startswith("<pre>&lt;ul&gt;&lt;li&gt;")
    assert clean_html("<b>" * 20000).startswith("<pre>&lt;b&gt;")
    depth = MAX_MARKUP_DEPTH - 1  # and the <b> inside: at the limit
    nested = "<div>" * depth + "<b>ok</b><br><img src=x>" + "</div>" * depth
    assert clean_html(nested).count("<div>") == depth and "<b>ok</b>" in clean_html(nested)
