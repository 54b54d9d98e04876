"""Pooling: ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d`` and their modules.

Each slides a window over the last two dims, as a convolution does (``conv.windows``), and
keeps the largest number or the mean. The gradients are each other's mirror images: the
gradient of taking the largest is putting the output's gradient back where the largest came
from (``MaxPool2DWithIndicesBackwardBackward0``, whose own gradient is picking from those same
places again); the gradient of a mean is spreading the output's gradient evenly over the
window, whose own gradient is the mean again. So every backward is a recorded operation and
second derivatives come free. The graph nodes are named as PyTorch names them.
"""
from __future__ import annotations

import numpy as np

from .. import _speed
from ..function import Op
from .conv import _pair, _sizes, add_windows, windows
from .module import Module


def _pool_geometry(input, kernel_size, stride, padding, dilation, ceil_mode):
    """Check a pooling's arguments as PyTorch does; return kernel, stride, pads (top, bottom,
    left, right: ceil mode pads the end so the last, partial window fits) and output size."""
    if input.ndim not in (3, 4) or 0 in input.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{_sizes(input.shape)}")
    kernel = _pair(kernel_size)
    stride = kernel if stride is None or stride == [] or stride == () else _pair(stride)
    padding, dilation = _pair(padding), _pair(dilation)
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    h, w = input.shape[-2:]
    sizes, pads = [], []
    for size, k, s, p, d in zip((h, w), kernel, stride, padding, dilation):
        span = size + 2 * p - d * (k - 1) - 1
        n = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (n - 1) * s >= size + p:  # the last window must start inside the input or left padding
            n -= 1
        sizes.append(n)
        pads += [p, max(p, (n - 1) * s + d * (k - 1) + 1 - size - p)]
    c = input.shape[-3]
    if sizes[0] < 1 or sizes[1] < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{sizes[0]}x{sizes[1]}). "
                           "Output size is too small")
    return kernel, stride, tuple(pads), padding, dilation, tuple(sizes)


# -- max pooling ------------------------------------------------------------------------------

