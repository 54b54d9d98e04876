"""Tests for autograd_core.printing: tensors must print exactly like PyTorch.

Three kinds of tests:
  * literal expectations, which run without torch;
  * hand-picked arrays compared with real torch's repr;
  * hypothesis property tests over random shapes, dtypes, values and print
    options, compared with real torch's repr.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograd_core import printing
from autograd_core.printing import dtype_suffix, format_tensor, printoptions, set_printoptions
from engine_helpers import import_torch


@pytest.fixture(autouse=True)
def _default_printoptions():
    """Every test starts and ends with default options, in both libraries."""
    _reset_options()
    yield
    _reset_options()


def _reset_options():
    set_printoptions(profile="default")
    try:
        import torch
    except ImportError:
        return
    torch.set_printoptions(profile="default")


def torch_repr(torch, array, suffix_kind="none"):
    """repr of the torch tensor holding the same values as `array`.

    suffix_kind 'requires_grad' makes a leaf that requires grad, 'grad_fn'
    the result of `leaf * 1` (same values, grad_fn=<MulBackward0>).
    """
    t = torch.from_numpy(np.array(array, order="C"))  # (ascontiguousarray makes 0-d 1-d)
    if suffix_kind != "none":
        t = t.clone().requires_grad_(True)
    if suffix_kind == "grad_fn":
        t = t * 1
    return repr(t)


SUFFIXES = {
    "none": [],
    "requires_grad": ["requires_grad=True"],
    "grad_fn": ["grad_fn=<MulBackward0>"],
}


def f32(values):
    return np.array(values, dtype=np.float32)


# ---------------------------------------------------------------------------
# Literal expectations (no torch needed)
# ---------------------------------------------------------------------------

LITERAL_CASES = [
    (f32(27.0), [], "tensor(27.)"),
    (f32(1.1), [], "tensor(1.1000)"),
    (f32(-0.0), [], "tensor(-0.)"),
    (f32(float("nan")), [], "tensor(nan)"),
    (f32([0.0, 4.0, 8.0, 12.0]), [], "tensor([ 0.,  4.,  8., 12.])"),
    (f32([[4.5, 4.5], [4.5, 4.5]]), [], "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"),
    (
        f32([[256.0, 512.0], [768.0, 1024.0]]),
        ["grad_fn=<MulBackward0>"],
        "tensor([[ 256.,  512.],\n        [ 768., 1024.]], grad_fn=<MulBackward0>)",
    ),
    (f32([1e8, 1.0]), [], "tensor([1.0000e+08, 1.0000e+00])"),
    (f32([1.0, 2.5]), ["requires_grad=True"], "tensor([1.0000, 2.5000], requires_grad=True)"),
    (np.array([1.5, 2.0]), [], "tensor([1.5000, 2.0000], dtype=torch.float64)"),
    (np.array([1, -20]), [], "tensor([  1, -20])"),
    (np.array([1, 2], dtype=np.int32), [], "tensor([1, 2], dtype=torch.int32)"),
    (np.array([True, False]), [], "tensor([ True, False])"),
    (f32([]), [], "tensor([])"),
    (np.zeros((0, 3), dtype=np.float32), [], "tensor([], size=(0, 3))"),
    (np.array([], dtype=np.int64), [], "tensor([], dtype=torch.int64)"),
    (f32([float("nan"), float("inf"), -float("inf"), 1.0]), [], "tensor([nan, inf, -inf, 1.])"),
    (
        np.arange(2 * 2 * 2, dtype=np.float32).reshape(2, 2, 2),
        [],
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])",
    ),
    (np.arange(1001), [], "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
]


@pytest.mark.parametrize("array, suffixes, expected", LITERAL_CASES)
def test_literal(array, suffixes, expected):
    assert format_tensor(array, suffixes) == expected


def test_long_row_wraps_with_indent():
    text = format_tensor(np.arange(30, dtype=np.float32) / 10)
    lines = text.split("\n")
    assert lines[0] == "tensor([0.0000, 0.1000, 0.2000, 0.3000, 0.4000, 0.5000, 0.6000, 0.7000, 0.8000,"
    # continuation lines start under the first number, one column after '['
    assert all(line[:8] == " " * 8 and line[8].isdigit() for line in lines[1:])
    assert all(len(line) <= 80 for line in lines)


def test_suffix_moves_to_new_line_when_too_long():
    text = format_tensor(np.arange(9, dtype=np.float64) + 0.5, ["requires_grad=True"])
    assert text.endswith(",\n       dtype=torch.float64, requires_grad=True)")


def test_array_derived_suffixes_are_not_repeated():
    array = np.array([1.5, 2.0])
    assert format_tensor(array, ["dtype=torch.float64", "requires_grad=True"]) == format_tensor(
        array, ["requires_grad=True"]
    )


def test_dtype_suffix():
    assert dtype_suffix(np.dtype(np.float32)) is None
    assert dtype_suffix(np.dtype(np.int64)) is None
    assert dtype_suffix(np.dtype(np.bool_)) is None
    assert dtype_suffix(np.dtype(np.float64)) == "dtype=torch.float64"
    assert dtype_suffix(np.dtype(np.float16)) == "dtype=torch.float16"
    assert dtype_suffix(np.dtype(np.int32)) == "dtype=torch.int32"
    assert dtype_suffix(np.dtype(np.int16)) == "dtype=torch.int16"
    assert dtype_suffix(np.dtype(np.int8)) == "dtype=torch.int8"
    assert dtype_suffix(np.dtype(np.uint8)) == "dtype=torch.uint8"
    with pytest.raises(TypeError):
        dtype_suffix(np.dtype(np.complex64))


def test_set_printoptions_profiles_and_context_manager():
    set_printoptions(profile="short")
    expected = dict(precision=2, threshold=1000, edgeitems=2, linewidth=80, sci_mode=None)
    assert printing.get_printoptions() == expected
    assert format_tensor(f32([1.12345])) == "tensor([1.12])"
    set_printoptions(profile="full")
    assert printing.PRINT_OPTS.threshold == math.inf
    set_printoptions(profile="default")
    with printoptions(threshold=5):
        assert format_tensor(np.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    assert format_tensor(np.arange(10)) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"
    with printoptions(sci_mode=True):
        assert format_tensor(f32([1.5])) == "tensor([1.5000e+00])"
    assert printing.PRINT_OPTS.sci_mode is None


# ---------------------------------------------------------------------------
# Hand-picked arrays compared with torch
# ---------------------------------------------------------------------------

_rng = np.random.default_rng(0)
NAN, INF = float("nan"), float("inf")

TORCH_CASES = {
    # 0-d
    "scalar_int_float": f32(27.0),
    "scalar_float": f32(1.1),
    "scalar_nan": f32(NAN),
    "scalar_neg_inf": f32(-INF),
    "scalar_neg_zero": f32(-0.0),
    "scalar_big": f32(1e8),
    "scalar_tiny": f32(1e-5),
    "scalar_f64": np.array(2.5),
    "scalar_int": np.array(5),
    "scalar_int8": np.array(-5, dtype=np.int8),
    "scalar_bool": np.array(True),
    # 1-d floats
    "arange_step4": f32([0, 4, 8, 12]),
    "sci_big": f32([1e8, 1.0]),
    "sci_ratio": f32([1.0, 2000.0]),
    "no_sci_ratio_1000": f32([1.0, 1000.0]),
    "sci_small": f32([1e-5, 1.0]),
    "nonfinite_mixed": f32([NAN, INF, -INF, 1.5]),
    "nonfinite_int_mode": f32([NAN, 1.0, -2.0]),
    "nonfinite_only": f32([NAN, INF]),
    "nonfinite_sci": f32([NAN, 1e10, -1e-10]),
    "zeros": np.zeros(5, dtype=np.float32),
    "neg_zero_int_mode": f32([-0.0, 0.0, 3.0]),
    "neg_zero_fixed": f32([-0.0, 1.5]),
    "negative_fixed": f32([-1.25, 3.5, 100.125]),
    "rounding": f32([0.00005, 0.00015, 1.23456789]),
    "wrap_fixed": np.arange(30, dtype=np.float32) / 10,
    "wrap_sci": np.geomspace(1e-6, 1e6, 25).astype(np.float32),
    "float16": np.array([0.1, 1.5, -2.25, 65504.0], dtype=np.float16),
    "float16_sci": np.array([1e-4, 3.0, 60000.0], dtype=np.float16),
    "float64_precise": np.array([1 / 3, 2 / 3, 1e-3]),
    "summarized_1d": np.arange(1001, dtype=np.float32),
    "summarized_hidden_big": np.concatenate([np.ones(500), [1e12], np.ones(500)]).astype(np.float32),
    # 1-d ints and bools
    "int_wrap": np.arange(100),
    "int_summarized": np.arange(2000),
    "int64_extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
    "int32": np.array([-7, 12, 300], dtype=np.int32),
    "int16": np.array([-32768, 32767], dtype=np.int16),
    "int8": np.array([-128, 0, 127], dtype=np.int8),
    "uint8": np.array([0, 7, 255], dtype=np.uint8),
    "bools": np.array([True, False, True]),
    "bools_wrap": _rng.random(40) < 0.5,
    # 2-d and more
    "matrix_4_5": np.full((2, 2), 4.5, dtype=np.float32),
    "matrix_int_mode": f32([[256, 512], [768, 1024]]),
    "matrix_randn": _rng.standard_normal((4, 6)).astype(np.float32),
    "matrix_wide": _rng.standard_normal((3, 30)).astype(np.float32),
    "matrix_summarized": _rng.standard_normal((50, 50)).astype(np.float32),
    "matrix_long_rows_summarized": _rng.standard_normal((2, 600)),
    "matrix_bool": _rng.random((3, 4)) < 0.5,
    "cube": _rng.standard_normal((2, 3, 4)).astype(np.float32),
    "cube_summarized": _rng.integers(-50, 50, (11, 10, 10)).astype(np.int32),
    "hyper": np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5),
    "hyper_summarized": _rng.standard_normal((7, 2, 10, 10)).astype(np.float32),
    "noncontiguous": np.arange(12, dtype=np.float32).reshape(3, 4).T,
    # empty
    "empty_f32": f32([]),
    "empty_f64": np.array([], dtype=np.float64),
    "empty_int": np.array([], dtype=np.int64),
    "empty_bool": np.array([], dtype=np.bool_),
    "empty_0x3": np.zeros((0, 3), dtype=np.float32),
    "empty_3x0_int8": np.zeros((3, 0), dtype=np.int8),
    "empty_2x0x4": np.zeros((2, 0, 4), dtype=np.float16),
}


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_hand_picked_matches_torch(name):
    torch = import_torch()
    array = TORCH_CASES[name]
    assert format_tensor(array) == torch_repr(torch, array)


@pytest.mark.parametrize("name", [n for n in sorted(TORCH_CASES) if TORCH_CASES[n].dtype.kind == "f"])
@pytest.mark.parametrize("suffix_kind", ["requires_grad", "grad_fn"])
def test_hand_picked_suffixes_match_torch(name, suffix_kind):
    torch = import_torch()
    array = TORCH_CASES[name]
    assert format_tensor(array, SUFFIXES[suffix_kind]) == torch_repr(torch, array, suffix_kind)


@pytest.mark.parametrize(
    "options",
    [
        dict(precision=2),
        dict(precision=0),
        dict(precision=8),
        dict(sci_mode=True),
        dict(sci_mode=False),
        dict(threshold=5),
        dict(threshold=5, edgeitems=1),
        dict(threshold=5, edgeitems=0),
        dict(edgeitems=0),
        dict(linewidth=30),
        dict(linewidth=5),
        dict(profile="short"),
        dict(profile="full"),
    ],
    ids=repr,
)
def test_printoptions_match_torch(options):
    torch = import_torch()
    set_printoptions(**options)
    torch.set_printoptions(**options)
    for name in ["sci_big", "wrap_fixed", "matrix_summarized", "cube", "int_wrap", "float64_precise",
                 "nonfinite_mixed", "zeros", "empty_0x3", "scalar_float", "summarized_1d"]:
        array = TORCH_CASES[name]
        suffixes = SUFFIXES["grad_fn"] if array.dtype.kind == "f" else []
        kind = "grad_fn" if suffixes else "none"
        assert format_tensor(array, suffixes) == torch_repr(torch, array, kind), name


# ---------------------------------------------------------------------------
# Property tests: random arrays compared with torch
# ---------------------------------------------------------------------------

DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_]

small_shapes = st.lists(st.integers(0, 6), min_size=0, max_size=4)
# Shapes above the default threshold of 1000 elements, to exercise '...'.
large_shapes = st.one_of(
    st.integers(1001, 3000).map(lambda n: [n]),
    st.lists(st.integers(1, 45), min_size=2, max_size=4).filter(lambda s: 1000 < math.prod(s) <= 20000),
)
shapes = st.one_of(small_shapes, small_shapes, large_shapes)


@st.composite
def arrays(draw):
    """A random array: shape, dtype, value style and special values."""
    shape = tuple(draw(shapes))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    if dtype == np.bool_:
        return rng.random(shape) < draw(st.floats(0, 1))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        limit = draw(st.sampled_from([10, 1000, int(info.max)]))
        low, high = max(int(info.min), -limit), min(int(info.max), limit)
        return rng.integers(low, high, size=shape, dtype=dtype, endpoint=True)

    style = draw(st.sampled_from(["normal", "integral", "uniform", "log"]))
    exponent = draw(st.integers(-12, 12))
    if style == "normal":
        values = rng.standard_normal(shape) * 10.0**exponent
    elif style == "integral":
        values = np.round(rng.standard_normal(shape) * 10.0 ** (exponent % 6))
    elif style == "uniform":
        values = rng.uniform(0, 10.0**exponent, shape)
    else:  # many orders of magnitude at once
        powers = rng.uniform(-exponent % 8 - 6, exponent % 8, shape)
        values = np.sign(rng.standard_normal(shape)) * 10.0**powers
    if draw(st.booleans()):
        specials = np.array([0.0, -0.0, NAN, INF, -INF])
        mask = rng.random(shape) < 0.2
        values = np.where(mask, rng.choice(specials, size=shape), values)
    with np.errstate(all="ignore"):  # float16 overflow to inf is fine
        return np.asarray(values).astype(dtype)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(array=arrays(), suffix_kind=st.sampled_from(["none", "requires_grad", "grad_fn"]))
def test_random_arrays_match_torch(array, suffix_kind):
    torch = import_torch()
    if array.dtype.kind != "f":
        suffix_kind = "none"  # only float tensors can require grad
    assert format_tensor(array, SUFFIXES[suffix_kind]) == torch_repr(torch, array, suffix_kind)


print_options = st.fixed_dictionaries(
    {},
    optional={
        "precision": st.integers(0, 8),
        "threshold": st.integers(0, 300),
        "edgeitems": st.integers(0, 4),
        "linewidth": st.integers(10, 160),
        "sci_mode": st.sampled_from([None, True, False]),
        "profile": st.sampled_from(["default", "short", "full"]),
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(array=arrays(), options=print_options, suffix_kind=st.sampled_from(["none", "grad_fn"]))
def test_random_printoptions_match_torch(array, options, suffix_kind):
    torch = import_torch()
    if array.dtype.kind != "f":
        suffix_kind = "none"
    try:
        set_printoptions(**options)
        torch.set_printoptions(**options)
        assert format_tensor(array, SUFFIXES[suffix_kind]) == torch_repr(torch, array, suffix_kind)
    finally:
        _reset_options()
