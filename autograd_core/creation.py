"""Making tensors: ``tensor``, ``ones``, ``zeros``, ``arange``, ``linspace``, ``eye``, ... (random ones: random.py)."""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from . import dtypes, threads
from .exact_math import fma
from .tensor import Tensor, check_can_require_grad, warn_scalar_conversion

def _finish(data, dtype, requires_grad):
    """Cast to ``dtype`` and apply ``requires_grad`` with PyTorch's check."""
    if dtype is not None:
        data = data.astype(dtypes.as_dtype(dtype).numpy, copy=False)
    if requires_grad:
        check_can_require_grad(data, "torch.tensor(..., requires_grad=True)")
    return Tensor._make(data, builtins.bool(requires_grad))


def _infer_dtype(data, dtype=None):
    """Python floats become float32 (the default), ints int64, bools bool; arrays keep theirs.

    In a list, NumPy scalars and 0-d tensors bring their own dtype, and the widest wins
    (``[np.float64(1), 2.0]`` is float64). With an explicit ``dtype`` the numbers go
    straight into it (no float32 rounding on the way).
    """
    if isinstance(data, np.ndarray):
        return data
    if dtype is not None:
        return np.array(_unwrap(data), dtype=dtypes.as_dtype(dtype).numpy)
    result = None
    for x in _flatten(data):
        d = _element_dtype(x)
        result = d if result is None else dtypes.promote_types(result, d)
    result = result or dtypes.get_default_dtype()  # an empty list: tensor([]) is float32
    return np.array(_unwrap(data), dtype=result.numpy)


def _element_dtype(x):
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, (np.generic,)):
        return dtypes.from_numpy_dtype(x.dtype)
    if isinstance(x, builtins.bool):
        return dtypes.bool
    if isinstance(x, numbers.Integral):
        return dtypes.int64
    if isinstance(x, numbers.Real):
        return dtypes.get_default_dtype()
    raise TypeError(f"new(): invalid data type '{type(x).__name__}'")


