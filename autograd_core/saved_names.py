"""``grad_fn._saved_self``, ``_saved_other``, ``_saved_result``...: what a node keeps, by PyTorch's names.

PyTorch shows each value a node saved for its backward formula as an attribute named after
the argument it came from (``self`` is the first input). The engine's nodes keep the same
values (``save_for_backward`` in ``ops.py``); this table gives them PyTorch's names, so that
the saved-tensors tutorial can ask ``y.grad_fn._saved_self is a``.
"""
from __future__ import annotations

import numpy as np

# The names of what each node class passes to save_for_backward, in order.
SAVED_TENSORS = {
    "MulBackward0": ("other", "self"), "DivBackward0": ("self", "other"), "PowBackward0": ("self",),
    "PowBackward1": ("self", "exponent"), "LogBackward0": ("self",), "AbsBackward0": ("self",),
    "SinBackward0": ("self",), "CosBackward0": ("self",), "MaximumBackward0": ("self", "other"),
    "MinimumBackward0": ("self", "other"), "ClampBackward1": ("self",), "ClampMinBackward0": ("self",),
    "ClampMaxBackward0": ("self",), "MaxBackward1": ("self",),
    "MinBackward1": ("self",), "LinalgVectorNormBackward0": ("self",), "DotBackward0": ("self", "tensor"),
    "MvBackward0": ("self", "vec"), "MmBackward0": ("self", "mat2"), "BmmBackward0": ("self", "mat2"),
    "TanhBackwardBackward0": ("grad_output", "output"),
}
# Numbers a node keeps as plain attributes: PyTorch's name -> (the node's attribute, shown as a 0-d tensor?).
SAVED_NUMBERS = {
    "MulBackward0": {"other": ("b_number", True)}, "DivBackward0": {"other": ("b_number", True)},
    "PowBackward0": {"exponent": ("exponent", False)},
    "ClampBackward1": {"min": ("min", False), "max": ("max", False)},
    "ClampMinBackward0": {"min": ("min", False)}, "ClampMaxBackward0": {"max": ("max", False)},
}


def names_of(node_class):
    """What nodes of ``node_class`` show under PyTorch's names: ``(saved, raw)``, the names of
    ``_saved_<name>`` (tensors and numbers) and of ``_raw_saved_<name>`` (tensors only)."""
    kind = node_class.__name__
    tensors = SAVED_TENSORS.get(kind, ()) + (("result",) if getattr(node_class, "saves_result", False) else ())
    return tensors + tuple(n for n in SAVED_NUMBERS.get(kind, {}) if n not in tensors), tensors


def saved_value(node, name, raw=False):
    """``node._saved_<name>``, for a name ``names_of`` gives its class.
    ``raw``: ``node._raw_saved_<name>``, the ``SavedTensor`` itself (to ``register_hooks`` on)."""
    from .tensor import Tensor

    kind = type(node).__name__
    tensors = SAVED_TENSORS.get(kind, ())
    numbers = SAVED_NUMBERS.get(kind, {})
    if name == "result" and getattr(type(node), "saves_result", False):
        if node._freed:
            return node.result  # raises PyTorch's error: backward has freed it
        return node._own_output if raw else node.result
    if name in tensors:
        if node._freed:
            return node.saved_tensors  # raises PyTorch's error: backward has freed them
        saved = node._saved[tensors.index(name)] if tensors.index(name) < len(node._saved) else None
        if saved is not None:
            return saved if raw else saved.unpack(node)
        if name not in numbers:
            return None  # not needed for this node's gradients, so not saved
    if name in numbers:
        attribute, as_tensor = numbers[name]
        value = getattr(node, attribute, None)
        if as_tensor and value is not None:  # PyTorch wraps a Python number: 2 -> tensor(2), 2.5 -> float64
            return Tensor._make(np.asarray(value, dtype=np.int64 if isinstance(value, int) else np.float64))
        return value
    raise AttributeError(f"'{kind}' object has no attribute '_saved_{name}'")
