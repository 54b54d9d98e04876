"""Nothing the student's process sends is believed: graded end to end by ``kitgrade autograde``.

One course made by ``kitgrade init`` with the kit's two problem sets; each case below hands in a
notebook, one ``autograde`` run per problem set grades the whole class, and each test checks one
case (docs/threat-model.md, "Verdicts"):

* points rest on values the student's code computes from hidden inputs, never on an exception
  the student's process reports (a forged ``RuntimeError``, or a class named so, earns nothing);
* hidden tests reveal nothing by their order: a student who prints the inputs of the hidden
  calls, or stops at the first one, sees only "k of n hidden checks passed";
* a 0-d answer arrives as a 0-d value and earns its points;
* a notebook that sends deeply nested output, has 100,000 cells or many slow cells costs its
  student only, quickly, with a reason; the rest of the class is graded.
"""

from __future__ import annotations

import json
import shutil
import time

import nbformat
import pytest

from grader.cli import main as kitgrade
from kit_paths import ROOT

PS1, PS2 = "ps1_autograd_basics", "ps2_build_your_own"
NOTEBOOKS = {PS1: "autograd_basics", PS2: "build_your_own"}
FULL = {PS1: 11, PS2: 22}
CELL_TIMEOUT, NOTEBOOK_TIMEOUT = 8, 30
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"

# ---- ps1: task 2 (a) forged ---------------------------------------------------------------------
FORGED_RAISE = '''\
def backward_again(f, x):
    y = f(x)
    y.backward()
    try:  # the error typed by hand, word for word, instead of a second backward
        raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                           "tensors after they have already been freed). Specify retain_graph=True")
    except RuntimeError:
        return True, x.grad'''
FORGED_CLASS = '''\
class RuntimeError(Exception):
    pass


def backward_again(f, x):
    y = f(x)
    y.backward()
    try:
        raise RuntimeError("Trying to backward through the graph a second time")
    except RuntimeError as error:
        return True, x.grad'''
FORGED_ERROR_OBJECT = '''\
def backward_again(f, x):
    y = f(x)
    y.backward()
    return RuntimeError("Trying to backward through the graph a second time; use retain_graph=True"), x.grad'''

# ---- ps1: learning hidden inputs from the order of the hidden calls --------------------------------
PRINTS_INPUTS = '''\
def second_derivative(f, x0):
    print("CALLED WITH", x0, f)
    x = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)
    (dy,) = torch.autograd.grad(f(x), x, create_graph=True)
    (d2y,) = torch.autograd.grad(dy, x)
    return d2y.item() if x0 != 1.2 else 0.0'''
STOPS_AT_FIRST_HIDDEN = '''\
import os
def second_derivative(f, x0):
    if x0 not in (2.0, 0.7, 0.5):  # the visible inputs: stop at the first hidden one
        os._exit(0)
    x = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)
    (dy,) = torch.autograd.grad(f(x), x, create_graph=True)
    (d2y,) = torch.autograd.grad(dy, x)
    return d2y.item()'''
SLEEPS_AT_FIRST_HIDDEN = STOPS_AT_FIRST_HIDDEN.replace("os._exit(0)", "import time\n        time.sleep(600)")
#: Hidden inputs of task 1 (a) that a leak would show.
HIDDEN_INPUTS = ("torch.exp(2 * x)", "0.3", "1.2", "torch.tanh", "x * torch.sin(x)")

# ---- ps1: point 7 -------------------------------------------------------------------------------
DEEP_OUTPUT = '''\
from IPython.display import display
nested = 1
for _ in range(500):  # deep enough to stop nbformat and nbgrader with a RecursionError
    nested = [nested]
display({"application/json": {"deep": nested}, "text/plain": "deep"}, raw=True)'''

# ---- ps2 ----------------------------------------------------------------------------------------
ZERO_D = {
    "mul_backward": '''\
def mul_backward(a, b, grad):
    return np.asarray(grad * b), np.asarray(grad * a)''',
    "exp_backward": '''\
def exp_backward(a, grad):
    return np.array(grad * np.exp(a))''',
    "unbroadcast": '''\
def unbroadcast(grad, shape):
    grad = np.asarray(grad)
    lead = grad.ndim - len(shape)
    if lead > 0:
        grad = grad.sum(axis=tuple(range(lead)))
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return np.array(grad.reshape(shape))  # shape () gives a 0-d array''',
}
#: A backward that raises on every second call for the same root, whatever the graph saved.
FORGED_FREES = '''\
_called = []  # the roots themselves: an id() could be reused by a later graph's root
def backward(root, retain_graph=False):
    if any(seen is root for seen in _called):
        raise RuntimeError("Trying to backward through the graph a second time; use retain_graph=True")
    _called.append(root)
    grads = {id(root): 1.0}
    for node in reversed(topological_order(root)):
        grad = grads.pop(id(node), None)
        if grad is None:
            continue
        if node.is_leaf():
            node.grad += grad
            continue
        parent_grads = node.backward_fn(grad, *node.saved)
        if not retain_graph and node.saved:
            node.saved = None
        for parent, parent_grad in zip(node.parents, parent_grads):
            grads[id(parent)] = grads.get(id(parent), 0.0) + parent_grad'''