def _largest(x, kernel, stride, pads, dilation, out_hw):
    """The largest number of each window, and where it was (flat, in its unpadded H*W plane)."""
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    view = windows(x, kernel, stride, pads, dilation, out_hw, fill)  # (..., Ho, Wo, kh, kw)
    flat = view.reshape(*view.shape[:-2], kernel[0] * kernel[1])
    pick = flat.argmax(-1)  # the first largest, as PyTorch keeps the first (only a greater one replaces it)
    out = np.take_along_axis(flat, pick[..., None], -1)[..., 0]
    rows = np.arange(out_hw[0])[:, None] * stride[0] - pads[0] + (pick // kernel[1]) * dilation[0]
    cols = np.arange(out_hw[1])[None, :] * stride[1] - pads[2] + (pick % kernel[1]) * dilation[1]
    return np.ascontiguousarray(out), (rows * x.shape[-1] + cols).astype(np.int64)


class MaxPool2DWithIndicesBackward0(Op):
    """The largest number of each window (found by ``_largest``, which also says where it was)."""

    @staticmethod
    def forward(ctx, input, largest):
        out, ctx.indices = largest
        ctx.in_shape = input._data.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        return (MaxPool2DWithIndicesBackwardBackward0.apply(grad, indices=ctx.indices, in_shape=ctx.in_shape),)


class MaxPool2DWithIndicesBackwardBackward0(Op):
    """Each gradient added at the place its window's largest number came from."""

    @staticmethod
    def forward(ctx, grad, indices, in_shape):
        ctx.indices, ctx.in_shape = indices, in_shape
        plane = in_shape[-2] * in_shape[-1]
        planes = int(np.prod(in_shape[:-2]))
        where = indices.reshape(planes, -1) + (np.arange(planes) * plane)[:, None]
        sums = np.bincount(where.ravel(), weights=grad._data.ravel(), minlength=planes * plane)
        return sums.astype(grad._data.dtype).reshape(in_shape)

    @staticmethod
    def backward(ctx, grad):
        lead = ctx.in_shape[:-2]
        index = ctx.indices.reshape(*lead, -1)
        picked = grad.reshape(*lead, -1).gather(-1, grad._make(index))
        return (picked.reshape(ctx.indices.shape),)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The largest number of each ``kernel_size`` window (moved by ``stride``, default the kernel)."""
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    kernel, stride, pads, _, dilation, out_hw = _pool_geometry(input, kernel_size, stride, padding, dilation,
                                                               ceil_mode)
    largest = _largest(input._data, kernel, stride, pads, dilation, out_hw)
    out = MaxPool2DWithIndicesBackward0.apply(input, largest=largest)
    return (out, out._make(largest[1])) if return_indices else out


# -- average pooling ---------------------------------------------------------------------------

def _divisors(in_hw, kernel, stride, padding, out_hw, count_include_pad, divisor_override):
    """What each window's sum is divided by (PyTorch's avg_pool2d kernel): the window's size cut
    to the padded input, or only the real elements in it, or ``divisor_override``."""
    if divisor_override:
        return np.full(out_hw, divisor_override)
    counts = []
    for size, k, s, p, n in zip(in_hw, kernel, stride, padding, out_hw):
        start = np.arange(n) * s - p
        end = np.minimum(start + k, size + p)
        whole = end - start
        real = np.minimum(end, size) - np.maximum(start, 0)
        counts.append(whole if count_include_pad else real)
    return counts[0][:, None] * counts[1][None, :]


class AvgPool2DBackward0(Op):
    """The mean of each window."""

    @staticmethod
    def forward(ctx, input, kernel, stride, pads, out_hw, divisors):
        ctx.geometry = (tuple(input._data.shape[-2:]), kernel, stride, pads, divisors)
        x = input._data
        view = windows(x, kernel, stride, pads, (1, 1), out_hw)
        sums = _speed.window_sums(x, view)
        sums = view.sum((-2, -1)) if sums is None else sums
        if x.dtype.kind == "f":
            return (sums / divisors.astype(x.dtype)).astype(x.dtype, copy=False)
        return np.trunc(sums / divisors).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        in_hw, kernel, stride, pads, divisors = ctx.geometry
        return (AvgPool2DBackwardBackward0.apply(grad, in_hw=in_hw, kernel=kernel, stride=stride, pads=pads,
                                                 divisors=divisors),)


class AvgPool2DBackwardBackward0(Op):
    """Each gradient spread evenly (divided by its window's divisor) over its window."""

    @staticmethod
    def forward(ctx, grad, in_hw, kernel, stride, pads, divisors):
        ctx.geometry = (kernel, stride, pads, divisors)
        g = grad._data / divisors.astype(grad._data.dtype)
        cols = np.broadcast_to(g[..., None, None, :, :], (*g.shape[:-2], *kernel, *g.shape[-2:]))
        return add_windows(cols, in_hw, kernel, stride, pads, (1, 1))

    @staticmethod
    def backward(ctx, grad):
        kernel, stride, pads, divisors = ctx.geometry
        return (AvgPool2DBackward0.apply(grad, kernel=kernel, stride=stride, pads=pads, out_hw=divisors.shape,
                                         divisors=divisors),)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """The mean of each ``kernel_size`` window (moved by ``stride``, default the kernel)."""
    if input.ndim < 3:
        input.size(-3)  # PyTorch's IndexError: Dimension out of range (...)
    kernel, stride, pads, padding, _, out_hw = _pool_geometry(input, kernel_size, stride, padding, 1, ceil_mode)
    divisors = _divisors(input.shape[-2:], kernel, stride, padding, out_hw, count_include_pad, divisor_override)
    return AvgPool2DBackward0.apply(input, kernel=kernel, stride=stride, pads=pads, out_hw=out_hw, divisors=divisors)


# -- adaptive average pooling ------------------------------------------------------------------

def _bins(size, n):
    """PyTorch's adaptive windows along one side: from floor(i*size/n) to ceil((i+1)*size/n)."""
    return [(i * size // n, -(-(i + 1) * size // n)) for i in range(n)]


class AdaptiveAvgPool2DBackward0(Op):
    """The mean of each of ``out_hw`` windows that together cover the input."""

    @staticmethod
    def forward(ctx, input, out_hw):
        x = input._data
        ctx.in_hw = x.shape[-2:]
        out = np.empty((*x.shape[:-2], *out_hw), x.dtype)
        for i, (h0, h1) in enumerate(_bins(x.shape[-2], out_hw[0])):
            for j, (w0, w1) in enumerate(_bins(x.shape[-1], out_hw[1])):
                out[..., i, j] = x[..., h0:h1, w0:w1].sum((-2, -1)) / x.dtype.type((h1 - h0) * (w1 - w0))
        return out

    @staticmethod
    def backward(ctx, grad):
        return (AdaptiveAvgPool2DBackwardBackward0.apply(grad, in_hw=ctx.in_hw),)


class AdaptiveAvgPool2DBackwardBackward0(Op):
    @staticmethod
    def forward(ctx, grad, in_hw):
        g = grad._data
        ctx.out_hw = g.shape[-2:]
        out = np.zeros((*g.shape[:-2], *in_hw), g.dtype)
        for i, (h0, h1) in enumerate(_bins(in_hw[0], g.shape[-2])):
            for j, (w0, w1) in enumerate(_bins(in_hw[1], g.shape[-1])):
                out[..., h0:h1, w0:w1] += (g[..., i, j] / g.dtype.type((h1 - h0) * (w1 - w0)))[..., None, None]
        return out

    @staticmethod
    def backward(ctx, grad):
        return (AdaptiveAvgPool2DBackward0.apply(grad, out_hw=ctx.out_hw),)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a given output size (``(1, 1)``: the mean of each channel)."""
    input.size(-2)  # PyTorch's IndexError for fewer than 2 dims
    size = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    size = tuple(input.shape[-2 + i] if s is None else s for i, s in enumerate(size))
    if size == (1, 1):  # PyTorch takes the mean here (MeanBackward1)
        return input.mean((-1, -2), keepdim=True)
    return AdaptiveAvgPool2DBackward0.apply(input, out_hw=size)


# -- the modules -------------------------------------------------------------------------------

class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                          self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                          self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"

