"""Every differentiable operation: its forward and its backward side by side.

Each class is one kind of graph node, named as PyTorch names it, so that
``y.grad_fn`` prints ``<MulBackward0 ...>`` here too. ``forward`` gets the
input tensors and returns a NumPy array; ``backward`` gets the gradient of the
output (a Tensor) and returns one gradient per input, in input order (``None``
for inputs that need none). Backward formulas are written with tensor
operations, so with ``create_graph=True`` they are recorded too and can be
differentiated again.

Broadcasting is *not* undone here: a formula may return a gradient of the
broadcast shape, and the engine sums it back to the input's shape in one place
(``broadcast.sum_to_shape``).
"""
from __future__ import annotations

import math

import numpy as np

from . import _speed, dtypes, exact_math, float32_math, grad_mode
from .function import NOT_RECORDING, Op, _start_recording, made_view
from .graph import Node, fit_gradients
from .tensor import Tensor, _wrap_dim


# 1/0 = inf, log(0) = -inf, sqrt(-1) = nan, exp(1000) = inf: results, as in PyTorch, not warnings.
def _quietly():
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


def _data(x):
    return x._data if isinstance(x, Tensor) else x


def _dims(dim, ndim):
    """Normalise ``dim`` (None, int or tuple, negatives allowed) to a sorted tuple."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        return tuple(sorted(_wrap_dim(d, ndim) for d in dim))
    return (_wrap_dim(dim, ndim),)


def _expand_reduced(grad, shape, dims, keepdim):
    """Give a reduced gradient back its reduced dims (size 1) so it broadcasts over the input."""
    if not keepdim and shape:
        kept = [1 if i in dims else s for i, s in enumerate(shape)]
        grad = grad.reshape(kept)
    return grad


# --- arithmetic ----------------------------------------------------------------------
class AddBackward0(Op):
    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.alpha = alpha
        return a._data + _data(b) if alpha == 1 else float32_math.add_scaled(a._data, _data(b), alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, (grad if ctx.alpha == 1 else grad * ctx.alpha)


class SubBackward0(Op):
    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.alpha = alpha
        return _data(a) - _data(b) if alpha == 1 else float32_math.add_scaled(_data(a), _data(b), -alpha)

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad if ctx.alpha == 1 else grad * -ctx.alpha


class RsubBackward1(Op):
    """``number - tensor``"""

    @staticmethod
    def forward(ctx, a, other):
        return other - a._data

    @staticmethod
    def backward(ctx, grad):
        return (-grad,)


class MulBackward0(Op):
    @staticmethod
    def forward(ctx, a, b):
        # Save only what the other input's gradient needs (as PyTorch does). A Python number
        # is kept as ctx.b_number; like PyTorch's saved scalar, it makes x * 2 a node that
        # backward frees, so a second backward through it needs retain_graph=True.
        need_a, need_b = ctx.needs_input_grad or (False, False)
        number = not isinstance(b, Tensor)
        # (other before self: the order in which PyTorch packs them, which saved-tensor hooks can see)
        ctx.save_for_backward(None if number or not need_a else b, a if need_b else None)
        ctx.b_number = b if number else None
        return a._data * (b if number else b._data)

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        b = ctx.b_number if b is None else b
        return (grad * b if ctx.needs_input_grad[0] else None), (grad * a if ctx.needs_input_grad[1] else None)


class DivBackward0(Op):
    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad or (False, False)
        ctx.save_for_backward(a if need_b else None, b if isinstance(b, Tensor) else None)
        ctx.b_number = None if isinstance(b, Tensor) else b
        with _quietly():
            return _data(a) / _data(b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        b = ctx.b_number if b is None else b
        grad_a = grad / b if ctx.needs_input_grad[0] else None
        grad_b = -grad * a / (b * b) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class NegBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        return -a._data

    @staticmethod
    def backward(ctx, grad):
        return (-grad,)


class ReciprocalBackward0(Op):
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        with _quietly():
            return 1 / a._data

    @staticmethod
    def backward(ctx, grad):
        r = ctx.result
        return (-grad * r * r,)


class PowBackward0(Op):
    """``tensor ** number``"""

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        with _quietly():
            return a._data ** exponent

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        p = ctx.exponent
        if p == 0:
            return (grad * 0,)
        return (grad * p * a ** (p - 1),)


class PowBackward1(Op):
    """``tensor ** tensor``"""

    saves_result = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with _quietly():
            return a._data ** b._data

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = grad * b * a ** (b - 1) if ctx.needs_input_grad[0] else None
        # d a^b / db = a^b log a, taken as 0 where a == 0 and b >= 0 (PyTorch's convention).
        grad_b = None
        if ctx.needs_input_grad[1]:
            safe_log = where(Tensor._make(_data(a) == 0), Tensor._make(np.zeros((), _data(a).dtype)), a).log()
            grad_b = grad * ctx.result * safe_log
        return grad_a, grad_b


class PowBackward2(Op):
    """``number ** tensor``"""

    saves_result = True

    @staticmethod
    def forward(ctx, b, base):
        with _quietly():
            ctx.log_base = float(np.log(np.float64(base)))
            return np.power(np.asarray(base, dtype=b._data.dtype), b._data)

    @staticmethod
    def backward(ctx, grad):
        return (grad * ctx.result * ctx.log_base,)


# --- elementwise functions ---------------------------------------------------------
class ExpBackward0(Op):
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        with _quietly():
            return float32_math.exp(a._data)

    @staticmethod
    def backward(ctx, grad):
        return (grad * ctx.result,)


class LogBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with _quietly():
            return float32_math.log(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return (grad / a,)


class Log10Backward0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with _quietly():
            return float32_math.log10(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return (grad / (a * math.log(10)),)  # PyTorch's formula: self * ln(10) first


class SqrtBackward0(Op):
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        with _quietly():
            return np.sqrt(a._data)

    @staticmethod
    def backward(ctx, grad):
        return (grad / (2 * ctx.result),)


class AbsBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return (grad * a.sign(),)


class SignBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        return np.sign(a._data)

    @staticmethod
    def backward(ctx, grad):
        return (grad * 0,)


class SinBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return float32_math.sin(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return (grad * a.cos(),)


class CosBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return float32_math.cos(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return (grad * -a.sin(),)


class SinhBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with _quietly():
            return float32_math.sinh(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return (grad * a.cosh(),)


class CoshBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with _quietly():
            return float32_math.cosh(a._data)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return (grad * a.sinh(),)


class TanhBackward0(Op):
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        return float32_math.tanh(a._data)

    @staticmethod
    def backward(ctx, grad):
        return (TanhBackwardBackward0.apply(grad, ctx.result),)


class TanhBackwardBackward0(Op):
    """tanh's gradient ``grad * (1 - y * y)`` as PyTorch's kernel (``tanh_backward``) rounds it:
    ``1 - y * y`` in one rounding (a fused multiply-add), then the product. A node of its own, as in
    PyTorch, for a second derivative: d/dgrad is tanh's gradient again, d/dy is ``-2 y grad``."""

    @staticmethod
    def forward(ctx, grad, y):
        ctx.save_for_backward(grad, y)
        return grad._data * exact_math.fma(-y._data, y._data, 1)

    @staticmethod
    def backward(ctx, gg):
        grad, y = ctx.saved_tensors
        return TanhBackwardBackward0.apply(gg, y), gg * (-2 * y * grad)


