"""The value round trip between the student's process and the grader is exact (grader/plain_values.py).

What ``encode`` writes in the student's process crosses as JSON and ``decode`` rebuilds it in the
grader: every array keeps its dtype, its shape (0-d stays 0-d) and its elements, whatever its
layout (views, transposes, negative strides, other byte orders).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.plain_values import DTYPES, decode, encode

settings.register_profile("values", max_examples=150, deadline=None)
settings.load_profile("values")


def crossed(value):
    """What the grader receives for ``value``: encoded, sent as a JSON line, decoded."""
    return decode(json.loads(json.dumps(encode(value))))


def same_array(got, expected) -> bool:
    return (isinstance(got, np.ndarray) and got.dtype == expected.dtype.newbyteorder("=")
            and got.shape == expected.shape and np.array_equal(got, expected, equal_nan=expected.dtype.kind in "fc"))


arrays = st.sampled_from(sorted(DTYPES)).flatmap(
    lambda dtype: hnp.arrays(np.dtype(dtype), hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)))


@given(arrays)
def test_any_array_crosses_with_its_dtype_shape_and_values(array):
    assert same_array(crossed(array), array)


@given(arrays, st.data())
def test_views_transposes_and_negative_strides_cross_as_their_elements(array, data):
    view = array.T
    if array.ndim:
        steps = tuple(slice(None, None, data.draw(st.sampled_from([1, 2, -1, -2]))) for _ in range(array.ndim))
        view = array[steps].T
    assert same_array(crossed(view), np.ascontiguousarray(view) if view.ndim else view)


@given(st.sampled_from(sorted(DTYPES)), st.sampled_from(["<", ">"]))
def test_byte_order_does_not_change_the_values(dtype, order):
    array = np.arange(6).reshape(2, 3).astype(np.dtype(dtype).newbyteorder(order))
    assert same_array(crossed(array), array)


@pytest.mark.parametrize("value", [np.array(2.5), np.array(3, dtype=np.int8), np.array(True), np.array(1 + 2j)])
def test_a_zero_d_array_stays_zero_d(value):
    got = crossed(value)
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == value.dtype and got == value


def test_a_zero_d_tensor_arrives_as_a_zero_d_array():
    import autograd_core as torch

    got = crossed(torch.tensor(1.5, dtype=torch.float64))
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.float64 and float(got) == 1.5


def test_numpy_scalars_stay_scalars():
    for value in (np.float32(1.25), np.int64(-3), np.bool_(True)):
        got = crossed(value)
        assert type(got) is type(value) and got == value
