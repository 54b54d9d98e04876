"""In-place changes: ``x.add_(y)``, ``x += y``, ``x.zero_()``, ``x.copy_(src)``, ... and through views.

Every one of them goes through ``write``: compute the out-of-place result, copy it into
the tensor's memory, bump the version counter (so a node that saved the old values
notices), and, when recording, put the new node in the tensor's place in the graph.
``methods.py`` attaches these functions to ``Tensor``; ``x[key] = value`` (indexing.py)
writes through ``write`` too.

A view shares its base's memory, so changing it changes the base: as in PyTorch, the change
is recorded on the base (``rebase``: the base's ``grad_fn`` becomes a ``CopySlices`` holding the
op's node), and the view's ``grad_fn`` is made anew from the base's (``refresh_view``: an
``AsStridedBackward0``, which reads the view as the base's elements at its places). Every
other view of that memory learns of the change by the version counter (``tensor.StaleView``)
and makes its ``grad_fn`` anew the same way when it is next asked for it. PyTorch refuses some
views (``check_view_kind``): made in ``no_grad``, outputs of ``unbind``/``split``, of a custom
``Function``.
"""
from __future__ import annotations

import numpy as np

from . import _speed, grad_mode, ops, random, torch_warnings
from .function import _start_recording
from .graph import _sequence, short_name
from .tensor import StaleView, Tensor, _type_name


def _check_can_write(tensor, recording):
    """PyTorch's refusals while recording, in its order: a view it may not rebase, a view of a
    leaf, a leaf that requires grad."""
    if recording:
        if tensor._base is not None:
            check_view_kind(tensor, indirect=False)
            if tensor._requires_grad and tensor._base._grad_fn is None:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        if Tensor._grad_fn.__get__(tensor) is None and tensor._requires_grad:  # (a stale view's grad_fn as it was)
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def check_no_overlap(tensor):
    """PyTorch refuses to write into memory where elements repeat (an expanded tensor)."""
    if has_repeats(tensor._data):
        raise RuntimeError(ops.MEMORY_OVERLAP)


def has_repeats(array):
    return 0 in array.strides and any(s == 0 and n > 1 for s, n in zip(array.strides, array.shape))


def overlap(tensor, other):
    """How ``other``'s memory overlaps ``tensor``'s, as PyTorch judges it: ``"full"`` (the very same
    elements), ``"partial"``, or None (apart, or not judged: PyTorch judges only tensors whose
    elements fill their memory without gaps or repeats)."""
    if tensor is other:
        return "full"
    a, b = tensor._data, other._data
    if not a.size or not b.size or not np.may_share_memory(a, b) or not (_dense(a) and _dense(b)):
        return None
    same_place = a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.size == b.size
    return "full" if same_place and a.strides == b.strides else "partial"


def _dense(array):
    """No gaps and no repeats: the elements fill ``size`` consecutive places in some order."""
    used = [(s, n) for s, n in zip(array.strides, array.shape) if n > 1]
    return all(s > 0 for s, _ in used) and sum(s * (n - 1) for s, n in used) == (array.size - 1) * array.itemsize


def _check_operands(tensor, others):
    """An operation writing into ``tensor`` may not read an operand that covers part of it
    (``x.mul_(x[0])``); the very same elements (``x.mul_(x)``) are fine."""
    for other in others:
        if isinstance(other, Tensor) and overlap(tensor, other) == "partial":
            raise RuntimeError(ops.PARTIAL_OVERLAP)


