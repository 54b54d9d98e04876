"""Convolution: ``nn.Conv2d``, ``nn.Conv1d``, ``F.conv2d``, ``F.conv1d``, with ``F.unfold``/``F.fold`` (im2col and col2im).

A convolution is a matrix product in disguise. ``unfold`` copies every window the kernel sees
into a column (im2col): an image (N, C, H, W) becomes (N, C*kh*kw, L), one column per output
position. Then the output is ``weight.view(O, C*kh*kw) @ columns``. ``fold`` (col2im) is the
way back: it adds each column into the window it came from, which is exactly the gradient of
``unfold``, and ``unfold`` is the gradient of ``fold``. So the backward formula of a convolution
is written with these two and matrix products, and a second derivative comes for free.

The numbers are PyTorch's up to float32 rounding (PyTorch's CPU convolution sums in another
order); the graph node is ``ConvolutionBackward0`` and the initial weights are PyTorch's bits.
A 1-d convolution is the 2-d one on signals of height 1 (N, C, 1, L), inside the same node.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import _speed, creation, grad_mode
from ..function import Op
from . import init
from .lazy import LazyModuleMixin
from .module import Module
from .parameter import Parameter, UninitializedParameter


def _pair(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x, x)


def _single(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _sizes(x):
    return "[" + ", ".join(str(s) for s in x) + "]"


def out_size(size, kernel, stride, pad_before, pad_after, dilation):
    """Positions of a window along one side: ``(size + pads - dilation*(kernel-1) - 1) // stride + 1``."""
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


# -- im2col and col2im on NumPy arrays (the leading dims are the batch and channels) ------------

def windows(x, kernel, stride, pads, dilation, out_hw, fill=0):
    """A view of shape (..., Ho, Wo, kh, kw) of ``x`` padded by ``pads`` = (top, bottom, left,
    right) with ``fill``: the window each output position sees."""
    if any(pads):
        width = [(0, 0)] * (x.ndim - 2) + [(pads[0], pads[1]), (pads[2], pads[3])]
        x = np.pad(x, width, constant_values=fill)
    span = [dilation[i] * (kernel[i] - 1) + 1 for i in range(2)]
    view = sliding_window_view(x, span, axis=(-2, -1))
    view = view[..., ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]
    return view[..., :out_hw[0], :out_hw[1], :, :]


def add_windows(cols, in_hw, kernel, stride, pads, dilation):
    """col2im: ``cols`` of shape (..., kh, kw, Ho, Wo) added into the windows they came from;
    returns (..., H, W) (the padding cut off again)."""
    *lead, kh, kw, ho, wo = cols.shape
    padded = np.zeros((*lead, in_hw[0] + pads[0] + pads[1], in_hw[1] + pads[2] + pads[3]), cols.dtype)
    for i in range(kh):
        for j in range(kw):
            top, left = i * dilation[0], j * dilation[1]
            padded[..., top:top + stride[0] * (ho - 1) + 1:stride[0],
                   left:left + stride[1] * (wo - 1) + 1:stride[1]] += cols[..., i, j, :, :]
    return padded[..., pads[0]:pads[0] + in_hw[0], pads[2]:pads[2] + in_hw[1]]


class Im2ColBackward0(Op):
    """``F.unfold``: (N, C, H, W) -> (N, C*kh*kw, L), every window as a column."""

    @staticmethod
    def forward(ctx, input, kernel, dilation, pads, stride):
        ctx.geometry = (tuple(input._data.shape[-2:]), kernel, dilation, pads, stride)
        x = input._data
        ho = out_size(x.shape[-2], kernel[0], stride[0], pads[0], pads[1], dilation[0])
        wo = out_size(x.shape[-1], kernel[1], stride[1], pads[2], pads[3], dilation[1])
        view = windows(x, kernel, stride, pads, dilation, (ho, wo))  # (N, C, Ho, Wo, kh, kw)
        n, c = x.shape[:2]
        return view.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kernel[0] * kernel[1], ho * wo)

    @staticmethod
    def backward(ctx, grad):
        in_hw, kernel, dilation, pads, stride = ctx.geometry
        return (Col2ImBackward0.apply(grad, in_hw=in_hw, kernel=kernel, dilation=dilation, pads=pads, stride=stride),)


