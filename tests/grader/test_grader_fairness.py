"""Every correct answer earns its points, and each wrong one loses exactly its task's: graded by ``kitgrade autograde``.

One course made by ``kitgrade init`` with the kit's three problem sets, one ``autograde`` run per problem
set. Each task has several right answers (other styles: 0-d, ``arange``, list-built, in-place,
out-of-place, another formula, a helper in the same cell) and several wrong ones (wrong values, or
right values by a way the task rules out). Student ``k`` answers every task with its ``k``-th answer
(the instructor's where a task has fewer), so a handful of students covers them all; each test
checks one task's test cells for every student: full points for a right answer, exactly the cells
the answer should fail for a wrong one, and every other task's cells untouched. Where one task's code
calls another's (ps2's ``backward`` calls ``topological_order``), a wrong answer to the one is given
to a student whose answer to the other is right, so it shows that it costs its own task's points only.

The feedback tests read the pages ``kitgrade feedback`` makes for the same class: a written answer
waiting for its grader shows as pending, and a hidden-test cell whose visible check failed shows
that check's message. The first-wrong-node tests read the failing messages of ps2's backward.
"""

from __future__ import annotations

import json
import shutil
from html import unescape

import nbformat
import pytest

from kit_paths import ROOT
from grader.cli import main as kitgrade

PS1, PS2, PS3 = "ps1_autograd_basics", "ps2_build_your_own", "ps3_extending_autograd"
NOTEBOOKS = {PS1: "autograd_basics", PS2: "build_your_own", PS3: "extending_autograd"}
BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"


class Fails(frozenset):
    """The test cells a wrong answer fails; ``hidden_only`` are those it fails in their hidden part only, because
    its mistake shows on inputs only hidden checks use (a graph where a node uses a parent twice). Any other cell
    it fails, it fails in a visible check of the same kind as the hidden ones (a type, a way of computing, a value)."""

    def __new__(cls, cells=(), hidden_only=()):
        fails = super().__new__(cls, {*cells, *hidden_only})
        fails.hidden_only = frozenset(hidden_only)
        return fails


RIGHT = frozenset()

