"""Hooks: the handle ``register_hook`` returns, and how a hook's return value replaces a gradient.

Both the tensors (a leaf's hooks) and the graph nodes (``Node.register_hook``) keep their
hooks in a dict keyed by the handle, so that ``handle.remove()`` takes exactly that one off.
"""
from __future__ import annotations

import itertools


class RemovableHandle:
    """Returned by ``register_hook``: call ``.remove()`` to take the hook off again."""

    __slots__ = ("_hooks", "_key")
    _ids = itertools.count()

    def __init__(self, hooks):
        self._hooks = hooks
        self._key = next(self._ids)

    def remove(self):
        self._hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks, hook):
    """Put ``hook`` into the dict ``hooks`` and return its handle."""
    handle = RemovableHandle(hooks)
    hooks[handle._key] = hook
    return handle


def apply_tensor_hook(hook, grad):
    """A tensor hook may return a new gradient to use instead, or None to keep this one."""
    new = hook(grad)
    return grad if new is None else new
