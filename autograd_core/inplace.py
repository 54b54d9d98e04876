"""In-place changes: ``x.add_(y)``, ``x += y``, ``x.zero_()``, ``x.copy_(src)``, ...

Every one of them goes through ``write``: compute the out-of-place result, copy it into
the tensor's memory, bump the version counter (so a node that saved the old values
notices), and, when recording, put the new node in the tensor's place in the graph.
``methods.py`` attaches these functions to ``Tensor``; ``x[key] = value`` (indexing.py)
writes through ``write`` too.
"""
from __future__ import annotations

import numpy as np

from . import _speed, grad_mode, ops, random
from .tensor import Tensor, _type_name


def _check_can_write(tensor, recording):
    if recording and tensor._grad_fn is None and tensor._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = tensor._base
    if recording and base is not None and (base._requires_grad or tensor._requires_grad):
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError(
            "autograd_core does not record in-place operations on views of tensors that require grad; "
            "use an out-of-place operation or call .clone() first."
        )


def write(tensor, compute, *others):
    """Run the out-of-place op ``compute(original)`` and write its result into ``tensor``.

    ``original`` is the tensor as it was: when recording, a copy of the old values at
    the same place in the graph, so that a backward formula that needs them
    (``y.mul_(x)`` needs the old ``y`` for the gradient of ``x``) still has them after
    they are overwritten. The new node takes the tensor's place in the graph (its
    ``grad_fn`` becomes the op's node), and the version counter is bumped so that any
    node that saved this tensor notices.
    """
    recording = grad_mode._State.enabled and (
        tensor._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)
    )
    _check_can_write(tensor, recording)
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
    tensor._version_counter.value += 1
    if recording:
        tensor._grad_fn = out._grad_fn
        tensor._requires_grad = True
        tensor._output_nr = 0
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
    return write(self, lambda t: ops.FillBackward2.apply(t, value=value), value)


def zero_(self):
    if _speed.zero_unrecorded(self):
        return self
    return write(self, lambda t: ops.ZeroBackward0.apply(t))


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
