"""Autograd: requires_grad, grad, grad_fn, hooks, backward, autograd.grad, Function, grad modes, higher order."""
import math
import warnings

import numpy as np
import pytest

import autograd_core as torch
from autograd_core import torch_warnings


def leaf(*values):
    return torch.tensor(list(values), requires_grad=True)


def test_operations_on_a_tensor_that_requires_grad_are_recorded():
    x = leaf(1.0, 2.0)
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"


def test_operations_on_plain_tensors_are_not_recorded():
    y = torch.ones(2) * 2
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None


def test_requires_grad_in_place_switches_recording_on():
    x = torch.ones(2)
    assert x.requires_grad_() is x and x.requires_grad
    assert (x * 2).requires_grad


@pytest.mark.parametrize("expr, name", [
    ("x + 1", "AddBackward0"), ("x * x", "MulBackward0"), ("x.mean()", "MeanBackward0"),
    ("x.sum()", "SumBackward0"), ("x.sum(0)", "SumBackward1"), ("x.reshape(2, 1).mm(x.reshape(1, 2))", "MmBackward0"),
    ("x ** 2", "PowBackward0"), ("x - 1", "SubBackward0"), ("x / 2", "DivBackward0"), ("x.exp()", "ExpBackward0"),
])
def test_grad_fn_is_named_as_pytorch_names_it(expr, name):
    assert eval(expr, globals(), {"x": leaf(1.0, 2.0)}).grad_fn.name() == name


def test_next_functions_lead_to_accumulate_grad_at_the_leaves():
    x, w = leaf(1.0), leaf(2.0)
    y = (x * w) + 1
    add = y.grad_fn
    (mul, nr), (const, _) = add.next_functions
    assert mul.name() == "MulBackward0" and nr == 0 and const is None
    leaves = [n for n, _ in mul.next_functions]
    assert [type(n).__name__ for n in leaves] == ["AccumulateGrad", "AccumulateGrad"]
    assert leaves[0].variable is x and leaves[1].variable is w


def test_grad_accumulates_across_backward_calls():
    x = leaf(1.0, 2.0)
    (x * x).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0] and x.grad is g


def test_grad_can_be_reset_with_none_or_zero_():
    x = leaf(1.0)
    (x * 2).sum().backward()
    x.grad.zero_()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]
    x.grad = None
    (x * 5).sum().backward()
    assert x.grad.tolist() == [5.0]


def test_reading_grad_of_a_non_leaf_warns_and_gives_none():
    x = leaf(1.0)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None


def test_retain_grad_keeps_the_grad_of_a_non_leaf():
    x = leaf(1.0, 2.0)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad.tolist() == [4.0, 8.0] and y.retains_grad


def test_a_hook_sees_the_gradient_and_can_replace_it():
    x = leaf(1.0, 2.0)
    y = x * 3
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    x.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert seen == [[1.0, 1.0]] and x.grad.tolist() == [30.0, 30.0]


def test_a_removed_hook_is_not_called():
    x = leaf(1.0)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    handle.remove()
    (x * 2).sum().backward()
    assert calls == []


def test_detach_shares_values_but_leaves_the_graph():
    x = leaf(1.0, 2.0)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    d[0] = 7.0
    assert y[0].item() == 7.0


def test_detach_in_place_turns_a_tensor_into_a_leaf():
    y = leaf(1.0) * 2
    assert y.detach_() is y and y.is_leaf and not y.requires_grad and y.grad_fn is None


def test_backward_of_a_non_scalar_needs_a_gradient_argument():
    x = leaf(1.0, 2.0, 3.0)
    (x * x).backward(torch.tensor([1.0, 0.1, 0.01]))
    assert np.allclose(x.grad.numpy(), [2.0, 0.4, 0.06])


def test_backward_inputs_fills_only_those_grads():
    x, w = leaf(1.0), leaf(2.0)
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None and w.grad.tolist() == [1.0]


def test_autograd_grad_returns_gradients_and_leaves_grad_alone():
    x, w = leaf(1.0, 2.0), leaf(3.0, 4.0)
    gx, gw = torch.autograd.grad((x * w).sum(), [x, w])
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0] and x.grad is None


def test_autograd_grad_with_grad_outputs():
    x = leaf(1.0, 2.0)
    (g,) = torch.autograd.grad(x * x, x, grad_outputs=torch.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]


def test_autograd_grad_allow_unused_gives_none():
    x, w = leaf(1.0), leaf(2.0)
    assert torch.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)[1] is None


def test_autograd_backward_sums_several_outputs():
    x = leaf(1.0, 2.0)
    torch.autograd.backward([(x * x).sum(), (x * 3).sum()])
    assert x.grad.tolist() == [5.0, 7.0]


