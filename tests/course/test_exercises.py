"""The graded exercises in ``exercises/``, run through real nbgrader in a temporary course.

For each assignment: ``nbgrader generate_assignment`` strips solutions and hidden tests, then
``nbgrader autograde`` grades four submissions made from the released notebook:

* ``solution``: every solution cell filled with the instructor's code -> full marks;
* ``blank``:    the released notebook as is -> 0 (every test cell fails);
* ``partial``:  some tasks right, some half right, some passing only the visible tests -> a known score;
* ``wrong``:    every task answered wrongly -> 0, and every failing test cell says what it expected,
  what it got and for which input.

ps1's written answers (nbgrader's manually graded answer cells) are in none of those scores: the
release must hide their rubric, the instructor's answers must wait for a manual grade, and answers
left as released must score 0 (nbgrader's own rule).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from kit_paths import ROOT

nbgrader_api = pytest.importorskip("nbgrader.api")

EXERCISES = ROOT / "exercises"
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"

# --- what the submissions write into the released notebooks -----------------------------------
# A submission is {grade_id of a solution cell: source}; "SOLUTION" stands for the instructor's code.
SOLUTION = "SOLUTION"

PS1_PARTIAL = {
    # right for the visible example (float32 gives 12 exactly) but not within 1e-9 elsewhere: 0 of 2
    "second_derivative": '''\
def second_derivative(f, x0):
    x = torch.tensor(float(x0), requires_grad=True)
    (dy,) = torch.autograd.grad(f(x), x, create_graph=True)
    (d2y,) = torch.autograd.grad(dy, x)
    return float(d2y.item())''',
    "backward_twice": SOLUTION,   # 1
    "grad_of_f": SOLUTION,        # 1 + 1
    # the derivative is right (2 of 3) but the figure has a single line (0 of 1)
    "plot_sin": '''\
x = torch.linspace(-4.0, 4.0, 150, requires_grad=True)
y = torch.sin(x)
y.sum().backward()
dy = x.grad
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), dy.numpy())''',
}
PS1_PARTIAL_SCORE = 5

PS1_WRONG = {
    "second_derivative": '''\
def second_derivative(f, x0):
    x = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)
    (dy,) = torch.autograd.grad(f(x), x)
    return 2 * dy.item()''',
    # never tries the second backward: says it ran, with the gradient of one pass
    "backward_again": '''\
def backward_again(f, x):
    f(x).backward()
    return False, x.grad''',
    "backward_twice": '''\
def backward_twice(x):
    y = 2 * torch.dot(x, x)
    y.backward()
    return x.grad''',
    "elementwise_derivative": '''\
def elementwise_derivative(f, x):
    return f(x).detach()''',
    "weighted_backward": '''\
def weighted_backward(values, v):
    return [1.0, 1.0, 1.0]''',
    "grad_of_f": '''\
def grad_of_f(a):
    return f(a).detach()''',
    "plot_sin": '''\
x = torch.linspace(-math.pi, math.pi, 50, requires_grad=True)
y = torch.sin(x)
dy = torch.cos(x)
fig, ax = plt.subplots()''',
}

PS2_PARTIAL = {
    "mul_backward": SOLUTION,  # 1
    "div_backward": SOLUTION,  # 1
    # the base's gradient right, the exponent's wrong: 1 of 2
    "pow_backward": '''\
def pow_backward(a, p, grad):
    return grad * p * a ** (p - 1), np.zeros_like(p)''',
    # right, but recursive: the order test passes (1), the deep-graph test fails (0)
    "topological_order": '''\
def topological_order(root):
    order, seen = [], set()
    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)
    visit(root)
    return order''',
    # handles added leading dimensions only: 1 of 3
    "unbroadcast": '''\
def unbroadcast(grad, shape):
    grad = np.asarray(grad)
    return grad.sum(axis=tuple(range(grad.ndim - len(shape))))''',
    # passes the visible checks, overflows for x = -1000 in the hidden ones: 2 of 3
    "sigmoid": '''\
class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        out = 1.0 / (1.0 + math.exp(-x))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_values
        return grad * out * (1.0 - out)''',
}
PS2_PARTIAL_SCORE = 7

PS2_WRONG = {
    "mul_backward": "def mul_backward(a, b, grad):\n    return grad * a, grad * b",
    "div_backward": "def div_backward(a, b, grad):\n    return grad / b, grad * a / b ** 2",
    "pow_backward": "def pow_backward(a, p, grad):\n    return grad * a ** (p - 1), grad * np.log(a)",
    "exp_backward": "def exp_backward(a, grad):\n    return grad * a",
    "matmul_backward": "def matmul_backward(A, B, grad):\n    return 2 * grad @ B.T, 2 * A.T @ grad",
    "unbroadcast": "def unbroadcast(grad, shape):\n    return np.full(shape, np.sum(grad))",
    # no "seen" set: shared parents come out several times
    "topological_order": '''\
def topological_order(root):
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.parents)
    return order[::-1]''',
    # overwrites instead of adding, never frees, and sets (not accumulates) leaf gradients
    "backward": '''\
def backward(root, retain_graph=False):
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.parents)
    grads = {id(root): 1.0}
    for node in reversed(order):
        grad = grads.get(id(node), 0.0)
        if node.is_leaf():
            node.grad = grad
            continue
        for parent, parent_grad in zip(node.parents, node.backward_fn(grad, *node.saved)):
            grads[id(parent)] = parent_grad''',
    "sigmoid": '''\
class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1.0 / (1.0 + math.exp(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        return grad * x * (1.0 - x)''',
    "numerical_gradient": '''\
def numerical_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        x[i] += eps
        plus = f(x)
        x[i] -= 2 * eps
        minus = f(x)
        grad[i] = (plus - minus) / eps
    return grad''',
    "gradcheck": "def gradcheck(f, grad_f, x, eps=1e-6, atol=1e-5, rtol=1e-3):\n    return True",
}

PS3_PARTIAL = {
    # dX and dW right (2), db summed over the wrong dimension (0)
    "linear_backward": '''\
def linear_backward(X, W, b, G):
    return G @ W, G.T @ X, G.sum(1)''',
    "hypot": SOLUTION,                  # 2
    "layer_output_shapes": SOLUTION,    # 2
    # gradcheck raises on a wrong backward instead of returning False: the visible check on a slipped MatMul fails (0)
    "backward_is_right": '''\
def backward_is_right(function, inputs):
    return torch.autograd.gradcheck(function.apply, tuple(inputs))''',
    # evaluation mode and no recording (1), but the model is left in evaluation mode (0)
    "evaluate": '''\
def evaluate(model, x):
    model.eval()
    with torch.no_grad():
        return model(x)''',
}
PS3_PARTIAL_SCORE = 7

PS3_WRONG = {
    "linear_backward": '''\
def linear_backward(X, W, b, G):
    return 2 * (G @ W), G.T @ X, G.sum(1)''',
    "matvec_backward": '''\
def matvec_backward(W, v, g):
    return 2 * g[:, None] * v, W.T @ g''',
    # the two gradients swapped
    "hypot": '''\
class Hypot(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        h = torch.sqrt(x * x + y * y)
        ctx.save_for_backward(x, y, h)
        return h

    @staticmethod
    def backward(ctx, G):
        x, y, h = ctx.saved_tensors
        return G * y / h, G * x / h''',
    "backward_is_right": '''\
def backward_is_right(function, inputs):
    return True''',
    # no hook: the gradient reaching h is not clipped
    "clipped_backward": '''\
def clipped_backward(x, w, limit):
    (x * x * w).sum().backward()
    return x.grad''',
    # the hooks are never removed
    "layer_output_shapes": '''\
def layer_output_shapes(model, x):
    seen = []
    for name, child in model.named_children():
        child.register_forward_hook(lambda module, inputs, output, name=name: seen.append((name, tuple(output.shape))))
    model(x)
    return seen''',
    # recorded and detached afterwards, and the model left in evaluation mode
    "evaluate": '''\
def evaluate(model, x):
    model.eval()
    return model(x).detach()''',
}

ASSIGNMENTS = {
    "ps1_autograd_basics": {"notebook": "autograd_basics", "points": 11, "partial": (PS1_PARTIAL, PS1_PARTIAL_SCORE),
                            "wrong": PS1_WRONG,
                            # graded by a person: grade_id -> points
                            "written": {"written_second_derivative": 2, "written_control_flow": 3}},
    "ps2_build_your_own": {"notebook": "build_your_own", "points": 22, "partial": (PS2_PARTIAL, PS2_PARTIAL_SCORE),
                           "wrong": PS2_WRONG, "written": {}},
    "ps3_extending_autograd": {"notebook": "extending_autograd", "points": 12,
                               "partial": (PS3_PARTIAL, PS3_PARTIAL_SCORE), "wrong": PS3_WRONG, "written": {}},
}

NBGRADER_CONFIG = '''\
c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "exercises-test"
c.CourseDirectory.db_url = "sqlite:///{root}/gradebook.db"
c.Execute.timeout = 120
'''


# --- helpers --------------------------------------------------------------------------------
def source_notebook(assignment):
    return nbformat.read(EXERCISES / assignment / (ASSIGNMENTS[assignment]["notebook"] + ".ipynb"), as_version=4)


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


def instructor_solution(source: str) -> str:
    """A solution cell's source without the BEGIN/END SOLUTION marker lines."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION))


