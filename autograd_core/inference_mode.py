"""``inference_mode``: ``no_grad``, and the tensors made inside are *inference tensors*.

PyTorch's reason for it is speed (no version counters, no view tracking); here it is the
behaviour a learner meets: ``t.is_inference()``, and autograd's refusal to save such a
tensor for backward later.
"""
from __future__ import annotations

import functools

from .grad_mode import _State
from .tensor import Tensor


class inference_mode:
    """``no_grad`` and more: the tensors made inside are *inference tensors*
    (``t.is_inference()``), which autograd refuses to save for backward afterwards,
    so nothing about them needs to be tracked. For evaluation that never meets autograd.

    >>> with torch.inference_mode():
    ...     prediction = model(inputs)
    """

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self._previous = (_State.enabled, _State.inference)
        if self.mode:
            _State.enabled, _State.inference = False, True
            _mark_new_tensors(True)
        return self

    def __exit__(self, *exc):
        _State.enabled, _State.inference = self._previous
        _mark_new_tensors(_State.inference)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with inference_mode(self.mode):
                return func(*args, **kwargs)

        return wrapper


def is_inference_mode_enabled():
    """True inside ``inference_mode()``."""
    return _State.inference


def _mark_new_tensors(on):
    # Every tensor is made by Tensor._make: inside inference mode a marking version
    # stands in for it, so the engine's fast path outside pays nothing for the mode.
    plain = _mark_new_tensors.__dict__.setdefault("plain", Tensor.__dict__["_make"].__func__)

    def make_inference_tensor(data, requires_grad=False, grad_fn=None):
        t = plain(data, requires_grad, grad_fn)
        t._inference = True
        return t

    Tensor._make = staticmethod(make_inference_tensor if on else plain)
