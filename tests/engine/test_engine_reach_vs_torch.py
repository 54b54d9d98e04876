"""The functions the next chapters of the tutorials call (d2l ch. 2-5, the blitz, makemore, J. Johnson's
examples), each compared with PyTorch 2.13: values, dtypes, graph nodes, errors and warnings.

``same(program)`` runs ``program`` with ``m = autograd_core`` and ``m = torch`` (tests/engine/engine_helpers.py).
"""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kit_paths import ROOT
from engine_helpers import import_torch, same

torch = import_torch()
pytestmark = pytest.mark.usefixtures("speed_both_ways")

A = [[0.5, -1.5, 2.0], [3.0, 0.25, -1.0]]
POSITIVE = [[0.5, 1.5, 2.0], [3.0, 0.25, 100.0]]


# --- log10, sinh, cosh -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["log10", "sinh", "cosh"])
def test_new_elementwise_functions_and_their_gradients_match_torch(name, dtype):
    def program(m):
        x = m.tensor(POSITIVE if name == "log10" else A, dtype=getattr(m, dtype), requires_grad=True)
        y, z = getattr(x, name)(), getattr(m, name)(x)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return y, z, g.detach(), gg

    same(program)


@pytest.mark.parametrize("name", ["log10", "sinh", "cosh"])
def test_new_elementwise_functions_take_integers_and_refuse_non_tensors_like_torch(name):
    same(lambda m: getattr(m, name)(m.tensor([1, 2, 3])))
    same(lambda m: getattr(m, name)([1.0, 2.0]))


# --- F.one_hot ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("labels, num_classes", [([0, 2, 1], -1), ([0, 2, 1], 5), ([[0, 1], [3, 2]], -1),
                                                 ([0, -1], -1), ([0, 3], 3), ([], 3), ([], -1)], ids=str)
def test_one_hot_and_its_errors_match_torch(labels, num_classes):
    same(lambda m: m.nn.functional.one_hot(m.tensor(labels, dtype=m.long), num_classes))


def test_one_hot_of_a_float_tensor_fails_like_torch():
    same(lambda m: m.nn.functional.one_hot(m.tensor([0.0, 1.0])))


# --- meshgrid -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3,), (3, 2), (2, 3, 4), (0, 2)], ids=str)
def test_meshgrid_matches_torch(sizes, indexing):
    def program(m):
        xs = [m.arange(1.0, n + 1.0, requires_grad=True) for n in sizes]
        grids = m.meshgrid(*xs, indexing=indexing)
        sum(g.sum() * (i + 1) for i, g in enumerate(grids)).backward()
        return grids, [x.grad for x in xs]

    same(program)


def test_meshgrid_as_d2l_calls_it_and_its_errors_match_torch():
    same(lambda m: m.meshgrid([m.arange(3), m.arange(2)], indexing="xy"))  # a list, as d2l's show_heatmaps
    same(lambda m: m.meshgrid(m.arange(3), indexing="foo"))
    same(lambda m: m.meshgrid(m.ones(2), m.arange(3), indexing="ij"))
    same(lambda m: m.meshgrid(m.tensor(1.0), m.ones(2), indexing="ij"))
    same(lambda m: m.meshgrid(m.ones(2), m.ones(3)), check_warnings=False)  # PyTorch warns once per process


# --- out= ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, args", [("add", ([[1.0, 2.0]], [[3.0, 4.0]])), ("mul", ([[1.0, 2.0]], 3)),
                                        ("matmul", ([[1.0, 2.0]], [[3.0], [4.0]])), ("sub", ([1.0], [2.0])),
                                        ("exp", ([0.5, 1.0],)), ("mm", ([[1.0, 2.0]], [[3.0], [4.0]]))], ids=str)
@pytest.mark.parametrize("out_shape", [(1, 2), (1, 1), (2,), (0,)], ids=str)
def test_out_writes_into_the_given_tensor_like_torch(name, args, out_shape):
    def program(m):
        tensors = [m.tensor(a) if isinstance(a, list) else a for a in args]
        out = m.full(out_shape, -7.0)
        result = getattr(m, name)(*tensors, out=out)
        return result is out, out

    same(program)