class SigmoidBackward0(Op):
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        with _quietly():
            return float32_math.sigmoid(a._data)

    @staticmethod
    def backward(ctx, grad):
        y = ctx.result
        return (grad * y * (1 - y),)


class ReluBackward0(Op):
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        return np.maximum(a._data, 0)

    @staticmethod
    def backward(ctx, grad):
        return (_keep_where(ctx.result > 0, grad),)


class MaximumBackward0(Op):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.maximum(a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        # Where both are equal the gradient is shared half and half, as in PyTorch.
        shared = where(a == b, grad / 2, grad)
        return _keep_where(a >= b, shared), _keep_where(a <= b, shared)


class MinimumBackward0(Op):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.minimum(a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        shared = where(a == b, grad / 2, grad)
        return _keep_where(a <= b, shared), _keep_where(a >= b, shared)


class ClampBackward1(Op):
    @staticmethod
    def forward(ctx, a, min=None, max=None):
        ctx.save_for_backward(a)
        ctx.min, ctx.max = min, max
        return np.clip(a._data, min, max)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        inside = Tensor._make(np.ones(a._data.shape, dtype=bool))
        if ctx.min is not None:
            inside = inside & (a >= ctx.min)
        if ctx.max is not None:
            inside = inside & (a <= ctx.max)
        return (_keep_where(inside, grad),)


class ClampBackward0(Op):
    """``x.clamp(min, max)`` with tensor bounds (either may be None): the gradient goes to ``x`` where
    ``min <= x <= max``, to ``min`` where ``x < min`` and to ``max`` where ``x > max`` (a tie is
    ``x``'s, and so is a nan; where ``min > max`` the result is ``max``, and so is the gradient:
    PyTorch's ``clamp_backward_min_max``)."""

    bounds = ("min", "max")  # the bounds that are inputs of the node, after x

    @staticmethod
    def forward(ctx, a, min, max):
        ctx.save_for_backward(a, min, max)
        out = a._data
        for bound, beyond in ((min, np.less), (max, np.greater)):  # x itself on a tie (-0 kept); a nan spreads
            if bound is not None:
                b = bound._data
                out = np.where(beyond(out, b) | np.isnan(b), b, out)
        return np.broadcast_to(out, np.broadcast_shapes(*(t._data.shape for t in (a, min, max) if t is not None))).copy()

    @staticmethod
    def backward(ctx, grad):
        a, low, high = ctx.saved_tensors
        at_least = None if low is None else a >= low
        at_most = None if high is None else a <= high
        inside = at_least if at_most is None else at_most if at_least is None else at_least & at_most
        to_low, to_high = (None if low is None else a < low), (None if high is None else a > high)
        if low is not None and high is not None:  # bounds crossed: max wins
            to_low, to_high = to_low & (low < high), to_high | (high < low)
        need = dict(zip(("self",) + type(ctx).bounds, ctx.needs_input_grad))
        grads = {"self": _keep_where(inside, grad) if need["self"] else None,
                 "min": _keep_where(to_low, grad) if low is not None and need["min"] else None,
                 "max": _keep_where(to_high, grad) if high is not None and need["max"] else None}
        return tuple(grads[name] for name in ("self",) + type(ctx).bounds)


class ClampMinBackward0(ClampBackward1):
    """``x.clamp_min(number)``: ``x.clamp(min=number)`` under PyTorch's name for it."""


class ClampMaxBackward0(ClampBackward1):
    """``x.clamp_max(number)``: ``x.clamp(max=number)`` under PyTorch's name for it."""


class ClampMinBackward1(ClampBackward0):
    """``x.clamp_min(t)``: ``x.clamp(min=t)``, with the two inputs ``x`` and ``t``."""

    bounds = ("min",)

    @staticmethod
    def forward(ctx, a, min):
        return ClampBackward0.forward(ctx, a, min, None)


class ClampMaxBackward1(ClampBackward0):
    """``x.clamp_max(t)``: ``x.clamp(max=t)``, with the two inputs ``x`` and ``t``."""

    bounds = ("max",)

    @staticmethod
    def forward(ctx, a, max):
        return ClampBackward0.forward(ctx, a, None, max)


class WhereBackward0(Op):
    @staticmethod
    def forward(ctx, a, b, condition):
        ctx.condition = condition
        return np.where(condition._data, _data(a), _data(b))

    @staticmethod
    def backward(ctx, grad):
        zero = Tensor._make(np.zeros((), grad._data.dtype))
        c = ctx.condition
        return where(c, grad, zero), where(c, zero, grad)


def where(condition, a, b):
    return WhereBackward0.apply(a, b, condition=condition)


def _keep_where(mask, grad):
    """``grad`` where ``mask`` holds, +0 elsewhere, as PyTorch's ``where(mask, grad, 0)``."""
    if not grad_mode._State.enabled:  # not recorded (no create_graph): the shortcut may do it
        kept = _speed.keep_where(mask, grad)
        if kept is not None:
            return kept
    return where(mask, grad, Tensor._make(np.zeros((), grad._data.dtype)))


# --- reductions ----------------------------------------------------------------------
class SumBackward0(Op):
    """Sum of all elements. Saves only a shape, so nothing is freed by backward."""

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a._data.shape
        out = a._data.sum()
        return out if a._data.dtype.kind != "b" else out.astype(np.int64)

    @staticmethod
    def backward(ctx, grad):
        return (grad.expand(ctx.shape),)


class SumBackward1(Op):
    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        dims = _dims(dim, a._data.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = a._data.shape, dims, keepdim
        return a._data.sum(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        return (_expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim).expand(ctx.shape),)


class MeanBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.shape = a._data.shape
        return a._data.mean()

    @staticmethod
    def backward(ctx, grad):
        return ((grad / max(math.prod(ctx.shape), 1)).expand(ctx.shape),)


class MeanBackward1(Op):
    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        dims = _dims(dim, a._data.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = a._data.shape, dims, keepdim
        return a._data.mean(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        count = math.prod([ctx.shape[d] for d in ctx.dims]) if ctx.shape else 1
        return ((_expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim) / count).expand(ctx.shape),)


class _ExtremeAll(Op):
    """max() / min() over all elements: tied elements share the gradient evenly."""

    reduce = None

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        hit = a == Tensor._make(np.asarray(type(ctx).reduce(a._data)))
        return (grad * hit / hit.sum(),)


def _check_not_empty(a, name):
    if a._data.size == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )


class MaxBackward1(_ExtremeAll):
    reduce = staticmethod(np.max)

    @staticmethod
    def forward(ctx, a):
        _check_not_empty(a, "max")
        ctx.save_for_backward(a)
        return np.max(a._data)


class MinBackward1(_ExtremeAll):
    reduce = staticmethod(np.min)

    @staticmethod
    def forward(ctx, a):
        _check_not_empty(a, "min")
        ctx.save_for_backward(a)
        return np.min(a._data)


class MaxBackward0(Op):
    """max(dim): the gradient goes to the element the index points at."""

    @staticmethod
    def forward(ctx, a, dim, keepdim=False, indices=None):
        ctx.shape, ctx.dim, ctx.keepdim, ctx.indices = a._data.shape, dim, keepdim, indices
        index = indices if keepdim else np.expand_dims(indices, dim)
        values = np.take_along_axis(a._data, index, dim)
        return values if keepdim else values.squeeze(dim)

    @staticmethod
    def backward(ctx, grad):
        idx = ctx.indices if ctx.keepdim else np.expand_dims(ctx.indices, ctx.dim)
        g = _expand_reduced(grad, ctx.shape, (ctx.dim,), ctx.keepdim)
        return (ScatterBackward0.apply(g, shape=ctx.shape, dim=ctx.dim, index=idx),)


class MinBackward0(MaxBackward0):
    pass


class ScatterBackward0(Op):
    """Put a gradient back where a max/min along ``dim`` picked its values (zeros elsewhere)."""

    @staticmethod
    def forward(ctx, g, shape, dim, index):
        ctx.dim, ctx.index = dim, index
        out = np.zeros(shape, dtype=g._data.dtype)
        np.put_along_axis(out, index, g._data, dim)
        return out

    @staticmethod
    def backward(ctx, grad):
        return (GatherBackward0.apply(grad, dim=ctx.dim, index=ctx.index),)


class GatherBackward0(Op):
    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.shape, ctx.dim, ctx.index = a._data.shape, dim, index
        return np.take_along_axis(a._data, index, dim)

    @staticmethod
    def backward(ctx, grad):
        # Spell the gather as an advanced index so repeated positions add up.
        key = list(np.indices(ctx.index.shape, sparse=True))
        key[ctx.dim] = ctx.index
        return (put_into_zeros(grad, ctx.shape, tuple(key)),)


class LinalgVectorNormBackward0(Op):
    """The 2-norm (or another p-norm) of the elements, optionally along dims."""

    saves_result = True

    @staticmethod
    def forward(ctx, a, p=2, dim=None, keepdim=False):
        ctx.save_for_backward(a)
        dims = _dims(dim, a._data.ndim)
        ctx.p, ctx.shape, ctx.dims, ctx.keepdim = p, a._data.shape, dims, keepdim
        x = np.abs(a._data)
        if p == 2:
            return np.sqrt((x * x).sum(axis=dims, keepdims=keepdim))
        if p == float("inf"):
            return x.max(axis=dims, keepdims=keepdim)
        return (x ** p).sum(axis=dims, keepdims=keepdim) ** (1.0 / p)

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        norm = _expand_reduced(ctx.result, ctx.shape, ctx.dims, ctx.keepdim)
        grad = _expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim)
        zero = Tensor._make(np.zeros((), a._data.dtype))
        safe = where(norm == 0, Tensor._make(np.ones((), a._data.dtype)), norm)
        if ctx.p == 2:
            scale = a / safe
        elif ctx.p == float("inf"):
            hit = a.abs() == norm
            scale = a.sign() * hit / hit.sum(dim=ctx.dims, keepdim=True)
        else:
            scale = a.sign() * a.abs() ** (ctx.p - 1) / safe ** (ctx.p - 1)
        return (where(norm == 0, zero, grad * scale),)


# --- linear algebra --------------------------------------------------------------------
class DotBackward0(Op):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.dot(a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b, grad * a


class MvBackward0(Op):
    @staticmethod
    def forward(ctx, m, v):
        ctx.save_for_backward(m, v)
        return m._data @ v._data

    @staticmethod
    def backward(ctx, grad):
        m, v = ctx.saved_tensors
        return grad.unsqueeze(1) * v, m.t().mv(grad)


class MmBackward0(Op):
    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad or (False, False)
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        return a._data @ b._data

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad.mm(b.t()) if ctx.needs_input_grad[0] else None), (a.t().mm(grad) if ctx.needs_input_grad[1] else None)


class BmmBackward0(Op):
    """A batch of matrix products: (b, n, k) @ (b, k, m) -> (b, n, m)."""

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad or (False, False)
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        return np.matmul(a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = grad.bmm(b.transpose(1, 2)) if ctx.needs_input_grad[0] else None
        grad_b = a.transpose(1, 2).bmm(grad) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


# --- shapes and views -------------------------------------------------------------------
class _View(Op):
    """Base of ops whose output shares memory with the input (changes show in both)."""

    @classmethod
    def apply(cls, a, **params):
        return made_view(super().apply(a, **params), a)


class _MultiOutputView(Op):
    """Base of ``unbind`` and ``split``: one node, several views of the input (output ``i`` of the
    node is ``views[i]``). PyTorch refuses to change such a view in place while recording."""

    @classmethod
    def apply(cls, a, **params):
        recording = grad_mode._State.enabled and a._requires_grad
        ctx = cls.__new__(cls) if recording else NOT_RECORDING
        if recording:
            _start_recording(ctx, (a,))
            ctx.shape, ctx.dtype = a._data.shape, a._data.dtype
        views = []
        for nr, array in enumerate(cls.forward(ctx, a, **params)):
            view = Tensor._make(array, recording, ctx if recording else None)
            view._output_nr = nr
            views.append(made_view(view, a, "multi_output"))
        if recording:
            ctx._num_outputs = len(views)
        return tuple(views)

    def _filled(ctx, grads, shapes):
        """The outputs' gradients, zeros for an output that got none."""
        return [Tensor._make(np.zeros(shape, ctx.dtype)) if g is None else g for g, shape in zip(grads, shapes)]


class UnbindBackward0(_MultiOutputView):
    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return [a._data[(slice(None),) * dim + (i, Ellipsis)] for i in range(a._data.shape[dim])]

    @staticmethod
    def backward(ctx, *grads):
        shape = ctx.shape[:ctx.dim] + ctx.shape[ctx.dim + 1:]
        return (StackBackward0.apply(*ctx._filled(grads, [shape] * len(grads)), dim=ctx.dim),)


class SplitBackward0(_MultiOutputView):
    """``split(size)`` and ``chunk``: pieces of one size along ``dim`` (the last one may be smaller)."""

    @staticmethod
    def forward(ctx, a, sizes, dim):
        ctx.sizes, ctx.dim = sizes, dim
        starts = np.cumsum([0, *sizes]).tolist()
        return [a._data[(slice(None),) * dim + (slice(start, start + size),)] for start, size in zip(starts, sizes)]

    @staticmethod
    def backward(ctx, *grads):
        shapes = [ctx.shape[:ctx.dim] + (size,) + ctx.shape[ctx.dim + 1:] for size in ctx.sizes]
        return (CatBackward0.apply(*ctx._filled(grads, shapes), dim=ctx.dim),)


class SplitWithSizesBackward0(SplitBackward0):
    """``split([sizes])``: pieces of the sizes given."""


class ViewBackward0(_View):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a._data.shape
        return a._data.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return (grad.reshape(ctx.shape),)


class ReshapeAliasBackward0(ViewBackward0):
    """``reshape`` of a tensor that is not contiguous, where the memory allows a view."""


class UnsafeViewBackward0(Op):
    """A reshape of a tensor nobody else sees, so not a view: the end of a batched matmul (the
    product was computed on folded dims), and a ``reshape`` that had to copy (of a ``clone``)."""

    forward = ViewBackward0.forward
    backward = ViewBackward0.backward


class PermuteBackward0(_View):
    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return a._data.transpose(dims)

    @staticmethod
    def backward(ctx, grad):
        return (grad.permute(*np.argsort(ctx.dims).tolist()),)


class TransposeBackward0(_View):
    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dim0, ctx.dim1 = dim0, dim1
        return np.swapaxes(a._data, dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return (grad.transpose(ctx.dim0, ctx.dim1),)


class TBackward0(_View):
    @staticmethod
    def forward(ctx, a):
        return a._data.T

    @staticmethod
    def backward(ctx, grad):
        return (grad.t(),)


class SqueezeBackward0(_View):
    """squeeze() of every size-1 dim"""

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a._data.shape
        return a._data.squeeze()

    @staticmethod
    def backward(ctx, grad):
        return (grad.reshape(ctx.shape),)


class SqueezeBackward1(SqueezeBackward0):
    """squeeze(dim)"""

    @staticmethod
    def forward(ctx, a, dim):
        ctx.shape = a._data.shape
        return a._data.squeeze(dim) if a._data.shape[dim] == 1 else a._data


class SqueezeBackward4(SqueezeBackward1):
    """the squeeze that ends a vector-matrix product"""


class UnsqueezeBackward0(_View):
    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return np.expand_dims(a._data, dim)

    @staticmethod
    def backward(ctx, grad):
        return (grad.squeeze(ctx.dim),)


class ExpandBackward0(_View):
    @staticmethod
    def forward(ctx, a, shape):
        ctx.shape = a._data.shape
        out = np.broadcast_to(a._data, shape)
        # writable, as in PyTorch (an in-place change where elements repeat is refused: inplace.py)
        return np.lib.stride_tricks.as_strided(a._data, out.shape, out.strides) if a._data.flags.writeable else out

    @staticmethod
    def backward(ctx, grad):
        return (grad,)  # the engine sums it back to the input's shape


class _Index(Op):
    """``x[key]``: the gradient is scattered back into a zero tensor of x's shape."""

    @staticmethod
    def forward(ctx, a, key):
        ctx.shape, ctx.key = a._data.shape, key
        return a._data[key]

    @staticmethod
    def backward(ctx, grad):
        return (put_into_zeros(grad, ctx.shape, ctx.key),)


class SelectBackward0(_View, _Index):
    """indexing with an integer"""

    @staticmethod
    def forward(ctx, a, key):
        ctx.shape, ctx.key = a._data.shape, key
        return a._data[key + (Ellipsis,)]  # (a 0-d view where every dim is taken; NumPy would give a number)


class SliceBackward0(_View, _Index):
    """indexing with slices"""


class AliasBackward0(_View):
    """``x[...]``: the same tensor, seen again"""

    @staticmethod
    def forward(ctx, a):
        return a._data.view()

    @staticmethod
    def backward(ctx, grad):
        return (grad,)


class IndexBackward0(_Index):
    """indexing with boolean masks or integer arrays (a copy, not a view)"""


class IndexPutBackward0(Op):
    """``x.index_put(key, values)``, what ``x[mask] = values`` records: ``x`` with its elements at
    ``key`` replaced by ``values`` or, with ``accumulate``, increased by them (repeated indices add up).
    Into zeros, it is how an indexing's gradient goes back (``put_into_zeros``)."""

    @staticmethod
    def forward(ctx, a, values, key, accumulate=False):
        ctx.key, ctx.accumulate = key, accumulate
        out = a._data.copy()
        if accumulate:
            np.add.at(out, key, _data(values))
        else:
            out[key] = _data(values)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_a = grad_values = None
        if ctx.needs_input_grad[0]:
            if ctx.accumulate:
                grad_a = grad
            else:
                replaced = np.zeros(grad._data.shape, bool)
                replaced[ctx.key] = True
                grad_a = where(Tensor._make(replaced), Tensor._make(np.zeros((), grad._data.dtype)), grad)
        if ctx.needs_input_grad[1]:
            grad_values = grad[ctx.key]  # the engine sums it to the values' shape
        return grad_a, grad_values


def put_into_zeros(grad, shape, key):
    """Zeros of ``shape`` with ``grad`` added in at ``key``: an indexing's gradient."""
    zeros = Tensor._make(np.broadcast_to(np.zeros((), grad._data.dtype), shape))  # (forward copies it)
    return IndexPutBackward0.apply(zeros, grad, key=key, accumulate=True)


# --- copies, dtype changes, in-place writes ----------------------------------------------
class CloneBackward0(Op):
    @staticmethod
    def forward(ctx, a):
        return a._data.copy()

    @staticmethod
    def backward(ctx, grad):
        return (grad,)


class ToCopyBackward0(Op):
    @staticmethod
    def forward(ctx, a, dtype):
        ctx.source = a._data.dtype
        return a._data.astype(dtype.numpy)

    @staticmethod
    def backward(ctx, grad):
        return (ToCopyBackward0.apply(grad, dtype=_dtype_of(ctx.source)),)


def _dtype_of(np_dtype):
    return dtypes.from_numpy_dtype(np_dtype)


MEMORY_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                  "location. Please clone() the tensor before performing the operation.")
PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                   "single memory location. Please clone() the tensor before performing the operation.")


class CopySlices(Node):
    """The base's ``grad_fn`` after an in-place change through a view of it (``y[0] = v``,
    ``y[1:].mul_(2)``, ``y.view(-1)[mask] = 0``). ``fn`` is the node of that change (its first input
    is the view as it was); ``positions`` says where each element of the view sits in the base
    (flat). The view's elements now come from ``fn``, the base's others are as they were: the
    gradient of the base's past is ``grad`` with the view's part replaced by what ``fn`` sends
    back to the view; ``fn``'s other inputs get what ``fn`` gives them. Made by ``inplace.rebase``."""

    def name(self):
        return "torch::autograd::CopySlices"

    @staticmethod
    def backward(ctx, grad):
        positions, fn = ctx.positions, ctx.fn
        if ctx.repeats:  # an expanded view was written (index_put_ warns and writes; its gradient cannot be)
            raise RuntimeError(MEMORY_OVERLAP)
        grad_slice = grad.reshape(-1)[positions]
        grads = fit_gradients(fn, type(fn).backward(fn, grad_slice))
        grad_base = None
        if ctx.needs_input_grad[0]:
            outside = np.ones(grad._data.size, bool)
            outside[positions] = False
            grad_base = where(Tensor._make(outside.reshape(grad._data.shape)), grad,
                              Tensor._make(np.zeros((), grad._data.dtype)))
            if grads and grads[0] is not None:
                grad_base = grad_base + put_into_zeros(grads[0], (grad._data.size,), (positions,)).reshape(grad.shape)
        return (grad_base, *grads[1:])

    # What it saved is what the operation's node saved.
    _saved = property(lambda self: self.fn._saved)
    _own_output = property(lambda self: self.fn._own_output)
    _freed = property(lambda self: self.fn._freed)

    def has_saved_tensors(self):
        return self.fn.has_saved_tensors()

    def release_saved_tensors(self):
        self.fn.release_saved_tensors()


class AsStridedBackward0(Op):
    """A view's ``grad_fn`` made anew after its base changed in place: the view is read as the
    base's elements at ``positions`` (flat), so its gradient goes back to those places (added up
    where a place is seen twice, as in an expanded view). Made by ``inplace.refresh_view``."""

    @staticmethod
    def backward(ctx, grad):
        size = math.prod(ctx.shape)
        return (put_into_zeros(grad, (size,), (ctx.positions,)).reshape(ctx.shape),)


class CopyBackwards(Op):
    """``y.copy_(src)``: y's old values are gone, so only src gets a gradient."""

    @staticmethod
    def forward(ctx, base, src):
        return np.broadcast_to(src._data, base._data.shape).astype(base._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, grad

    def name(self):
        return "torch::autograd::CopyBackwards"


class FillBackward2(Op):
    @staticmethod
    def forward(ctx, a, value):
        return np.full(a._data.shape, _data(value), dtype=a._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return (grad * 0,)


class FillBackward3(Op):
    """``x.fill_(value)`` with a 0-d tensor ``value`` (what ``x[:] = 1.0`` does): every element is ``value``."""

    @staticmethod
    def forward(ctx, a, value):
        return np.full(a._data.shape, value._data, dtype=a._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, grad.sum()


class ZeroBackward0(FillBackward2):
    @staticmethod
    def forward(ctx, a):
        return np.zeros_like(a._data)


class StackBackward0(Op):
    @staticmethod
    def forward(ctx, *tensors, dim=0):
        ctx.dim = dim
        return np.stack([t._data for t in tensors], axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return tuple(grad.unbind(ctx.dim))


class CatBackward0(Op):
    @staticmethod
    def forward(ctx, *tensors, dim=0):
        ctx.dim, ctx.sizes = dim, [t._data.shape[dim] for t in tensors]
        return np.concatenate([t._data for t in tensors], axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return tuple(grad.split(ctx.sizes, ctx.dim))


# --- softmax ---------------------------------------------------------------------------
class SoftmaxBackward0(Op):
    saves_result = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        x = a._data
        with np.errstate(invalid="ignore"):
            e = float32_math.exp(x - x.max(axis=dim, keepdims=True))
            return e / e.sum(axis=dim, keepdims=True)

    @staticmethod
    def backward(ctx, grad):
        y = ctx.result
        return (y * (grad - (grad * y).sum(dim=ctx.dim, keepdim=True)),)


class LogSoftmaxBackward0(Op):
    saves_result = True

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        x = a._data
        with np.errstate(invalid="ignore", divide="ignore"):
            shifted = x - x.max(axis=dim, keepdims=True)
            return shifted - float32_math.log(float32_math.exp(shifted).sum(axis=dim, keepdims=True))

    @staticmethod
    def backward(ctx, grad):
        return (grad - ctx.result.exp() * grad.sum(dim=ctx.dim, keepdim=True),)


# --- repeating, masking, sorting, log-sum-exp ----------------------------------------------
class RepeatBackward0(Op):
    """``x.repeat(2, 3)``: the tensor tiled; each copy's gradient flows back to the one original."""

    @staticmethod
    def forward(ctx, a, repeats):
        shape = (1,) * (len(repeats) - a._data.ndim) + a._data.shape  # new leading dims of size 1
        ctx.shape, ctx.padded, ctx.repeats = a._data.shape, shape, repeats
        return np.tile(a._data.reshape(shape), repeats)

    @staticmethod
    def backward(ctx, grad):
        # (r0*s0, r1*s1, ...) -> (r0, s0, r1, s1, ...), summed over every r
        split = tuple(n for r, s in zip(ctx.repeats, ctx.padded) for n in (r, s))
        summed = grad.reshape(split).sum(dim=tuple(range(0, len(split), 2)))
        return (summed.reshape(ctx.shape),)


class IndexSelectBackward0(Op):
    """``x.index_select(dim, index)``: whole slices picked by index (repeats allowed)."""

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.shape, ctx.dim, ctx.index = a._data.shape, dim, index
        return np.take(a._data, index, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        key = (slice(None),) * ctx.dim + (ctx.index,)
        return (put_into_zeros(grad, ctx.shape, key),)  # repeated slices add up


class TrilBackward0(Op):
    """``x.tril(k)``: the lower triangle of the last two dims (zeros above diagonal ``k``)."""

    @staticmethod
    def forward(ctx, a, diagonal=0):
        ctx.diagonal = diagonal
        return np.tril(a._data, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return (grad.tril(ctx.diagonal),)


class TriuBackward0(Op):
    """``x.triu(k)``: the upper triangle (zeros below diagonal ``k``)."""

    @staticmethod
    def forward(ctx, a, diagonal=0):
        ctx.diagonal = diagonal
        return np.triu(a._data, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return (grad.triu(ctx.diagonal),)


class MaskedFillBackward0(Op):
    """``x.masked_fill(mask, number)``: ``number`` where ``mask`` holds; no gradient flows there."""

    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.mask = mask
        return np.where(mask, np.asarray(value, dtype=a._data.dtype), a._data)

    @staticmethod
    def backward(ctx, grad):
        return (_keep_where(Tensor._make(~ctx.mask), grad),)


class MaskedFillBackward1(Op):
    """``x.masked_fill(mask, value)`` with a 0-d tensor ``value``: it gets the gradient of every filled place."""

    @staticmethod
    def forward(ctx, a, value, mask):
        ctx.mask = mask
        return np.where(mask, value._data.astype(a._data.dtype), a._data)

    @staticmethod
    def backward(ctx, grad):
        mask = Tensor._make(ctx.mask)
        zero = Tensor._make(np.zeros((), grad._data.dtype))
        grad_a = where(mask, zero, grad) if ctx.needs_input_grad[0] else None
        grad_value = where(mask, grad, zero).sum() if ctx.needs_input_grad[1] else None
        return grad_a, grad_value


class LogsumexpBackward0(Op):
    """``log(sum(exp(x)))`` along dims, computed as ``m + log(sum(exp(x - m)))`` (no overflow)."""

    saves_result = True

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        ctx.save_for_backward(a)
        dims = _dims(dim, a._data.ndim)
        ctx.shape, ctx.dims, ctx.keepdim = a._data.shape, dims, keepdim
        x = a._data
        with _quietly():
            m = np.max(x, axis=dims, keepdims=True) if x.size else np.zeros([1] * x.ndim, x.dtype)
            m = np.where(np.isinf(m), np.zeros((), x.dtype), m)  # all -inf (or +inf): no shift
            out = float32_math.log(float32_math.exp(x - m).sum(axis=dims, keepdims=True)) + m
        return out if keepdim else out.squeeze(axis=dims) if x.ndim else out.reshape(())

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        result = _expand_reduced(ctx.result, ctx.shape, ctx.dims, ctx.keepdim)
        return (_expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim) * (a - result).exp(),)


class SortBackward0(Op):
    """``x.sort(dim)``'s values; the gradient goes back to where each value came from."""

    @staticmethod
    def forward(ctx, a, dim, indices):
        ctx.shape, ctx.dim, ctx.indices = a._data.shape, dim, indices
        return np.take_along_axis(a._data, indices, dim) if a._data.ndim else a._data.copy()

    @staticmethod
    def backward(ctx, grad):
        if not ctx.shape:
            return (grad,)
        return (ScatterBackward0.apply(grad, shape=ctx.shape, dim=ctx.dim, index=ctx.indices),)


class TransposeBackward1(TransposeBackward0):
    """``x.transpose_(0, 1)``'s node: a recurrent layer's batch-first output is its output so transposed."""
