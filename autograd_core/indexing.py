"""Indexing: ``x[key]`` and ``x[key] = value``.

A key is read as PyTorch reads it (``index_key``: tensors and lists inside it become
NumPy arrays), checked with PyTorch's errors, then applied one item at a time with the
node classes of ``ops.py``: an int is a ``SelectBackward0``, a slice a
``SliceBackward0``, ``None`` an ``UnsqueezeBackward0`` (all views), and the integer
arrays and masks, together, one ``IndexBackward0`` (a copy). Writing (``setitem``) copies
into the view the same items select, or puts values at the arrays' places (``index_put_``),
through ``inplace.write``.
"""
from __future__ import annotations

import builtins

import numpy as np

from . import grad_mode, inplace, ops
from .tensor import Tensor


def index_key(key):
    """Turn tensors inside an index into NumPy arrays (and 0-d integer tensors into ints)."""
    if type(key) is tuple:
        return tuple(index_key(k) for k in key)
    if isinstance(key, Tensor):
        if key._data.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return key._data.item() if key._data.ndim == 0 and key._data.dtype.kind != "b" else key._data
    if isinstance(key, range):  # x[range(n), y]: a sequence of ints, as a list is
        return np.asarray(key, dtype=np.int64)
    if isinstance(key, list):
        if any(isinstance(k, (list, tuple, slice, Tensor)) or k is None or k is Ellipsis for k in key):
            return index_key(tuple(key))  # x[[[0, 1], [1, 0]]] means x[[0, 1], [1, 0]], as in PyTorch
        return np.asarray(key) if key else np.asarray(key, dtype=np.int64)
    return key


def index(input, key):
    """``x[key]`` for ints, slices, ``...``, ``None``, boolean masks and integer arrays.

    As in PyTorch, the key is applied one item at a time: an int is a
    ``SelectBackward0``, a slice a ``SliceBackward0``, ``None`` an
    ``UnsqueezeBackward0`` (all views; ``x[1, 2]`` is two selects). Then the
    integer arrays and masks, all together, make one ``IndexBackward0`` (a copy).
    """
    key = index_key(key)
    if type(key) is not tuple:
        _check_index(input, (key,))
        if isinstance(key, slice):  # x[:] is a slice even when it takes everything
            return ops.SliceBackward0.apply(input, key=key)
        key = (key,)
    _check_index(input, key)
    out, rest = _views_of(input, key)
    if rest is not None:
        return ops.IndexBackward0.apply(out, key=rest)
    return out if out is not input else ops.AliasBackward0.apply(input)


def _views_of(input, key):
    """The view that the ints, slices, ``...`` and ``None`` of ``key`` select (``input`` itself if
    none does), and the key left for the integer arrays and masks over its dims (None if none)."""
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
        elif isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype == bool:  # as PyTorch: a new dim, taken or not
            out = ops.UnsqueezeBackward0.apply(out, dim=dim)
            rest.append(np.zeros(1 if k else 0, np.int64))
            dim += 1
        elif isinstance(k, np.ndarray):
            rest.append(k)
            dim += _dims_taken(k)
        else:
            out = ops.SelectBackward0.apply(out, key=(slice(None),) * dim + (k,))
    if builtins.any(isinstance(k, np.ndarray) for k in rest):
        return out, tuple(rest)
    return out, None


def _dims_taken(k):
    """How many dims of the indexed tensor an index item uses up."""
    if k is None or k is Ellipsis:
        return 0
    return k.ndim if isinstance(k, np.ndarray) and k.dtype.kind == "b" else 1


def _check_index(input, items):
    """PyTorch's IndexError for a key that does not fit. An int out of range names its position in
    the key (``x[None, 5]``: dimension 1); an index array, its rank among the key's arrays (the
    position PyTorch's index kernel sees)."""
    if input.ndim == 0 and builtins.any(isinstance(k, (builtins.int, np.integer)) and not isinstance(k, builtins.bool)
                                        for k in items):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
            "a 0-dim tensor to a number"
        )
    dim, arrays = 0, []
    for position, k in enumerate(items):
        if k is None or k is Ellipsis:
            if k is Ellipsis:
                dim = input.ndim - builtins.sum(1 for x in items if x is not None and x is not Ellipsis)
            continue
        if isinstance(k, (builtins.int, np.integer)) and not isinstance(k, builtins.bool):
            if dim >= input.ndim:
                raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
            size = input.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {position} with size {size}")
        elif isinstance(k, np.ndarray) and k.dtype.kind == "b":
            if k.shape != tuple(input.shape[dim:dim + k.ndim]):
                raise IndexError(
                    f"The shape of the mask {list(k.shape)} at index 0 does not match the shape of the indexed "
                    f"tensor {list(input.shape)} at index {dim}"
                )
            arrays.append(np.flatnonzero(k) if k.ndim == 0 else k.nonzero()[0])
            dim += k.ndim
            continue
        elif isinstance(k, np.ndarray):
            if dim < input.ndim and k.size and (k.max() >= input.shape[dim] or k.min() < -input.shape[dim]):
                bad = int(k.max()) if k.max() >= input.shape[dim] else int(k.min())
                raise IndexError(f"index {bad} is out of bounds for dimension {len(arrays)} with size {input.shape[dim]}")
            arrays.append(k)
        elif isinstance(k, str):
            raise TypeError(f"new(): invalid data type '{type(k).__name__}'")
        elif not isinstance(k, slice):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(k).__name__})"
            )
        dim += 1
    if len(arrays) > 1:
        try:
            np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError:
            shapes = ", ".join(str(list(a.shape)) for a in arrays)
            raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}") from None


