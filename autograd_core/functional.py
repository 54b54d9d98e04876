"""The public operations: each is both ``torch.name(x, ...)`` and ``x.name(...)``.

These functions check and prepare their arguments (type promotion, dims,
PyTorch's error messages) and hand the work to a node class in ``ops.py``.
At the bottom they are attached to ``Tensor`` as methods and operators.
"""
from __future__ import annotations

import builtins
import collections
import math
import numbers
import warnings

import numpy as np

from . import dtypes, grad_mode, ops
from .broadcast import broadcast_error
from .tensor import Tensor, _type_name, _wrap_dim

_SCALARS = (builtins.int, builtins.float, builtins.bool, np.number, np.bool_)


# --- type promotion ----------------------------------------------------------------------
def _coerce(a, b):
    """Bring two operands to PyTorch's result dtype and check that their shapes broadcast.

    Python numbers stay numbers (NumPy then keeps the tensor's dtype, as PyTorch does).
    """
    # The common cases first, cheaply: they are on every operation's path.
    if type(a) is Tensor:
        if type(b) is Tensor:
            if a._data.dtype == b._data.dtype:
                if a._data.shape != b._data.shape:
                    _check_broadcast(a, b)
                return a, b
        elif (type(b) is float or type(b) is int) and a._data.dtype.kind == "f":
            return a, b  # a number never changes a float tensor's dtype
    elif type(b) is Tensor and (type(a) is float or type(a) is int) and b._data.dtype.kind == "f":
        return a, b
    return _coerce_general(a, b)


def _coerce_general(a, b):
    ta, tb = type(a) is Tensor, type(b) is Tensor
    if ta and tb:
        dims = [t.dtype for t in (a, b) if t._data.ndim]
        zero = [t.dtype for t in (a, b) if not t._data.ndim]
        rt = dtypes.result_type(dims, zero, ())
        a, b = a.to(rt), b.to(rt)
        _check_broadcast(a, b)
        return a, b
    if ta or tb:
        t, n = (a, b) if ta else (b, a)
        if isinstance(n, _SCALARS):
            n = n.item() if isinstance(n, (np.number, np.bool_)) else n
            if dtypes.scalar_category(n) > t.dtype.category:  # int tensor * 1.5 -> float32
                t = t.to(dtypes.result_type([t.dtype], [], [n]))
        elif isinstance(n, (np.ndarray, list, tuple)):
            n = Tensor._make(np.asarray(n))
            return _coerce(a, n) if ta else _coerce(n, b)
        else:
            raise TypeError(f"unsupported operand type: {type(n).__name__}")
        return (t, n) if ta else (n, t)
    raise TypeError("expected at least one Tensor operand")


def _binary(op, a, b):
    a, b = _coerce(a, b)
    return op.apply(a, b)


def _check_broadcast(a, b):
    if type(a) is Tensor and type(b) is Tensor and a._data.shape != b._data.shape:
        try:
            np.broadcast_shapes(a._data.shape, b._data.shape)
        except ValueError:
            raise broadcast_error(a._data.shape, b._data.shape) from None


# --- arithmetic -------------------------------------------------------------------------
def add(input, other, *, alpha=1):
    a, b = _coerce(input, other)
    if type(a) is not Tensor:  # number + tensor
        a, b = b, a
    return ops.AddBackward0.apply(a, b, alpha=alpha)


def _is_bool(x):
    return isinstance(x, (builtins.bool, np.bool_)) or (type(x) is Tensor and x._data.dtype.kind == "b")


def sub(input, other, *, alpha=1):
    if _is_bool(input) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    a, b = _coerce(input, other)
    if type(a) is not Tensor:
        return ops.RsubBackward1.apply(b if alpha == 1 else b * alpha, other=a)
    return ops.SubBackward0.apply(a, b, alpha=alpha)


def rsub(input, other):
    return sub(other, input)


