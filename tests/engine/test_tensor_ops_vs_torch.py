"""repeat, repeat_interleave, index_select, tril/triu, masked_fill, clamp_min/max, logsumexp, sort,
argsort and histogram against PyTorch: values, gradients (first and second), the nodes recorded,
printing and errors."""
import numpy as np
import pytest

from engine_helpers import import_torch, same

torch = import_torch()

RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((2, 3, 4))


def with_grad(m, data=A, dtype="float32"):
    return m.tensor(data, dtype=getattr(m, dtype), requires_grad=True)


def gradient_of(f, data=A, dtype="float32"):
    """A program: ``f(x)``, then the gradient of a weighted sum of it (weights that differ per element)."""
    def program(m):
        x = with_grad(m, data, dtype)
        y = f(m, x)
        y = y[0] if isinstance(y, tuple) else y
        w = m.arange(y.numel(), dtype=y.dtype).reshape(y.shape) / 7 + 1
        (y * w).sum().backward()
        return y, x.grad
    return program


CASES = {
    "repeat": lambda m, x: x.repeat(2, 3),
    "repeat_new_dims": lambda m, x: x.repeat(2, 1, 2),
    "repeat_interleave": lambda m, x: m.repeat_interleave(x, 2),
    "repeat_interleave_dim": lambda m, x: x.repeat_interleave(3, dim=1),
    "repeat_interleave_dim0": lambda m, x: x.repeat_interleave(2, 0),
    "repeat_interleave_counts": lambda m, x: x.repeat_interleave(m.tensor([1, 0, 3]), dim=0),
    "repeat_interleave_0d_counts": lambda m, x: x.repeat_interleave(m.tensor(2), dim=1),
    "index_select": lambda m, x: x.index_select(1, m.tensor([3, 0, 0])),
    "tril": lambda m, x: x.tril(),
    "tril_offset": lambda m, x: m.tril(x, -1),
    "triu": lambda m, x: x.triu(1),
    "masked_fill": lambda m, x: x.masked_fill(x > 0, -1.5),
    "masked_fill_inf": lambda m, x: x.masked_fill(m.tril(m.ones(3, 4)) == 0, float("-inf")),
    "masked_fill_broadcast_mask": lambda m, x: x.masked_fill(m.tensor([True, False, True, False]), 0.0),
    "masked_fill_0d_tensor": lambda m, x: m.masked_fill(x, x < 0, m.tensor(2.0)),
    "clamp_min": lambda m, x: x.clamp_min(0.1),
    "clamp_max": lambda m, x: m.clamp_max(x, -0.2),
    "clamp_min_tensor": lambda m, x: x.clamp_min(x.detach() * 0.5 + 0.1),
    "clamp_min_tensor_ties": lambda m, x: x.clamp_min(m.where(x > 0, x, m.zeros(()) - 0.5).detach()),
    "clamp_max_tensor_row": lambda m, x: m.clamp_max(x, m.tensor([0.0, 0.5, -0.5, 1.0], dtype=x.dtype)),
    "logsumexp": lambda m, x: x.logsumexp(1),
    "logsumexp_keepdim": lambda m, x: m.logsumexp(x, 0, keepdim=True),
    "logsumexp_dims": lambda m, x: m.logsumexp(x, (0, 1)),
    "sort": lambda m, x: m.sort(x),
    "sort_descending": lambda m, x: x.sort(dim=0, descending=True),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_values_gradients_and_nodes_are_torchs(case, dtype):
    same(gradient_of(CASES[case], dtype=dtype))


@pytest.mark.parametrize("case", ["repeat", "repeat_interleave_dim", "tril", "masked_fill", "logsumexp", "sort",
                                  "index_select", "clamp_min"])
def test_second_derivatives_are_torchs(case):
    def program(m):
        x = with_grad(m, B[0], "float64")
        y = CASES[case](m, x)
        y = y[0] if isinstance(y, tuple) else y
        (g,) = m.autograd.grad((y * y * y).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g.detach(), gg
    same(program)


def test_the_three_dim_forms_are_torchs():
    same(lambda m: [m.tensor(B).repeat(2, 1, 1, 1), m.tensor(B).tril(1), m.tensor(B).triu(-1),
                    m.tensor(B).logsumexp(-1), m.sort(m.tensor(B), 1), m.tensor(B).repeat_interleave(2, dim=-1)])


def test_integer_and_bool_tensors_are_torchs():
    same(lambda m: [m.repeat_interleave(m.tensor([2, 0, 1])), m.tensor([1, 2, 3]).repeat_interleave(2),
                    m.tensor([[1, 2], [3, 4]]).repeat(1, 2), m.tensor([1, 2, 3]).masked_fill(m.tensor([True, False, True]), 7),
                    m.tensor([3, 1, 2, 1]).sort(), m.tensor([3, 1, 2, 1]).sort(descending=True),
                    m.tensor([True, False, True]).sort(), m.tensor([1, 5, 3]).clamp_min(2), m.tensor([1, 5, 3]).clamp_min(2.5),
                    m.logsumexp(m.tensor([1, 2, 3]), 0), m.tensor([[1, 2], [3, 4]]).tril(),
                    m.ones(2, 3, dtype=m.bool).triu()])


def test_sort_ties_and_nan_are_ordered_as_torch_orders_them():
    data = [2.0, float("nan"), 1.0, 2.0, float("-inf"), 1.0, float("nan"), 0.0]
    same(lambda m: [m.sort(m.tensor(data)), m.sort(m.tensor(data), descending=True),
                    m.argsort(m.tensor(data)), m.tensor(data).argsort(descending=True),
                    m.sort(m.tensor(data), stable=True)])


def test_logsumexp_of_infinities_is_torchs():
    same(lambda m: [m.tensor([float("-inf"), float("-inf")]).logsumexp(0), m.tensor([float("inf"), 1.0]).logsumexp(0),
                    m.tensor([1000.0, 1000.0]).logsumexp(0), m.tensor(2.0).logsumexp(0)])


def test_sort_and_histogram_print_as_torchs():
    same(lambda m: [repr(m.sort(m.tensor([3.0, 1.0, 2.0]))), repr(m.histogram(m.tensor([1.0, 2.0, 1.0]), bins=4))])


@pytest.mark.parametrize("args", [
    dict(bins=4), dict(bins=3, range=(0.0, 3.0)), dict(bins=5, density=True), dict(bins=4, range=(1.0, 1.5)),
    dict(bins=2, weight=[0.5, 1.0, 2.0, 0.25, 1.0, 3.0, 1.0]), dict(bins=3, density=True, range=(-1.0, 4.0)),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_is_torchs(args, dtype):
    data = [1.0, 2.0, 1.0, 0.5, 2.0, 1.25, 3.0]

    def program(m):
        kwargs = dict(args)
        if "weight" in kwargs:
            kwargs["weight"] = m.tensor(kwargs["weight"], dtype=getattr(m, dtype))
        return m.histogram(m.tensor(data, dtype=getattr(m, dtype)), **kwargs)
    same(program)


def test_histogram_of_many_numbers_and_given_edges_is_torchs():
    data = RNG.standard_normal(10_000).astype(np.float32)
    same(lambda m: [m.histogram(m.tensor(data), 50), m.histogram(m.tensor(data), 30, density=True),
                    m.histogram(m.tensor(data), m.tensor([-1.0, 0.0, 0.5, 2.0])), m.histogram(m.tensor([4.0, 4.0]), 2),
                    m.histogram(m.tensor(data), density=True)])  # (100 bins unless told: makemore part 3's call)


ERRORS = {
    "repeat_fewer_dims": lambda m: m.ones(2, 3).repeat(2),
    "repeat_interleave_wrong_counts": lambda m: m.ones(2, 3).repeat_interleave(m.tensor([1, 2, 3]), dim=0),
    "repeat_interleave_negative": lambda m: m.repeat_interleave(m.tensor([1, -1])),
    "repeat_interleave_float_counts": lambda m: m.repeat_interleave(m.tensor([1.0, 2.0])),
    "tril_of_a_vector": lambda m: m.tril(m.ones(3)),
    "triu_of_a_number": lambda m: m.tensor(1.0).triu(),
    "masked_fill_float_mask": lambda m: m.ones(3).masked_fill(m.ones(3), 1.0),
    "masked_fill_1d_value": lambda m: m.ones(3).masked_fill(m.ones(3) > 0, m.ones(1)),
    "masked_fill_bad_shape": lambda m: m.ones(3).masked_fill(m.ones(2) > 0, 1.0),
    "histogram_of_integers": lambda m: m.histogram(m.tensor([1, 2]), 3),
    "histogram_range_backwards": lambda m: m.histogram(m.tensor([1.0, 2.0]), 3, range=(2.0, 1.0)),
    "index_select_out_of_range": lambda m: m.ones(3).index_select(0, m.tensor([3])),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_are_torchs(case):
    same(ERRORS[case])


def test_in_place_masking_is_torchs():
    def program(m):
        x = with_grad(m)
        y = x * 2
        y.masked_fill_(y > 0, 0.5)
        z = x.exp()
        z.tril_(-1)
        w = x.clone()
        w.triu_()
        (y.sum() + (z * 3).sum() + (w * w).sum()).backward()
        plain = m.ones(3, 3)
        plain.masked_fill_(m.eye(3) == 1, 0)
        return y, z, w, x.grad, plain, plain._version
    same(program)


def test_a_written_value_loses_its_leading_ones_as_in_torch():
    # d2l-en's sequence page: multistep_preds[i] = model(row), a (1, 1) result into one element
    def program(m):
        x = m.zeros(5)
        x[2] = m.ones(1, 1) * 3
        x[0:2] = m.ones(1, 1, 2)
        w = m.tensor([[2.0]], requires_grad=True)
        y = m.zeros(4)
        y[1] = w * 5
        y[2:] = m.ones(1, 2) * w
        y.sum().backward()
        return x, y.detach(), w.grad
    same(program)


def test_clamping_by_a_tensor_that_requires_grad_is_torchs():
    def program(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        low = m.tensor([2.0, 2.0, 2.0], requires_grad=True)
        high = m.tensor(2.0, requires_grad=True)
        y = x.clamp_min(low) + m.clamp_max(x, high)
        y.sum().backward()
        return y, x.grad, low.grad, high.grad
    same(program)


def test_clamp_with_tensor_bounds_gives_a_tie_to_the_input_as_torch_does():
    # ClampBackward0: x's gradient where min <= x <= max, min's where x < min, max's where x > max
    def program(m):
        x = m.tensor([[1.0, 2.0, 3.0, -0.0], [2.5, 0.0, 9.0, 2.0]], requires_grad=True)
        low = m.tensor([2.0, 2.0, 2.0, 0.0], requires_grad=True)
        high = m.tensor([[2.5], [1.0]], requires_grad=True)  # below low in the second row
        outs = [m.clamp(x, min=low), x.clamp(max=high), m.clamp(x, low, high), x.clamp(min=low, max=high) * x]
        grads = m.autograd.grad(sum(o.sum() for o in outs), (x, low, high), create_graph=True)
        again = m.autograd.grad(grads[0].sum(), x)
        return outs, grads, again, [o.grad_fn.name() for o in outs]
    same(program)


def test_the_default_dtype_prints_no_dtype_and_float32_then_does():
    def program(m):
        m.set_default_dtype(m.float64)
        try:
            return [repr(t) for t in (m.ones(2), m.ones(2, dtype=m.float32), m.tensor([]), m.tensor([], dtype=m.float32),
                                      m.ones(2, dtype=m.float16), m.arange(3), m.tensor(0.5, requires_grad=True) * 2)]
        finally:
            m.set_default_dtype(m.float32)
    same(program)


@pytest.mark.parametrize("clamp", ["clamp_min", "clamp_max", "clamp(min=)", "clamp(max=)", "clamp(min=, max=)"])
def test_clamping_by_a_tensor_keeps_signed_zero_ties_and_gives_no_gradient_across_nan_as_torch(clamp):
    # one formula (ClampBackward0's) for clamp, clamp_min and clamp_max: a tie keeps x (-0 stays -0),
    # and where x or the bound is nan, the bound gets no gradient (x < nan is false)
    def program(m):
        x = m.tensor([-0.0, 0.0, 1.0, float("nan"), -2.0, 3.0], requires_grad=True)
        b = m.tensor([0.0, -0.0, 1.0, 0.5, float("nan"), 1.0], requires_grad=True)
        c = m.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 0.5], requires_grad=True)
        y = {"clamp_min": lambda: x.clamp_min(b), "clamp_max": lambda: x.clamp_max(b),
             "clamp(min=)": lambda: x.clamp(min=b), "clamp(max=)": lambda: x.clamp(max=b),
             "clamp(min=, max=)": lambda: x.clamp(min=c, max=b)}[clamp]()
        grads = m.autograd.grad((y * m.arange(1.0, 7.0)).sum(), (x, b))
        return y, [str(v) for v in y.tolist()], grads

    same(program)


@pytest.mark.parametrize("name", ["clamp_min", "clamp_max"])
def test_clamping_by_a_number_saves_the_bound_under_torchs_name(name):
    def program(m):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        node = getattr(x, name)(0.25).grad_fn
        return node, getattr(node, f"_saved_{name[-3:]}"), node._saved_self
    same(program)
