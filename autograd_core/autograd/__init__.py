"""``torch.autograd``: ``backward``, ``grad``, ``Function`` and ``gradcheck``."""
from __future__ import annotations

from ..function import Function, FunctionCtx
from ..graph import Node
from .api import backward, grad
from .gradcheck import gradcheck, gradgradcheck
from . import graph  # torch.autograd.graph.Node, saved_tensors_hooks
from . import function  # torch.autograd.function.once_differentiable
from ..legacy import Variable
from .. import beyond as _beyond


class set_detect_anomaly:
    """Accepted for compatibility; errors here already name the op that failed."""

    def __init__(self, mode=True, check_nan=True):
        self.mode = mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


detect_anomaly = set_detect_anomaly

__all__ = [
    "Function", "FunctionCtx", "Node", "Variable", "backward", "detect_anomaly", "function", "grad", "gradcheck",
    "gradgradcheck", "graph", "set_detect_anomaly",
]

__getattr__ = _beyond.module_getattr("torch.autograd")  # what PyTorch has here and the engine has not: its error