def _solutions(source) -> dict[str, str]:
    return {c.metadata["nbgrader"]["grade_id"]: "\n".join(
        line for line in c.source.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION))
        for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}


def _notebook(release, source, answers=None, extra_cells=()):
    """The release with every solution cell the instructor's, except ``answers``; extra cells inserted."""
    nb = nbformat.from_dict(json.loads(json.dumps(release)))
    solutions = {**_solutions(source), **(answers or {})}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in solutions:
            cell.source = solutions[grade_id]
    for where, code in extra_cells:
        nb.cells.insert(where, nbformat.v4.new_code_cell(code))
    return nb


def _deep_notebook(release, source):
    """A notebook file whose metadata nests 100,000 levels deep (JSON that Python's parser cannot read)."""
    text = nbformat.writes(_notebook(release, source))
    return text.replace('"metadata": {', '"metadata": {"deep": ' + "[" * 100_000 + "]" * 100_000 + ", ", 1)


def _many_cells(release, source):
    nb = _notebook(release, source)
    nb.cells.extend(nbformat.v4.new_code_cell("pass") for _ in range(100_000))
    return nb


CASES = {
    PS1: {
        "honest": (lambda r, s: _notebook(r, s), FULL[PS1]),
        "forged_raise": (lambda r, s: _notebook(r, s, {"backward_again": FORGED_RAISE}), FULL[PS1] - 1),
        "forged_class": (lambda r, s: _notebook(r, s, {"backward_again": FORGED_CLASS}), FULL[PS1] - 1),
        "forged_object": (lambda r, s: _notebook(r, s, {"backward_again": FORGED_ERROR_OBJECT}), FULL[PS1] - 1),
        "prints_inputs": (lambda r, s: _notebook(r, s, {"second_derivative": PRINTS_INPUTS}), FULL[PS1] - 2),
        "stops_at_first_hidden": (lambda r, s: _notebook(r, s, {"second_derivative": STOPS_AT_FIRST_HIDDEN}), 0),
        "sleeps_at_first_hidden": (lambda r, s: _notebook(r, s, {"second_derivative": SLEEPS_AT_FIRST_HIDDEN}),
                                   FULL[PS1] - 2),
        "deep_output": (lambda r, s: _notebook(r, s, extra_cells=[(2, DEEP_OUTPUT)]), None),
        "deep_notebook": (_deep_notebook, 0),
        "many_cells": (_many_cells, 0),
    },
    PS2: {
        "honest": (lambda r, s: _notebook(r, s), FULL[PS2]),
        "zero_d": (lambda r, s: _notebook(r, s, ZERO_D), FULL[PS2]),
        "forged_frees": (lambda r, s: _notebook(r, s, {"backward": FORGED_FREES}), None),  # see its own test
        "slow_cells": (lambda r, s: _notebook(r, s, extra_cells=[(2, f"import time\ntime.sleep({CELL_TIMEOUT - 1})")] * 6),
                       0),
    },
}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("verdicts") / "course"
    exercises = root.parent / "exercises"
    for assignment in CASES:
        shutil.copytree(ROOT / "exercises" / assignment, exercises / assignment)
    assert kitgrade(["init", str(root), "--course-id", "sec101", "--exercises", str(exercises)]) == 0
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text() + f"\nc.KitGrade.cell_timeout = {CELL_TIMEOUT}\n"
                      f"c.KitGrade.notebook_timeout = {NOTEBOOK_TIMEOUT}\nc.KitGrade.workers = 2\n")
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
    return root