# ---- ps1 ------------------------------------------------------------------------------------------
# {solution cell: (its test cells, [(answer, the test cells it must fail), ...])}
PS1_TASKS = {
    "second_derivative": (("test_second_derivative",), [
        ('''\
def second_derivative(f, x0):  # backward on the first derivative instead of a second grad
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (dy,) = torch.autograd.grad(f(x), x, create_graph=True)
    dy.backward()
    return float(x.grad)''', RIGHT),
        ('''\
def _derivative(f, x):
    return torch.autograd.grad(f(x), x, create_graph=True)[0]


def second_derivative(f, x0):  # a helper in the same cell
    x = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)
    return _derivative(lambda t: _derivative(f, t), x).item()''', RIGHT),
        ('''\
def second_derivative(f, x0):  # a 0-d tensor, not a float
    x = torch.tensor(float(x0), dtype=torch.float64, requires_grad=True)
    (dy,) = torch.autograd.grad(f(x), x, create_graph=True)
    return torch.autograd.grad(dy, x)[0]''', {"test_second_derivative"}),
        ('''\
def second_derivative(f, x0):  # finite differences of autograd's first derivative
    def first(v):
        x = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        f(x).backward()
        return x.grad.item()
    return (first(x0 + 1e-4) - first(x0 - 1e-4)) / 2e-4''', {"test_second_derivative"}),
    ]),
    "backward_again": (("test_backward_again",), [
        ('''\
def backward_again(f, x):  # a flag, and a copy of the gradient
    y = f(x)
    y.backward()
    raised = False
    try:
        y.backward()
    except RuntimeError:
        raised = True
    return raised, x.grad.clone()''', RIGHT),
        ('''\
def _second_call_raises(y):
    try:
        torch.autograd.backward(y)
    except RuntimeError:
        return True
    return False


def backward_again(f, x):  # a helper in the same cell, torch.autograd.backward, the pair as a list
    y = f(x)
    y.backward()
    return [_second_call_raises(y), x.grad]''', RIGHT),
        ('''\
def backward_again(f, x):  # y built again for the second call: it never raises
    f(x).backward()
    try:
        f(x).backward()
    except RuntimeError:
        return True, x.grad
    return False, x.grad''', {"test_backward_again"}),
        ('''\
def backward_again(f, x):  # says it raised whatever the graph: right for dot, wrong for a graph that saved nothing
    y = f(x)
    y.backward(retain_graph=True)
    return True, x.grad''', {"test_backward_again"}),
        ('''\
def backward_again(f, x):  # the graph kept: the second call never raises
    y = f(x)
    y.backward(retain_graph=True)
    try:
        y.backward()
    except RuntimeError:
        return True, x.grad
    return False, x.grad''', {"test_backward_again"}),
    ]),
    "backward_twice": (("test_backward_twice",), [
        ('''\
def backward_twice(x):  # the graph kept both times
    y = 2 * torch.dot(x, x)
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    return x.grad''', RIGHT),
        ('''\
def backward_twice(x):  # torch.autograd.backward, then the method
    y = 2 * (x * x).sum()
    torch.autograd.backward(y, retain_graph=True)
    y.backward()
    return x.grad''', RIGHT),
        ('''\
def backward_twice(x):  # y built twice: never needs retain_graph
    y = 2 * torch.dot(x, x)
    y.backward()
    y = 2 * torch.dot(x, x)
    y.backward()
    return x.grad''', {"test_backward_twice"}),
        ('''\
def backward_twice(x):  # one backward, doubled by hand
    y = 2 * torch.dot(x, x)
    y.backward()
    return 2 * x.grad''', {"test_backward_twice"}),
    ]),
    "elementwise_derivative": (("test_elementwise_derivative",), [
        ('''\
def elementwise_derivative(f, x):  # the gradient positional, built from x's shape
    y = f(x)
    y.backward(torch.ones(x.shape, dtype=x.dtype))
    return x.grad''', RIGHT),
        ('''\
def _weights(y):
    return torch.ones_like(y)


def elementwise_derivative(f, x):  # torch.autograd.backward and a helper, the gradient cloned
    y = f(x)
    torch.autograd.backward(y, _weights(y))
    return x.grad.clone()''', RIGHT),
        ('''\
def elementwise_derivative(f, x):  # backward on a scalar: the right numbers, not the task's way
    f(x).sum().backward()
    return x.grad''', {"test_elementwise_derivative"}),
        ('''\
def elementwise_derivative(f, x):  # torch.autograd.grad from y with grad_outputs, as lesson 3 builds J's rows
    y = f(x)
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y))[0]''', RIGHT),
        ('''\
def elementwise_derivative(f, x):  # torch.autograd.grad from a scalar: not the task's way
    return torch.autograd.grad(f(x).sum(), x)[0]''', {"test_elementwise_derivative"}),
        ('''\
def elementwise_derivative(f, x):
    y = f(x)
    y.backward(gradient=y.detach())
    return x.grad''', {"test_elementwise_derivative"}),
    ]),
    "weighted_backward": (("test_weighted_backward",), [
        ('''\
def weighted_backward(values, v):  # float32 leaves, float() of each gradient
    x1, x2, x3 = [torch.tensor(float(value), requires_grad=True) for value in values]
    y = torch.stack([x1 * x2 * x3, x1 + x2 + x3, x1 + x2 * x3])
    y.backward(torch.tensor(v, dtype=torch.float32))
    return [float(x.grad) for x in (x1, x2, x3)]''', RIGHT),
        ('''\
def weighted_backward(values, v):  # NumPy's float64 scalars are Python floats too
    leaves = torch.tensor([float(value) for value in values], dtype=torch.float64, requires_grad=True)
    x1, x2, x3 = leaves[0], leaves[1], leaves[2]
    torch.stack([x1 * x2 * x3, x1 + x2 + x3, x1 + x2 * x3]).backward(torch.tensor(v, dtype=torch.float64))
    return list(leaves.grad.numpy())''', RIGHT),
        ('''\
def weighted_backward(values, v):  # a list of 0-d tensors, not of floats
    x1, x2, x3 = (torch.tensor(float(value), dtype=torch.float64, requires_grad=True) for value in values)
    torch.stack([x1 * x2 * x3, x1 + x2 + x3, x1 + x2 * x3]).backward(torch.tensor(v, dtype=torch.float64))
    return [x1.grad, x2.grad, x3.grad]''', {"test_weighted_backward"}),
        ('''\
def weighted_backward(values, v):  # worked out by hand: the right floats, without autograd
    a, b, c = (float(value) for value in values)
    v0, v1, v2 = (float(w) for w in v)
    return [v0 * b * c + v1 + v2, v0 * a * c + v1 + v2 * c, v0 * a * b + v1 + v2 * b]''', {"test_weighted_backward"}),
        ('''\
def weighted_backward(values, v):  # torch.autograd.grad with the weights as grad_outputs
    x1, x2, x3 = (torch.tensor(float(value), requires_grad=True) for value in values)
    y = torch.stack([x1 * x2 * x3, x1 + x2 + x3, x1 + x2 * x3])
    return [g.item() for g in torch.autograd.grad(y, [x1, x2, x3], grad_outputs=torch.tensor([float(w) for w in v]))]''',
         RIGHT),
        ('''\
def weighted_backward(values, v):  # the weights forgotten
    x1, x2, x3 = (torch.tensor(float(value), dtype=torch.float64, requires_grad=True) for value in values)
    torch.stack([x1 * x2 * x3, x1 + x2 + x3, x1 + x2 * x3]).sum().backward()
    return [x1.grad.item(), x2.grad.item(), x3.grad.item()]''', {"test_weighted_backward"}),
    ]),
    "grad_of_f": (("test_grad_of_f_vector", "test_grad_of_f_matrix"), [
        ('''\
def grad_of_f(a):  # torch.autograd.grad
    return torch.autograd.grad(f(a).sum(), a)[0]''', RIGHT),
        ('''\
def grad_of_f(a):  # backward with a gradient of ones, a copy of the gradient returned
    out = f(a)
    out.backward(torch.ones_like(out))
    return a.grad.clone()''', RIGHT),
        ('''\
def grad_of_f(a):  # the formula of the hint, not autograd
    return f(a) / a''', {"test_grad_of_f_vector", "test_grad_of_f_matrix"}),
        ('''\
def grad_of_f(a):
    return f(a).detach()''', {"test_grad_of_f_vector", "test_grad_of_f_matrix"}),
        ('''\
def grad_of_f(a):  # the formula of the hint, detached: no grad_fn, and no backward pass either
    return (f(a) / a).detach()''', {"test_grad_of_f_vector", "test_grad_of_f_matrix"}),
        ('''\
from autograd_core.autograd import grad


def grad_of_f(a):  # grad imported by name, a gradient of ones of f(a)'s shape, the result detached
    out = f(a)
    return grad(out, a, grad_outputs=torch.ones_like(out))[0].detach()''', RIGHT),
        ('''\
def grad_of_f(a):  # the formula under no_grad: nothing recorded, nothing differentiated
    with torch.no_grad():
        return f(a) / a''', {"test_grad_of_f_vector", "test_grad_of_f_matrix"}),
        ('''\
def grad_of_f(a):  # a backward pass ran, but the answer is the hint's formula, detached
    f(a).sum().backward()
    return (f(a) / a).detach()''', {"test_grad_of_f_vector", "test_grad_of_f_matrix"}),
    ]),
    "plot_sin": (("test_sin_points", "test_sin_derivative", "test_sin_plot"), [
        ('''\
x = torch.arange(-math.pi, math.pi + 0.01, 0.01, requires_grad=True)  # one step past pi: both ends in
y = torch.sin(x)
(dy,) = torch.autograd.grad(y.sum(), x)
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin")
ax.plot(x.detach().numpy(), dy.numpy(), label="derivative")
ax.legend()''', RIGHT),
        ('''\
x = torch.linspace(-math.pi, math.pi, 200, requires_grad=True)
y = torch.sin(x)
(dy,) = torch.autograd.grad(y.sum(), x, create_graph=True)  # lesson 7's way: dy records how it was made
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin")
ax.plot(x.detach().numpy(), dy.detach().numpy(), label="derivative")
ax.legend()''', RIGHT),
        ('''\
x = torch.arange(-math.pi, math.pi, 0.01, requires_grad=True)  # stops one step short of pi
y = torch.sin(x)
y.backward(torch.ones_like(y))
dy = x.grad.detach().clone()  # a copy of the gradient, as lesson 4 makes one: still autograd's
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin")
ax.plot(x.detach().numpy(), dy.numpy(), label="derivative")
ax.legend()''', {"test_sin_points"}),
        ('''\
x = torch.linspace(-math.pi, math.pi, 200, requires_grad=True)
y = torch.sin(x)
dy = torch.cos(x)  # the formula, not autograd
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin")
ax.plot(x.detach().numpy(), dy.detach().numpy(), label="derivative")
ax.legend()''', {"test_sin_derivative"}),
        ('''\
x = torch.linspace(-math.pi, math.pi, 200, requires_grad=True)
y = torch.sin(x)
y.sum().backward()
dy = x.grad
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin")''', {"test_sin_plot"}),
        ('''\
x = torch.linspace(-math.pi, math.pi, 99, requires_grad=True)  # 99 points: the points' own point only
(dy,) = torch.autograd.grad(torch.sin(x), x, torch.ones(99))
y = torch.sin(x)
dy = dy.clone()
fig = plt.figure()
plt.plot(x.detach().numpy(), y.detach().numpy(), label="sin")
plt.plot(x.detach().numpy(), dy.numpy(), label="derivative")
fig.legend()''', {"test_sin_points"}),
        ('''\
x = torch.linspace(-math.pi, math.pi, 200, requires_grad=True)
y = torch.sin(x)
y.sum().backward()
dy = x.grad
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy())
ax.plot(x.detach().numpy(), dy.numpy())  # no legend''', {"test_sin_plot"}),
        ('''\
x = torch.linspace(-math.pi, math.pi, 200, requires_grad=True)
y = torch.sin(x)
dy = torch.cos(x).detach()  # the formula, detached
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin")
ax.plot(x.detach().numpy(), dy.numpy(), label="cos")
ax.legend()''', {"test_sin_derivative"}),
        ('''\
x = torch.linspace(-math.pi, math.pi, 200, requires_grad=True)
y = torch.sin(x)
with torch.no_grad():
    dy = torch.cos(x)  # the formula, not recorded
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin")
ax.plot(x.detach().numpy(), dy.numpy(), label="cos")
ax.legend()''', {"test_sin_derivative"}),
        ('''\
x = torch.linspace(-math.pi, math.pi, 200, requires_grad=True)
y = torch.sin(x)
y.sum().backward()  # a backward pass ran (x.grad holds the derivative), but dy is the formula written out
dy = torch.cos(x).detach()
fig, ax = plt.subplots()
ax.plot(x.detach().numpy(), y.detach().numpy(), label="sin")
ax.plot(x.detach().numpy(), dy.numpy(), label="derivative")
ax.legend()''', {"test_sin_derivative"}),
    ]),
}