class Col2ImBackward0(Op):
    """``F.fold``: (N, C*kh*kw, L) -> (N, C, H, W), each column added into its window."""

    @staticmethod
    def forward(ctx, input, in_hw, kernel, dilation, pads, stride):
        ctx.geometry = (kernel, dilation, pads, stride)
        ho = out_size(in_hw[0], kernel[0], stride[0], pads[0], pads[1], dilation[0])
        wo = out_size(in_hw[1], kernel[1], stride[1], pads[2], pads[3], dilation[1])
        n, ck, _ = input._data.shape
        cols = input._data.reshape(n, ck // (kernel[0] * kernel[1]), kernel[0], kernel[1], ho, wo)
        return add_windows(cols, in_hw, kernel, stride, pads, dilation)

    @staticmethod
    def backward(ctx, grad):
        kernel, dilation, pads, stride = ctx.geometry
        return (Im2ColBackward0.apply(grad, kernel=kernel, dilation=dilation, pads=pads, stride=stride),)


def _four(padding):
    p = _pair(padding)
    return (p[0], p[0], p[1], p[1])


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Every window of a (N, C, H, W) batch as a column: (N, C*kh*kw, L)."""
    if input.ndim != 4:
        raise NotImplementedError(f"Input Error: Only 4D input Tensors are supported (got {input.ndim}D)")
    return Im2ColBackward0.apply(input, kernel=_pair(kernel_size), dilation=_pair(dilation), pads=_four(padding),
                                 stride=_pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The columns of ``unfold`` added back into an image of ``output_size``: (N, C, H, W)."""
    if input.ndim != 3:
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.ndim}D)")
    return Col2ImBackward0.apply(input, in_hw=_pair(output_size), kernel=_pair(kernel_size), dilation=_pair(dilation),
                                 pads=_four(padding), stride=_pair(stride))


# -- the convolution ------------------------------------------------------------------------