def _flatten(data):
    out, stack = [], [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            out.append(x)
    return out


def _unwrap(data):
    """Lists may hold 0-d tensors, as in ``torch.tensor([x1, x2, x3])``: take their values."""
    if isinstance(data, Tensor):
        return data._data.tolist()
    if isinstance(data, (list, tuple)):
        return [_unwrap(x) for x in data]
    return data


def _check_rectangular(data):
    """Nested lists must have equal lengths at each depth; PyTorch's wording if not."""
    level, dim = [data], 0
    while level and isinstance(level[0], (list, tuple)):
        length = len(level[0])
        for x in level:
            if not isinstance(x, (list, tuple)) or len(x) != length:
                got = len(x) if isinstance(x, (list, tuple)) else type(x).__name__
                raise ValueError(f"expected sequence of length {length} at dim {dim} (got {got})")
        level, dim = [y for x in level for y in x], dim + 1
    for x in level:
        if isinstance(x, (list, tuple)):  # a list where a number was expected
            raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (a number, nested lists, an array).

    >>> torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    """
    if device is not None:
        dtypes.on_cpu(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning, stacklevel=2,
        )
        array = data._data.copy()
    elif isinstance(data, (np.ndarray, np.generic)):  # NumPy arrays and scalars keep their dtype
        dtypes.from_numpy_dtype(data.dtype)
        array = np.array(data)
    else:
        if isinstance(data, (str, bytes)) or data is None:
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        _check_rectangular(data)
        if builtins.any(isinstance(x, Tensor) and x._requires_grad for x in _flatten(data)):
            warn_scalar_conversion(stacklevel=3)
        array = _infer_dtype(data, dtype)
    return _finish(array, dtype, requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or dtypes.as_dtype(dtype) == data.dtype):
        return data
    if isinstance(data, np.ndarray):
        return _finish(data, dtype, False)
    return tensor(data, dtype=dtype)


def from_numpy(array):
    """A tensor sharing memory with a NumPy array."""
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, dtypes.Size)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, numbers.Integral):
            raise TypeError(f"size must be a tuple of ints, but got an element of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(builtins.int(s) for s in size)


def _filled(fill, size, dtype, requires_grad, default=None, device=None):
    if device is not None:
        dtypes.on_cpu(device)
    d = dtypes.as_dtype(dtype) if dtype is not None else (default or dtypes.get_default_dtype())
    return _finish(np.full(_size(size), fill, dtype=d.numpy), None, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled(1, size, dtype, requires_grad, device=device)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _filled(0, size, dtype, requires_grad, device=device)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _filled(0, size, dtype, requires_grad, device=device)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = dtypes.result_type([], [], [fill_value])
    return _filled(fill_value, (size,), dtype, requires_grad, device=device)


def ones_like(input, dtype=None, requires_grad=False, device=None):
    return _filled(1, input.shape, dtype or input.dtype, requires_grad)


def zeros_like(input, dtype=None, requires_grad=False, device=None):
    return _filled(0, input.shape, dtype or input.dtype, requires_grad)


def empty_like(input, dtype=None, requires_grad=False, device=None):
    return zeros_like(input, dtype, requires_grad)


def full_like(input, fill_value, dtype=None, requires_grad=False, device=None):
    return _filled(fill_value, input.shape, dtype or input.dtype, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """``arange(4.0)`` is float32 ``[0., 1., 2., 3.]``; all-integer arguments give int64."""
    if end is None:
        start, end = 0, start
    values = [start, end, step]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        floating = builtins.any(isinstance(v, builtins.float) or (isinstance(v, Tensor) and v.is_floating_point()) for v in values)
        dtype = dtypes.get_default_dtype() if floating else dtypes.int64
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in values)
    n = builtins.max(0, int(np.ceil((end - start) / step)))
    target = dtypes.as_dtype(dtype).numpy
    if target.kind == "f":
        return _finish(_float_range(start, step, n, target), None, requires_grad)
    data = (start + step * np.arange(n, dtype=np.float64)).astype(target)
    return _finish(data, None, requires_grad)


def _float_range(start, step, n, dtype):
    """``arange``'s floats as PyTorch's CPU kernel computes them, to the last bit.

    The kernel (aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp, AVX2 build) works in double.
    It splits more than 32,768 elements between its threads (``at::parallel_for``); each part
    fills blocks of two vectors (2 x 8 floats, 2 x 4 doubles): a vector of ``width`` numbers
    starts at ``base = start + step * i`` (rounded to the dtype) and holds ``base + k * step``;
    the elements after the part's last whole block are ``start + step * i``. The compiler fuses
    each ``x * step + y`` into one rounding.
    """
    width = 8 if dtype == np.float32 else 4
    grain = 32768
    parts = builtins.min(threads.get_num_threads(), -(-n // grain)) if n > grain else 1
    size = -(-n // parts) if n else 0
    out = np.empty(n, dtype)
    for begin in range(0, n, builtins.max(size, 1)):
        i = np.arange(begin, builtins.min(n, begin + size), dtype=np.float64)
        blocked = len(i) // (2 * width) * (2 * width)
        first = begin + (i[:blocked] - begin) // width * width
        base = fma(first, step, np.float64(start)).astype(dtype).astype(np.float64)
        part = out[begin:begin + len(i)]
        part[:blocked] = np.where(i[:blocked] == first, base, fma(i[:blocked] - first, step, base))  # a vector's first is its base
        part[blocked:] = fma(i[blocked:], step, np.float64(start))
    return out


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced numbers from ``start`` to ``end``, both included."""
    from .linspace_values import linspace_values

    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    return _finish(linspace_values(start, end, steps, d.numpy), None, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    d = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    return _finish(np.eye(n, m, dtype=d.numpy), None, requires_grad)