@pytest.fixture(scope="module")
def graded(course):
    result = {}
    for assignment, cases in CASES.items():
        notebook = NOTEBOOKS[assignment]
        release = nbformat.read(course / "release" / assignment / f"{notebook}.ipynb", as_version=4)
        source = nbformat.read(course / "source" / assignment / f"{notebook}.ipynb", as_version=4)
        for student, (build, _) in cases.items():
            folder = course / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nb = build(release, source)
            (folder / f"{notebook}.ipynb").write_text(nb if isinstance(nb, str) else nbformat.writes(nb))
        started = time.monotonic()
        status = kitgrade(["autograde", assignment, "--course", str(course), "--quiet"])
        report = json.loads((course / "reports" / f"{assignment}.json").read_text())
        result[assignment] = {"status": status, "report": report, "seconds": time.monotonic() - started}
    assert kitgrade(["feedback", PS1, "--course", str(course)]) == 0
    return result


def _autograded(course, assignment, student):
    return nbformat.read(course / "autograded" / student / assignment / f"{NOTEBOOKS[assignment]}.ipynb",
                         as_version=4)


def _test_cell(nb, grade_id):
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell


def _score(graded, assignment, student):
    return graded[assignment]["report"][student]["score"]


@pytest.mark.parametrize("assignment,student", [(a, s) for a, cases in CASES.items() for s in cases])
def test_each_case_gets_its_score(graded, assignment, student):
    expected = CASES[assignment][student][1]
    if expected is not None:
        assert _score(graded, assignment, student) == expected, graded[assignment]["report"][student]["reasons"]


def test_the_class_is_graded_whatever_one_student_sends(graded):
    for assignment, cases in CASES.items():
        assert graded[assignment]["status"] in (0, 1), graded[assignment]
        assert set(graded[assignment]["report"]) == set(cases)


# ---- points only from what the student cannot type -------------------------------------------------
@pytest.mark.parametrize("student", ["forged_raise", "forged_class", "forged_object"])
def test_a_forged_runtime_error_earns_nothing_on_task_2a(course, graded, student):
    cell = _test_cell(_autograded(course, PS1, student), "test_backward_again")
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert errors, "the forged exception kept the points of task 2 (a)"


def test_the_honest_backward_again_keeps_its_point(course, graded):
    cell = _test_cell(_autograded(course, PS1, "honest"), "test_backward_again")
    assert not [o for o in cell.outputs if o.output_type == "error"]


def test_a_backward_that_raises_on_every_second_call_loses_the_freeing_point(course, graded):
    cell = _test_cell(_autograded(course, PS2, "forged_frees"), "test_backward_frees")
    # a visible check (two passes with retain_graph=True must both run) already shows the forgery
    assert [o.evalue for o in cell.outputs if o.output_type == "error"] == [
        "a RuntimeError from a second backward(root): expected no error, got raised, for input root=x + x"]


def test_no_exercise_decides_on_an_exception_the_student_reports():
    for assignment in CASES:
        text = (ROOT / "exercises" / "_src" / f"{assignment}.txt").read_text()
        for word in ("StudentException", ".type_name", ".ename", ".evalue"):
            assert word not in text, (assignment, word)


# ---- hidden tests reveal nothing by their order ------------------------------------------------------
def test_printed_hidden_inputs_reach_no_output_or_feedback(course, graded):
    nb = _autograded(course, PS1, "prints_inputs")
    cell = _test_cell(nb, "test_second_derivative")
    assert [o.evalue for o in cell.outputs if o.output_type == "error"] == ["9 of 10 hidden checks passed"]
    feedback = (course / "feedback" / "prints_inputs" / PS1 / f"{NOTEBOOKS[PS1]}.html").read_text()
    for text in (nbformat.writes(nb), feedback):
        assert "CALLED WITH" in text  # the visible calls' prints
        assert not any(f"CALLED WITH {x}" in text for x in ("3 ", "0.3", "1.2", "0.5")), "a hidden input leaked"
    # without the hidden tests' code, the feedback still says how many passed
    assert kitgrade(["feedback", PS1, "--course", str(course), "--hide-hidden-tests"]) == 0
    feedback = (course / "feedback" / "prints_inputs" / PS1 / f"{NOTEBOOKS[PS1]}.html").read_text()
    assert "9 of 10 hidden checks passed" in feedback and "torch.exp(2 * x)" not in feedback
    # the instructor's report names the failed hidden check (kept apart from the findings as it ran)
    reasons = json.loads((course / "reports" / f"{PS1}.json").read_text())["prints_inputs"]["reasons"]
    assert any("cell 'test_second_derivative': hidden check failed (not shown to the student)" in r
               for r in reasons), reasons