def mul(input, other):
    a, b = _coerce(input, other)
    if type(a) is not Tensor:
        a, b = b, a
    return ops.MulBackward0.apply(a, b)


def div(input, other):
    a, b = _coerce(input, other)
    if type(a) is not Tensor:  # number / tensor = number * (1 / tensor), as PyTorch records it
        b = _to_float(b)
        return ops.MulBackward0.apply(ops.ReciprocalBackward0.apply(b), a)
    if a._data.dtype.kind != "f":  # true division of integers gives floats
        a = _to_float(a)
        b = _to_float(b) if type(b) is Tensor else b
    return ops.DivBackward0.apply(a, b)


def _to_float(t):
    return t if t._data.dtype.kind == "f" else t.to(dtypes.get_default_dtype())


def true_divide(input, other):
    return div(input, other)


def neg(input):
    return ops.NegBackward0.apply(input)


def reciprocal(input):
    return ops.ReciprocalBackward0.apply(_to_float(input))


def pow(input, exponent):  # noqa: A001
    if type(input) is not Tensor:  # number ** tensor
        b = exponent if exponent._data.dtype.kind == "f" or isinstance(input, builtins.int) else _to_float(exponent)
        if b._data.dtype.kind == "b":
            b = b.to(dtypes.int64)
        return ops.PowBackward2.apply(b, base=input)
    if type(exponent) is Tensor:
        a, b = _coerce(input, exponent)
        _no_bool_pow(a)
        return ops.PowBackward1.apply(a, b)
    a, e = _coerce(input, exponent)
    _no_bool_pow(a)
    if a._data.dtype.kind in "iu" and isinstance(e, builtins.int) and e < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return ops.PowBackward0.apply(a, exponent=e)


def _no_bool_pow(a):
    if a._data.dtype.kind == "b":
        raise NotImplementedError('"pow" not implemented for \'Bool\'')


def square(input):
    return pow(input, 2)


def matmul(input, other):
    """``@``: dot for two vectors, mv, mm, or a batched product for more dims."""
    a, b = input, other
    _same_dtype(a, b, "expected m1 and m2 to have the same dtype, but got: {} != {}")
    na, nb = a._data.ndim, b._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    if na == 1 and nb == 1:
        return dot(a, b)
    if na == 2 and nb == 1:
        return mv(a, b)
    if na == 1 and nb == 2:
        return ops.SqueezeBackward4.apply(mm(a.unsqueeze(0), b), dim=0)
    if na == 2 and nb == 2:
        return mm(a, b)
    k = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if a.shape[-1] != k:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[-1]}] but got: [{k}]."
        )
    if b.ndim <= 2:
        # (..., n, k) @ (k, m): fold the batch dims into rows, one mm (or mv), unfold.
        rows = a.reshape(-1, k)
        out = mm(rows, b) if b.ndim == 2 else mv(rows, b)
        shape = a.shape[:-1] + ((b.shape[-1],) if b.ndim == 2 else ())
        return ops.UnsafeViewBackward0.apply(out, shape=tuple(shape))
    # Both batched: broadcast the batch dims, fold them into one, bmm, unfold.
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    batch = tuple(np.broadcast_shapes(tuple(a2.shape[:-2]), tuple(b.shape[:-2])))
    n, m = a2.shape[-2], b.shape[-1]
    a3 = a2.expand(*batch, n, k).reshape(-1, n, k)
    b3 = b.expand(*batch, k, m).reshape(-1, k, m)
    out = ops.UnsafeViewBackward0.apply(bmm(a3, b3), shape=batch + (n, m))
    return out.squeeze(-2) if a.ndim == 1 else out