class ConvolutionBackward0(Op):
    """``conv2d(input, weight, bias)``: im2col, then one matrix product per group. ``conv1d``'s
    signals (N, C, L) are computed as images of height 1 (its geometry comes in 2-d form).

    ``conv_transpose2d`` is the same node with ``transposed``: its output is what the input's
    gradient of a ``conv2d`` with the same weight would be (``input_gradient``, here with the given
    input in the place of the output's gradient), so the two share their code and are each other's
    backward: the gradient of a transposed convolution's input is a ``conv2d``."""

    @staticmethod
    def forward(ctx, input, weight, bias, stride, pads, dilation, groups, transposed=False, out_hw=None):
        ctx.save_for_backward(input, weight)
        ctx.geometry = (stride, pads, dilation, groups)
        ctx.transposed = transposed
        x, w, b = input._data, weight._data, None if bias is None else bias._data
        if transposed:
            with grad_mode.no_grad():
                out = input_gradient(input, weight, out_hw, stride, pads, dilation, groups)._data
            return out if b is None else out + b.reshape(-1, 1, 1)
        if x.ndim == 3:  # conv1d
            return np.ascontiguousarray(_convolve(x[:, :, None, :], w[:, :, None, :], b, stride, pads, dilation,
                                                  groups)[:, :, 0, :])
        return _convolve(x, w, b, stride, pads, dilation, groups, kept_for=ctx)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        if ctx.transposed:
            return ConvolutionBackward0._backward_transposed(ctx, input, weight, grad)
        if input.ndim == 3:  # conv1d: the 2-d formula on height 1, and back to signals
            grad_input, grad_weight, grad_bias = ConvolutionBackward0._backward(
                ctx, input.unsqueeze(2), weight.unsqueeze(2), grad.unsqueeze(2))
            return (None if grad_input is None else grad_input.squeeze(2),
                    None if grad_weight is None else grad_weight.squeeze(2), grad_bias)
        return ConvolutionBackward0._backward(ctx, input, weight, grad)

    @staticmethod
    def _backward(ctx, input, weight, grad):
        stride, pads, dilation, groups = ctx.geometry
        need_input, need_weight, need_bias = ctx.needs_input_grad
        grad_input = grad_weight = grad_bias = None
        if need_input:
            grad_input = input_gradient(grad, weight, tuple(input.shape[-2:]), stride, pads, dilation, groups)
        if need_weight:
            grad_weight = weight_gradient(input, grad, tuple(weight.shape[-2:]), stride, pads, dilation, groups,
                                          columns=_speed.kept_columns(ctx))  # (forward's, when no graph is made)
        if need_bias:
            grad_bias = grad.sum((0, 2, 3))
        return grad_input, grad_weight, grad_bias

    @staticmethod
    def _backward_transposed(ctx, input, weight, grad):
        """The output was ``input_gradient(input, weight)``: its input's gradient is a convolution of
        ``grad``, its weight's the weight gradient of that convolution (``grad`` as its input)."""
        stride, pads, dilation, groups = ctx.geometry
        need_input, need_weight, need_bias = ctx.needs_input_grad
        grad_input = grad_weight = grad_bias = None
        if need_input:
            grad_input = ConvolutionBackward0.apply(grad, weight, None, stride=stride, pads=pads, dilation=dilation,
                                                    groups=groups)
        if need_weight:
            grad_weight = weight_gradient(grad, input, tuple(weight.shape[-2:]), stride, pads, dilation, groups)
        if need_bias:
            grad_bias = grad.sum((0, 2, 3))
        return grad_input, grad_weight, grad_bias