def setitem(self, key, value):
    """``x[key] = value``, as PyTorch does it: the ints, slices, ``...`` and ``None`` of ``key`` select
    a view, into which ``value`` is copied (a number is filled in); integer arrays and masks then
    make it an ``index_put_``. When recorded, a change of a view is a ``CopySlices`` on its base
    (``inplace.rebase``); ``x[mask] = v`` on ``x`` itself is an ``IndexPutBackward0``."""
    key = index_key(key)
    items = key if type(key) is tuple else (key,)
    _check_index(self, items)
    if key is False or (type(key) is tuple and builtins.any(k is False for k in key)):
        return  # x[False] = v selects nothing
    if isinstance(value, list):
        raise TypeError(f"can't assign a list to a torch.{self.dtype.legacy_name}")
    recording = grad_mode._State.enabled and (self._requires_grad or (isinstance(value, Tensor) and value._requires_grad))
    if not recording and 0 not in self._data.strides and not (
            isinstance(value, Tensor) and np.may_share_memory(self._data, value._data)):
        # (else the general path below: a stride of 0, where only the part written may not repeat; a value
        # in self's own memory, which PyTorch may refuse)
        # (x[2] = model(row) writes a (1, 1) result into one element)
        data = value._data.reshape(_without_leading_ones(value._data.shape)) if isinstance(value, Tensor) else value
        try:
            self._data[key] = data
        except ValueError:
            _shape_mismatch(self, key, items, value)
            raise
        self._version_counter.bump()
        return
    if not isinstance(value, Tensor):
        value = Tensor._make(np.asarray(value, dtype=self._data.dtype))
    if isinstance(key, slice) and key.indices(self.shape[0]) == (0, self.shape[0], 1):
        target, rest = self, None  # x[:] = v changes x itself (x[:] alone is a SliceBackward0 view)
    else:
        target, rest = _views_of(self, items)
    if rest is not None:
        _check_values_fit(value, target._data[rest].shape)
        inplace.index_put_(target, rest, value)
    else:
        _copy_to(target, value)


def _copy_to(target, value):
    """PyTorch's copy into an indexed view: the same shape is a copy, a 0-d value fills it, another
    shape is broadcast (leading dims of size 1 dropped) and copied."""
    if target.shape == value.shape:
        inplace.copy_(target, value)
    elif value._data.ndim == 0:
        inplace.fill_(target, value)
    else:
        value = value.view(_without_leading_ones(value.shape))
        inplace.copy_(target, value if value.shape == target.shape else value.expand(*target.shape))


def _check_values_fit(value, shape):
    try:
        np.broadcast_shapes(value._data.shape, shape)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to indexing "
                           f"result of shape {list(shape)}") from None


def _shape_mismatch(self, key, items, value):
    """PyTorch's error for a value whose shape does not fit what ``key`` selects (NumPy's ValueError
    otherwise)."""
    if not isinstance(value, Tensor):
        return
    selected = self._data[key].shape
    if builtins.any(isinstance(k, np.ndarray) for k in items):
        _check_values_fit(value, selected)
    else:
        with grad_mode.no_grad():
            _copy_to(Tensor._make(np.empty(selected, self._data.dtype)), value)  # expand's error, as PyTorch's


def _without_leading_ones(shape):
    """The shape of the value of ``x[key] = value`` as PyTorch takes it, its leading dims of size 1
    dropped (``slicePrefix1sSize``): a value of another shape than what ``key`` selects is viewed so,
    then broadcast."""
    first = next((i for i, n in enumerate(shape) if n != 1), len(shape))
    return tuple(shape[first:])