def bmm(input, mat2):
    """Batched matrix product of two 3-d tensors: (b, n, k) @ (b, k, m)."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
    _same_dtype(input, mat2, "expected scalar type {} but found {}")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, {input.shape[2]}] "
            f"but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    return ops.BmmBackward0.apply(input, mat2)


def _same_dtype(a, b, message):
    if a._data.dtype != b._data.dtype:
        names = {"float32": "float", "float64": "double", "int64": "long", "int32": "int", "float16": "half"}
        raise RuntimeError(message.format(names.get(a.dtype.name, a.dtype.name), names.get(b.dtype.name, b.dtype.name)))


def mm(input, mat2):
    a, b = input._data, mat2._data  # the checks read the arrays: they run on every product
    if a.ndim != 2:
        raise RuntimeError(f"self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _same_dtype(input, mat2, "expected m1 and m2 to have the same dtype, but got: {} != {}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    return ops.MmBackward0.apply(input, mat2)


def mv(input, vec):
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec.ndim}, {input.ndim}, {vec.ndim}")
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})"
        )
    return ops.MvBackward0.apply(input, vec)


def dot(input, other):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_type_name(input._data.dtype)} and {_type_name(other._data.dtype)}"
        )
    if input._data.shape[0] != other._data.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{other.shape[0]}] to have the "
            f"same number of elements, but got {input.shape[0]} and {other.shape[0]} elements respectively"
        )
    return ops.DotBackward0.apply(input, other)


# --- elementwise functions -------------------------------------------------------------------
def _unary(op):
    def function(input):
        if type(input) is not Tensor:
            raise TypeError(f"{op.__name__[:-9].lower()}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return op.apply(_to_float(input))

    return function


exp = _unary(ops.ExpBackward0)
log = _unary(ops.LogBackward0)
sqrt = _unary(ops.SqrtBackward0)
sin = _unary(ops.SinBackward0)
cos = _unary(ops.CosBackward0)
tanh = _unary(ops.TanhBackward0)
sigmoid = _unary(ops.SigmoidBackward0)
for _f, _doc in ((exp, "e to the power of each element"), (log, "natural logarithm"), (sqrt, "square root"),
                 (sin, "sine"), (cos, "cosine"), (tanh, "hyperbolic tangent"), (sigmoid, "1 / (1 + exp(-x))")):
    _f.__doc__ = f"Elementwise {_doc}."
del _f, _doc


def abs(input):  # noqa: A001
    return ops.AbsBackward0.apply(input)


def sign(input):
    return ops.SignBackward0.apply(input)


def relu(input):
    return ops.ReluBackward0.apply(input)


def maximum(input, other):
    a, b = _coerce(input, other)
    return ops.MaximumBackward0.apply(a, b)


def minimum(input, other):
    a, b = _coerce(input, other)
    return ops.MinimumBackward0.apply(a, b)


def clamp(input, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if type(min) is Tensor or type(max) is Tensor:
        out = input
        if min is not None:
            out = maximum(out, min)
        if max is not None:
            out = minimum(out, max)
        return out
    if input._data.dtype.kind != "f" and builtins.any(isinstance(v, builtins.float) for v in (min, max)):
        input = _to_float(input)
    return ops.ClampBackward1.apply(input, min=min, max=max)


clip = clamp


def where(condition, input, other):
    condition = condition if type(condition) is Tensor else Tensor._make(np.asarray(condition))
    if condition._data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {_type_name(condition._data.dtype)}")
    a, b = _coerce(input, other)
    a = a if type(a) is Tensor else Tensor._make(np.asarray(a, dtype=b._data.dtype))
    b = b if type(b) is Tensor else Tensor._make(np.asarray(b, dtype=a._data.dtype))
    return ops.WhereBackward0.apply(a, b, condition=condition)


# --- comparisons (no gradient: they return bool tensors) -------------------------------------
def _comparison(ufunc):
    def compare(input, other):
        a, b = _coerce(input, other)
        return Tensor._make(np.asarray(ufunc(ops._data(a), ops._data(b))))

    compare.__doc__ = f"Elementwise ``{ufunc.__name__}``, as a bool tensor."
    return compare


eq, ne = _comparison(np.equal), _comparison(np.not_equal)
lt, le = _comparison(np.less), _comparison(np.less_equal)
gt, ge = _comparison(np.greater), _comparison(np.greater_equal)


def logical_and(input, other):
    return Tensor._make(np.logical_and(ops._data(input), ops._data(other)))


def logical_or(input, other):
    return Tensor._make(np.logical_or(ops._data(input), ops._data(other)))


def logical_not(input):
    return Tensor._make(np.logical_not(input._data))


def isnan(input):
    return Tensor._make(np.isnan(input._data))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if all elements are close: ``|input - other| <= atol + rtol * |other|``."""
    a, b = _coerce(input, other)
    return builtins.bool(np.allclose(ops._data(a), ops._data(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _coerce(input, other)
    return Tensor._make(np.isclose(ops._data(a), ops._data(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other):
    return input.shape == other.shape and builtins.bool(np.array_equal(input._data, other._data))


def all(input, dim=None, keepdim=False):  # noqa: A001
    return Tensor._make(np.asarray(np.all(input._data, axis=dim, keepdims=keepdim)))


def any(input, dim=None, keepdim=False):  # noqa: A001
    return Tensor._make(np.asarray(np.any(input._data, axis=dim, keepdims=keepdim)))


def argmax(input, dim=None, keepdim=False):
    return Tensor._make(np.asarray(np.argmax(input._data, axis=dim, keepdims=keepdim), dtype=np.int64))


def argmin(input, dim=None, keepdim=False):
    return Tensor._make(np.asarray(np.argmin(input._data, axis=dim, keepdims=keepdim), dtype=np.int64))


# --- reductions -----------------------------------------------------------------------------
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """Sum of all elements (``SumBackward0``) or along ``dim`` (``SumBackward1``)."""
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind == "b":
        input = input.to(dtypes.int64)
    if dim is None or dim == ():
        return ops.SumBackward0.apply(input) if not keepdim else ops.SumBackward1.apply(input, dim=None, keepdim=True)
    return ops.SumBackward1.apply(input, dim=dim, keepdim=keepdim)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind != "f":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
            f"Got: {_type_name(input._data.dtype)}"
        )
    if dim is None:
        return ops.MeanBackward0.apply(input) if not keepdim else ops.MeanBackward1.apply(input, dim=None, keepdim=True)
    return ops.MeanBackward1.apply(input, dim=dim, keepdim=keepdim)


_MaxMin = collections.namedtuple("max", ["values", "indices"])
_MinMax = collections.namedtuple("min", ["values", "indices"])
for _t, _name in ((_MaxMin, "max"), (_MinMax, "min")):
    _t.__repr__ = lambda self, _name=_name: f"torch.return_types.{_name}(\nvalues={self.values},\nindices={self.indices})"
del _t, _name


def max(input, dim=None, keepdim=False):  # noqa: A001
    """Largest element; with ``dim``, ``(values, indices)`` along it; with a tensor, ``maximum``."""
    return _extreme(input, dim, keepdim, ops.MaxBackward1, ops.MaxBackward0, np.argmax, _MaxMin, maximum)


def min(input, dim=None, keepdim=False):  # noqa: A001
    return _extreme(input, dim, keepdim, ops.MinBackward1, ops.MinBackward0, np.argmin, _MinMax, minimum)


def _extreme(input, dim, keepdim, whole_op, dim_op, arg, result_type, elementwise):
    if type(dim) is Tensor:
        return elementwise(input, dim)
    if dim is None:
        return whole_op.apply(input)
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return result_type(input.clone(), Tensor._make(np.asarray(0)))
    indices = np.asarray(arg(input._data, axis=d, keepdims=keepdim), dtype=np.int64)
    values = dim_op.apply(input, dim=d, keepdim=keepdim, indices=indices)
    return result_type(values, Tensor._make(indices))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The Euclidean (2-) norm by default: ``sqrt(sum(x ** 2))``."""
    if p in ("fro", None):
        p = 2
    if input._data.dtype.kind != "f":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_type_name(input._data.dtype)}"
        )
    return ops.LinalgVectorNormBackward0.apply(input, p=p, dim=dim, keepdim=keepdim)


def var(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    ddof = (1 if unbiased else 0) if correction is None else correction
    m = input.mean(dim=dim, keepdim=True)
    d = input - m
    n = input.numel() if dim is None else math.prod([input.shape[x] for x in ops._dims(dim, input.ndim)])
    return (d * d).sum(dim=dim, keepdim=keepdim) / builtins.max(n - ddof, 0)


def std(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


def softmax(input, dim):
    shifted = input - input.detach().max(dim=dim, keepdim=True).values
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(input, dim):
    shifted = input - input.detach().max(dim=dim, keepdim=True).values
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()


def cumsum(input, dim):
    d = _wrap_dim(dim, input.ndim)
    lower = Tensor._make(np.tril(np.ones((input.shape[d], input.shape[d]), dtype=input._data.dtype)))
    return (input.transpose(d, -1) @ lower.t()).transpose(d, -1) if input.ndim > 1 else lower @ input


# --- shapes -------------------------------------------------------------------------------
def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, dtypes.Size)):
        shape = tuple(shape[0])
    return tuple(builtins.int(s) for s in shape)


def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod([s for s in shape if s != -1])
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return tuple(shape)


def reshape(input, *shape):
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    return ops.ViewBackward0.apply(input, shape=shape)


def _reshape_without_copy(array, shape):
    """NumPy refuses exactly when the new shape would need a copy (that is when view() must fail)."""
    if _RESHAPE_TAKES_COPY:
        return np.reshape(array, shape, copy=False)  # ValueError if a copy is needed
    probe = array.view()
    probe.shape = shape  # NumPy < 2.1: AttributeError if a copy is needed
    return probe


_RESHAPE_TAKES_COPY = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise RuntimeError("view(dtype) is not supported by autograd_core; use .to(dtype)")
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    try:
        _reshape_without_copy(input._data, shape)
    except (AttributeError, ValueError):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            "two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return ops.ViewBackward0.apply(input, shape=shape)


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    shape = input.shape
    return reshape(input, *shape[:s], math.prod(shape[s:e + 1]), *shape[e + 1:])


def permute(input, *dims):
    dims = _shape_arg(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
            f"ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return ops.PermuteBackward0.apply(input, dims=dims)


def transpose(input, dim0, dim1):
    n = input._data.ndim
    return ops.TransposeBackward0.apply(input, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


swapaxes = transpose


def t(input):
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return ops.TBackward0.apply(input)


def _T(input):
    if input.ndim != 2 and input.ndim != 0:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
            "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
            "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
            UserWarning, stacklevel=2,
        )
    return ops.PermuteBackward0.apply(input, dims=tuple(range(input.ndim - 1, -1, -1)))


def squeeze(input, dim=None):
    if dim is None:
        return ops.SqueezeBackward0.apply(input)
    return ops.SqueezeBackward1.apply(input, dim=_wrap_dim(dim, input.ndim))


def unsqueeze(input, dim):
    return ops.UnsqueezeBackward0.apply(input, dim=_wrap_dim(dim, input.ndim + 1))


def expand(input, *sizes):
    sizes = list(_shape_arg(sizes))
    ndim = input._data.ndim
    if len(sizes) < ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(input.shape)}}}, size={sizes}): the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor ({input.ndim})"
        )
    lead = len(sizes) - ndim
    shape = input._data.shape
    for i, s in enumerate(sizes):
        if s == -1:
            if i < lead:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                )
            sizes[i] = shape[i - lead]
    try:
        return ops.ExpandBackward0.apply(input, shape=tuple(sizes))
    except ValueError:  # from np.broadcast_to: the sizes do not fit the tensor's
        misfits = [i for i in range(lead, len(sizes)) if shape[i - lead] not in (1, sizes[i])]
        if not misfits:  # only a negative size where the tensor has 1 (or a new dim)
            raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.min(sizes)}: {sizes}") from None
        d = misfits[-1]
        raise RuntimeError(
            f"The expanded size of the tensor ({sizes[d]}) must match the existing size ({shape[d - lead]}) at "
            f"non-singleton dimension {d}.  Target sizes: {sizes}.  Tensor sizes: {list(shape)}"
        ) from None


def expand_as(input, other):
    return expand(input, *other.shape)


def gather(input, dim, index):
    return ops.GatherBackward0.apply(input, dim=_wrap_dim(dim, input.ndim), index=index._data)


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and {list(t.shape)} at entry {i}"
            )
    return ops.StackBackward0.apply(*tensors, dim=_wrap_dim(dim, tensors[0].ndim + 1))


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    d = _wrap_dim(dim, tensors[0].ndim)
    return ops.CatBackward0.apply(*tensors, dim=d)


concat = concatenate = cat


def unbind(input, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return tuple(input.select(d, i) for i in range(input.shape[d]))


def split(input, split_size_or_sections, dim=0):
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(split_size_or_sections, numbers.Integral):
        sizes = [split_size_or_sections] * (n // split_size_or_sections)
        if n % split_size_or_sections:
            sizes.append(n % split_size_or_sections)
    else:
        sizes = list(split_size_or_sections)
    out, start = [], 0
    for s in sizes:
        out.append(input.narrow(d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    n = input.shape[_wrap_dim(dim, input.ndim)]
    return split(input, -(-n // chunks), dim)


def select(input, dim, index):
    key = (slice(None),) * _wrap_dim(dim, input.ndim) + (index,)
    return ops.SelectBackward0.apply(input, key=key)


def narrow(input, dim, start, length):
    key = (slice(None),) * _wrap_dim(dim, input.ndim) + (slice(start, start + length),)
    return ops.SliceBackward0.apply(input, key=key)


def index(input, key):
    """``x[key]`` for ints, slices, ``...``, ``None``, boolean masks and integer arrays.

    As in PyTorch, the key is applied one item at a time: an int is a
    ``SelectBackward0``, a slice a ``SliceBackward0``, ``None`` an
    ``UnsqueezeBackward0`` (all views; ``x[1, 2]`` is two selects). Then the
    integer arrays and masks, all together, make one ``IndexBackward0`` (a copy).
    """
    key = ops.index_key(key)
    if type(key) is not tuple:
        _check_index(input, (key,))
        if isinstance(key, slice):  # x[:] is a slice even when it takes everything
            return ops.SliceBackward0.apply(input, key=key)
        key = (key,)
    _check_index(input, key)
    out, dim, rest = input, 0, []  # rest: the key left for the arrays, over out's dims
    for k in key:
        if k is Ellipsis:
            skipped = input.ndim - builtins.sum(_dims_taken(x) for x in key)
            rest += [slice(None)] * skipped
            dim += skipped
        elif k is None:
            out = ops.UnsqueezeBackward0.apply(out, dim=dim)
            rest.append(slice(None))
            dim += 1
        elif isinstance(k, slice):
            if k.indices(out.shape[dim]) != (0, out.shape[dim], 1):  # a slice of everything is skipped
                out = ops.SliceBackward0.apply(out, key=(slice(None),) * dim + (k,))
            rest.append(slice(None))
            dim += 1
        elif isinstance(k, np.ndarray):
            rest.append(k)
            dim += _dims_taken(k)
        else:
            out = ops.SelectBackward0.apply(out, key=(slice(None),) * dim + (k,))
    if builtins.any(isinstance(k, np.ndarray) for k in rest):
        return ops.IndexBackward0.apply(out, key=tuple(rest))
    return out if out is not input else ops.AliasBackward0.apply(input)


def _dims_taken(k):
    """How many dims of the indexed tensor an index item uses up."""
    if k is None or k is Ellipsis:
        return 0
    return k.ndim if isinstance(k, np.ndarray) and k.dtype.kind == "b" else 1


def _check_index(input, items):
    dim = 0
    for k in items:
        if k is None or k is Ellipsis:
            if k is Ellipsis:
                dim = input.ndim - builtins.sum(1 for x in items if x is not None and x is not Ellipsis)
            continue
        if isinstance(k, (builtins.int, np.integer)) and not isinstance(k, builtins.bool):
            if dim >= input.ndim:
                raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
            size = input.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {size}")
        elif isinstance(k, np.ndarray) and k.dtype.kind == "b":
            if k.shape != tuple(input.shape[dim:dim + k.ndim]):
                raise IndexError(
                    f"The shape of the mask {list(k.shape)} at index 0 does not match the shape of the indexed "
                    f"tensor {list(input.shape)} at index {dim}"
                )
            dim += k.ndim
            continue
        elif isinstance(k, np.ndarray):
            if dim < input.ndim and k.size and (k.max() >= input.shape[dim] or k.min() < -input.shape[dim]):
                bad = int(k.max()) if k.max() >= input.shape[dim] else int(k.min())
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {input.shape[dim]}")
        elif not isinstance(k, slice):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(k).__name__})"
            )
        dim += 1


# --- copies and conversions ------------------------------------------------------------------------
def clone(input):
    return ops.CloneBackward0.apply(input)


def to(input, *args, dtype=None, **kwargs):
    """``x.to(torch.float64)``, ``x.to('cpu')``: a copy in the new dtype (or ``x`` itself if unchanged)."""
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        else:
            dtypes.device(a)  # only the CPU exists
    if "device" in kwargs:
        dtypes.device(kwargs["device"])
    if dtype is None or dtypes.as_dtype(dtype).numpy == input._data.dtype:
        return input
    return ops.ToCopyBackward0.apply(input, dtype=dtypes.as_dtype(dtype))


def type_as(input, other):
    return to(input, other.dtype)


# --- attaching to Tensor --------------------------------------------------------------------------------
_OPERANDS = (Tensor, *_SCALARS)


def _operator(f):
    """``x + other``: Python's own TypeError (via NotImplemented) for operands that are not tensors or numbers."""
    return lambda self, other: f(self, other) if isinstance(other, _OPERANDS) else NotImplemented


def _reflected(f):
    return lambda self, other: f(other, self) if isinstance(other, _OPERANDS) else NotImplemented


def _arithmetic(f, ufunc, node=None, reflected=False):
    """``x + other``, ``x * other``, ``other - x``...: like ``_operator``, with a shortcut.

    In the common case (a float tensor with a Python number, or two tensors of one float
    dtype and one shape) type promotion and broadcasting have nothing to do, so the
    operator skips them: if something must be recorded it applies the ``node`` class
    directly; if not (under ``no_grad``, and inside every backward formula) the result is
    exactly NumPy's ``ufunc``. Every other case takes the full path through ``f``.
    """
    def operator(self, other):
        a = self._data
        if a.dtype.kind == "f":
            if type(other) is float or type(other) is int:
                b = other
            elif type(other) is Tensor and other._data.dtype == a.dtype and other._data.shape == a.shape:
                b = other._data
            else:
                b = None
            if b is not None:
                if grad_mode._State.enabled and (self._requires_grad or type(other) is Tensor and other._requires_grad):
                    if node is not None:
                        return node.apply(self, other)
                else:
                    out = ufunc(b, a) if reflected else ufunc(a, b)
                    return Tensor._make(out if type(out) is np.ndarray else np.asarray(out))  # 0-d: NumPy gives a scalar
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return f(other, self) if reflected else f(self, other)
    return operator


_METHODS = dict(
    add=add, sub=sub, mul=mul, div=div, true_divide=true_divide, neg=neg, negative=neg, reciprocal=reciprocal,
    pow=pow, square=square, matmul=matmul, mm=mm, bmm=bmm, mv=mv, dot=dot, exp=exp, log=log, sqrt=sqrt, sin=sin, cos=cos,
    tanh=tanh, sigmoid=sigmoid, abs=abs, sign=sign, relu=relu, maximum=maximum, minimum=minimum, clamp=clamp,
    clip=clamp, eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, allclose=allclose, isclose=isclose, equal=equal,
    all=all, any=any, argmax=argmax, argmin=argmin, sum=sum, mean=mean, max=max, min=min, norm=norm, var=var,
    std=std, softmax=softmax, log_softmax=log_softmax, cumsum=cumsum, reshape=reshape, view=view, flatten=flatten,
    permute=permute, transpose=transpose, swapaxes=swapaxes, t=t, squeeze=squeeze, unsqueeze=unsqueeze,
    expand=expand, expand_as=expand_as, gather=gather, unbind=unbind, split=split, chunk=chunk, select=select,
    narrow=narrow, clone=clone, to=to, type_as=type_as, isnan=isnan, logical_not=logical_not,
)
for _name, _f in _METHODS.items():
    setattr(Tensor, _name, _f)

Tensor.view_as = lambda self, other: view(self, *other.shape)
Tensor.reshape_as = lambda self, other: reshape(self, *other.shape)
Tensor.T = property(_T)
Tensor.mT = property(lambda self: transpose(self, -2, -1))
Tensor.float = lambda self: to(self, dtypes.float32)
Tensor.double = lambda self: to(self, dtypes.float64)
Tensor.half = lambda self: to(self, dtypes.float16)
Tensor.long = lambda self: to(self, dtypes.int64)
Tensor.int = lambda self: to(self, dtypes.int32)
Tensor.bool = lambda self: to(self, dtypes.bool)
Tensor.cpu = lambda self: self
Tensor.contiguous = lambda self, memory_format=None: self if self._data.flags.c_contiguous else clone(self)
Tensor.__getitem__ = index

# (number + x and number * x record the same nodes as x + number and x * number; number - x is RsubBackward1.)
Tensor.__add__ = Tensor.__radd__ = _arithmetic(add, np.add, ops.AddBackward0)
Tensor.__mul__ = Tensor.__rmul__ = _arithmetic(mul, np.multiply, ops.MulBackward0)
Tensor.__sub__ = _arithmetic(sub, np.subtract, ops.SubBackward0)
Tensor.__rsub__ = _arithmetic(sub, np.subtract, reflected=True)
Tensor.__truediv__, Tensor.__rtruediv__ = _operator(div), _reflected(div)
Tensor.__pow__, Tensor.__rpow__ = _operator(pow), _reflected(pow)
Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = _reflected(matmul)
Tensor.__neg__ = neg
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = abs


def _equality(f):
    def dunder(self, other):
        try:
            return f(self, other)
        except TypeError:  # x == None, x == "text": not comparable, so Python says False
            return NotImplemented
    return dunder


Tensor.__eq__, Tensor.__ne__ = _equality(eq), _equality(ne)
Tensor.__lt__, Tensor.__le__, Tensor.__gt__, Tensor.__ge__ = lt, le, gt, ge
Tensor.__and__ = lambda self, other: Tensor._make(np.logical_and(self._data, ops._data(other)) if self._data.dtype.kind == "b" else self._data & ops._data(other))
Tensor.__or__ = lambda self, other: Tensor._make(np.logical_or(self._data, ops._data(other)) if self._data.dtype.kind == "b" else self._data | ops._data(other))
Tensor.__invert__ = lambda self: Tensor._make(~self._data)
Tensor.__floordiv__ = lambda self, other: Tensor._make(np.asarray(np.floor_divide(self._data, ops._data(other))))
Tensor.__mod__ = lambda self, other: Tensor._make(np.asarray(np.mod(self._data, ops._data(other))))