def test_custom_function_forward_backward_and_saved_tensors():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    x = leaf(2.0)
    y = Cube.apply(x)
    y.sum().backward()
    assert y.grad_fn.name() == "CubeBackward" and x.grad.tolist() == [12.0]


def test_custom_function_needs_input_grad_and_non_tensor_arguments():
    seen = []

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            return x * y * k

        @staticmethod
        def backward(ctx, grad):
            seen.append(ctx.needs_input_grad)
            return grad * 2, None, None

    x = leaf(1.0)
    out = Scale.apply(x, torch.tensor([3.0]), 2.0)
    out.sum().backward()
    assert seen == [(True, False, False)] and len(out.grad_fn.next_functions) == 2 and x.grad.tolist() == [2.0]


def test_no_grad_stops_recording_and_enable_grad_restarts_it():
    x = leaf(1.0)
    with torch.no_grad():
        assert not (x * 2).requires_grad and not torch.is_grad_enabled()
        with torch.enable_grad():
            assert (x * 2).requires_grad
    assert torch.is_grad_enabled()


def test_grad_modes_work_as_decorators():
    x = leaf(1.0)

    @torch.no_grad()
    def f(t):
        return t * 2

    @torch.set_grad_enabled(False)
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad and torch.is_grad_enabled()


def test_set_grad_enabled_as_a_call_and_a_context_manager():
    x = leaf(1.0)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    torch.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_grad_mode_is_restored_after_an_exception():
    with pytest.raises(ValueError):
        with torch.no_grad():
            raise ValueError
    assert torch.is_grad_enabled()


