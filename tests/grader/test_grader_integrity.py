"""A determined student against ``kitgrade autograde``: every trick of every class, on problem set 1.

One course (the kit's ``ps1_autograd_basics``, whose test cells run in the grader's process) is
released; every case below hands in a notebook, one ``autograde`` run grades them all, and each
test checks one case's score and reason. The classes (docs/threat-model.md):

* stalling the class: a submission may cost the class at most its own notebook's time limit;
* earning points without a correct answer: blank answers plus a trick must score 0;
* reading what is hidden: hidden tests never reach the student's process or their feedback;
* honest notebooks: what works in Jupyter works here, without an accusation.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import nbformat
import pytest

from grader.cli import main as kitgrade
from kit_paths import ROOT

ASSIGNMENT = "ps1_autograd_basics"
NOTEBOOK = "autograd_basics"
FULL = 11
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
CELL_TIMEOUT, NOTEBOOK_TIMEOUT = 5, 25
#: A text that appears only in the hidden tests of ps1 (a hidden input of task 1).
HIDDEN_MARKER = "lambda x: torch.exp(2 * x)"


def _solutions(source) -> dict[str, str]:
    return {c.metadata["nbgrader"]["grade_id"]: "\n".join(
        line for line in c.source.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION))
        for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}


def _notebook(release, source, answers: dict[str, str], extra_cells=()):
    """The release with solution cells replaced (grade_id -> code; "SOLUTION" for the instructor's)."""
    nb = nbformat.from_dict(json.loads(json.dumps(release)))
    solutions = _solutions(source)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = solutions[grade_id] if answers[grade_id] == "SOLUTION" else answers[grade_id]
    for where, code in extra_cells:  # (index, code): a student's own cell inserted there
        nb.cells.insert(where, nbformat.v4.new_code_cell(code))
    return nb


def _all(source):
    return {grade_id: "SOLUTION" for grade_id in _solutions(source)}


def _blank_with(code: str):
    """Blank answers, and ``code`` in a cell of the student's own after the setup cell."""
    return lambda release, source: _notebook(release, source, {}, [(2, code)])


def _solved_with(grade_id: str, code: str):
    """Every answer right, ``code`` run at the end of one solution cell."""
    def build(release, source):
        answers = _all(source)
        answers[grade_id] = _solutions(source)[grade_id] + "\n" + code
        return _notebook(release, source, answers)
    return build


# ---- the cases: student id -> (builder, expected score, phrase expected in the reasons or None) ------
FORGE_RECORDS = """
import os, json
for fd in range(3, 64):
    try:
        for i in range(100):
            os.write(fd, (json.dumps({"ran": i, "outputs": [], "error": False, "notes": []}) + "\\n").encode())
            os.write(fd, (json.dumps({"probed": i, "value": 12.0}) + "\\n").encode())
            os.write(fd, (json.dumps({"done": i, "outputs": []}) + "\\n").encode())
    except OSError:
        pass
"""
FLOOD_PIPE = """
import os
for fd in range(3, 64):
    try:
        os.fstat(fd)
    except OSError:
        continue
    try:
        while True:
            os.write(fd, b'{"noise": 1}\\n')
    except OSError:
        pass
"""
EQUAL_TO_EVERYTHING = """
class Anything(float):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = float.__hash__
def second_derivative(f, x0): return Anything(0.0)
def elementwise_derivative(f, x): return Anything(0.0)
"""
READ_EXPECTED_FROM_FRAMES = """
import sys
def second_derivative(f, x0):
    frame = sys._getframe(1)
    found = []
    while frame is not None:
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(value, float) and value not in (x0,):
                found.append(value)
        frame = frame.f_back
    return found[0] if found else 0.0
"""
FAKE_ENGINE = """
import sys, types
fake = types.ModuleType("autograd_core")
fake.__getattr__ = lambda name: (lambda *a, **k: 0.0)
sys.modules["autograd_core"] = fake
sys.modules["torch"] = fake
"""
DISABLE_GUARD = """
import sys, gc
for name in list(sys.modules):
    if name.startswith("grader"):
        module = sys.modules[name]
        for key in list(vars(module)):
            try:
                setattr(module, key, None)
            except Exception:
                pass
import numpy
numpy.allclose = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
"""
SELF_RESTORING_PATCH = """
import numpy
_original = numpy.allclose
def _patched(*a, **k):
    numpy.allclose = _patched
    return True
numpy.allclose = _patched
"""
FROZEN_NAME = """
code = compile("import autograd_core\\nsecond_derivative = lambda f, x0: 12.0", "<frozen importlib._bootstrap_external>", "exec")
exec(code, globals())
"""
SEARCH_MEMORY = r"""
import re
# text of ps1's hidden tests that is never sent to the student's process (a class keeps each
# pattern from matching its own source in memory)
needles = re.compile(rb'BEGIN HIDDE[N] TESTS|second_derivative of \{nam[e]\}|4 \* math\.exp\(0\.[6]\)')
# and, as a control that the search works, text this very cell holds (its source is in In)
control = re.compile(rb'torch\.linspace\(-2 \* math\.p[i]')
found, seen = [], []
try:
    with open('/proc/self/maps') as maps, open('/proc/self/mem', 'rb', 0) as mem:
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split('-'))
            fields = line.split()
            if 'r' not in fields[1] or end - start > 1 << 26 or (len(fields) > 5 and fields[5] != '[heap]'):
                continue  # the heap and anonymous memory: where a notebook's text would be
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue
            if needles.search(chunk):
                found.append(line.split()[0])
            if control.search(chunk):
                seen.append(line.split()[0])
except OSError as error:
    found.append('error ' + str(error))
print('MEMORY SEARCH:', 'FOUND' if any(not f.startswith('error') for f in found) else 'nothing', found[:3])
print('CONTROL:', 'FOUND' if seen else 'nothing')
"""
PRINT_HISTORY_AND_ENV = """
print('HISTORY:', In if 'In' in globals() else None)
print('ENV:', open('/proc/self/environ', 'rb').read())
"""
MATPLOTLIB_INLINE_PLOT = """%matplotlib inline
x = torch.linspace(-2 * math.pi, 2 * math.pi, 200, requires_grad=True)
y = torch.sin(x)
y.sum().backward()
dy = x.grad
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin(x)")
ax.plot(x.detach().numpy(), dy.numpy(), label="derivative")
ax.legend()
fig.savefig('/tmp/plot.png')
plt.show()"""


def _timed_cells(count, seconds):
    return lambda release, source: _notebook(release, source, _all(source),
                                             [(2, f"import time\ntime.sleep({seconds})")] * count)


def _raising_cells(count):
    return lambda release, source: _notebook(release, source, _all(source),
                                             [(2, "raise ValueError('x' * 3000)")] * count)


def _written_answer_as_test(release, source):
    """Blank answers, and a written answer (graded by hand) made a code test cell that passes: nbgrader
    gives a test cell that raises nothing all its points."""
    nb = _notebook(release, source, {})
    for index, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "written_control_flow":
            nb.cells[index] = nbformat.v4.new_code_cell("pass", metadata={"nbgrader": {**meta, "solution": False,
                                                                                      "locked": True}})
    return nb


def _with_symlink(target_kind):
    def build(release, source):
        return {"symlink_to": target_kind}
    return build


CASES = {
    # honest
    "honest": (lambda r, s: _notebook(r, s, _all(s)), FULL, None),
    "blank": (lambda r, s: _notebook(r, s, {}), 0, None),
    "matplotlib_inline": (lambda r, s: _notebook(r, s, {**_all(s), "plot_sin": MATPLOTLIB_INLINE_PLOT}), FULL, None),
    "pip_install": (_solved_with("second_derivative", "!pip install numpy"), FULL, "shell command skipped"),
    "magics": (lambda r, s: _notebook(r, s, _all(s), [(2, "%load_ext autoreload\n%autoreload 2"),
                                                       (3, "%%time\nz = sum(range(1000))"),
                                                       (4, "%timeit -n 1 -r 1 sum(range(10))")]), FULL, None),
    # stalling the class
    "pipe_flood": (_solved_with("second_derivative", FLOOD_PIPE), 0, "broke the grading protocol"),
    "slow_cells": (_timed_cells(8, CELL_TIMEOUT - 1), None, "longer than its limit"),
    "raising_cells": (_raising_cells(400), FULL, None),
    "list_grade_id": ("extra notebook", FULL, "extra notebook, ignored"),
    "too_large": ("too large", 0, "larger than"),
    # points without a correct answer
    "forged_records": (_blank_with(FORGE_RECORDS), 0, None),
    "equal_to_everything": (_blank_with(EQUAL_TO_EVERYTHING), 0, None),
    "reads_frames": (_blank_with(READ_EXPECTED_FROM_FRAMES), 0, None),
    "fake_engine": (_blank_with(FAKE_ENGINE), 0, None),
    "disables_guard": (_blank_with(DISABLE_GUARD), 0, None),
    "self_restoring_patch": (_blank_with(SELF_RESTORING_PATCH), 0, None),
    "frozen_name": (_blank_with(FROZEN_NAME), 0, None),  # 12.0 is only one of task 1's answers
    "written_answer_as_test": (_written_answer_as_test, 0, "cell type changed"),
    "symlink_to_source": ("symlink", 0, "symbolic link"),
    "hardlink_to_classmate": ("hardlink", 0, "hard link"),
    # reading what is hidden
    "searches_memory": (_solved_with("plot_sin", SEARCH_MEMORY), FULL, None),
    "prints_history": (_solved_with("plot_sin", PRINT_HISTORY_AND_ENV), FULL, None),
}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("integrity") / "course"
    exercises = root.parent / "exercises"
    shutil.copytree(ROOT / "exercises" / ASSIGNMENT, exercises / ASSIGNMENT)
    assert kitgrade(["init", str(root), "--course-id", "sec101", "--exercises", str(exercises)]) == 0
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text() + f"\nc.KitGrade.cell_timeout = {CELL_TIMEOUT}\n"
                      f"c.KitGrade.notebook_timeout = {NOTEBOOK_TIMEOUT}\nc.KitGrade.workers = 2\n")
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
    return root


