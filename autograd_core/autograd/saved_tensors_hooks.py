"""``torch.autograd.graph.saved_tensors_hooks``: decide how tensors saved for backward are kept.

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a * b          # the node stores pack(a) and pack(b) instead of a and b
    y.sum().backward()     # its backward formula gets unpack(pack(a)), unpack(pack(b))
"""
from __future__ import annotations

from ..graph import SAVED_TENSORS_HOOKS


class saved_tensors_hooks:
    """Inside the block, every tensor an operation saves goes through ``pack_hook`` when saved
    and ``unpack_hook`` when the backward pass (or ``grad_fn._saved_self``) reads it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        SAVED_TENSORS_HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        SAVED_TENSORS_HOOKS.pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in CPU memory: where every tensor of this engine already is."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:
    """Raise ``RuntimeError(error_message)`` if a saved_tensors_hooks block is entered inside."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