def test_out_refuses_autograd_and_a_narrower_dtype_like_torch():
    same(lambda m: m.mul(m.ones(2, requires_grad=True), 2, out=m.empty(2)))
    same(lambda m: m.add(m.ones(2), 1.5, out=m.zeros(2, dtype=m.long)))
    same(lambda m: m.add(m.ones(2, dtype=m.long), 1, out=m.zeros(2)))  # an int result into floats is fine

    def under_no_grad(m):
        x = m.ones(2, requires_grad=True)
        with m.no_grad():
            return m.mul(x, 2, out=m.empty(2))

    same(under_no_grad)


def test_add_with_out_as_the_blitz_writes_it_matches_torch():
    def program(m):
        m.manual_seed(0)
        x, y = m.rand(5, 3), m.rand(5, 3)
        result = m.empty(5, 3)
        m.add(x, y, out=result)
        return result

    same(program)


# --- new_*, byte, resize_ ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda m, x: x.new_zeros(2, 3), lambda m, x: x.new_zeros((2,)), lambda m, x: x.new_ones(2, dtype=m.long),
    lambda m, x: x.new_ones(()), lambda m, x: x.new_full((2, 2), 3), lambda m, x: x.new_full((2,), 1.5),
    lambda m, x: x.new_tensor([1, 2]), lambda m, x: x.new_tensor([1.5], dtype=m.float64),
    lambda m, x: x.new_tensor(3.0), lambda m, x: x.new_tensor(x), lambda m, x: x.new_empty(2, 1).shape,
    lambda m, x: x.new_zeros(-1), lambda m, x: x.new_full((2,), 1.0, requires_grad=True),
    lambda m, x: x.long().new_zeros(2, requires_grad=True), lambda m, x: x.long().new_full((2,), 1.5),
])
def test_new_tensors_take_the_dtype_of_the_tensor_like_torch(call):
    same(lambda m: call(m, m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))


@pytest.mark.parametrize("name", ["byte", "char", "short", "int", "long", "half", "double", "bool"])
def test_dtype_conversion_methods_match_torch(name):
    same(lambda m: getattr(m.tensor([0.0, 1.7, -1.0, 100.9, 255.0]), name)())


def test_resize_in_place_matches_torch():
    def program(m):
        r = m.arange(6.0)
        same_object = r.resize_(2, 3) is r
        shapes = [tuple(r.shape)]
        r.resize_(4)
        shapes.append(tuple(r.shape))
        return same_object, shapes, r, m.arange(4.0).resize_(2, 1)

    same(program)
    same(lambda m: m.ones(2, requires_grad=True).resize_(3))
    same(lambda m: m.arange(3.0).resize_(2, 3).shape)  # grown: PyTorch leaves the new elements uninitialised


# --- torch.backends, threads -----------------------------------------------------------------------------------
def test_backends_say_what_pytorchs_cpu_build_says():
    same(lambda m: (m.backends.mps.is_available(), m.backends.mps.is_built(), m.backends.cudnn.is_available(),
                    m.backends.cudnn.enabled, m.backends.cudnn.benchmark, m.backends.cudnn.deterministic,
                    m.backends.cudnn.version(), m.backends.cuda.is_built()))


def test_set_num_threads_refuses_what_torch_refuses():
    same(lambda m: m.set_num_threads(0))
    same(lambda m: m.set_num_threads(1.5))


# --- indexing --------------------------------------------------------------------------------------------------
def test_range_in_an_index_is_the_cross_entropy_idiom_as_in_torch():
    def program(m):
        y_hat = m.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]], requires_grad=True)
        y = m.tensor([0, 2])
        picked = y_hat[range(len(y_hat)), y]  # d2l's cross_entropy; makemore's probs[range(n), ys]
        (-picked.log()).mean().backward()
        return picked, y_hat.grad, y_hat[range(2)], y_hat[range(1, 2), 1:]

    same(program)


