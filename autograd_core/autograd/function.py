"""``torch.autograd.function``: ``Function`` (function.py, where an operation becomes a node) and
``once_differentiable``, for a ``backward`` that cannot itself be differentiated."""
from __future__ import annotations

import functools

from .. import grad_mode
from ..function import BackwardCFunction, Function, FunctionCtx, _start_recording
from ..graph import Node
from ..tensor import Tensor

ONCE_DIFFERENTIABLE = "trying to differentiate twice a function that was marked with @once_differentiable"


class Error(Node):
    """What a ``@once_differentiable`` backward's gradients record when a graph is being made
    (``create_graph=True``): a node whose own backward refuses, as PyTorch's ``DelayedError``."""

    def name(self):
        return "torch::autograd::Error"

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ONCE_DIFFERENTIABLE)


def once_differentiable(backward):
    """Decorate a custom ``Function``'s ``backward`` that works on plain numbers (NumPy, say): it
    runs under ``no_grad``, and a gradient it returns while a graph is being made
    (``create_graph=True``) can be used but not differentiated again: that raises PyTorch's error.

    >>> class Exp(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp(); ctx.save_for_backward(y); return y
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         (y,) = ctx.saved_tensors
    ...         return torch.from_numpy(grad.numpy() * y.numpy())
    """
    @functools.wraps(backward)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = backward(ctx, *args)
        if not grad_mode.is_grad_enabled() or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        # As PyTorch does: each gradient becomes an output of an Error node, whose inputs are the
        # gradients made leaves that require grad (so the results require grad and have a grad_fn).
        leaves = [None if o is None else Tensor._make(o._data, True) for o in outputs]
        node = Error()
        _start_recording(node, leaves)
        node._num_outputs = len(leaves)
        results = []
        for nr, leaf in enumerate(leaves):
            result = None if leaf is None else Tensor._make(leaf._data, True, node)
            if result is not None:
                result._output_nr = nr
            results.append(result)
        return results[0] if single else tuple(results)

    return wrapper


__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]