# ---- ps2 ------------------------------------------------------------------------------------------
#: backward answers wrong at the first node from the root, a middle one, and the last ones (the leaves)
BACKWARD = '''\
def backward(root, retain_graph=False):
    grads = {id(root): ROOT_GRADIENT}
    for node in reversed(topological_order(root)):
        grad = grads.pop(id(node), None)
        if grad is None:
            continue
        if node.is_leaf():
            node.grad += grad
            continue
        if node.saved is None:
            raise RuntimeError("the saved values were freed: call backward(root, retain_graph=True) the first time")
        parent_grads = node.backward_fn(grad, *node.saved)
        if not retain_graph and node.saved:
            node.saved = None
        for parent, parent_grad in zip(node.parents, parent_grads):
            grads[id(parent)] = ADD
            LEAF'''
BACKWARD_RIGHT = BACKWARD.replace("ROOT_GRADIENT", "1.0").replace("ADD", "grads.get(id(parent), 0.0) + parent_grad")
WRONG_AT = {
    "first": BACKWARD_RIGHT.replace("{id(root): 1.0}", "{id(root): 2.0}"),
    "middle": BACKWARD_RIGHT.replace("grads.get(id(parent), 0.0) + parent_grad", "parent_grad"),
    "last": BACKWARD_RIGHT.replace("LEAF", "if parent.is_leaf():\n                parent.grad += parent_grad"),
    # one gradient per distinct parent: x * x loses one; right wherever no node uses a parent twice
    "hidden": BACKWARD_RIGHT.replace("for parent, parent_grad in zip(node.parents, parent_grads):",
                                     "for parent, parent_grad in {id(p): (p, g) for p, g in zip(node.parents, "
                                     "parent_grads)}.values():"),
}
BACKWARD_RIGHT = BACKWARD_RIGHT.replace("\n            LEAF", "")
WRONG_AT = {where: code.replace("\n            LEAF", "") for where, code in WRONG_AT.items()}
BACKWARD_CELLS = ("test_backward_values", "test_backward_shared", "test_backward_frees", "test_backward_retain")

