"""Property tests: random compositions of ops over random broadcastable shapes, checked against finite differences."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograd_core as torch
from engine_helpers import numerical_grad

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every function keeps values moderate (exp of tanh, cube of a tanh) so that finite differences stay accurate.
UNARY = {
    "exp": lambda t: t.tanh().exp(), "tanh": lambda t: t.tanh(), "sigmoid": torch.sigmoid, "sin": torch.sin,
    "cos": lambda t: t.cos(), "log_pos": lambda t: (t * t + 1).log(), "sqrt_pos": lambda t: (t * t + 0.5).sqrt(),
    "square": lambda t: t ** 2, "cube": lambda t: (2 * t.tanh()).pow(3), "neg": lambda t: -t, "recip": lambda t: 1 / (t * t + 1),
}
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1), "rsub": lambda a, b: b - a, "mul_fn": torch.mul, "add_fn": torch.add,
}
REDUCE = {
    "sum": lambda t: t.sum(), "mean": lambda t: t.mean(), "norm": lambda t: t.norm() if t.numel() else t.sum(),
    "sum_last": lambda t: t.sum(-1).sum() if t.dim() else t, "mean_first_keepdim": lambda t: t.mean(0, keepdim=True).sum() if t.dim() else t,
}


@st.composite
def broadcastable_shapes(draw):
    shape = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))
    other = [s if draw(st.booleans()) else 1 for s in shape][draw(st.integers(0, len(shape))):]
    return tuple(shape), tuple(other)


@st.composite
def compositions(draw):
    shapes = draw(broadcastable_shapes())
    steps = draw(st.lists(st.tuples(st.sampled_from(sorted(UNARY)), st.sampled_from(sorted(BINARY)), st.booleans()),
                          min_size=1, max_size=4))
    return shapes, steps, draw(st.sampled_from(sorted(REDUCE))), draw(st.integers(0, 2**16))


def build(shapes, steps, reduce):
    def f(a, b):
        t = a
        for unary, binary, swap in steps:
            t = UNARY[unary](t)
            t = BINARY[binary](b, t) if swap else BINARY[binary](t, b)
        return REDUCE[reduce](t)
    return f


def inputs(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, s) for s in shapes]


@FAST
@given(compositions())
def test_backward_matches_central_finite_differences(case):
    shapes, steps, reduce, seed = case
    f = build(shapes, steps, reduce)
    a0, b0 = inputs(shapes, seed)
    a, b = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a0, b0))
    f(a, b).backward()
    num_a = numerical_grad(lambda v: f(torch.tensor(v), torch.tensor(b0)).item(), a0)
    num_b = numerical_grad(lambda v: f(torch.tensor(a0), torch.tensor(v)).item(), b0)
    assert a.grad.shape == a0.shape and b.grad.shape == b0.shape
    assert np.allclose(a.grad.numpy(), num_a, rtol=1e-4, atol=1e-6)
    assert np.allclose(b.grad.numpy(), num_b, rtol=1e-4, atol=1e-6)


@FAST
@given(compositions())
def test_gradcheck_passes_on_random_compositions(case):
    shapes, steps, reduce, seed = case
    a, b = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in inputs(shapes, seed))
    assert torch.autograd.gradcheck(build(shapes, steps, reduce), (a, b))


@settings(max_examples=20, deadline=None)
@given(compositions())
def test_second_derivatives_match_finite_differences_of_the_gradient(case):
    shapes, steps, reduce, seed = case
    f = build(shapes, steps, reduce)
    a0, b0 = inputs(shapes, seed)

    def grad_sum(v):
        a = torch.tensor(v, requires_grad=True)
        (g,) = torch.autograd.grad(f(a, torch.tensor(b0)), a, create_graph=True)
        return g

    a = torch.tensor(a0, requires_grad=True)
    (g,) = torch.autograd.grad(f(a, torch.tensor(b0)), a, create_graph=True)
    num = numerical_grad(lambda v: grad_sum(v).sum().item(), a0)
    if not g.requires_grad:  # f is linear in a: the gradient is a constant
        assert np.allclose(num, 0, atol=1e-5)
        return
    (h,) = torch.autograd.grad(g.sum(), a, allow_unused=True)
    h = np.zeros_like(a0) if h is None else h.numpy()
    assert np.allclose(h, num, rtol=1e-4, atol=1e-5)


@FAST
@given(broadcastable_shapes(), st.integers(0, 2**16))
def test_gradient_of_a_broadcast_op_has_each_input_shape(shapes, seed):
    a, b = (torch.tensor(v, requires_grad=True) for v in inputs(shapes, seed))
    (a * b + a / (b * b + 1)).sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape


@FAST
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_sum_with_random_dims_and_keepdim_matches_numpy(shape, data):
    x = np.random.default_rng(0).normal(size=shape)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdim = data.draw(st.booleans())
    t = torch.tensor(x, requires_grad=True)
    y = t.sum(dim, keepdim=keepdim)
    assert np.allclose(y.detach().numpy(), x.sum(axis=dim, keepdims=keepdim))
    (y * y).sum().backward()
    assert np.allclose(t.grad.numpy(), 2 * np.broadcast_to(x.sum(axis=dim, keepdims=True), x.shape))


def test_gradcheck_warns_for_float32_inputs():
    x = torch.tensor([0.5], requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        torch.autograd.gradcheck(lambda t: t * t, (x,), atol=1e-2, rtol=1e-2)


def test_gradcheck_checks_every_input_that_requires_grad():
    class HalfWrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b, grad * b  # the second should be grad * a

    a, b = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in ([1.0, 2.0], [3.0, 5.0]))
    assert not torch.autograd.gradcheck(HalfWrong.apply, (a, b), raise_exception=False)
    assert torch.autograd.gradcheck(HalfWrong.apply, (a, b.detach()), raise_exception=False)
