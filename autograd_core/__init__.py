"""autograd_core: a small NumPy autograd engine with PyTorch's API and behaviour.

    import autograd_core as torch
    x = torch.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    print(x.grad)          # tensor([[4.5000, 4.5000], [4.5000, 4.5000]])

Where things live:
    tensor.py      the Tensor: data, requires_grad, grad, grad_fn, in-place changes
    ops.py         every operation's forward and backward, side by side
    functional.py  the public operations (torch.exp(x) and x.exp()), argument checks
    function.py    how an operation call becomes a graph node; autograd.Function
    graph.py       graph nodes, AccumulateGrad, saved tensors and hooks
    backward.py    the backward pass: an iterative walk over the graph
    broadcast.py   undoing broadcasting in gradients
    grad_mode.py   no_grad, enable_grad, set_grad_enabled
    creation.py    tensor, ones, zeros, arange, rand, manual_seed, ...
    printing.py    printing tensors exactly as PyTorch does
    dtypes.py      dtypes, Size, device
    autograd/      torch.autograd: backward, grad, Function, gradcheck
"""
from . import autograd
from .creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, manual_seed, normal, ones,
    ones_like, rand, rand_like, randint, randn, randn_like, randperm, seed, tensor, zeros, zeros_like,
)
from .dtypes import (
    Size, bool, device, double, dtype, float, float16, float32, float64, get_default_dtype, half, int, int8,
    int16, int32, int64, long, set_default_dtype, short, uint8,
)
from .functional import (
    abs, add, all, allclose, any, argmax, argmin, bmm, cat, chunk, clamp, clip, clone, concat, cos, cumsum, div, dot, eq,
    equal, exp, flatten, gather, ge, gt, isclose, isnan, le, log, log_softmax, logical_and, logical_not,
    logical_or, lt, matmul, max, maximum, mean, min, minimum, mm, mul, mv, narrow, ne, neg, norm, permute, pow,
    reciprocal, relu, reshape, rsub, select, sigmoid, sign, sin, softmax, split, sqrt, square, squeeze, stack,
    std, sub, sum, swapaxes, t, tanh, transpose, true_divide, unbind, unsqueeze, var, where,
)
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .printing import set_printoptions
from .tensor import Tensor

__version__ = "0.1.0"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def detach(input):
    return input.detach()