def _per_group(grad, groups):
    """A convolution's output (gradient) (N, O, Ho, Wo) as (G, O/G, N*Ho*Wo): one matrix per group."""
    n, o, ho, wo = grad.shape
    return grad.reshape(n, groups, o // groups, ho * wo).permute(1, 2, 0, 3).reshape(groups, o // groups, n * ho * wo)


def input_gradient(grad, weight, in_hw, stride, pads, dilation, groups):
    """The gradient of a convolution's input (N, C, H, W), ``in_hw`` = (H, W), from its output's
    ``grad`` (N, O, Ho, Wo): each group's weights transposed times the gradient, then col2im."""
    n, ho, wo = grad.shape[0], grad.shape[2], grad.shape[3]
    o, cg, kh, kw = weight.shape
    k = cg * kh * kw
    cols = weight.reshape(groups, o // groups, k).transpose(1, 2) @ _per_group(grad, groups)  # (G, k, N*L)
    cols = cols.reshape(groups, k, n, ho * wo).permute(2, 0, 1, 3).reshape(n, groups * k, ho * wo)
    return Col2ImBackward0.apply(cols, in_hw=in_hw, kernel=(kh, kw), dilation=dilation, pads=pads, stride=stride)


def weight_gradient(input, grad, kernel, stride, pads, dilation, groups, columns=None):
    """The gradient of a convolution's weight (O, C/G, kh, kw) from its ``input`` and its output's ``grad``
    (``columns``: im2col's matrix of ``input`` as (G, N*L, k), when its forward kept it)."""
    n, c = input.shape[:2]
    o, ho, wo = grad.shape[1], grad.shape[2], grad.shape[3]
    k = c // groups * kernel[0] * kernel[1]
    cols = columns
    if cols is None:
        cols = Im2ColBackward0.apply(input, kernel=kernel, dilation=dilation, pads=pads, stride=stride)
        cols = cols.reshape(n, groups, k, ho * wo).permute(1, 0, 3, 2).reshape(groups, n * ho * wo, k)
    return (_per_group(grad, groups) @ cols).reshape(o, c // groups, *kernel)


def _convolve(x, w, b, stride, pads, dilation, groups, kept_for=None):
    """The convolution of arrays: images x (N, C, H, W), weights w (O, C/G, kh, kw), bias b (O,) or None
    (``kept_for``: the node that may keep the columns for its weight's gradient, ``_speed.keep_columns``)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    ho = out_size(h, kh, stride[0], pads[0], pads[1], dilation[0])
    wo = out_size(wd, kw, stride[1], pads[2], pads[3], dilation[1])
    view = windows(x, (kh, kw), stride, pads, dilation, (ho, wo))  # (N, C, Ho, Wo, kh, kw)
    # columns (G, N*Ho*Wo, C/G*kh*kw) times weights (G, C/G*kh*kw, O/G)
    cols = view.reshape(n, groups, cg, ho, wo, kh, kw).transpose(1, 0, 3, 4, 2, 5, 6)
    cols = cols.reshape(groups, n * ho * wo, cg * kh * kw)
    _speed.keep_columns(kept_for, cols)
    out = np.matmul(cols, w.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1))
    out = out.reshape(groups, n, ho, wo, o // groups).transpose(1, 0, 4, 2, 3).reshape(n, o, ho, wo)
    if b is not None:
        out = out + b.reshape(o, 1, 1)
    return np.ascontiguousarray(out)


def _check_positive(stride, padding, dilation):
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {_sizes(dilation)}")


def _same_pads(kernel, dilation):
    """padding='same': the total ``dilation*(kernel-1)`` split with the odd one at the end, as PyTorch does."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads += [total // 2, total - total // 2]
    return tuple(pads)


def _checked_pads(padding, stride, dilation, kernel, pads_of):
    """The padding before and after each spatial dimension (``'same'``, ``'valid'`` or sizes, which
    ``pads_of`` spreads), checked with the stride and dilation as PyTorch checks them."""
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: {padding!r}")
        if padding == "valid":
            pads = (0,) * (2 * len(kernel))
        else:
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = _same_pads(kernel, dilation)
    else:
        pads = pads_of(padding)
    _check_positive(stride, pads, dilation)
    return pads


def _check_operands(input, weight, bias, groups):
    """The input's dtype and channels, and the bias's size, against the weight (batched input)."""
    if input.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.legacy_name[:-6]} but found "
                           f"{weight.dtype.legacy_name[:-6]}")
    if weight.shape[1] * groups != input.shape[1]:
        raise RuntimeError(f"Given groups={groups}, weight of size {_sizes(weight.shape)}, expected "
                           f"input{_sizes(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                           f"{input.shape[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"Given weight of size {_sizes(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{weight.shape[0]} elements, but got bias of size {_sizes(bias.shape)} instead")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution (cross-correlation, as in every deep-learning library) of a batch
    (N, C, H, W), or one image (C, H, W), with ``weight`` (O, C/groups, kh, kw)."""
    stride, dilation = _pair(stride), _pair(dilation)
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
                           f"{_sizes(input.shape)}")
    if input.ndim == 3:  # one image: a batch of one, and PyTorch's SqueezeBackward1 on the way out
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    pads = _checked_pads(padding, stride, dilation, weight.shape[-2:], _four)
    _check_operands(input, weight, bias, groups)
    padded = (input.shape[2] + pads[0] + pads[1], input.shape[3] + pads[2] + pads[3])
    span = [dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(2)]
    if padded[0] < span[0] or padded[1] < span[1]:
        raise RuntimeError(f"Calculated padded input size per channel: ({padded[0]} x {padded[1]}). Kernel size: "
                           f"({span[0]} x {span[1]}). Kernel size can't be greater than actual input size")
    return ConvolutionBackward0.apply(input, weight, bias, stride=stride, pads=pads, dilation=dilation, groups=groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution of a batch of signals (N, C, L), or one signal (C, L), with ``weight``
    (O, C/groups, k): the 2-d one on signals of height 1, in the same graph node."""
    stride, dilation = _single(stride), _single(dilation)
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
                           f"{_sizes(input.shape)}")
    if input.ndim == 2:  # one signal: a batch of one, and PyTorch's SqueezeBackward1 on the way out
        return conv1d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    pads = _checked_pads(padding, stride, dilation, weight.shape[-1:], lambda p: 2 * _single(p))
    _check_operands(input, weight, bias, groups)
    padded, span = input.shape[2] + pads[0] + pads[1], dilation[0] * (weight.shape[2] - 1) + 1
    if padded < span:
        raise RuntimeError(f"Calculated padded input size per channel: ({padded}). Kernel size: ({span}). "
                           "Kernel size can't be greater than actual input size")
    return ConvolutionBackward0.apply(input, weight, bias, stride=(1, *stride), pads=(0, 0, *pads),
                                      dilation=(1, *dilation), groups=groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transposed convolution of a batch (N, C, H, W), or one image, with ``weight`` (C, O/groups, kh, kw):
    each input pixel spreads the kernel, times itself, over the output; it is the gradient of ``conv2d``'s
    input, computed by the same code. Output size: ``(H - 1) * stride - 2 * padding + dilation * (kh - 1)
    + output_padding + 1``."""
    stride, padding, dilation, output_padding = _pair(stride), _pair(padding), _pair(dilation), _pair(output_padding)
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of "
                           f"size: {_sizes(input.shape)}")
    if input.ndim == 3:
        return conv_transpose2d(input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups,
                                dilation).squeeze(0)
    _check_positive(stride, padding, dilation)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding_height: {output_padding[0]} output_padding_width: {output_padding[1]} "
                           f"stride_height: {stride[0]} stride_width: {stride[1]} dilation_height: {dilation[0]} "
                           f"dilation_width: {dilation[1]}")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.legacy_name[:-6]} but found "
                           f"{weight.dtype.legacy_name[:-6]}")
    if weight.shape[0] != input.shape[1]:
        raise RuntimeError(f"Given transposed=1, weight of size {_sizes(weight.shape)}, expected input"
                           f"{_sizes(input.shape)} to have {weight.shape[0]} channels, but got {input.shape[1]} "
                           "channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[1] * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {_sizes(weight.shape)}, expected bias to be "
                           f"1-dimensional with {weight.shape[1] * groups} elements, but got bias of size "
                           f"{_sizes(bias.shape)} instead")
    out_hw = tuple((input.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (weight.shape[2 + i] - 1)
                   + output_padding[i] + 1 for i in range(2))
    return ConvolutionBackward0.apply(input, weight, bias, stride=stride, pads=_four(padding), dilation=dilation,
                                      groups=groups, transposed=True, out_hw=out_hw)


class _ConvNd(Module):
    """What Conv1d and Conv2d share: ``out_channels`` filters of ``in_channels/groups x kernel_size``.

    Weights and bias start as PyTorch's do (``kaiming_uniform_(a=sqrt(5))``: uniform within
    ``1/sqrt(fan_in)``, fan_in = in_channels/groups * the kernel's size): the same numbers after ``manual_seed``.
    """

    _tuple = None  # a size as a tuple of the layer's dimensions: _single or _pair
    _convolution = None  # conv1d or conv2d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            valid = {"same", "valid"}  # (printed as a set, in this process's order, as PyTorch prints it)
            if padding not in valid:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid}")
            if padding == "same" and any(s != 1 for s in self._tuple(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got "
                             f"padding_mode='{padding_mode}'")
        if padding_mode != "zeros":
            raise NotImplementedError(f"padding_mode={padding_mode!r} is beyond autograd_core; the engine's "
                                      f"{type(self).__name__} pads with zeros (padding_mode='zeros')")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = self._tuple(kernel_size), self._tuple(stride)
        self.padding = padding if isinstance(padding, str) else self._tuple(padding)
        self.dilation, self.groups, self.padding_mode = self._tuple(dilation), groups, padding_mode
        self.transposed, self.output_padding = False, self._tuple(0)
        self.weight = Parameter(creation.empty(*self._weight_shape(in_channels, out_channels, groups), dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _weight_shape(self, in_channels, out_channels, groups):
        return (out_channels, in_channels // groups, *self.kernel_size)

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return type(self)._convolution(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                                       self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != self._tuple(0):
            s += f", padding={self.padding}"
        if self.output_padding != self._tuple(0):
            s += f", output_padding={self.output_padding}"
        if self.dilation != self._tuple(1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """A 2-d convolution layer over images (N, C, H, W): ``nn.Conv2d(1, 6, kernel_size=5, padding=2)``."""

    _tuple = staticmethod(_pair)
    _convolution = staticmethod(conv2d)


class Conv1d(_ConvNd):
    """A 1-d convolution layer over signals (N, C, L): ``nn.Conv1d(3, 8, kernel_size=5, padding=2)``."""

    _tuple = staticmethod(_single)
    _convolution = staticmethod(conv1d)


class ConvTranspose2d(_ConvNd):
    """A 2-d transposed convolution layer (an upsampling one): ``nn.ConvTranspose2d(16, 8, 4, stride=2,
    padding=1)`` doubles the height and width. Its weight is (in_channels, out_channels/groups, kh, kw),
    drawn as PyTorch draws it."""

    _tuple = staticmethod(_pair)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device, dtype)
        self.transposed, self.output_padding = True, _pair(output_padding)

    def _weight_shape(self, in_channels, out_channels, groups):
        return (in_channels, out_channels // groups, *self.kernel_size)

    def forward(self, input, output_size=None):
        output_padding = self.output_padding
        if output_size is not None:  # the output_padding that gives this size
            wanted = list(output_size)[-2:]
            output_padding = tuple(
                wanted[i] - ((input.shape[-2 + i] - 1) * self.stride[i] - 2 * self.padding[i]
                             + self.dilation[i] * (self.kernel_size[i] - 1) + 1) for i in range(2))
        return conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                                self.dilation)


class _LazyConv(LazyModuleMixin):
    """A convolution whose ``in_channels`` is read from its first input (d2l's LeNet is built of these).

    Prints as ``LazyConv2d(0, 6, kernel_size=(5, 5), ...)`` until then; its first call gives the
    weight (out_channels, in_channels/groups, *kernel_size), or a transposed one's (in_channels,
    out_channels/groups, *kernel_size), and the bias their shapes, initializes them as the ordinary
    layer does, and the module becomes that layer (``cls_to_become``).
    """

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):  # (a transposed one's arguments are its own)
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy(out_channels, bias, device, dtype)

    def _lazy(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            unbatched = len(self.kernel_size) + 1
            if input.ndim not in (unbatched, unbatched + 1):
                raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                                   f"{type(self).__name__}, but got input of size: {input.shape}")
            with grad_mode.no_grad():
                self.in_channels = input.shape[1] if input.ndim == unbatched + 1 else input.shape[0]
                if self.in_channels % self.groups != 0:
                    raise ValueError("in_channels must be divisible by groups")
                self.weight.materialize(self._weight_shape(self.in_channels, self.out_channels, self.groups))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class LazyConv1d(_LazyConv, Conv1d):
    """``Conv1d`` whose ``in_channels`` is read from its first input; becomes a ``Conv1d`` there."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """``Conv2d`` whose ``in_channels`` is read from its first input; becomes a ``Conv2d`` there."""

    cls_to_become = Conv2d


class LazyConvTranspose2d(_LazyConv, ConvTranspose2d):
    """``ConvTranspose2d`` whose ``in_channels`` is read from its first input; becomes a ``ConvTranspose2d`` there."""

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        ConvTranspose2d.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                                 padding_mode)  # (past _LazyConv's, whose arguments are a plain convolution's)
        self._lazy(out_channels, bias, device, dtype)