PS2_TASKS = {
    "mul_backward": (("test_mul_backward",), [
        ("def mul_backward(a, b, grad):  # 0-d arrays for 0-d inputs\n    return np.asarray(grad * b), np.asarray(grad * a)",
         RIGHT),
        ("def mul_backward(a, b, grad):\n    return np.multiply(b, grad), np.multiply(grad, a)", RIGHT),
        ("def mul_backward(a, b, grad):\n    return grad * a, grad * b", {"test_mul_backward"}),
        ("def mul_backward(a, b, grad):  # a list, not a tuple\n    return [grad * b, grad * a]", RIGHT),
    ]),
    "div_backward": (("test_div_backward",), [
        ("def div_backward(a, b, grad):  # another formula\n    return grad * b ** -1, -grad * a / b ** 2", RIGHT),
        ("def div_backward(a, b, grad):  # 0-d arrays for 0-d inputs\n"
         "    return np.asarray(np.divide(grad, b)), np.asarray(np.negative(grad) * a / np.square(b))", RIGHT),
        ("def div_backward(a, b, grad):  # the sign of b's gradient lost\n    return grad / b, grad * a / (b * b)",
         {"test_div_backward"}),
    ]),
    "pow_backward": (("test_pow_backward_base", "test_pow_backward_exponent"), [
        ("def pow_backward(a, p, grad):  # a ** p reused, exp(p log a)\n"
         "    out = np.exp(p * np.log(a))\n    return grad * p * out / a, grad * out * np.log(a)", RIGHT),
        ("def pow_backward(a, p, grad):  # in place on its own arrays\n    da = p * a ** (p - 1)\n    da *= grad\n"
         "    dp = np.log(a) * a ** p\n    dp *= grad\n    return da, dp", RIGHT),
        ("def pow_backward(a, p, grad):  # the base's gradient without p\n"
         "    return grad * a ** (p - 1), grad * a ** p * np.log(a)", {"test_pow_backward_base"}),
        ("def pow_backward(a, p, grad):  # the exponent's gradient without log(a)\n"
         "    return grad * p * a ** (p - 1), grad * a ** p", {"test_pow_backward_exponent"}),
    ]),
    "matmul_backward": (("test_matmul_backward_A", "test_matmul_backward_B"), [
        ("def matmul_backward(A, B, grad):  # np.matmul and transposes as functions\n"
         "    return np.matmul(grad, np.transpose(B)), np.matmul(np.transpose(A), grad)", RIGHT),
        ("def matmul_backward(A, B, grad):  # einsum\n"
         "    return np.einsum('nm,km->nk', grad, B), np.einsum('nk,nm->km', A, grad)", RIGHT),
        ("def matmul_backward(A, B, grad):  # A's gradient from sums: the right shape, not the right values\n"
         "    return np.outer(grad.sum(1), B.sum(1)), A.T @ grad", {"test_matmul_backward_A"}),
        ("def matmul_backward(A, B, grad):  # B's gradient without grad\n"
         "    return grad @ B.T, A.T @ np.ones_like(grad)", {"test_matmul_backward_B"}),
    ]),
    "exp_backward": (("test_exp_backward",), [
        ("def exp_backward(a, grad):  # a 0-d array for a 0-d input\n    return np.array(grad * np.exp(a))", RIGHT),
        ("def exp_backward(a, grad):\n    out = np.exp(a)\n    out *= grad  # in place, on its own array\n    return out",
         RIGHT),
        ("def exp_backward(a, grad):\n    return grad * a", {"test_exp_backward"}),
    ]),
    "unbroadcast": (("test_unbroadcast_leading", "test_unbroadcast_stretched", "test_unbroadcast_both"), [
        ('''\
def unbroadcast(grad, shape):  # one sum over every axis to drop or keep; shape () gives a 0-d array
    grad = np.asarray(grad)
    shape = tuple(shape)
    padded = (1,) * (grad.ndim - len(shape)) + shape
    axes = tuple(i for i, size in enumerate(padded) if size == 1 and grad.shape[i] != 1)
    return np.array(grad.sum(axis=axes, keepdims=True).reshape(shape))''', RIGHT),
        ('''\
def unbroadcast(grad, shape):  # a loop, one axis at a time
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad''', RIGHT),
        ("def unbroadcast(grad, shape):\n    return np.full(shape, np.sum(grad))",
         {"test_unbroadcast_leading", "test_unbroadcast_stretched", "test_unbroadcast_both"}),
    ]),
    "sigmoid": (("test_sigmoid_forward", "test_sigmoid_backward", "test_sigmoid_saves_output"), [
        ('''\
class Sigmoid(Function):  # NumPy's scalars and a 0-d array back
    @staticmethod
    def forward(ctx, x):
        out = np.exp(-np.logaddexp(0.0, -x))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_values
        return np.array(grad * out * (1.0 - out))''', RIGHT),
        ('''\
class Sigmoid(Function):  # saves its input: the values are right, the way is not
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (1.0 + math.tanh(0.5 * x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_values
        out = 0.5 * (1.0 + math.tanh(0.5 * x))
        return grad * out * (1.0 - out)''', {"test_sigmoid_saves_output"}),
    ]),
    "topological_order": (("test_topological_order", "test_topological_order_deep"), [
        # The wrong orders go to students 0 and 5, whose backward (C.2, C.3) is right: backward's tests give it
        # an order of their own, so a wrong order costs C.1's points only. Student 3 (a wrong backward) has a
        # right order that does quadratic work; student 4 (a wrong backward too) takes the instructor's order.
        ('''\
def topological_order(root):  # recursive: right on shallow graphs, too deep for Python on a long chain
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)
    visit(root)
    return order''', {"test_topological_order_deep"}),
        ('''\
def topological_order(root):  # Kahn's algorithm: count the users, then take nodes whose users are all placed
    nodes, users = [root], {id(root): 0}
    for node in nodes:
        for parent in node.parents:
            if id(parent) not in users:
                users[id(parent)] = 0
                nodes.append(parent)
            users[id(parent)] += 1
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for parent in node.parents:
            users[id(parent)] -= 1
            if users[id(parent)] == 0:
                ready.append(parent)
    return order[::-1]''', RIGHT),
        ('''\
def topological_order(root):  # depth first with an iterator per node on the stack
    order, seen = [], {id(root)}
    stack = [(root, iter(root.parents))]
    while stack:
        node, parents = stack[-1]
        for parent in parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append((parent, iter(parent.parents)))
                break
        else:
            stack.pop()
            order.append(node)
    return order''', RIGHT),
        ('''\
def topological_order(root):  # a right order, but `in` on a list: O(n^2) comparisons of Values, whatever the machine
    order, visited = [], []
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif node not in visited:
            visited.append(node)
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.parents if parent not in visited)
    return order''', {"test_topological_order_deep"}),
        (None, RIGHT),
        ('''\
def topological_order(root):  # breadth first from the root, reversed: a shared parent can come too late
    order, seen = [root], {id(root)}
    for node in order:
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                order.append(parent)
    return order[::-1]''', {"test_topological_order", "test_topological_order_deep"}),
    ]),
    "numerical_gradient": (("test_numerical_gradient", "test_numerical_gradient_matrix"), [
        ('''\
def numerical_gradient(f, x, eps=1e-6):  # one flat copy, a unit step per element
    x = np.asarray(x, dtype=float)
    flat = x.reshape(-1).copy()
    grad = np.empty(flat.size)
    for i in range(flat.size):
        step = np.zeros(flat.size)
        step[i] = eps
        grad[i] = (f((flat + step).reshape(x.shape)) - f((flat - step).reshape(x.shape))) / (2 * eps)
    return grad.reshape(x.shape)''', RIGHT),
        ('''\
def numerical_gradient(f, x, eps=1e-6):  # changes the caller's x, and puts it back only up to rounding
    grad = np.zeros_like(x, dtype=float)
    for i in np.ndindex(x.shape):
        x[i] += eps
        plus = f(x)
        x[i] -= 2 * eps
        minus = f(x)
        x[i] += eps
        grad[i] = (plus - minus) / (2 * eps)
    return grad''', {"test_numerical_gradient_matrix"}),
    ]),
    "gradcheck": (("test_gradcheck",), [
        ('''\
def gradcheck(f, grad_f, x, eps=1e-6, atol=1e-5, rtol=1e-3):  # np.shape, and the comparison spelled out
    x = np.array(x, dtype=float)
    claimed, numerical = grad_f(x.copy()), numerical_gradient(f, x, eps)
    if np.shape(claimed) != np.shape(numerical):
        return False
    return bool(np.all(np.abs(np.asarray(claimed) - numerical) <= atol + rtol * np.abs(numerical)))''', RIGHT),
        ('''\
def gradcheck(f, grad_f, x, eps=1e-6, atol=1e-5, rtol=1e-3):  # no shape check: allclose broadcasts
    x = np.array(x, dtype=float)
    return bool(np.allclose(grad_f(x.copy()), numerical_gradient(f, x, eps), rtol=rtol, atol=atol))''',
         {"test_gradcheck"}),
    ]),
    "backward": (BACKWARD_CELLS, [
        (BACKWARD_RIGHT, RIGHT),
        (WRONG_AT["first"], set(BACKWARD_CELLS)),
        (WRONG_AT["middle"], set(BACKWARD_CELLS)),
        (WRONG_AT["last"], set(BACKWARD_CELLS)),
        (WRONG_AT["hidden"], Fails({"test_backward_shared", "test_backward_frees"}, hidden_only={"test_backward_values"})),
    ]),
}
# ---- ps3 ------------------------------------------------------------------------------------------
PS3_TASKS = {
    "linear_backward": (("test_linear_backward_weights", "test_linear_backward_bias"), [
        ('''\
def _sum_rows(G):
    return G.sum(0)


def linear_backward(X, W, b, G):  # autograd itself (the task asks for the formulas), a helper in the same cell
    X, W, b = (t.clone().requires_grad_() for t in (X, W, b))
    (X @ W.T + b).backward(G)
    assert torch.allclose(b.grad, _sum_rows(G))
    return X.grad, W.grad, b.grad''', {"test_linear_backward_weights"}),
        ('''\
def linear_backward(X, W, b, G):  # list-built with loops, as Python floats
    n, k = X.shape
    m = W.shape[0]
    dX = [[sum(float(G[i, j]) * float(W[j, c]) for j in range(m)) for c in range(k)] for i in range(n)]
    dW = [[sum(float(G[i, j]) * float(X[i, c]) for i in range(n)) for c in range(k)] for j in range(m)]
    db = [sum(float(G[i, j]) for i in range(n)) for j in range(m)]
    return [dX, dW, db]  # a list, not a tuple''', RIGHT),
        ('''\
def linear_backward(X, W, b, G):  # NumPy arrays, filled in place into zeros of each input's shape
    dX, dW, db = np.zeros(tuple(X.shape)), np.zeros(tuple(W.shape)), np.zeros(tuple(b.shape))
    dX += G.numpy() @ W.numpy()
    dW += G.numpy().T @ X.numpy()
    db += G.numpy().sum(axis=0)
    return dX, dW, db''', RIGHT),
        ('''\
def linear_backward(X, W, b, G):  # dW transposed: X.T @ G has shape (k, m)
    return G @ W, X.T @ G, G.sum(0)''', {"test_linear_backward_weights"}),
        ('''\
def linear_backward(X, W, b, G):  # the bias averaged over the batch, not summed
    return G @ W, G.T @ X, G.mean(0)''', {"test_linear_backward_bias"}),
    ]),
    "matvec_backward": (("test_matvec_backward",), [
        ('''\
def matvec_backward(W, v, g):  # an outer product by unsqueeze, and g @ W
    return g.unsqueeze(1) * v.unsqueeze(0), g @ W''', RIGHT),
        ('''\
def matvec_backward(W, v, g):  # (a)'s rule on v as a (k, 1) matrix, back to the shapes, as a list
    dW = g.reshape(-1, 1) @ v.reshape(1, -1)
    dv = (W.T @ g.reshape(-1, 1)).reshape(-1)
    return [dW, dv]''', RIGHT),
        ('''\
def matvec_backward(W, v, g):  # through linear_backward from (a): y = v W^T as a row
    dv, dW, _ = linear_backward(v[None, :], W, torch.zeros(W.shape[0], dtype=W.dtype), g[None, :])
    return dW, dv[0]''', RIGHT),
        ('''\
def matvec_backward(W, v, g):  # dW transposed
    return v[:, None] * g, W.T @ g''', {"test_matvec_backward"}),
        ('''\
def matvec_backward(W, v, g):  # dv without g
    return g[:, None] * v, W.sum(0)''', {"test_matvec_backward"}),
        ('''\
def matvec_backward(W, v, g):  # autograd.grad: the right values, not the formulas the task asks for
    W, v = W.clone().requires_grad_(), v.clone().requires_grad_()
    return torch.autograd.grad(W @ v, (W, v), g)''', {"test_matvec_backward"}),
    ]),
    "hypot": (("test_hypot",), [
        ('''\
class Hypot(torch.autograd.Function):  # saves the inputs only, computes h again in backward
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return (x ** 2 + y ** 2) ** 0.5

    @staticmethod
    def backward(ctx, G):
        x, y = ctx.saved_tensors
        h = torch.sqrt(x * x + y * y)
        return G * x / h, G * y / h''', RIGHT),
        ('''\
class Hypot(torch.autograd.Function):  # forward in NumPy, the ratios kept on ctx
    @staticmethod
    def forward(ctx, x, y):
        h = torch.from_numpy(np.hypot(x.detach().numpy(), y.detach().numpy()))
        ctx.ratios = (x / h, y / h)
        return h

    @staticmethod
    def backward(ctx, G):
        rx, ry = ctx.ratios
        return G * rx, G * ry''', RIGHT),
        ('''\
class HypotFunction(torch.autograd.Function):  # another name, then Hypot = it
    @staticmethod
    def forward(ctx, x, y):
        h = torch.sqrt(x * x + y * y)
        ctx.save_for_backward(x, y, h)
        return h

    @staticmethod
    def backward(ctx, G):
        x, y, h = ctx.saved_tensors
        gx = gy = None
        if ctx.needs_input_grad[0]:
            gx = G * x / h
        if ctx.needs_input_grad[1]:
            gy = G * y / h
        return gx, gy


Hypot = HypotFunction''', RIGHT),
        ('''\
class Hypot(torch.autograd.Function):  # detached copies kept as ctx attributes, not saved tensors
    @staticmethod
    def forward(ctx, x, y):
        ctx.x, ctx.y = x.detach(), y.detach()
        ctx.h = (ctx.x ** 2 + ctx.y ** 2).sqrt()
        return ctx.h.clone()

    @staticmethod
    def backward(ctx, G):
        return G * ctx.x / ctx.h, G * ctx.y / ctx.h''', RIGHT),
        ('''\
class Hypot:  # no Function: the right values, recorded as torch.sqrt's node
    @staticmethod
    def apply(x, y):
        return torch.sqrt(x * x + y * y)''', {"test_hypot"}),
        ('''\
class Hypot(torch.autograd.Function):  # the incoming gradient G forgotten
    @staticmethod
    def forward(ctx, x, y):
        h = torch.sqrt(x * x + y * y)
        ctx.save_for_backward(x, y, h)
        return h

    @staticmethod
    def backward(ctx, G):
        x, y, h = ctx.saved_tensors
        return x / h, y / h''', {"test_hypot"}),
    ]),
    "backward_is_right": (("test_backward_is_right",), [
        ('''\
def backward_is_right(function, inputs):  # gradcheck raises; the error means False
    try:
        return bool(torch.autograd.gradcheck(function.apply, inputs))
    except RuntimeError:
        return False''', RIGHT),
        ('''\
def backward_is_right(function, inputs):  # a list of inputs, gradcheck's tolerances spelled out
    return torch.autograd.gradcheck(lambda *xs: function.apply(*xs), list(inputs), eps=1e-6, atol=1e-5,
                                    raise_exception=False)''', RIGHT),
        ('''\
def backward_is_right(function, inputs):  # says True whatever the backward
    return True''', {"test_backward_is_right"}),
        ('''\
def backward_is_right(function, inputs):  # lets gradcheck raise on a wrong backward
    return torch.autograd.gradcheck(function.apply, inputs)''', {"test_backward_is_right"}),
        ('''\
def backward_is_right(function, inputs):  # one backward with G = ones: misses a backward that drops G
    (x,) = inputs
    x = x.detach().requires_grad_()
    function.apply(x).backward(torch.ones_like(x))
    eps = 1e-6
    with torch.no_grad():
        numeric = (function.apply(x + eps) - function.apply(x - eps)) / (2 * eps)
    return bool(torch.allclose(x.grad, numeric, atol=1e-5))''', {"test_backward_is_right"}),
    ]),
    "clipped_backward": (("test_clipped_backward",), [
        ('''\
def _clip(limit):
    def hook(grad):
        return torch.clamp(grad, min=-limit, max=limit)
    return hook


def clipped_backward(x, w, limit):  # a named hook from a helper, torch.autograd.grad for x's gradient
    h = x * x
    h.register_hook(_clip(limit))
    (grad,) = torch.autograd.grad((h * w).sum(), x)
    return grad''', RIGHT),
        ('''\
def clipped_backward(x, w, limit):  # worked out by hand: the right numbers, no hook (the task asks for one)
    return 2 * x.detach() * w.clamp(-limit, limit)''', {"test_clipped_backward"}),
        ('''\
def clipped_backward(x, w, limit):  # clips x's gradient, not the one reaching h
    x.register_hook(lambda g: g.clamp(-limit, limit))
    h = x * x
    (h * w).sum().backward()
    return x.grad''', {"test_clipped_backward"}),
        ('''\
def clipped_backward(x, w, limit):  # the hook returns nothing: the gradient passes unclipped
    h = x * x
    h.register_hook(lambda g: print(g.clamp(-limit, limit)))
    (h * w).sum().backward()
    return x.grad''', {"test_clipped_backward"}),
        ('''\
def clipped_backward(x, w, limit):  # a hook on h, but the result worked out by hand: backward never calls it
    h = x * x
    h.register_hook(lambda g: g.clamp(-limit, limit))
    return 2 * x.detach() * w.clamp(-limit, limit)''', {"test_clipped_backward"}),
    ]),
    "layer_output_shapes": (("test_layer_output_shapes",), [
        ('''\
def layer_output_shapes(model, x):  # lists of ints built by hand, hooks removed after the call
    seen, handles = [], []
    for name, child in model.named_children():
        handles.append(child.register_forward_hook(
            lambda module, inputs, output, name=name: seen.append([name, [int(n) for n in output.shape]])))
    model(x)
    for handle in handles:
        handle.remove()
    return seen''', RIGHT),
        ('''\
class _Recorder:
    def __init__(self, name, seen):
        self.name, self.seen = name, seen

    def __call__(self, module, inputs, output):
        self.seen.append((self.name, tuple(output.shape)))


def layer_output_shapes(model, x):  # children() numbered by hand, a helper class as the hook
    seen = []
    handles = [child.register_forward_hook(_Recorder(str(i), seen)) for i, child in enumerate(model.children())]
    try:
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    return seen''', RIGHT),
        ('''\
def layer_output_shapes(model, x):  # the hooks left on the layers
    seen = []
    for name, child in model.named_children():
        child.register_forward_hook(lambda module, inputs, output, name=name: seen.append((name, tuple(output.shape))))
    model(x)
    return seen''', {"test_layer_output_shapes"}),
        ('''\
def layer_output_shapes(model, x):  # the inputs' shapes, not the outputs'
    seen = []
    handles = [child.register_forward_hook(
        lambda module, inputs, output, name=name: seen.append((name, tuple(inputs[0].shape))))
        for name, child in model.named_children()]
    model(x)
    for handle in handles:
        handle.remove()
    return seen''', {"test_layer_output_shapes"}),
    ]),
    "evaluate": (("test_evaluate", "test_evaluate_leaves_the_model"), [
        ('''\
def evaluate(model, x):  # inference_mode, each module's flag noted in a dict and set back by hand
    modes = {m: m.training for m in model.modules()}
    model.eval()
    with torch.inference_mode():
        y = model(x)
    for m, training in modes.items():
        m.training = training
    return y''', RIGHT),
        ('''\
@torch.no_grad()
def evaluate(model, x):  # the outer flag put back on every module: a layer kept in evaluation comes back training
    was_training = model.training
    model.train(False)
    try:
        return model(x)
    finally:
        model.train(was_training)''', {"test_evaluate_leaves_the_model"}),
        ('''\
import copy


def evaluate(model, x):  # a copy in evaluation mode (the model itself never changes mode), set_grad_enabled
    with torch.set_grad_enabled(False):
        return copy.deepcopy(model).eval()(x)''', RIGHT),
        ('''\
def evaluate(model, x):  # recorded, then detached: requires_grad=False, but the graph was built
    was = [(m, m.training) for m in model.modules()]
    model.eval()
    y = model(x).detach()
    for m, mode in was:
        m.train(mode)
    return y''', {"test_evaluate"}),
        ('''\
def evaluate(model, x):  # always back to training mode
    model.eval()
    with torch.no_grad():
        y = model(x)
    model.train()
    return y''', {"test_evaluate_leaves_the_model"}),
        ('''\
def evaluate(model, x):  # no_grad without eval(): the layers still train
    with torch.no_grad():
        return model(x)''', {"test_evaluate"}),
        ('''\
def evaluate(model, x):  # only the outer flag put back: the layers stay in evaluation mode
    was_training = model.training
    model.eval()
    with torch.no_grad():
        y = model(x)
    model.training = was_training
    return y''', {"test_evaluate_leaves_the_model"}),
        ('''\
def evaluate(model, x):  # every module's own mode saved and put back, set_grad_enabled as a block
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    with torch.set_grad_enabled(False):
        y = model(x)
    for module, mode in modes:
        module.train(mode)
    return y''', RIGHT),
        ('''\
def evaluate(model, x):  # recording switched off and never on again
    was_training = model.training
    model.eval()
    torch.set_grad_enabled(False)
    y = model(x)
    model.train(was_training)
    return y''', {"test_evaluate_leaves_the_model"}),
    ]),
}
TASKS = {PS1: PS1_TASKS, PS2: PS2_TASKS, PS3: PS3_TASKS}
STUDENTS = {assignment: [f"s{k}" for k in range(max(len(answers) for _, answers in tasks.values()))]
            for assignment, tasks in TASKS.items()}


