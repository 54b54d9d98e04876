"""The public operations, and the registry that names each of them once.

These functions check and prepare their arguments (type promotion, dims,
PyTorch's error messages) and hand the work to a node class in ``ops.py``.
Each is registered where it is defined, with ``@public``: that one line makes it
``torch.name`` (``FUNCTIONS``, which the package exports) and ``x.name``
(``METHODS``, which ``methods.py`` attaches to ``Tensor``). An elementwise function
of one tensor is a single line of the table ``ELEMENTWISE``.
"""
from __future__ import annotations

import builtins
import collections
import math
import numbers
import warnings

import numpy as np

from . import _speed, dtypes, ops, torch_warnings
from .broadcast import check_broadcast
from .creation import linspace
from .numpy_names import accepts_numpy_names
from .out_arg import accepts_out
from .tensor import Tensor, _type_name, _wrap_dim

_SCALARS = (builtins.int, builtins.float, builtins.bool, np.number, np.bool_)

# --- the registry -------------------------------------------------------------------------
FUNCTIONS = {}  # torch.<name>: autograd_core exports every one of these
METHODS = {}  # x.<name>: methods.py attaches every one of these to Tensor


def register(name, f, function=True, method=True):
    if function:
        FUNCTIONS[name] = f
    if method:
        METHODS[name] = f
    return f


def public(*aliases, function=True, method=True):
    """Decorator: the function below is ``torch.<its name>`` and ``x.<its name>``, and so are
    its ``aliases``; ``function=False`` or ``method=False`` where PyTorch has only one of the two."""
    def decorate(f):
        for name in (f.__name__, *aliases):
            register(name, f, function, method)
        return f

    return decorate


# --- type promotion ----------------------------------------------------------------------
def _coerce(a, b):
    """Bring two operands to PyTorch's result dtype and check that their shapes broadcast.

    Python numbers stay numbers (NumPy then keeps the tensor's dtype, as PyTorch does).
    """
    if _speed.enabled and _speed.operands_ready(a, b):
        return a, b
    return _coerce_general(a, b)


def _coerce_general(a, b):
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
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


def _check_broadcast(a, b):
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.shape != b._data.shape:
        check_broadcast(a._data.shape, b._data.shape)


# --- arithmetic -------------------------------------------------------------------------
@public()
def add(input, other, *, alpha=1):
    a, b = _coerce(input, other)
    if not isinstance(a, Tensor):  # number + tensor
        a, b = b, a
    return ops.AddBackward0.apply(a, b, alpha=alpha)


def _is_bool(x):
    return isinstance(x, (builtins.bool, np.bool_)) or (isinstance(x, Tensor) and x._data.dtype.kind == "b")


@public()
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
    if not isinstance(a, Tensor):
        return ops.RsubBackward1.apply(b if alpha == 1 else b * alpha, other=a)
    return ops.SubBackward0.apply(a, b, alpha=alpha)


@public(method=False)
def rsub(input, other):
    return sub(other, input)


@public()
def mul(input, other):
    a, b = _coerce(input, other)
    if not isinstance(a, Tensor):
        a, b = b, a
    return ops.MulBackward0.apply(a, b)


@public()
def div(input, other):
    a, b = _coerce(input, other)
    if not isinstance(a, Tensor):  # number / tensor = number * (1 / tensor), as PyTorch records it
        b = _to_float(b)
        return ops.MulBackward0.apply(ops.ReciprocalBackward0.apply(b), a)
    if a._data.dtype.kind != "f":  # true division of integers gives floats
        a = _to_float(a)
        b = _to_float(b) if isinstance(b, Tensor) else b
    return ops.DivBackward0.apply(a, b)


def _to_float(t):
    return t if t._data.dtype.kind == "f" else t.to(dtypes.get_default_dtype())


@public()
def true_divide(input, other):
    return div(input, other)


@public("negative")
def neg(input):
    return ops.NegBackward0.apply(input)


@public()
def reciprocal(input):
    return ops.ReciprocalBackward0.apply(_to_float(input))


@public()
def pow(input, exponent):
    if not isinstance(input, Tensor):  # number ** tensor
        b = exponent if exponent._data.dtype.kind == "f" or isinstance(input, builtins.int) else _to_float(exponent)
        if b._data.dtype.kind == "b":
            b = b.to(dtypes.int64)
        return ops.PowBackward2.apply(b, base=input)
    if isinstance(exponent, Tensor):
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