INDEX_ERRORS = [
    lambda x: x[2], lambda x: x[-3], lambda x: x[:, 3], lambda x: x[0, 0, 0], lambda x: x[None, 5],
    lambda x: x[..., None, 7], lambda x: x[:, [5]], lambda x: x[[0, 9]], lambda x: x[[0], [9]],
    lambda x: x[[0, 1], [0, 1, 2]], lambda x: x[[-3]], lambda x: x[1.5], lambda x: x.select(0, 4),
    lambda x: x.select(-1, -5), lambda x: x.narrow(1, 2, 3), lambda x: x.narrow(0, 3, 0), lambda x: x.narrow(0, -1, 1),
    lambda x: x[0][5], lambda x: x.sum()[0], lambda x: x.__setitem__(5, 1.0), lambda x: x.__setitem__((0, 7), 1.0),
    lambda x: x.__setitem__((slice(None), [4]), 1.0),
]


@pytest.mark.parametrize("index", range(len(INDEX_ERRORS)))
def test_index_errors_are_worded_as_torchs(index):
    same(lambda m: INDEX_ERRORS[index](m.arange(6.0).reshape(2, 3)))


def test_gather_out_of_range_fails_like_torch():
    same(lambda m: m.arange(6.0).reshape(2, 3).gather(1, m.tensor([[3]])))


# --- text: format, AttributeError ----------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["", ".4f", ".2e", ">12"])
@pytest.mark.parametrize("make", [
    lambda m: m.tensor(0.1), lambda m: m.tensor(0.1, dtype=m.float64), lambda m: m.tensor(3),
    lambda m: m.tensor(True), lambda m: m.tensor(0.1, requires_grad=True), lambda m: m.tensor([0.1]),
    lambda m: m.nn.Parameter(m.tensor(0.1)), lambda m: (m.tensor(2.0, requires_grad=True) * 3),
])
def test_format_of_a_tensor_matches_torch(make, spec):
    def program(m):
        t = make(m)
        try:
            return format(t, spec), f"{t}"
        except TypeError as exc:  # a spec for a tensor of several elements: Python's TypeError
            return str(exc).replace("autograd_core", "torch")

    same(program)


def test_an_unknown_attribute_is_pytorchs_attribute_error():
    same(lambda m: m.ones(2).no_such_thing)
    same(lambda m: m.nn.Parameter(m.ones(2)).no_such_thing)
    same(lambda m: hasattr(m.ones(2), "no_such_thing"))


# --- arange: the same bits -------------------------------------------------------------------------------------------
def bits(t):
    return t.numpy().view(np.uint8).tolist(), str(t.dtype)


@settings(max_examples=150, deadline=None)
@given(start=st.one_of(st.integers(-20, 20), st.floats(-100, 100, allow_nan=False)),
       step=st.one_of(st.sampled_from([0.1, 0.01, 0.3, -0.1, 2.5, 1e-3]), st.floats(1e-3, 10)),
       n=st.integers(0, 600), dtype=st.sampled_from([None, "float32", "float64"]))
@example(start=-0.0, step=-0.1, n=5, dtype=None)  # a start of -0.0 keeps its sign (once found by hypothesis)
@example(start=-0.0, step=0.1, n=40, dtype="float64")
def test_arange_with_a_float_step_has_pytorchs_bits(start, step, n, dtype):
    import autograd_core

    end = start + step * n + step / 2
    results = []
    for m in (autograd_core, torch):
        kwargs = {} if dtype is None else {"dtype": getattr(m, dtype)}
        results.append(bits(m.arange(start, end, step, **kwargs)))
    assert results[0] == results[1]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("n", [32768, 32769, 50001, 100003])
def test_arange_split_between_threads_has_pytorchs_bits(n, threads):
    import autograd_core

    before = (torch.get_num_threads(), autograd_core.get_num_threads())
    try:
        torch.set_num_threads(threads)
        autograd_core.set_num_threads(threads)
        assert bits(autograd_core.arange(0, n * 0.1, 0.1)) == bits(torch.arange(0, n * 0.1, 0.1))
        assert bits(autograd_core.arange(-3.0, n * 0.07, 0.07, dtype=autograd_core.float64)) == \
            bits(torch.arange(-3.0, n * 0.07, 0.07, dtype=torch.float64))
    finally:
        torch.set_num_threads(before[0])
        autograd_core.set_num_threads(before[1])


# --- warnings: PyTorch's text, suffix included, once where PyTorch warns once ------------------------------------------
WARNING_SCRIPT = """
import warnings
warnings.simplefilter("always")
import torch
x = torch.ones(2, 3, requires_grad=True)
for _ in range(2):
    torch.ones(2, 3, 4).T
    torch.meshgrid(torch.ones(2), torch.ones(3))
    float(x.sum())
    (x * 2).grad
    (x * x).sum().backward(create_graph=True)
    torch.add(torch.ones(2), 1, out=torch.ones(3))
"""