def _solutions(source) -> dict[str, str]:
    return {c.metadata["nbgrader"]["grade_id"]: "\n".join(
        line for line in c.source.splitlines() if line.strip() not in (BEGIN_SOLUTION, END_SOLUTION))
        for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}


def _answer(assignment, task, k):
    """Student k's answer to a task and the test cells it must fail (the instructor's answer past the task's list)."""
    _, answers = TASKS[assignment][task]
    return answers[k] if k < len(answers) else (None, RIGHT)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("fairness") / "course"
    exercises = root.parent / "exercises"
    for assignment in TASKS:
        shutil.copytree(ROOT / "exercises" / assignment, exercises / assignment)
    assert kitgrade(["init", str(root), "--course-id", "fair101", "--exercises", str(exercises)]) == 0
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.KitGrade.workers = 2\n")
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
    for assignment, tasks in TASKS.items():
        notebook = NOTEBOOKS[assignment]
        release = nbformat.read(root / "release" / assignment / f"{notebook}.ipynb", as_version=4)
        solutions = _solutions(nbformat.read(root / "source" / assignment / f"{notebook}.ipynb", as_version=4))
        for k, student in enumerate(STUDENTS[assignment]):
            nb = nbformat.from_dict(json.loads(json.dumps(release)))
            answers = {**solutions, **{task: _answer(assignment, task, k)[0] for task in tasks
                                       if _answer(assignment, task, k)[0] is not None}}
            for cell in nb.cells:
                grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
                if grade_id in answers:
                    cell.source = answers[grade_id]
            folder = root / "submitted" / student / assignment
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{notebook}.ipynb")
        assert kitgrade(["autograde", assignment, "--course", str(root), "--quiet"]) in (0, 1)
    for assignment in (PS1, PS2):
        assert kitgrade(["feedback", assignment, "--course", str(root)]) == 0
    return root


