"""Switching the recording of operations on and off: ``no_grad``, ``enable_grad``,
``set_grad_enabled``, ``is_grad_enabled`` (``inference_mode.py`` builds on them).

Each works as a context manager (``with torch.no_grad():``) and as a decorator
(``@torch.no_grad()``), as in PyTorch.
"""
from __future__ import annotations

import functools


class _State:
    # One flag for the whole process; the engine reads it on every operation.
    enabled = True
    inference = False  # inside inference_mode (inference_mode.py): the tensors made are inference tensors
    anomaly = False  # anomaly detection (autograd/anomaly_mode.py): nodes keep where they were made
    anomaly_check_nan = True  # ... and a backward that returns nan fails


def is_grad_enabled():
    """True when new operations are recorded in the graph."""
    return _State.enabled


class _GradMode:
    """Base of the three modes: sets the flag on entry and restores it on exit."""

    mode = True

    def __enter__(self):
        self._previous = _State.enabled
        _State.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _State.enabled = self._previous
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            mode = _GradMode()  # a fresh one per call: safe under recursion
            mode.mode = self.mode
            with mode:
                return func(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Do not record operations: for evaluation and for updating weights.

    >>> with torch.no_grad():
    ...     w -= lr * w.grad
    """

    mode = False


class enable_grad(_GradMode):
    """Record operations again, even inside ``no_grad``."""

    mode = True


class set_grad_enabled(_GradMode):
    """``set_grad_enabled(False)`` switches recording off now, or for a ``with`` block."""

    def __init__(self, mode):
        self._previous = _State.enabled
        self.mode = bool(mode)
        _State.enabled = self.mode  # takes effect at once when used as a plain call

    def __enter__(self):
        _State.enabled = self.mode
        return self

    def __call__(self, func):
        _State.enabled = self._previous  # as a decorator, only while func runs
        return super().__call__(func)