def test_warnings_carry_pytorchs_suffix_and_show_as_often_as_pytorchs(tmp_path):
    script = tmp_path / "warns.py"
    script.write_text(WARNING_SCRIPT)

    def warnings_of(*command):
        """stderr without where each warning points (PyTorch points some into its own files, the
        engine to the script's line) and without the echoed source lines."""
        done = subprocess.run([sys.executable, *command, str(script)], capture_output=True, text=True, cwd=tmp_path,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        lines = [line.split(": ", 1)[1] if "Warning: " in line else line for line in done.stderr.splitlines()]
        return "\n".join(line for line in lines if not line.startswith("  "))

    ours = warnings_of("-m", "autograd_core.run")
    assert ours == warnings_of()
    assert ours.count("Warning: ") == 8 and ours.count("(Triggered internally at /__w/pytorch/pytorch/") == 8


# --- torch.Tensor(t): an alias of t (as legacy tutorials use it: r = torch.Tensor(t); r.zero_() zeroes t) ------
def test_legacy_constructor_of_a_tensor_is_an_alias_of_it_like_torch():
    def program(m):
        t = m.zeros(2, 3)
        r = m.Tensor(t)
        r.resize_(3, 2)
        r.fill_(5)
        x = m.ones(2, requires_grad=True)
        y = m.Tensor(x)
        y.sum().backward()
        return t, r, y, x.grad, m.Tensor(m.arange(3)), m.Tensor(m.tensor([1.0, 2.0], dtype=m.float64)), m.Tensor(m.tensor(3.0))

    same(program)


# --- x.cuda(i) on a machine without GPUs (d2l's use-gpu page: Z = X.cuda(1)) ---------------------------------
@pytest.mark.parametrize("args, kwargs", [((), {}), ((0,), {}), ((1,), {}), ((), {"device": 1}), ((-1,), {}),
                                          (("cuda:1",), {}), ((None,), {})], ids=str)
def test_cuda_without_a_gpu_fails_like_torch(args, kwargs):
    same(lambda m: m.ones(2).cuda(*args, **kwargs))


# --- gradcheck on float32 inputs of several elements: PyTorch's warning, naming the right input ---------
def test_gradcheck_warns_about_each_float32_input_of_any_size_like_torch():
    def program(m):
        a = m.tensor([0.5, 1.0, 2.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([[0.5, -1.0], [2.0, 3.0]], requires_grad=True)  # float32, second input
        return m.tensor(m.autograd.gradcheck(lambda s, t: (s.sum() * t).sin(), (a, b), eps=1e-2, atol=1e-1))

    same(program)


# --- gradcheck and gradgradcheck take their inputs as a list too (PyTorch turns a list into a tuple) ----
def test_gradcheck_takes_a_list_of_inputs_like_torch():
    def program(m):
        a = m.tensor([0.5, 1.0], dtype=m.float64, requires_grad=True)
        b = m.tensor([2.0, -1.0], dtype=m.float64, requires_grad=True)
        return m.tensor([m.autograd.gradcheck(lambda s, t: s * t.sin(), [a, b]),
                         m.autograd.gradgradcheck(lambda s, t: s * t.sin(), [a, b])])

    same(program)


# --- a failing gradcheck prints its Jacobians as PyTorch does: numerical in the output's dtype, analytical in the input's
@pytest.mark.parametrize("input_dtype, output_dtype", [("float32", "float32"), ("float32", "float64"),
                                                       ("float64", "float32"), ("float64", "float64")])
def test_a_failing_gradcheck_prints_its_jacobians_in_pytorchs_dtypes(input_dtype, output_dtype):
    def program(m):
        class ForgetsTheTwo(m.autograd.Function):  # d(x*x)/dx given as x
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return grad * x

        x = m.tensor([1.0, 2.0], dtype=getattr(m, input_dtype), requires_grad=True)
        return m.autograd.gradcheck(lambda t: ForgetsTheTwo.apply(t).to(getattr(m, output_dtype)), (x,))

    same(program)