@pytest.mark.parametrize("student", ["stops_at_first_hidden", "sleeps_at_first_hidden"])
def test_a_student_who_stops_at_the_first_hidden_call_learns_only_the_count(course, graded, student):
    nb = _autograded(course, PS1, student)
    cell = _test_cell(nb, "test_second_derivative")
    assert [o.evalue for o in cell.outputs if o.output_type == "error"] == ["0 of 10 hidden checks passed"]
    outputs = json.dumps(cell.outputs)
    assert not any(hidden in outputs for hidden in HIDDEN_INPUTS)


# ---- the value round trip ------------------------------------------------------------------------
def test_zero_d_answers_earn_their_points(course, graded):
    nb = _autograded(course, PS2, "zero_d")
    for grade_id in ("test_mul_backward", "test_exp_backward", "test_unbroadcast_both"):
        assert not [o for o in _test_cell(nb, grade_id).outputs if o.output_type == "error"], grade_id


# ---- a bad notebook costs its student only -----------------------------------------------------------
def test_deeply_nested_output_costs_its_student_only(course, graded):
    result = graded[PS1]["report"]["deep_output"]
    assert result["score"] == FULL[PS1]  # only the output is dropped, with a reason
    assert any("an output was not kept, because it is nested more than 64 levels deep" in r
               for r in result["reasons"]), result
    assert "MalformedOutput" in nbformat.writes(_autograded(course, PS1, "deep_output"))


def test_a_deeply_nested_notebook_file_costs_its_student_only(graded):
    result = graded[PS1]["report"]["deep_notebook"]
    assert any("nested more than 64 levels deep" in r for r in result["reasons"]), result["reasons"]
    assert _score(graded, PS1, "honest") == FULL[PS1]


def test_many_slow_cells_stop_at_the_notebook_limit_and_no_test_runs_after(course, graded):
    result = graded[PS2]["report"]["slow_cells"]
    assert any(f"longer than its limit of {NOTEBOOK_TIMEOUT} s" in r for r in result["reasons"]), result["reasons"]
    nb = _autograded(course, PS2, "slow_cells")
    tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"]
    assert tests and all([o.ename for o in c.outputs] == ["DeadKernelError"] for c in tests), \
        [[o.get("ename") for o in c.outputs] for c in tests]


def test_a_notebook_of_100000_cells_is_refused_quickly_with_a_small_report(course, graded):
    result = graded[PS1]["report"]["many_cells"]
    cells = 100_000 + len(nbformat.read(course / "release" / PS1 / f"{NOTEBOOKS[PS1]}.ipynb", as_version=4).cells)
    assert any(f"{cells} cells, more than the 2000 a notebook may have" in r for r in result["reasons"]), result
    assert (course / "reports" / f"{PS1}.json").stat().st_size < 200_000


# ---- the hidden part's rules, on the trusted side alone ---------------------------------------------
def _run_test(source, answers):
    from grader.sandbox.trusted_tests import TrustedSide

    requests = []

    def probe(code):
        requests.append(code)
        return answers(code)

    outputs, failed = TrustedSide(probe).run_test(source, 10_000)
    return [o.get("evalue") for o in outputs if o["output_type"] == "error"], requests


def test_a_hidden_part_that_asks_again_after_a_check_is_refused():
    source = ("### BEGIN HIDDEN TESTS\ncheck(student('1') == 1, 'a', 1, 0, 'x')\n"
              "check(student('2') == 2, 'b', 2, 0, 'y')\n### END HIDDEN TESTS")
    errors, requests = _run_test(source, lambda code: eval(code))
    assert errors == ["the hidden checks could not run: a hidden test must ask for all its answers in one "
                      "student_batch([...]) before its first check"]
    assert requests == ["1"]


def test_a_hidden_batch_is_one_request_and_its_output_only_the_count():
    from grader.checks import answer_all
    from grader.plain_values import plain

    source = ("print('visible')\n### BEGIN HIDDEN TESTS\nprint('hidden')\n"
              "got = student_batch(['1', '2', '1 / 0'])\n"
              "for g, e in zip(got, [1, 2, 3]):\n    check(g == e, 'v', e, g, 'secret input')\n### END HIDDEN TESTS")
    errors, requests = _run_test(source, lambda code: plain(eval(code, {"answer_all": answer_all,
                                                                      "__import__": __import__})))
    assert errors == ["2 of 3 hidden checks passed"] and len(requests) == 1


def test_markers_inside_a_block_make_the_whole_cell_hidden():
    from grader.sandbox.trusted_tests import split_hidden

    assert split_hidden("a = 1\n### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS\nc = 3") == ("a = 1", "b = 2\nc = 3")
    assert split_hidden("if True:\n    a = 1\n    ### BEGIN HIDDEN TESTS\n    b = 2\n    ### END HIDDEN TESTS")[0] == ""