def test_second_derivative_of_x_cubed():
    x = torch.tensor(2.0, requires_grad=True)
    (g,) = torch.autograd.grad(x ** 3, x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    assert g.item() == 12.0 and h.item() == 12.0


def test_second_derivative_of_sin_is_minus_sin():
    x = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(x.sin(), x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    assert math.isclose(h.item(), -math.sin(0.7))


@pytest.mark.parametrize("f, d2", [
    (lambda x: x * x * x, lambda x: 6 * x), (lambda x: 1 / x, lambda x: 2 / x ** 3),
    (lambda x: x ** 2.5, lambda x: 3.75 * x ** 0.5), (lambda x: x.exp(), math.exp),
    (lambda x: x.tanh(), lambda x: -2 * math.tanh(x) * (1 - math.tanh(x) ** 2)),
    (lambda x: x.sigmoid(), lambda x: (lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + math.exp(-x)))),
    (lambda x: x.log(), lambda x: -1 / x ** 2), (lambda x: x.sqrt(), lambda x: -0.25 * x ** -1.5),
    (lambda x: (x.reshape(1, 1) @ x.reshape(1, 1)).sum(), lambda x: 2.0),
    (lambda x: (x * x).mean(), lambda x: 2.0), (lambda x: (x * x).norm(), lambda x: 2.0),
])
def test_second_derivatives_through_ops(f, d2):
    x = torch.tensor(0.8, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    assert math.isclose(h.item(), d2(0.8), rel_tol=1e-9)


def test_create_graph_backward_fills_grad_with_a_recorded_tensor(monkeypatch):
    # the warning is shown once per process, as PyTorch's: forget that another test showed it
    monkeypatch.setattr(torch_warnings, "_shown_once", set())
    x = torch.tensor(3.0, requires_grad=True)
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.item() == 27.0
    x.grad = None
    g.backward()
    assert x.grad.item() == 18.0


def test_gradcheck_accepts_correct_gradients():
    x = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: (t.sin() * t.exp()).sum(), (x,))


def test_gradcheck_catches_a_wrong_backward():
    class WrongSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2 * x

    x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(WrongSquare.apply, (x,))
    assert torch.autograd.gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_edges_and_needs_input_grad_keep_their_types_whatever_was_recorded_before():
    # Nodes share equal tuples; (0, 1) == (False, True) must not make one stand for the other.
    x = torch.ones(2, requires_grad=True)
    c = torch.ones(2)

    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    second = Two.apply(x)[1]  # output 1 of its node: an edge (TwoBackward, 1)
    nodes = [x.exp().grad_fn, second.exp().grad_fn, (x * c).grad_fn, (c * x).grad_fn, (second * x).grad_fn]
    for node in nodes:
        assert all(type(nr) is int for _, nr in node.next_functions)
        assert all(type(flag) is bool for flag in node.needs_input_grad)
    assert nodes[1].next_functions[0][1] == 1 and nodes[0].needs_input_grad == (True,)
    assert nodes[3].needs_input_grad == (False, True) and repr(nodes[3].next_functions[0]) == "(None, 0)"


# --- a leaf's first gradient: taken when nothing else can reach it, copied otherwise ----------------
@pytest.fixture
def copies(monkeypatch):
    """Counts the copies AccumulateGrad makes of a leaf's first gradient (Tensor.clone)."""
    made = []
    clone = torch.Tensor.clone
    monkeypatch.setattr(torch.Tensor, "clone", lambda self, *a, **k: made.append(self) or clone(self, *a, **k))
    return made


def test_a_gradient_only_the_walk_holds_becomes_grad_without_a_copy(copies):
    x = torch.ones(3, requires_grad=True)
    w = torch.tensor([[1.0, -2.0], [3.0, 0.5], [-1.0, 2.0], [0.5, 1.0]], requires_grad=True)
    (x * 2).sum().backward()
    ((torch.ones(5, 4) @ w).relu() ** 2).mean().backward()
    assert copies == []
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    np.testing.assert_allclose(w.grad.numpy(), [[3.5, 1.5]] * 4, rtol=1e-6)  # 5 rows x 2h/10
    same_grad = x.grad
    (x * 3).sum().backward()  # later passes add in place into the array that was taken
    assert x.grad is same_grad and x.grad.tolist() == [5.0, 5.0, 5.0]


def _function_returning(gradient):
    """A user Function (y = x) whose backward returns ``gradient(grad)``."""
    class Returns(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, grad):
            return gradient(grad)

    return Returns


def _cases_where_something_else_holds_the_gradient():
    def two_leaves(x, kept):  # the same gradient flows to x and to y
        y = torch.ones(3, requires_grad=True)
        ((x + y) * 2).sum().backward()
        kept.append(y.grad)

    def user_gradient(x, kept):  # backward(gradient): the caller still holds it
        kept.append(torch.tensor([1.0, 2.0, 3.0]))
        x.backward(kept[-1])

    def user_gradient_detached(x, kept):  # a new tensor, but the caller's memory
        kept.append(torch.tensor([1.0, 2.0, 3.0]))
        (x * 1).backward(kept[-1].detach())
        x.grad = None
        (x + 0).backward(kept[-1].detach())

    def user_gradient_through_a_view(x, kept):  # the gradient x gets is a view of the caller's memory
        kept.append(torch.tensor([1.0, 2.0, 3.0]))
        x.reshape(1, 3).backward(kept[-1].reshape(1, 3))

    def user_gradient_passed_through(x, kept):
        kept.append(torch.tensor([1.0, 2.0, 3.0]))
        (x + 0).backward(kept[-1])

    def hook_on_a_non_leaf_keeps_it(x, kept):
        y = x + 0
        y.register_hook(kept.append)
        (y * 2).sum().backward()

    def retain_grad_of_a_non_leaf(x, kept):
        y = x + 0
        y.retain_grad()
        (y * 2).sum().backward()
        kept.append(y.grad)

    def leaf_hook_returns_a_kept_tensor(x, kept):
        kept.append(torch.tensor([4.0, 5.0, 6.0]))
        x.register_hook(lambda grad: kept[0])
        (x * 2).sum().backward()

    def function_returns_a_kept_tensor(x, kept):
        _function_returning(lambda grad: kept.append(grad * 2) or kept[-1]).apply(x).sum().backward()

    def function_returns_the_callers_memory(x, kept):  # a new tensor over an array kept elsewhere
        kept.append(torch.from_numpy(np.array([7.0, 8.0, 9.0], dtype=np.float32)))
        _function_returning(lambda grad: torch.from_numpy(kept[0].numpy())).apply(x).sum().backward()

    return [two_leaves, user_gradient, user_gradient_detached, user_gradient_through_a_view,
            user_gradient_passed_through, hook_on_a_non_leaf_keeps_it, retain_grad_of_a_non_leaf,
            leaf_hook_returns_a_kept_tensor, function_returns_a_kept_tensor, function_returns_the_callers_memory]


@pytest.mark.parametrize("case", _cases_where_something_else_holds_the_gradient(), ids=lambda f: f.__name__)
def test_a_gradient_something_else_can_reach_is_copied_into_grad(case):
    x = torch.ones(3, requires_grad=True)
    kept = []
    case(x, kept)
    assert kept and x.grad is not None
    before = [k.numpy().copy() for k in kept]
    for k in kept:
        assert not np.shares_memory(x.grad.numpy(), k.numpy())
    x.grad.zero_()  # changing x.grad changes nothing the user or another leaf holds
    assert all(np.array_equal(k.numpy(), b) for k, b in zip(kept, before))