@pytest.fixture(scope="module")
def graded(course):
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    honest = _notebook(release, source, _all(source))
    for student, (build, _, _) in CASES.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        target = folder / f"{NOTEBOOK}.ipynb"
        if build == "extra notebook":
            nbformat.write(honest, target)
            odd = nbformat.from_dict(json.loads(json.dumps(release)))
            for cell in odd.cells:
                cell.metadata.setdefault("nbgrader", {})["grade_id"] = ["a", "list"]
            (folder / "other.ipynb").write_text(json.dumps(odd))
        elif build == "too large":
            blank = _notebook(release, source, {})
            blank.cells[0].source += "\n" + "x" * (21 * 1024 * 1024)
            nbformat.write(blank, target)
        elif build == "symlink":
            os.symlink(course / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", target)
        elif build == "hardlink":
            classmate = course.parent / "classmate.ipynb"
            nbformat.write(honest, classmate)
            os.link(classmate, target)
        else:
            nbformat.write(build(release, source), target)
    os.environ["KITGRADE_TEST_SECRET"] = "instructor-secret-value"
    started = time.monotonic()
    try:
        status = kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"])
    finally:
        del os.environ["KITGRADE_TEST_SECRET"]
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    return {"status": status, "report": report, "seconds": time.monotonic() - started}


def _autograded(course, student):
    return (course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text()


@pytest.mark.parametrize("student", list(CASES))
def test_each_case_gets_its_score_and_reason(graded, student):
    _, score, reason = CASES[student]
    result = graded["report"][student]
    if score is not None:
        assert result["score"] == score, result["reasons"]
    if reason is None:
        assert not any("changed" in r or "tamper" in r.lower() for r in result["reasons"]), result["reasons"]
    else:
        assert any(reason in r for r in result["reasons"]), result["reasons"]


def test_the_class_is_graded_whatever_one_student_does(graded):
    assert set(graded["report"]) == set(CASES)
    # the slowest submission is bounded by its own notebook limit; the rest run beside it on 2 workers
    assert graded["seconds"] < 4 * NOTEBOOK_TIMEOUT + 120


def test_a_notebook_that_runs_too_long_is_stopped_at_its_own_limit(graded):
    result = graded["report"]["slow_cells"]
    assert result["score"] < FULL
    assert any(f"longer than its limit of {NOTEBOOK_TIMEOUT} s" in r for r in result["reasons"]), result["reasons"]


def test_errors_count_towards_the_notebooks_output_limit(course, graded):
    size = len(_autograded(course, "raising_cells"))
    assert size < 600_000, size  # the output limit (200 kB) plus the notebook itself, not 400 tracebacks


def test_a_symlinked_submission_never_shows_the_instructors_solutions(course, graded):
    assert not (course / "autograded" / "symlink_to_source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").exists() \
        or "BEGIN SOLUTION" not in _autograded(course, "symlink_to_source")


def test_hidden_tests_are_not_in_the_students_memory_history_or_environment(course, graded):
    memory = _autograded(course, "searches_memory")
    assert "MEMORY SEARCH: nothing" in memory, memory[memory.find("MEMORY SEARCH"):][:300]
    assert "CONTROL: FOUND" in memory, "the memory search finds what the process did receive"
    history = _autograded(course, "prints_history")
    assert "HISTORY:" in history
    assert HIDDEN_MARKER not in history.split("HISTORY:", 1)[1].split("ENV:", 1)[0]
    assert "instructor-secret-value" not in history
    assert "KITGRADE_TEST_SECRET" not in history


def test_feedback_without_hidden_tests_shows_no_hidden_code(course, graded):
    assert kitgrade(["feedback", ASSIGNMENT, "--course", str(course), "--hide-hidden-tests"]) == 0
    for student in ("honest", "blank", "prints_history", "searches_memory"):
        html = (course / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
        assert HIDDEN_MARKER not in html and "BEGIN HIDDEN TESTS" not in html, student


def test_the_report_names_how_each_test_was_graded(course, graded):
    how = json.loads((course / "reports" / f"{ASSIGNMENT}-tests.json").read_text())
    assert how and set(how.values()) == {"trusted"}


def test_a_kit_installed_under_tmp_keeps_the_real_tmp_for_its_packages(monkeypatch):
    """A clone tried out under /tmp: the student's process must still import the packages there, so
    its /tmp is not replaced by the scratch folder (writes to /tmp are then refused, not hidden)."""
    import sys

    from grader.sandbox import mounts

    if str(ROOT).startswith("/tmp/"):  # this very checkout is such a clone
        assert mounts.installed_under_tmp() is not None
        return
    assert mounts.installed_under_tmp() is None
    monkeypatch.setattr(sys, "prefix", "/tmp/try-the-kit/.venv")
    assert mounts.installed_under_tmp() == os.path.realpath("/tmp/try-the-kit/.venv")
