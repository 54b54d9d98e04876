"""The shortcuts of ``autograd_core/_speed.py`` give the plain path's bits, not only close numbers.

(The comparisons with PyTorch run with the shortcuts on and off, within PyTorch's rounding; here
the two ways are compared with each other, exactly, where a shortcut reorders NumPy's work.)"""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import autograd_core as torch
from autograd_core import _speed


def both_ways(compute):
    before = _speed.enabled
    try:
        _speed.enabled = True
        fast = compute()
        _speed.enabled = False
        plain = compute()
    finally:
        _speed.enabled = before
    return fast, plain


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_average_pooling_sums_its_windows_in_numpys_order(data):
    kernel = (data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9)))
    stride = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    padding = data.draw(st.integers(0, min(kernel) // 2))
    shape = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)),
             data.draw(st.integers(kernel[0], 18)), data.draw(st.integers(kernel[1], 18)))
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.float16]))
    x = torch.tensor((np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal(shape) * 100).astype(dtype))
    ceil_mode, count_include_pad = data.draw(st.booleans()), data.draw(st.booleans())

    def pooled():
        return torch.nn.functional.avg_pool2d(x, kernel, stride, padding, ceil_mode=ceil_mode,
                                              count_include_pad=count_include_pad).numpy()
    fast, plain = both_ways(pooled)
    assert np.array_equal(fast, plain, equal_nan=True)


def test_the_window_sums_shortcut_is_taken_for_lenets_pooling():
    x = np.ones((64, 6, 28, 28), np.float32)
    from autograd_core.nn.conv import windows
    assert _speed.window_sums(x, windows(x, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), (14, 14))) is not None


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_convolutions_weight_gradient_uses_the_columns_of_its_forward_to_the_bit(data):
    groups = data.draw(st.sampled_from([1, 2]))
    channels, out = 2 * groups, 2 * groups
    kernel = data.draw(st.integers(1, 3))
    size = data.draw(st.integers(kernel, 7))
    stride, padding, dilation = data.draw(st.integers(1, 2)), data.draw(st.integers(0, 1)), data.draw(st.integers(1, 2))
    if (size + 2 * padding - dilation * (kernel - 1) - 1) < 0:
        return
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = rng.standard_normal((2, channels, size, size)).astype(np.float32)
    w = rng.standard_normal((out, channels // groups, kernel, kernel)).astype(np.float32)

    def gradients():
        xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        y = torch.nn.functional.conv2d(xt, wt, stride=stride, padding=padding, dilation=dilation, groups=groups)
        (y * y).sum().backward(retain_graph=True)
        first = wt.grad.numpy().copy()
        wt.grad = None
        (y * y).sum().backward()  # (a second backward makes the columns again)
        return y.detach().numpy(), first, wt.grad.numpy(), xt.grad.numpy()
    fast, plain = both_ways(gradients)
    for a, b in zip(fast, plain):
        assert np.array_equal(a, b)