@pytest.fixture(scope="module")
def cell_scores(course):
    """{assignment: {student: {test cell: (score, points)}}} from the gradebook."""
    from nbgrader.api import Gradebook

    result = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for assignment in TASKS:
            result[assignment] = {}
            for student in STUDENTS[assignment]:
                submission = gradebook.find_submission_notebook(NOTEBOOKS[assignment], assignment, student)
                result[assignment][student] = {g.name: (g.score, g.max_score) for g in submission.grades}
    return result


def _failed_message(course, assignment, student, grade_id) -> str:
    nb = nbformat.read(course / "autograded" / student / assignment / f"{NOTEBOOKS[assignment]}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return "\n".join(o.evalue for o in cell.outputs if o.output_type == "error")


@pytest.mark.parametrize("assignment,task", [(a, t) for a, tasks in TASKS.items() for t in tasks])
def test_each_answer_earns_exactly_its_tasks_points(course, cell_scores, assignment, task):
    cells, _ = TASKS[assignment][task]
    all_cells = {cell for other, _ in TASKS[assignment].values() for cell in other}
    wrong = []  # every answer that scored otherwise, so that one does not hide the next
    for k, student in enumerate(STUDENTS[assignment]):
        code, failing = _answer(assignment, task, k)
        scores = cell_scores[assignment][student]
        for cell in cells:
            score, points = scores[cell]
            expected = 0 if cell in failing else points
            if score != expected:
                wrong.append(f"{student}'s answer to {task} scored {score} of {points} on {cell} (expected {expected}): "
                             f"{_failed_message(course, assignment, student, cell)}\n{code}")
        # a task's answer costs nothing elsewhere: a cell of another task fails only if that task's answer should
        for cell in all_cells - set(cells):
            owner = next(t for t, (its, _) in TASKS[assignment].items() if cell in its)
            if cell not in _answer(assignment, owner, k)[1] and scores[cell][0] != scores[cell][1]:
                wrong.append(f"{student} lost {cell}, a cell of {owner}, whose answer is right")
    assert not wrong, "\n\n".join(wrong)


@pytest.mark.parametrize("assignment,task", [(a, t) for a, tasks in TASKS.items() for t in tasks])
def test_a_wrong_answer_fails_a_visible_check_unless_only_hidden_inputs_show_it(course, assignment, task):
    """What a visible check passes, no hidden check of the same kind fails: a wrong type, a way the task rules
    out or a wrong value shows while the student works (in ``kitgrade check``), not first in the grade."""
    from grader.student_language import hidden_count_pattern

    disagree = []
    for k, (code, failing) in enumerate(TASKS[assignment][task][1]):
        for cell in failing:
            message = _failed_message(course, assignment, STUDENTS[assignment][k], cell)
            only_hidden = bool(hidden_count_pattern().fullmatch(message))
            if only_hidden != (cell in getattr(failing, "hidden_only", ())):
                disagree.append(f"{cell} failed {'in its hidden part only' if only_hidden else 'a visible check'}: "
                                f"{message}\n{code}")
    assert not disagree, "\n\n".join(disagree)


# ---- messages that say what was wrong ---------------------------------------------------------------
def test_a_method_the_task_rules_out_is_named_in_the_message(course):
    assert "the backward calls of backward_twice(x): expected 2 calls on the same y, got 2 calls on 2 different y " \
           "(y built again)" in _failed_message(course, PS1, "s2", "test_backward_twice")
    assert "expected backward from y itself, shape (3,), with a gradient of that shape, got backward from a y of " \
           "shape (), without a gradient" in _failed_message(course, PS1, "s2", "test_elementwise_derivative")
    assert "grad_of_f(a) for a vector: expected a gradient computed by a backward pass, got a tensor computed from a " \
           "by forward operations (DivBackward0)" in _failed_message(course, PS1, "s2", "test_grad_of_f_vector")
    assert "grad_of_f(a) for a matrix: expected a gradient computed by a backward pass, got a tensor computed without " \
           "any backward pass (no backward or autograd.grad call)" in _failed_message(course, PS1, "s4", "test_grad_of_f_matrix")
    assert "the backward call of weighted_backward(values, v): expected backward from y, shape (3,), with the weights as " \
           "its gradient, got no backward call (worked out by hand?)" in _failed_message(course, PS1, "s3", "test_weighted_backward")
    assert "grad_of_f(a) for a vector: expected a gradient computed by a backward pass, got a tensor that no backward " \
           "pass computed (the formula, after a backward pass?)" in _failed_message(course, PS1, "s7", "test_grad_of_f_vector")
    assert "second_derivative(lambda x: x ** 3, x0): expected a Python float (use .item()), got 12. (a 0-d tensor or " \
           "array, not a float)" in _failed_message(course, PS1, "s2", "test_second_derivative")
    assert "dy: expected a gradient computed by a backward pass (x.grad, or torch.autograd.grad's result), got a tensor " \
           "that no backward pass of this notebook computed" in _failed_message(course, PS1, "s7", "test_sin_derivative")
    assert "dy: expected a gradient computed by a backward pass (x.grad, or torch.autograd.grad's result), got a tensor " \
           "that no backward pass of this notebook computed" in _failed_message(course, PS1, "s9", "test_sin_derivative")
    assert "the legend of fig: expected a legend naming the 2 lines, got no legend" in \
        _failed_message(course, PS1, "s6", "test_sin_plot")
    assert "the modes of model.modules() after the call: expected [training, training, training], got [training, " \
           "evaluation, evaluation]" in _failed_message(course, PS3, "s6", "test_evaluate_leaves_the_model")
    assert "the modes of model.modules() after the call: expected [training, training, evaluation], got [training, " \
           "training, training], for input weight=1.0, bias=1.0, x=[[-2.0]], training=True, net[1].training=False" \
           in _failed_message(course, PS3, "s1", "test_evaluate_leaves_the_model")
    assert "model(x) called again after evaluate: expected recorded (requires_grad=True): recording back on, got False" \
        in _failed_message(course, PS3, "s8", "test_evaluate_leaves_the_model")
    assert "weighted_backward(values, v): expected a list of 3 Python floats (use .item()), got [a 0-d tensor, " \
           "a 0-d tensor, a 0-d tensor]" in _failed_message(course, PS1, "s2", "test_weighted_backward")
    assert "the points x: expected points from -pi (-3.1416) to pi (3.1416), both included, got points from -3.1416 " \
           "to 3.1384" in _failed_message(course, PS1, "s2", "test_sin_points")
    assert "the hooks of clipped_backward(x, w, limit): expected a hook registered on h (h.register_hook) that " \
           "backward called, got no hook registered (worked out by hand?)" in _failed_message(course, PS3, "s1", "test_clipped_backward")
    assert "the hooks of clipped_backward(x, w, limit): expected a hook registered on h (h.register_hook) that " \
           "backward called, got a hook that backward never called" in _failed_message(course, PS3, "s4", "test_clipped_backward")
    assert "the grad_fn of Hypot.apply(x, y): expected the node of a Function of your own (HypotBackward), got " \
           "SqrtBackward0" in _failed_message(course, PS3, "s4", "test_hypot")
    assert "the first layer's output during the call: expected not recorded (requires_grad=False while the layers " \
           "ran), got recorded (detach() afterwards still records the graph first)" \
           in _failed_message(course, PS3, "s3", "test_evaluate")


@pytest.mark.parametrize("where,grade_id,message", [
    ("first", "test_backward_values", "the gradient reaching `root = (x * y) + exp(x)` is wrong: expected 1.0, got 2.0, "
                                      "for input root=x * y + exp(x), x=2.0, y=-3.0"),
    ("first", "test_backward_shared", "the gradient reaching `root = (s + x) * s` is wrong: expected 1.0, got 2.0"),
    ("middle", "test_backward_shared", "the gradient reaching `s = x * y` is wrong: expected 6.0, got 1.5"),
    ("last", "test_backward_values", "the gradient reaching `y` is wrong: expected 2.0, got 4.0"),
    ("last", "test_backward_retain", "the gradient reaching `y` is wrong: expected "),
])
def test_the_first_wrong_node_from_the_root_is_named(course, where, grade_id, message):
    k = [code for code, _ in PS2_TASKS["backward"][1]].index(WRONG_AT[where])
    assert message in _failed_message(course, PS2, STUDENTS[PS2][k], grade_id)


def test_a_right_backward_passes_every_node_check(course, cell_scores):
    for cell in BACKWARD_CELLS:
        assert cell_scores[PS2]["s0"][cell] == (1, 1), _failed_message(course, PS2, "s0", cell)


def test_a_wrong_topological_order_costs_only_its_own_points(course, cell_scores):
    # a recursive order (student 0) and a breadth-first one (student 5), each with a right backward
    cells, orders = PS2_TASKS["topological_order"]
    for k, kind in ((0, "recursive"), (5, "breadth first")):
        assert kind in orders[k][0] and _answer(PS2, "backward", k)[1] == RIGHT
        scores = cell_scores[PS2][STUDENTS[PS2][k]]
        lost = {cell for cell in (*cells, *BACKWARD_CELLS) if scores[cell][0] != scores[cell][1]}
        assert lost == orders[k][1], {cell: _failed_message(course, PS2, STUDENTS[PS2][k], cell) for cell in lost}


def test_a_hidden_graph_shows_the_student_the_count_only(course):
    # right on the visible graph of test_backward_values, wrong on hidden ones where a node uses a parent twice
    from grader.student_language import hidden_count_pattern

    k = [code for code, _ in PS2_TASKS["backward"][1]].index(WRONG_AT["hidden"])
    text = _failed_message(course, PS2, STUDENTS[PS2][k], "test_backward_values")
    assert hidden_count_pattern().fullmatch(text), text
    # nothing the student reads names a node, a value or an input of a hidden graph
    nb = nbformat.read(course / "autograded" / STUDENTS[PS2][k] / PS2 / f"{NOTEBOOKS[PS2]}.ipynb", as_version=4)
    shown = json.dumps([cell.get("outputs", []) for cell in nb.cells])
    hidden_inputs = ("0.5, -1.2", "1.5, 0.3", "0.7, -0.4", "-1.1, 2.5", "0.3, -0.8", "tanh(s)", "a hidden graph")
    assert "the gradient reaching" not in shown and not [text for text in hidden_inputs if text in shown]
    # on the hidden graphs of test_backward_values, the instructor's report names the node and no value
    reasons = json.loads((course / "reports" / f"{PS2}.json").read_text())[STUDENTS[PS2][k]]["reasons"]
    named = [r for r in reasons if "'test_backward_values'" in r and "the gradient reaching" in r]
    assert named and all("expected the reference pass's, got another (the values of a hidden graph are not shown), "
                                  "for input a hidden graph" in r for r in named), reasons


# ---- feedback ---------------------------------------------------------------------------------------
def _feedback(course, student, assignment=PS1) -> str:
    return unescape((course / "feedback" / student / assignment / f"{NOTEBOOKS[assignment]}.html").read_text())


def test_a_written_answer_waiting_for_its_grader_shows_as_pending(course):
    page = _feedback(course, "s0")
    assert "Written response</a> (Score: pending / 2.0)" in page
    assert "(Score: 11.0 / 16.0, 5.0 pending hand grading)" in page
    assert "Score: 0.0 / 2.0" not in page and "Score: 0.0 / 3.0" not in page


def test_a_visible_check_that_fails_in_a_hidden_test_cell_shows_its_message(course):
    page = _feedback(course, "s2")
    assert "expected a list of 3 Python floats (use .item()), got [a 0-d tensor" in page
    assert "details hidden" not in page.split("test_weighted_backward")[-1].split("Grade cell")[0]
    # the hidden part shows the count only, never its code: a backward right on the visible graph, wrong where a
    # node uses a parent twice (the one kind of wrong answer that only hidden inputs show)
    k = [code for code, _ in PS2_TASKS["backward"][1]].index(WRONG_AT["hidden"])
    page = _feedback(course, STUDENTS[PS2][k], PS2)
    assert "hidden checks passed" in page
    assert "BEGIN HIDDEN" not in page and "tanh(s)" not in page and "0.5, -1.2" not in page and "_cases" not in page


# ---- the comparison itself, in the grader's process ---------------------------------------------------
def test_first_wrong_node_names_the_first_difference_from_the_root_with_shapes_where_they_differ():
    import numpy as np

    from grader.checks import first_wrong_node

    right = [("y = h.sum()", 1.0, 1.0), ("h = x * w", np.ones(3), np.ones(3)), ("x", np.arange(3.0), np.arange(3.0))]
    assert first_wrong_node(right) is None
    assert first_wrong_node([right[0], ("h = x * w", np.ones(3), np.ones((1, 3))), right[2]]) == \
        ("h = x * w", "shape (3,)", "shape (1, 3)")
    assert first_wrong_node([right[0], right[1], ("x", np.arange(3.0), None)]) == ("x", "[0., 1., 2.]", "no gradient")
    assert first_wrong_node([("zero", 0.0, None)]) is None  # nothing reached it, and nothing should have
    assert first_wrong_node([("a", 1.0, 2.0), ("b", 1.0, 3.0)]) == ("a", "1.0", "2.0")


def test_the_reference_pass_adds_every_path_and_walks_deep_graphs_without_recursion():
    from grader.checks import gradients_by_node

    class Node:
        def __init__(self, *parents, local=()):
            self.parents, self.local = parents, local

    x = Node()
    s = Node(x, x, local=(2.0, 3.0))           # s = 2x + 3x
    root = Node(s, x, local=(10.0, 1.0))       # root = 10 s + x
    order, grads = gradients_by_node(root, lambda n: n.parents, lambda n, g: [g * d for d in n.local])
    assert order == [root, s, x] and grads[id(s)] == 10.0 and grads[id(x)] == 51.0
    chain = x
    for _ in range(5000):
        chain = Node(chain, local=(1.0,))
    order, grads = gradients_by_node(chain, lambda n: n.parents, lambda n, g: [g * d for d in n.local])
    assert len(order) == 5001 and grads[id(x)] == 1.0
