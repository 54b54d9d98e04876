"""``torch.autograd``: ``backward``, ``grad``, ``Function``, ``gradcheck``, ``functional`` (jacobian, hessian, ...)
and ``detect_anomaly``."""
from __future__ import annotations

from ..function import Function, FunctionCtx
from ..graph import Node
from .api import backward, grad
from .gradcheck import gradcheck, gradgradcheck
from . import graph  # torch.autograd.graph.Node, saved_tensors_hooks
from . import function  # torch.autograd.function.once_differentiable
from . import functional  # torch.autograd.functional.jacobian, hessian, vjp, jvp, hvp, vhp
from . import anomaly_mode
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from ..legacy import Variable
from .. import beyond as _beyond


__all__ = [
    "Function", "FunctionCtx", "Node", "Variable", "anomaly_mode", "backward", "detect_anomaly", "function", "functional",
    "grad", "gradcheck", "gradgradcheck", "graph", "set_detect_anomaly",
]

__getattr__ = _beyond.module_getattr("torch.autograd")  # what PyTorch has here and the engine has not: its error