def nbgrader(*args, cwd):
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.setdefault("MPLBACKEND", "Agg")
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}"
    return run


def make_submission(release_nb, source_nb, answers):
    """The released notebook with the solution cells named in ``answers`` filled in."""
    nb = nbformat.from_dict(json.loads(json.dumps(release_nb)))
    solutions = {nbgrader_meta(c).get("grade_id"): instructor_solution(c.source)
                 for c in source_nb.cells if nbgrader_meta(c).get("solution")}
    for cell in nb.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id in answers:
            cell.source = solutions[grade_id] if answers[grade_id] == SOLUTION else answers[grade_id]
    unknown = set(answers) - set(solutions)
    assert not unknown, f"answers for unknown solution cells {sorted(unknown)}"
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course with both assignments released, four submissions each, autograded."""
    root = tmp_path_factory.mktemp("course")
    (root / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(root=str(root)))
    for assignment, info in ASSIGNMENTS.items():
        shutil.copytree(EXERCISES / assignment, root / "source" / assignment)
        nbgrader("generate_assignment", assignment, "--force", cwd=root)
        release = nbformat.read(root / "release" / assignment / (info["notebook"] + ".ipynb"), as_version=4)
        source = source_notebook(assignment)
        partial, _ = info["partial"]
        submissions = {
            "solution": {nbgrader_meta(c)["grade_id"]: SOLUTION for c in source.cells if nbgrader_meta(c).get("solution")},
            "blank": {},
            "partial": partial,
            "wrong": info["wrong"],
        }
        for student, answers in submissions.items():
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nbformat.write(make_submission(release, source, answers), folder / (info["notebook"] + ".ipynb"))
        nbgrader("autograde", assignment, "--force", cwd=root)
    return root


def scores(course_root, assignment):
    """{student: (total score, {test grade_id: score})} from the gradebook (the written answers left out)."""
    notebook, written = ASSIGNMENTS[assignment]["notebook"], ASSIGNMENTS[assignment]["written"]
    result = {}
    with nbgrader_api.Gradebook(f"sqlite:///{course_root}/gradebook.db") as gradebook:
        for student in ("solution", "blank", "partial", "wrong"):
            submission = gradebook.find_submission_notebook(notebook, assignment, student)
            result[student] = (submission.score, {grade.name: grade.score for grade in submission.grades
                                                  if grade.name not in written})
    return result


def failed_cells(course_root, assignment, student):
    """{grade_id: error text} of the test cells that failed in an autograded notebook."""
    path = course_root / "autograded" / student / assignment / (ASSIGNMENTS[assignment]["notebook"] + ".ipynb")
    nb = nbformat.read(path, as_version=4)
    failed = {}
    for cell in nb.cells:
        if not nbgrader_meta(cell).get("grade"):
            continue
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if errors:
            failed[nbgrader_meta(cell)["grade_id"]] = "\n".join(f"{o.ename}: {o.evalue}" for o in errors)
    return failed


# --- the source notebooks themselves ----------------------------------------------------------
def test_notebooks_are_built_from_their_sources():
    run = subprocess.run([sys.executable, str(EXERCISES / "build.py"), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


#: Test cells with no hidden part, and why: they check what the student defined, with no input to hide.
VISIBLE_ONLY = {"test_sin_points": "ps1 task 5's range of the student's own x",
                "test_sin_derivative": "ps1 task 5's y and dy, the student's own", "test_sin_plot": "ps1 task 5's figure"}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_notebook_is_well_formed(assignment):
    nb = source_notebook(assignment)
    nbformat.validate(nb)
    ids = [nbgrader_meta(c).get("grade_id") for c in nb.cells]
    assert None not in ids, "every cell carries nbgrader metadata"
    assert len(ids) == len(set(ids)), "grade ids are unique"
    points, written = 0, {}
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        assert meta["schema_version"] == 3
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{meta['grade_id']}: committed with outputs"
        if meta["solution"] and meta["grade"]:  # a written answer, graded by hand: its model answer and rubric
            assert cell.cell_type == "markdown" and not meta["locked"] and meta["points"] > 0, meta["grade_id"]
            assert cell.source.startswith(BEGIN_SOLUTION) and cell.source.endswith(END_SOLUTION), meta["grade_id"]
            assert "**Rubric" in cell.source and "**Model answer" in cell.source, meta["grade_id"]
            written[meta["grade_id"]] = meta["points"]
        elif meta["solution"]:
            assert not meta["grade"] and not meta["locked"]
            assert BEGIN_SOLUTION in cell.source and END_SOLUTION in cell.source, meta["grade_id"]
        elif meta["grade"]:
            assert meta["locked"] and meta["points"] > 0
            assert cell.source.find(BEGIN_HIDDEN) > 0 or meta["grade_id"] in VISIBLE_ONLY, \
                f"{meta['grade_id']}: visible checks, then hidden tests"
            points += meta["points"]
        else:
            assert meta["locked"], f"{meta['grade_id']}: instructions and given code are read-only"
            assert BEGIN_HIDDEN not in cell.source and BEGIN_SOLUTION not in cell.source
    assert points == ASSIGNMENTS[assignment]["points"]
    assert written == ASSIGNMENTS[assignment]["written"]


def test_build_your_own_forbids_the_kit_engine():
    from grader.course import POLICY_KEY

    ps2 = source_notebook("ps2_build_your_own")
    assert ps2.metadata[POLICY_KEY] == {"forbidden_imports": ["autograd_core"], "language": "en"}
    for cell in ps2.cells:
        if nbgrader_meta(cell).get("solution") or not nbgrader_meta(cell).get("grade"):
            assert "autograd_core" not in instructor_solution(cell.source) or cell.cell_type == "markdown", \
                f"{nbgrader_meta(cell)['grade_id']}: student-side code must not use autograd_core"
    ps1 = source_notebook("ps1_autograd_basics")
    assert "forbidden_imports" not in ps1.metadata[POLICY_KEY], "problem set 1 is about using the engine"


# --- released notebooks ------------------------------------------------------------------------
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_release_strips_solutions_and_hidden_tests(course, assignment):
    release = course / "release" / assignment / (ASSIGNMENTS[assignment]["notebook"] + ".ipynb")
    text = release.read_text()
    source = source_notebook(assignment)
    assert BEGIN_SOLUTION not in text and BEGIN_HIDDEN not in text and "_hidden_" not in text
    nb = nbformat.read(release, as_version=4)
    assert [nbgrader_meta(c)["grade_id"] for c in nb.cells] == [nbgrader_meta(c)["grade_id"] for c in source.cells]
    for cell in nb.cells:
        if nbgrader_meta(cell).get("solution") and cell.cell_type == "code":
            assert "raise NotImplementedError()" in cell.source
        elif nbgrader_meta(cell).get("solution"):
            assert cell.source == "YOUR ANSWER HERE", nbgrader_meta(cell)["grade_id"]
    # no line of a written answer's model answer or rubric reaches the students
    rubric = [line for c in source.cells if nbgrader_meta(c).get("grade_id") in ASSIGNMENTS[assignment]["written"]
              for line in instructor_solution(c.source).splitlines() if len(line.strip()) > 3]
    assert len(rubric) >= 10 * len(ASSIGNMENTS[assignment]["written"])
    assert [line for line in rubric if line in text] == []
    assert "Rubric" not in text and "Model answer" not in text


# --- grading -------------------------------------------------------------------------------------
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_full_blank_zero_partial_known(course, assignment):
    result = scores(course, assignment)
    points = ASSIGNMENTS[assignment]["points"]
    total, cells = result["solution"]
    assert total == points, f"the instructor's solution lost points: {cells}"
    total, cells = result["blank"]
    assert total == 0, f"the blank notebook earned points: { {k: v for k, v in cells.items() if v} }"
    assert set(failed_cells(course, assignment, "blank")) == set(cells), "every test cell fails on the blank notebook"
    total, cells = result["partial"]
    assert total == ASSIGNMENTS[assignment]["partial"][1], f"partial submission scored per cell: {cells}"


def test_written_answers_wait_for_a_manual_grade_and_unchanged_ones_score_zero(course):
    """nbgrader's own rules: an answer cell changed from the release gets no automatic score and is
    flagged for manual grading; one left as released scores 0 ("No response.") and is not."""
    assignment, info = "ps1_autograd_basics", ASSIGNMENTS["ps1_autograd_basics"]
    with nbgrader_api.Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:
        answers = {student: {g.name: g for g in gradebook.find_submission_notebook(info["notebook"], assignment,
                                                                                      student).grades
                             if g.name in info["written"]}
                   for student in ("solution", "blank", "partial", "wrong")}
        assert {name: grade.max_score for name, grade in answers["solution"].items()} == info["written"]
        for grade in answers["solution"].values():
            assert grade.needs_manual_grade and grade.auto_score is None and grade.manual_score is None
            assert grade.score == 0
        assert gradebook.find_submission(assignment, "solution").needs_manual_grade
        for student in ("blank", "partial", "wrong"):
            for name, grade in answers[student].items():
                assert grade.auto_score == 0 and not grade.needs_manual_grade, (student, name)
                comment = gradebook.find_comment(name, info["notebook"], assignment, student)
                assert comment.auto_comment == "No response.", (student, name)
            assert not gradebook.find_submission(assignment, student).needs_manual_grade
        assert gradebook.find_assignment(assignment).max_score == info["points"] + sum(info["written"].values())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_wrong_answers_say_expected_got_and_input(course, assignment):
    total, cells = scores(course, assignment)["wrong"]
    assert total == 0, f"wrong answers earned points: { {k: v for k, v in cells.items() if v} }"
    failed = failed_cells(course, assignment, "wrong")
    assert set(failed) == set(cells), f"test cells that did not fail: {sorted(set(cells) - set(failed))}"
    for grade_id, error in failed.items():
        assert error.startswith("AssertionError: "), f"{grade_id}: failed with {error!r}, not a failed check"
        assert re.search(r": expected .+, got .+, for input .+", error, re.S), \
            f"{grade_id}: the message should say what was expected, what came back and for which input: {error!r}"


# --- ps2: answers the tests must accept, in a student's kernel and when graded --------------------
PS2_ALTERNATIVES = {
    # Function.apply accepts one gradient or a tuple of one (the base class: "one gradient per input")
    "sigmoid": '''\
class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        out = 0.5 * (1.0 + math.tanh(0.5 * x))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_values
        return (grad * out * (1.0 - out),)''',
    # np.allclose's answer as it comes: np.bool_, not bool
    "gradcheck": '''\
def gradcheck(f, grad_f, x, eps=1e-6, atol=1e-5, rtol=1e-3):
    claimed = np.asarray(grad_f(np.array(x, dtype=float)))
    numerical = numerical_gradient(f, x, eps)
    return claimed.shape == numerical.shape and np.allclose(claimed, numerical, rtol=rtol, atol=atol)''',
    # Kahn's algorithm instead of a depth-first search: another O(n) order
    "topological_order": '''\
def topological_order(root):
    nodes, seen = [root], {id(root)}
    for node in nodes:
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                nodes.append(parent)
    users = {id(node): 0 for node in nodes}
    for node in nodes:
        for parent in node.parents:
            users[id(parent)] += 1
    ready, order = [root], []
    while ready:
        node = ready.pop()
        order.append(node)
        for parent in node.parents:
            users[id(parent)] -= 1
            if users[id(parent)] == 0:
                ready.append(parent)
    return order[::-1]''',
}

# a correct order, but O(n^2): `in` on a list
PS2_QUADRATIC_ORDER = '''\
def topological_order(root):
    order, visited = [], []
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.append(node)
        stack.append((node, True))
        for parent in node.parents:
            if parent not in visited:
                stack.append((parent, False))
    return order'''

# the caller's x changed by rounding only: looks unchanged at 8 digits
PS2_DRIFTING_GRADIENT = '''\
def numerical_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        x[i] += eps
        plus = f(x)
        x[i] -= 2 * eps
        minus = f(x)
        x[i] += eps
        grad[i] = (plus - minus) / (2 * eps)
    return grad'''


def _ps2_run_in_plain_kernel(nb):
    """Execute a notebook in a plain python3 kernel; {grade_id: error text} of the cells that failed."""
    from nbclient import NotebookClient

    NotebookClient(nb, kernel_name="python3", timeout=300, allow_errors=True, iopub_timeout=60,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return {nbgrader_meta(c).get("grade_id"): "\n".join(f"{o.ename}: {o.evalue}" for o in c.outputs
                                                         if o.output_type == "error")
            for c in nb.cells if c.cell_type == "code" and any(o.output_type == "error" for o in c.outputs)}


def _ps2_source_with(answers):
    nb = source_notebook("ps2_build_your_own")
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") in answers:
            cell.source = answers[nbgrader_meta(cell)["grade_id"]]
    return nb


def test_ps2_solution_passes_every_test_in_a_plain_kernel():
    """A student's Restart & Run All, with the instructor's answers and the hidden tests: nothing fails."""
    assert _ps2_run_in_plain_kernel(source_notebook("ps2_build_your_own")) == {}


def test_ps2_quadratic_order_fails_the_visible_work_count_and_a_changed_x_shows_the_change():
    nb = _ps2_source_with({"topological_order": PS2_QUADRATIC_ORDER, "numerical_gradient": PS2_DRIFTING_GRADIENT})
    keep = {"setup", "value_class", "graph_helpers", "topological_order", "test_topological_order_deep",
            "numerical_gradient", "test_numerical_gradient_matrix"}
    nb.cells = [c for c in nb.cells if nbgrader_meta(c).get("grade_id") in keep]
    for cell in nb.cells:  # the visible checks only: the hidden chain would take minutes
        if BEGIN_HIDDEN in cell.source:
            cell.source = cell.source[:cell.source.index(BEGIN_HIDDEN)]
    failed = _ps2_run_in_plain_kernel(nb)
    assert set(failed) == {"test_topological_order_deep", "test_numerical_gradient_matrix"}, failed
    assert re.search(r"AssertionError: the work topological_order\(root\) did: expected at most 450,010 reads of "
                     r"\.parents and comparisons of Values, .+, got more: stopped after [\d,]+ reads and [\d,]+ "
                     r"comparisons \(is a Value looked up with `in` on a list\?", failed["test_topological_order_deep"])
    assert re.search(r"x after numerical_gradient\(f, x\): expected unchanged, .+, got .+ 1 element\(s\) changed, "
                     r"by up to 4.4\de-16, e\.g\. x\[1, 0\] = 3\.0000000000000004 instead of 3\.0",
                     failed["test_numerical_gradient_matrix"], re.S)


@pytest.fixture(scope="module")
def ps2_alternatives_course(tmp_path_factory):
    """ps2 released alone, and a submission answering with PS2_ALTERNATIVES (the rest as the instructor's), autograded."""
    assignment, notebook = "ps2_build_your_own", ASSIGNMENTS["ps2_build_your_own"]["notebook"]
    root = tmp_path_factory.mktemp("ps2_alternatives")
    (root / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(root=str(root)))
    shutil.copytree(EXERCISES / assignment, root / "source" / assignment)
    nbgrader("generate_assignment", assignment, "--force", cwd=root)
    release = nbformat.read(root / "release" / assignment / (notebook + ".ipynb"), as_version=4)
    source = source_notebook(assignment)
    answers = {nbgrader_meta(c)["grade_id"]: SOLUTION for c in source.cells if nbgrader_meta(c).get("solution")}
    answers.update(PS2_ALTERNATIVES)
    folder = root / "submitted" / "alternatives" / assignment
    folder.mkdir(parents=True)
    nbformat.write(make_submission(release, source, answers), folder / (notebook + ".ipynb"))
    nbgrader("autograde", assignment, "--force", cwd=root)
    return root


def test_ps2_alternative_correct_answers_get_full_marks(ps2_alternatives_course):
    with nbgrader_api.Gradebook(f"sqlite:///{ps2_alternatives_course}/gradebook.db") as gradebook:
        submission = gradebook.find_submission_notebook("build_your_own", "ps2_build_your_own", "alternatives")
        score, cells = submission.score, {grade.name: grade.score for grade in submission.grades}
    assert score == ASSIGNMENTS["ps2_build_your_own"]["points"], {k: v for k, v in cells.items() if v < 1}


# --- ps3: on the kit's engine (the course above) and on PyTorch -------------------------------------
def test_ps3_solution_passes_every_test_on_pytorch():
    """The engine line switched to PyTorch, the instructor's answers and the hidden tests: nothing fails."""
    nb = source_notebook("ps3_extending_autograd")
    engine_line = next(line for line in nb.cells[1].source.splitlines() if line.startswith("import autograd_core as torch"))
    for cell in nb.cells:
        cell.source = cell.source.replace(engine_line, "import torch")
    assert "autograd_core" not in "".join(c.source for c in nb.cells if c.cell_type == "code")
    assert _ps2_run_in_plain_kernel(nb) == {}