_KIND_SUFFIX = {
    "multi_output": " This view is the output of a function that returns multiple views. Such functions do not allow "
                    "the output views to be modified inplace. You should replace the inplace operation by an "
                    "out-of-place one.",
    "no_grad": " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
               "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
               "inplace to be tracked) or both outside (if you want the inplace to be tracked).",
    "inference_mode": " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                      "by moving both the view and the inplace either both inside the inference_mode block (if you "
                      "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
    "custom_function": " This view was created inside a custom Function (or because an input was returned as-is) and "
                       "the autograd logic to handle view+inplace would override the custom backward associated with "
                       "the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix "
                       "this by cloning the output of the custom Function.",
}


def check_view_kind(view, indirect):
    """PyTorch's error for a view that may not be rebased (see ``function.made_view``), changed in
    place itself (``indirect=False``) or through its base or another view (``indirect=True``)."""
    kind = view._view_kind
    if kind is None:
        return
    grad_fn, nr = Tensor._grad_fn.__get__(view), Tensor._output_nr.__get__(view)  # as they were: no refresh
    modified = "its base or another view of its base has been" if indirect else "is being"
    if kind in ("no_grad", "inference_mode") or grad_fn is None:
        prefix = (f"Output {nr} of {short_name(grad_fn)} is a view of a view which was created in" if grad_fn is not None
                  else "A view was created in")
        if kind == "inference_mode":
            message = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            message = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        message = f"Output {nr} of {short_name(grad_fn)} is a view and {modified} modified inplace."
    raise RuntimeError(message + _KIND_SUFFIX[kind])


def positions(view, base):
    """Where each element of ``view`` sits in ``base``, as flat indices (in the base's C order):
    an integer array of the view's shape, read off the memory they share, as PyTorch's
    ``as_strided`` sees a view."""
    v, b = view._data, base._data
    if v.size == 0 or b.size == 0:
        return np.zeros(v.shape, np.int64)
    start = (v.__array_interface__["data"][0] - b.__array_interface__["data"][0]) // b.itemsize
    in_view = start + _element_offsets(v)
    if b.flags.c_contiguous:
        return in_view
    in_base = _element_offsets(b)
    first = in_base.min()
    flat_index = np.zeros(in_base.max() - first + 1, np.int64)
    flat_index[(in_base - first).ravel()] = np.arange(b.size)
    return flat_index[in_view - first]


def _element_offsets(array):
    """Each element's distance from the array's first element in memory, counted in elements."""
    offsets = np.zeros(array.shape, np.int64)
    for dim, (size, stride) in enumerate(zip(array.shape, array.strides)):
        along = np.arange(size, dtype=np.int64) * (stride // array.itemsize)
        offsets += along.reshape((1,) * dim + (size,) + (1,) * (array.ndim - dim - 1))
    return offsets


def rebase(view, fn):
    """Record the in-place change ``fn`` of ``view`` on its base: the base's ``grad_fn`` becomes a
    ``CopySlices`` whose inputs are the base's past and ``fn``'s other inputs; the view's own is
    made anew from it."""
    base = view._base
    copy_slices = ops.CopySlices()
    copy_slices.fn, copy_slices.positions = fn, positions(view, base)
    copy_slices.repeats = has_repeats(view._data)  # (PyTorch's backward then refuses: its copy would overlap)
    past = base._grad_fn if base._requires_grad else None  # (a leaf base that requires grad was refused)
    copy_slices._next_nodes = (past,) + fn._next_nodes[1:]
    copy_slices._next_nrs = (base._output_nr if past is not None else 0,) + fn._next_nrs[1:]
    copy_slices.needs_input_grad = (past is not None,) + fn.needs_input_grad[1:]
    copy_slices._input_shapes = (base._data.shape,) + fn._input_shapes[1:]
    copy_slices._seq = next(_sequence)
    base._grad_fn, base._requires_grad, base._output_nr = copy_slices, True, 0
    _retain_on_new_grad_fn(base)
    view.__class__ = StaleView  # (the change made it one already)
    refresh_view(view)


def refresh_view(view):
    """Bring a ``StaleView``'s ``grad_fn`` up to date, as PyTorch does when a view's ``grad_fn`` is
    asked for after its storage changed: an ``AsStridedBackward0`` of the base's history now (or
    PyTorch's error for a view it may not rebase). Its ``requires_grad`` follows its base's."""
    view.__class__ = Tensor
    base, counter = view._base, view._counter
    grad_fn = view._grad_fn
    own = view._requires_grad and not view._inherits_grad  # requires_grad_() on a view that is a leaf
    if grad_fn is None and not base._requires_grad:
        view._requires_grad, view._inherits_grad = own, False
    elif view._attr_version != counter.value:
        try:
            check_view_kind(view, indirect=True)
        except RuntimeError:
            view.__class__ = StaleView  # raised again at every look, as in PyTorch
            raise
        node = ops.AsStridedBackward0.__new__(ops.AsStridedBackward0)
        _start_recording(node, (base,))
        node.positions, node.shape = positions(view, base), base._data.shape
        view._grad_fn, view._output_nr, view._attr_version = node, 0, counter.value
        view._requires_grad, view._inherits_grad = True, False
        _retain_on_new_grad_fn(view)
    else:
        view._requires_grad = grad_fn is not None or own or base._requires_grad
        view._inherits_grad = grad_fn is None and not own and base._requires_grad
    counter.add_view(view)


StaleView.refresh = staticmethod(refresh_view)


def _retain_on_new_grad_fn(tensor):
    """``retain_grad()`` follows a tensor to its new ``grad_fn``, as in PyTorch (its other hooks stay
    on the node they were registered on)."""
    if tensor._retains_grad:
        tensor._retain_handle.remove()
        tensor._retains_grad = False
        tensor.retain_grad()


def _recording(tensor, others):
    return grad_mode._State.enabled and (
        tensor._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others))


def write(tensor, compute, *others, memory_checked=False):
    """Run the out-of-place op ``compute(original)`` and write its result into ``tensor``.

    ``original`` is the tensor as it was: when recording, a copy of the old values at
    the same place in the graph, so that a backward formula that needs them
    (``y.mul_(x)`` needs the old ``y`` for the gradient of ``x``) still has them after
    they are overwritten. The new node takes the tensor's place in the graph (its
    ``grad_fn`` becomes the op's node), and the version counter is bumped so that any
    node that saved this tensor notices.
    """
    recording = _recording(tensor, others)
    _check_can_write(tensor, recording)
    if not memory_checked:  # (fill_, zero_ and index_put_ judge the memory their own way)
        check_no_overlap(tensor)
        _check_operands(tensor, others)
    original = tensor
    if recording:
        original = Tensor._make(tensor._data.copy(), tensor._requires_grad, tensor._grad_fn)
        if tensor._output_nr:
            original._output_nr = tensor._output_nr
    out = compute(original)
    result = out._data
    if result.shape != tensor._data.shape:
        if np.broadcast_shapes(result.shape, tensor._data.shape) != tensor._data.shape:
            raise RuntimeError(
                f"output with shape {list(tensor._data.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
    if result.dtype != tensor._data.dtype and not np.can_cast(result.dtype, tensor._data.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
            f"{_type_name(tensor._data.dtype)}"
        )
    np.copyto(tensor._data, result, casting="unsafe")
    tensor._version_counter.bump()
    if recording:
        if tensor._base is not None:
            rebase(tensor, out._grad_fn)
        else:
            tensor._grad_fn = out._grad_fn
            tensor._requires_grad = True
            tensor._output_nr = 0
            _retain_on_new_grad_fn(tensor)
    return tensor


def add_(self, other, *, alpha=1):
    if alpha == 1 and _speed.in_place_unrecorded(self, np.add, other) is not None:
        return self
    return write(self, lambda t: t.add(other, alpha=alpha), other)


def sub_(self, other, *, alpha=1):
    if alpha == 1 and _speed.in_place_unrecorded(self, np.subtract, other) is not None:
        return self
    return write(self, lambda t: t.sub(other, alpha=alpha), other)


def mul_(self, other):
    if _speed.in_place_unrecorded(self, np.multiply, other) is not None:
        return self
    return write(self, lambda t: t * other, other)


def div_(self, other):
    if self._data.dtype.kind == "f" and _speed.in_place_unrecorded(self, np.true_divide, other) is not None:
        return self
    return write(self, lambda t: t / other, other)


def pow_(self, exponent):
    return write(self, lambda t: t ** exponent, exponent)


def clamp_(self, min=None, max=None):
    return write(self, lambda t: t.clamp(min, max))


def copy_(self, src):
    src = src if isinstance(src, Tensor) else Tensor._make(np.asarray(src, dtype=self._data.dtype))
    return write(self, lambda t: ops.CopyBackwards.apply(t, src), src)


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value._data.ndim} dimensions.")
        check_no_overlap(self)  # (the value is read as a number: it may be one of self's elements)
        return write(self, lambda t: ops.FillBackward3.apply(t, value), value, memory_checked=True)
    # a number may fill memory where elements repeat (an expanded tensor): they all get the same value
    return write(self, lambda t: ops.FillBackward2.apply(t, value=value), value, memory_checked=True)


def index_put_(self, key, values):
    """``self[key] = values`` for a key of integer arrays and masks (``key``: NumPy arrays and
    slices). As PyTorch: a single mask and a one-element value is a ``masked_fill_`` (the value is
    read as a number); otherwise ``values`` may not share memory with ``self``. Where elements of
    ``self`` repeat (an expanded tensor) PyTorch warns and writes."""
    _check_can_write(self, _recording(self, (values,)))  # (autograd's refusals come first)
    if has_repeats(self._data):
        torch_warnings.warn(_DEPRECATED_ON_EXPANDED.format("index_put_", "tensor[indices] = tensor"), "index_put_")
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    if len(arrays) == 1 and arrays[0].dtype == bool and values._data.size == 1:
        if has_repeats(self._data):
            torch_warnings.warn(_DEPRECATED_ON_EXPANDED.format("masked_fill_", "tensor[mask] = scalar"), "masked_fill_")
    elif overlap(self, values) is not None:
        raise RuntimeError(ops.PARTIAL_OVERLAP)
    return write(self, lambda t: ops.IndexPutBackward0.apply(t, values, key=key), values, memory_checked=True)


_DEPRECATED_ON_EXPANDED = ("Use of {} on expanded tensors is deprecated. Please clone() the tensor before performing "
                           "this operation. This also applies to advanced indexing e.g. {}")


def zero_(self):
    if _speed.zero_unrecorded(self):
        return self
    return write(self, lambda t: ops.ZeroBackward0.apply(t), memory_checked=True)  # (as fill_ with a number)


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with numbers uniform in [a, b), PyTorch's (random.py)."""
    with grad_mode.no_grad():
        return write(self, lambda t: Tensor._make(random.fill_uniform(self._data, a, b, generator)))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    with grad_mode.no_grad():
        return write(self, lambda t: Tensor._make(random.fill_normal(self._data, mean, std, generator)))


def random_(self, low=None, high=None, *, generator=None):
    """``x.random_(low, high)``, ``x.random_(high)``: integers in [low, high); ``x.random_()``: 0 to
    the dtype's largest value."""
    with grad_mode.no_grad():
        return write(self, lambda t: Tensor._make(random.fill_random(self._data, low, high, generator)))


METHODS = {f.__name__: f for f in (add_, sub_, mul_, div_, pow_, clamp_, copy_, fill_, zero_, uniform_, normal_,
                                   random_)}
OPERATORS = {"__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_}