@public()
def square(input):
    return pow(input, 2)


@public()
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


@public()
def bmm(input, mat2):
    """Batched matrix product of two 3-d tensors: (b, n, k) @ (b, k, m)."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
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


@public()
def mm(input, mat2):
    a, b = input._data, mat2._data  # the checks read the arrays: they run on every product
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _same_dtype(input, mat2, "expected m1 and m2 to have the same dtype, but got: {} != {}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    return ops.MmBackward0.apply(input, mat2)


@public()
def mv(input, vec):
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {vec.ndim}, {input.ndim}, {vec.ndim}")
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), vec ({vec.shape[0]})"
        )
    return ops.MvBackward0.apply(input, vec)


@public()
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
def elementwise(name, node, what):
    """Register ``torch.name(x)`` and ``x.name()``: ``node`` applied to ``x`` (integers become floats)."""
    def function(input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return node.apply(_to_float(input))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise {what}."
    return register(name, function)


ELEMENTWISE = [  # one line an operation: its name, its node class in ops.py, what it computes
    ("exp", ops.ExpBackward0, "e to the power of each element"),
    ("log", ops.LogBackward0, "natural logarithm"),
    ("log10", ops.Log10Backward0, "logarithm to base 10"),
    ("sqrt", ops.SqrtBackward0, "square root"),
    ("sin", ops.SinBackward0, "sine"),
    ("cos", ops.CosBackward0, "cosine"),
    ("sinh", ops.SinhBackward0, "hyperbolic sine"),
    ("cosh", ops.CoshBackward0, "hyperbolic cosine"),
    ("tanh", ops.TanhBackward0, "hyperbolic tangent"),
    ("sigmoid", ops.SigmoidBackward0, "1 / (1 + exp(-x))"),
]
for _name, _node, _what in ELEMENTWISE:
    elementwise(_name, _node, _what)
del _name, _node, _what


@public()
def abs(input):
    return ops.AbsBackward0.apply(input)


@public()
def sign(input):
    return ops.SignBackward0.apply(input)


@public()
def relu(input):
    return ops.ReluBackward0.apply(input)


@public()
def maximum(input, other):
    a, b = _coerce(input, other)
    return ops.MaximumBackward0.apply(a, b)


@public()
def minimum(input, other):
    a, b = _coerce(input, other)
    return ops.MinimumBackward0.apply(a, b)


@public("clip")
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        bounds = [b if b is None or isinstance(b, Tensor) else Tensor._make(np.asarray(b, dtype=input._data.dtype))
                  for b in (min, max)]
        for i, bound in enumerate(bounds):  # the three in PyTorch's result dtype, their shapes broadcast
            if bound is not None:
                input, bounds[i] = _coerce(input, bound)
        low, high = (None if b is None else b.to(input.dtype) for b in bounds)
        return ops.ClampBackward0.apply(input, low, high)
    if input._data.dtype.kind != "f" and builtins.any(isinstance(v, builtins.float) for v in (min, max)):
        input = _to_float(input)
    return ops.ClampBackward1.apply(input, min=min, max=max)


@public(method=False)
def where(condition, input, other):
    condition = condition if isinstance(condition, Tensor) else Tensor._make(np.asarray(condition))
    if condition._data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {_type_name(condition._data.dtype)}")
    a, b = _coerce(input, other)
    a = a if isinstance(a, Tensor) else Tensor._make(np.asarray(a, dtype=b._data.dtype))
    b = b if isinstance(b, Tensor) else Tensor._make(np.asarray(b, dtype=a._data.dtype))
    return ops.WhereBackward0.apply(a, b, condition=condition)


# --- comparisons (no gradient: they return bool tensors) -------------------------------------
def _comparison(name, ufunc):
    def compare(input, other):
        a, b = _coerce(input, other)
        return Tensor._make(np.asarray(ufunc(ops._data(a), ops._data(b))))

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"Elementwise ``{ufunc.__name__}``, as a bool tensor."
    return register(name, compare)


for _name, _ufunc in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                      ("gt", np.greater), ("ge", np.greater_equal)):
    _comparison(_name, _ufunc)
del _name, _ufunc


@public(method=False)
def logical_and(input, other):
    return Tensor._make(np.logical_and(ops._data(input), ops._data(other)))


@public(method=False)
def logical_or(input, other):
    return Tensor._make(np.logical_or(ops._data(input), ops._data(other)))


@public()
def logical_not(input):
    return Tensor._make(np.logical_not(input._data))


@public()
def isnan(input):
    return Tensor._make(np.isnan(input._data))


@public()
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if all elements are close: ``|input - other| <= atol + rtol * |other|``."""
    a, b = _coerce(input, other)
    return builtins.bool(np.allclose(ops._data(a), ops._data(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


@public()
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _coerce(input, other)
    return Tensor._make(np.isclose(ops._data(a), ops._data(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


@public()
def equal(input, other):
    return input.shape == other.shape and builtins.bool(np.array_equal(input._data, other._data))


@public()
@accepts_numpy_names
def all(input, dim=None, keepdim=False):
    return Tensor._make(np.asarray(np.all(input._data, axis=dim, keepdims=keepdim)))


@public()
@accepts_numpy_names
def any(input, dim=None, keepdim=False):
    return Tensor._make(np.asarray(np.any(input._data, axis=dim, keepdims=keepdim)))


@public()
@accepts_numpy_names
def argmax(input, dim=None, keepdim=False):
    return Tensor._make(np.asarray(np.argmax(input._data, axis=dim, keepdims=keepdim), dtype=np.int64))


@public()
@accepts_numpy_names
def argmin(input, dim=None, keepdim=False):
    return Tensor._make(np.asarray(np.argmin(input._data, axis=dim, keepdims=keepdim), dtype=np.int64))


# --- reductions -----------------------------------------------------------------------------
@public()
@accepts_numpy_names
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements (``SumBackward0``) or along ``dim`` (``SumBackward1``)."""
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind == "b":
        input = input.to(dtypes.int64)
    if dim is None or dim == ():
        return ops.SumBackward0.apply(input) if not keepdim else ops.SumBackward1.apply(input, dim=None, keepdim=True)
    return ops.SumBackward1.apply(input, dim=dim, keepdim=keepdim)


@public()
@accepts_numpy_names
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


@public()
@accepts_numpy_names
def max(input, dim=None, keepdim=False):
    """Largest element; with ``dim``, ``(values, indices)`` along it; with a tensor, ``maximum``."""
    return _extreme(input, dim, keepdim, ops.MaxBackward1, ops.MaxBackward0, np.argmax, _MaxMin, maximum)


@public()
@accepts_numpy_names
def min(input, dim=None, keepdim=False):
    return _extreme(input, dim, keepdim, ops.MinBackward1, ops.MinBackward0, np.argmin, _MinMax, minimum)


def _extreme(input, dim, keepdim, whole_op, dim_op, arg, result_type, elementwise):
    if isinstance(dim, Tensor):
        return elementwise(input, dim)
    if dim is None:
        return whole_op.apply(input)
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return result_type(input.clone(), Tensor._make(np.asarray(0)))
    indices = np.asarray(arg(input._data, axis=d, keepdims=keepdim), dtype=np.int64)
    values = dim_op.apply(input, dim=d, keepdim=keepdim, indices=indices)
    return result_type(values, Tensor._make(indices))


@public()
@accepts_numpy_names
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The Euclidean (2-) norm by default: ``sqrt(sum(x ** 2))``."""
    if p in ("fro", None):
        p = 2
    if input._data.dtype.kind != "f":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_type_name(input._data.dtype)}"
        )
    return ops.LinalgVectorNormBackward0.apply(input, p=p, dim=dim, keepdim=keepdim)


@public()
@accepts_numpy_names
def var(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    ddof = (1 if unbiased else 0) if correction is None else correction
    m = input.mean(dim=dim, keepdim=True)
    d = input - m
    n = input.numel() if dim is None else math.prod([input.shape[x] for x in ops._dims(dim, input.ndim)])
    return (d * d).sum(dim=dim, keepdim=keepdim) / builtins.max(n - ddof, 0)


@public()
@accepts_numpy_names
def std(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


@public()
@accepts_numpy_names
def softmax(input, dim, dtype=None):
    """``exp(x) / exp(x).sum(dim)``, computed without overflow; one node, as in PyTorch."""
    input = _softmax_input(input, dtype)
    return ops.SoftmaxBackward0.apply(input, dim=_wrap_dim(dim, input.ndim))


@public()
@accepts_numpy_names
def log_softmax(input, dim, dtype=None):
    input = _softmax_input(input, dtype)
    return ops.LogSoftmaxBackward0.apply(input, dim=_wrap_dim(dim, input.ndim))


def _softmax_input(input, dtype):
    input = input if dtype is None else input.to(dtype)
    if input._data.dtype.kind != "f":
        raise RuntimeError(f'"softmax_lastdim_kernel_impl" not implemented for \'{input.dtype.legacy_name[:-6]}\'')
    return input


@public()
@accepts_numpy_names
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


@public()
def reshape(input, *shape):
    """A view when the memory allows (``ViewBackward0``; ``ReshapeAliasBackward0`` for a tensor that is not
    contiguous), else a copy: ``UnsafeViewBackward0`` of a ``clone``, as PyTorch records them (the copy is
    not a view: changing it leaves ``input`` alone)."""
    shape = _infer_shape(_shape_arg(shape), input._data.size)
    if input._data.flags.c_contiguous:
        return ops.ViewBackward0.apply(input, shape=shape)
    try:
        _reshape_without_copy(input._data, shape)
    except (AttributeError, ValueError):
        return ops.UnsafeViewBackward0.apply(ops.CloneBackward0.apply(input), shape=shape)
    return ops.ReshapeAliasBackward0.apply(input, shape=shape)


def _reshape_without_copy(array, shape):
    """NumPy refuses exactly when the new shape would need a copy (that is when view() must fail)."""
    if _RESHAPE_TAKES_COPY:
        return np.reshape(array, shape, copy=False)  # ValueError if a copy is needed
    probe = array.view()
    probe.shape = shape  # NumPy < 2.1: AttributeError if a copy is needed
    return probe


_RESHAPE_TAKES_COPY = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


@public(function=False)
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


@public()
def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input  # nothing to flatten: the tensor itself, as in PyTorch
    shape = input.shape
    return reshape(input, *shape[:s], math.prod(shape[s:e + 1]), *shape[e + 1:])


@public()
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


@public("swapaxes")
def transpose(input, dim0, dim1):
    n = input._data.ndim
    return ops.TransposeBackward0.apply(input, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


@public()
def t(input):
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return ops.TBackward0.apply(input)


def _T(input):
    if input.ndim != 2 and input.ndim != 0:
        torch_warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
            "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
            "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
            "x.T", once=True,
        )
    return ops.PermuteBackward0.apply(input, dims=tuple(range(input.ndim - 1, -1, -1)))


@public()
@accepts_numpy_names
def squeeze(input, dim=None):
    if dim is None:
        return ops.SqueezeBackward0.apply(input)
    return ops.SqueezeBackward1.apply(input, dim=_wrap_dim(dim, input.ndim))


@public()
@accepts_numpy_names
def unsqueeze(input, dim):
    return ops.UnsqueezeBackward0.apply(input, dim=_wrap_dim(dim, input.ndim + 1))


@public(function=False)
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


@public(function=False)
def expand_as(input, other):
    return expand(input, *other.shape)


@public()
@accepts_numpy_names
def gather(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    if index._data.size and (index._data.max() >= input.shape[d] or index._data.min() < -input.shape[d]):
        bad = int(index._data.max()) if index._data.max() >= input.shape[d] else int(index._data.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {input.shape[d]}")
    return ops.GatherBackward0.apply(input, dim=_wrap_dim(dim, input.ndim), index=index._data)


@public(method=False)
@accepts_numpy_names
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


@public(method=False)
def meshgrid(*tensors, indexing=None):
    """Grids of coordinates: ``meshgrid(x, y, indexing="ij")`` gives ``X[i, j] = x[i]``, ``Y[i, j] = y[j]``;
    ``indexing="xy"`` swaps the first two dims (``X[j, i] = x[i]``), as NumPy's meshgrid does.
    Each grid is a view (``ExpandBackward0``) of its tensor, as in PyTorch."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    if indexing is None:
        torch_warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                            "argument.", "meshgrid", once=True)
        indexing = "ij"
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if builtins.any(t._data.dtype != tensors[0]._data.dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    tensors = list(tensors)
    swap = indexing == "xy" and len(tensors) >= 2  # PyTorch's way: swap the inputs, then the outputs
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t._data.size for t in tensors]
    grids = []
    for i, t in enumerate(tensors):
        view_shape = [1] * len(tensors)
        view_shape[i] = -1
        grids.append(expand(view(t, *view_shape), *shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@public("concat", method=False)
@accepts_numpy_names
def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    d = _wrap_dim(dim, tensors[0].ndim)
    return ops.CatBackward0.apply(*tensors, dim=d)


@public()
@accepts_numpy_names
def unbind(input, dim=0):
    """The slices along ``dim``: views of ``input`` made by one node (``UnbindBackward0``)."""
    return ops.UnbindBackward0.apply(input, dim=_wrap_dim(dim, input.ndim))


@public()
@accepts_numpy_names
def split(input, split_size_or_sections, dim=0):
    """Pieces along ``dim``: of ``split_size`` each (the last one may be smaller; ``SplitBackward0``)
    or of the sizes listed (``SplitWithSizesBackward0``); views of ``input`` made by one node."""
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(split_size_or_sections, numbers.Integral):
        size = int(split_size_or_sections)
        if size < 0 or (size == 0 and n):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                               if size == 0 else f"split expects split_size be non-negative, but got split_size={size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if size else [0]
        return ops.SplitBackward0.apply(input, sizes=sizes, dim=d)
    sizes = [int(s) for s in split_size_or_sections]
    if builtins.sum(sizes) != n or builtins.any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    return ops.SplitWithSizesBackward0.apply(input, sizes=sizes, dim=d)


@public()
@accepts_numpy_names
def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[_wrap_dim(dim, input.ndim)]
    return split(input, -(-n // chunks), dim) if n else split(input, [0] * chunks, dim)


@public()
@accepts_numpy_names
def select(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    if not -input.shape[d] <= index < input.shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    key = (slice(None),) * d + (index,)
    return ops.SelectBackward0.apply(input, key=key)


@public()
@accepts_numpy_names
def narrow(input, dim, start, length):
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    return ops.SliceBackward0.apply(input, key=key)


# --- copies and conversions ------------------------------------------------------------------------
@public()
def clone(input):
    return ops.CloneBackward0.apply(input)


@public(function=False)
def to(input, *args, dtype=None, **kwargs):
    """``x.to(torch.float64)``, ``x.to('cpu')``: a copy in the new dtype (or ``x`` itself if unchanged)."""
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        else:
            dtypes.on_cpu(a)  # only the CPU exists
    if "device" in kwargs:
        dtypes.on_cpu(kwargs["device"])
    if dtype is None or dtypes.as_dtype(dtype).numpy == input._data.dtype:
        return input
    return ops.ToCopyBackward0.apply(input, dtype=dtypes.as_dtype(dtype))


@public(function=False)
def type_as(input, other):
    return to(input, other.dtype)


def _to_dtype(dtype):
    def convert(self):
        return to(self, dtype)

    convert.__doc__ = f"This tensor as {dtype} (itself if it already is)."
    return convert


for _name, _dtype in (("float", dtypes.float32), ("double", dtypes.float64), ("half", dtypes.float16),
                      ("long", dtypes.int64), ("int", dtypes.int32), ("short", dtypes.int16),
                      ("char", dtypes.int8), ("byte", dtypes.uint8), ("bool", dtypes.bool)):
    register(_name, _to_dtype(_dtype), function=False)
del _name, _dtype


@public(function=False)
def view_as(input, other):
    return view(input, *other.shape)


@public(function=False)
def reshape_as(input, other):
    return reshape(input, *other.shape)


@public(function=False)
def cpu(input):
    return input


@public(function=False)
def contiguous(input, memory_format=None):
    return input if input._data.flags.c_contiguous else clone(input)


register("T", property(_T), function=False)
register("mT", property(lambda input: transpose(input, -2, -1)), function=False)


@public(method=False)
def is_tensor(obj):
    return isinstance(obj, Tensor)


@public(method=False)
def numel(input):
    return input.numel()


@public(method=False)
def detach(input):
    return input.detach()


# torch.add(x, y, out=result), ...: the functions tutorials call with out= (methods take no out=).
for _name in ("add", "sub", "mul", "div", "true_divide", "pow", "matmul", "mm", "bmm", "mv", "dot", "neg", "abs",
              "exp", "log", "log10", "sqrt", "sin", "cos", "sinh", "cosh", "tanh", "sigmoid", "clamp", "clip",
              "maximum", "minimum", "cat", "concat", "stack"):
    FUNCTIONS[_name] = accepts_out(FUNCTIONS[_name])
del _name


# --- repeating, masking, sorting, counting --------------------------------------------------------
def _return_type(name, fields):
    """``torch.return_types.sort(values=..., indices=...)``: a named tuple printed as PyTorch prints it."""
    result = collections.namedtuple(name, fields)
    result.__repr__ = lambda self: f"torch.return_types.{name}(\n" + ",\n".join(
        f"{field}={value}" for field, value in zip(fields, self)) + ")"
    return result


_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int", "int32": "int",
                 "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
_Sort = _return_type("sort", ["values", "indices"])
_Histogram = _return_type("histogram", ["hist", "bin_edges"])


@public(function=False)
def repeat(input, *sizes):
    """``x.repeat(2, 3)``: ``x`` tiled 2 times along dim 0 and 3 times along dim 1 (more sizes than
    ``x`` has dims add leading dims)."""
    sizes = _shape_arg(sizes)
    if len(sizes) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    if builtins.any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.min(sizes)}: {list(sizes)}")
    return ops.RepeatBackward0.apply(input, repeats=sizes)


@public()
def index_select(input, dim, index):
    """The slices of ``input`` along ``dim`` at ``index`` (a 1-d integer tensor), in its order."""
    d = _wrap_dim(dim, builtins.max(input._data.ndim, 1))
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._data.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    size = input.shape[d] if input._data.ndim else 1
    bad = index._data[(index._data < 0) | (index._data >= size)]
    if bad.size:
        raise IndexError("index out of range in self")
    if input._data.ndim == 0:
        return ops.IndexSelectBackward0.apply(input.reshape(1), dim=0, index=index._data.reshape(-1)).reshape(())
    return ops.IndexSelectBackward0.apply(input, dim=d, index=index._data.reshape(-1))


@public()
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along ``dim``) repeated: ``tensor([1, 2]).repeat_interleave(2)`` is
    ``tensor([1, 1, 2, 2])``; ``repeats`` may be a tensor of one count per element.
    ``torch.repeat_interleave(counts)`` alone gives the indices ``0`` counts[0] times, ``1`` ..."""
    if repeats is None:  # torch.repeat_interleave(repeats): the indices, repeated
        counts = input
        if counts._data.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if counts._data.dtype.kind not in "iu":
            raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for \'{counts.dtype.legacy_name[:-6]}\'')
        if (counts._data < 0).any():
            raise RuntimeError("repeats can not be negative")
        return Tensor._make(np.repeat(np.arange(counts._data.size), counts._data.reshape(-1)).astype(counts._data.dtype))
    if dim is None:
        input = input.reshape(-1) if input._data.ndim != 1 else input
        dim = 0
    d = _wrap_dim(dim, builtins.max(input._data.ndim, 1))
    if isinstance(repeats, Tensor):  # one count per slice (a single count is given to every slice)
        if repeats._data.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats._data.size == 1:
            repeats = repeats.reshape(1).expand(input.shape[d])
        elif repeats._data.shape[0] != input.shape[d]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats._data.shape[0]} and input.size({d}) = {input.shape[d]}")
        return index_select(input, d, repeat_interleave(repeats))
    count = builtins.int(repeats)
    if count < 0:
        raise RuntimeError("repeats can not be negative")
    # PyTorch's way, node for node: unsqueeze, expand, a contiguous copy, and a view of it
    shape = list(input.shape)
    expanded = input.unsqueeze(d + 1).expand(*shape[:d + 1], count, *shape[d + 1:])
    shape[d] *= count
    return expanded.clone().view(*shape)


@public()
def tril(input, diagonal=0):
    """The lower triangle of the last two dims: zeros above the ``diagonal``-th diagonal."""
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return ops.TrilBackward0.apply(input, diagonal=diagonal)


@public()
def triu(input, diagonal=0):
    """The upper triangle of the last two dims: zeros below the ``diagonal``-th diagonal."""
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return ops.TriuBackward0.apply(input, diagonal=diagonal)


@public()
def masked_fill(input, mask, value):
    """``value`` where ``mask`` (a bool tensor that broadcasts to ``input``) is True, ``input`` elsewhere."""
    if not isinstance(mask, Tensor) or mask._data.dtype.kind != "b":
        kind = _C_TYPE_NAMES.get(mask._data.dtype.name) if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {kind}")
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._data.ndim} dimension(s).")
    check_broadcast(mask._data.shape, input._data.shape)
    shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    if shape != input._data.shape:
        input = input.expand(*shape)
    mask_data = np.broadcast_to(mask._data, shape)
    if isinstance(value, Tensor):
        return ops.MaskedFillBackward1.apply(input, value, mask=mask_data)
    if input._data.dtype.kind in "iub" and isinstance(value, builtins.float) and not math.isfinite(value):
        raise RuntimeError(f"value cannot be converted to type {_type_name(input._data.dtype)} without overflow")
    return ops.MaskedFillBackward0.apply(input, mask=mask_data, value=value)


@public()
def clamp_min(input, min):
    """``max(input, min)`` elementwise (``clamp(input, min=min)``, with PyTorch's own node)."""
    if isinstance(min, Tensor):
        a, b = _coerce(input, min)
        return ops.ClampMinBackward1.apply(a, b)
    if input._data.dtype.kind != "f" and isinstance(min, builtins.float):
        input = _to_float(input)
    return ops.ClampMinBackward0.apply(input, min=min)


@public()
def clamp_max(input, max):
    """``min(input, max)`` elementwise."""
    if isinstance(max, Tensor):
        a, b = _coerce(input, max)
        return ops.ClampMaxBackward1.apply(a, b)
    if input._data.dtype.kind != "f" and isinstance(max, builtins.float):
        input = _to_float(input)
    return ops.ClampMaxBackward0.apply(input, max=max)


@public()
@accepts_numpy_names
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` along ``dim``, without overflow: the log of a softmax's denominator."""
    input = _to_float(input)
    if input._data.ndim == 0:
        return ops.LogsumexpBackward0.apply(input, dim=None, keepdim=keepdim)
    if isinstance(dim, (tuple, list)):
        dim = tuple(_wrap_dim(x, input.ndim) for x in dim)
    else:
        dim = _wrap_dim(dim, input.ndim)
    return ops.LogsumexpBackward0.apply(input, dim=dim, keepdim=keepdim)


def _sort_order(data, dim, descending):
    """Indices that sort ``data`` along ``dim``: stable, NaN counted largest, as PyTorch sorts."""
    if data.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(data, axis=dim, kind="stable").astype(np.int64)
    # descending and stable: sort the reversed array ascending, reverse that, and count from the end
    order = np.flip(np.argsort(np.flip(data, dim), axis=dim, kind="stable"), dim)
    return (data.shape[dim] - 1 - order).astype(np.int64)


@public()
def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)``: ``input`` sorted along ``dim`` (ascending; ties keep their order)."""
    d = _wrap_dim(dim, builtins.max(input._data.ndim, 1))
    indices = _sort_order(input._data, d, descending)
    values = ops.SortBackward0.apply(input, dim=d, indices=indices)
    return _Sort(values, Tensor._make(indices))


@public()
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim`` (``sort(input, dim).indices``)."""
    d = _wrap_dim(dim, builtins.max(input._data.ndim, 1))
    return Tensor._make(_sort_order(input._data, d, descending))


@public()
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """Counts of ``input``'s elements in ``bins`` equal bins from its smallest to its largest element
    (or over ``range``), or in the bins between the edges of a tensor ``bins``; the last bin holds
    its right edge. ``density=True``: counts divided by their total and the bins' widths."""
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{input.dtype.legacy_name[:-6]}'")
    data = input._data.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            low, high = builtins.float(range[0]), builtins.float(range[1])
        elif data.size:
            low, high = builtins.float(data.min()), builtins.float(data.max())
        else:
            low, high = 0.0, 1.0
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} max {high:g} "
                               "for dimension 0")
        if low == high:  # an empty range widened, as NumPy does
            low, high = low - 0.5, high + 0.5
        edges = linspace(low, high, bins + 1, dtype=input.dtype)
    e = edges._data
    inside = (data >= e[0]) & (data <= e[-1])
    which = np.searchsorted(e, data[inside], side="right") - 1
    which = np.minimum(which, e.size - 2)  # the right edge is in the last bin
    w = None if weight is None else weight._data.reshape(-1)[inside]
    hist = np.zeros(e.size - 1, input._data.dtype)
    np.add.at(hist, which, 1 if w is None else w)
    if density:
        hist = hist / hist.dtype.type(hist.sum(dtype=np.float64))
        hist = hist / np.diff(e)
    return _Histogram(Tensor._make(hist), Tensor._make(e.copy()))
