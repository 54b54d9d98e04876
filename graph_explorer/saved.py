"""Saved tensors: does a node keep tensors for its backward, and have they been freed?

The two engines show this differently, so we look for each by its shape (duck typing):

* the kit's engine: ``node.has_saved_tensors()`` and a ``node._freed`` flag;
* PyTorch: attributes ``node._saved_<name>``; reading one that holds a tensor
  raises ``RuntimeError`` once backward has freed it.
"""
from __future__ import annotations


def _is_kit_node(node) -> bool:
    return callable(getattr(node, "has_saved_tensors", None))


def _torch_saved_names(node) -> list[str]:
    return [n for n in dir(node) if n.startswith("_saved_")]


def _holds_tensor(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return hasattr(value, "grad_fn") and hasattr(value, "shape")  # a tensor of either engine


def has_saved_tensors(node) -> bool:
    """True if the node keeps tensors for its backward formula (read before backward frees them)."""
    if node is None:
        return False
    if _is_kit_node(node):
        return bool(node.has_saved_tensors()) or bool(getattr(node, "_freed", False))
    for name in _torch_saved_names(node):
        try:
            if _holds_tensor(getattr(node, name)):
                return True
        except RuntimeError:
            return True  # already freed: it did hold tensors
    return False


def saved_tensors_freed(node) -> bool:
    """True once backward has released the tensors this node saved."""
    if node is None:
        return False
    if _is_kit_node(node):
        return bool(getattr(node, "_freed", False))
    for name in _torch_saved_names(node):
        try:
            getattr(node, name)
        except RuntimeError:
            return True
    return False
