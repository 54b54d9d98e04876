"""What lesson 11 (the bridge to extending autograd) needs of the engine, compared with PyTorch:
``inference_mode``, module forward hooks, and the order in which backward reaches several leaves."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import import_torch, same

import_torch()


# -- inference_mode ----------------------------------------------------------------------------


def test_inference_mode_records_nothing_and_marks_what_it_makes():
    def program(m):
        w = m.tensor([1.0, -2.0], requires_grad=True)
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]])
        with m.inference_mode():
            inside = m.is_inference_mode_enabled(), m.is_grad_enabled()
            y = x @ w
            made = m.ones(2)
        return (inside, m.is_inference_mode_enabled(), m.is_grad_enabled(), y, y.requires_grad, y.grad_fn,
                y.is_inference(), made.is_inference(), x.is_inference(), w.is_inference(), y.clone().is_inference())

    same(program)


def test_an_inference_tensor_cannot_be_saved_for_backward_but_its_clone_can():
    def program(m):
        w = m.tensor([1.0, -2.0], requires_grad=True)
        with m.inference_mode():
            y = m.tensor([3.0, 4.0]) * 2
        try:
            (y * w).sum()
            refused = None
        except RuntimeError as error:
            refused = str(error)
        z = (y.clone() * w).sum()
        z.backward()
        added = (y + w).sum()  # addition saves nothing: allowed, as in PyTorch
        return refused, w.grad, added

    same(program)


def test_inference_mode_as_a_decorator_and_switched_off():
    def program(m):
        @m.inference_mode()
        def evaluate(x):
            return x * 2, m.is_inference_mode_enabled()

        x = m.ones(2, requires_grad=True)
        out, on = evaluate(x)
        with m.inference_mode(False):
            kept = x * 2
        return out.is_inference(), out.requires_grad, on, kept.is_inference(), kept.grad_fn, m.is_grad_enabled()

    same(program)


# -- kinks -------------------------------------------------------------------------------------


def test_gradients_at_a_kink_are_pytorchs_and_a_nan_in_backward_warns_of_nothing():
    def program(m):
        a = m.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        grads = []
        for f in (m.abs, m.relu, lambda t: m.sqrt(t * t), lambda t: t.clamp(min=0), lambda t: m.maximum(t, m.zeros(3))):
            a.grad = None
            f(a).sum().backward()
            grads.append(a.grad)
        return grads

    same(program)


# -- module hooks -----------------------------------------------------------------------------


def test_forward_hooks_see_and_may_replace_inputs_and_outputs_until_removed():
    def program(m):
        m.manual_seed(0)
        layer = m.nn.Linear(2, 1)
        seen = []
        pre = layer.register_forward_pre_hook(lambda module, inputs: (inputs[0] * 2,))
        post = layer.register_forward_hook(lambda module, inputs, out: seen.append(
            (type(module).__name__, tuple(inputs[0].shape), inputs[0].sum().item(), tuple(out.shape))))
        swap = layer.register_forward_hook(lambda module, inputs, out: out * 0)
        x = m.ones(3, 2)
        first = layer(x)
        swap.remove()
        second = layer(x)
        pre.remove()
        post.remove()
        third = layer(x)
        return seen, first, second.grad_fn, third, len(seen)

    same(program)


# -- the order backward reaches the leaves ------------------------------------------------------

OPS = ["add", "mul", "sub", "sin"]


@st.composite
def graphs(draw):
    """A small program: leaves, then ops on earlier values; the last value is the output."""
    leaves = draw(st.integers(2, 5))
    steps = draw(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 100), st.integers(0, 100)),
                          min_size=1, max_size=10))
    return leaves, steps


def run_order(m, leaves, steps):
    xs = [m.tensor(float(k + 1), requires_grad=True) for k in range(leaves)]
    order, index = [], {id(x): k for k, x in enumerate(xs)}
    values = list(xs)
    for op, a, b in steps:
        u, v = values[a % len(values)], values[b % len(values)]
        values.append(u + v if op == "add" else u * v if op == "mul" else u - v if op == "sub" else m.sin(u))
    out = sum(values[leaves:], m.tensor(0.0)) + sum(xs, m.tensor(0.0))  # every leaf is reached
    stack, seen = [out.grad_fn], {out.grad_fn}
    while stack:  # every node reports when it runs: the whole order, not only the leaves'
        node = stack.pop()
        leaf = getattr(node, "variable", None)  # an AccumulateGrad: which leaf
        name = index[id(leaf)] if leaf is not None else type(node).__name__
        node.register_prehook(lambda grads, name=name: order.append(name))
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    out.backward()
    return order


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_backward_runs_the_nodes_and_reaches_the_leaves_in_pytorchs_order(program):
    same(lambda m: run_order(m, *program))


def test_the_leaves_of_lesson_three_in_pytorchs_order():
    def program(m):
        x1, x2, x3 = (m.tensor(v, requires_grad=True) for v in (1.0, 2.0, 3.0))
        order = []
        for name, t in (("x1", x1), ("x2", x2), ("x3", x3)):
            t.register_hook(lambda g, name=name: order.append(name))
        y = m.zeros(3)
        y[0] = x1 * x2 * x3
        y[1] = x1 + x2 + x3
        y[2] = x1 + x2 * x3
        y.backward(m.tensor([0.1, 0.2, 0.3]))
        return order

    assert same(program) == ("list", ["x3", "x1", "x2"])
