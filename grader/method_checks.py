"""Checks of how a student computed, run beside the student's code in their process: which backward
calls a task made (``backward_calls``), the gradients computed lately (``record_gradients``), the
operation that produced a value (``with_grad_fn``).

They catch honest mistakes only (the student's code could change anything here); points rest on the
values a trusted test checks. Test cells import them from ``grader.checks``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["record_gradients", "GradientLog", "backward_calls", "with_grad_fn"]


def record_gradients(torch):
    """From now on, in this process, a ``GradientLog`` of every backward pass started through ``torch``'s API.

    ``Tensor.backward``, ``torch.autograd.backward`` and ``torch.autograd.grad`` are wrapped once (a
    name imported from ``torch.autograd`` later is the wrapped one: call it in a set-up cell). The log
    keeps copies of the last gradients computed (``grad``'s results, the leaves' ``.grad`` after a
    backward): ``log.computed(value)``. A method check for honest mistakes, like ``backward_calls``.
    """
    log = _LOGS.get(id(torch))
    if log is None or log.torch is not torch:
        log = _LOGS[id(torch)] = GradientLog(torch)
    return log


class GradientLog:
    """What ``record_gradients`` saw: listeners told of each call, and the gradients computed lately."""

    def __init__(self, torch):
        self.torch, self.listeners, self.results, self.tensors, self._inside = torch, [], [], [], False
        for owner, name, arguments in (
                (torch.Tensor, "backward", lambda self_, gradient=None, *a, **k: ([self_], [gradient])),
                (torch.autograd, "backward", lambda tensors, grad_tensors=None, *a, **k: (_listed(tensors), _listed(grad_tensors))),
                (torch.autograd, "grad", lambda outputs, inputs, grad_outputs=None, *a, **k: (_listed(outputs), _listed(grad_outputs)))):
            run = getattr(owner, name)
            setattr(owner, name, self._spy(getattr(run, "_kit_original", run), arguments))

    def _spy(self, run, arguments):
        def spy(*args, **kwargs):
            try:  # the outputs and their gradients, as the call names them
                outputs, gradients = ([], []) if self._inside else arguments(*args, **kwargs)
            except TypeError:  # arguments the engine itself will refuse
                outputs, gradients = [], []
            for listener, (i, output) in ((f, o) for f in list(self.listeners) for o in enumerate(outputs)):
                listener(output, gradients[i] if i < len(gradients) else None)
            leaves, self._inside, inside = _leaves_of(outputs), True, self._inside
            try:  # PyTorch's Tensor.backward calls torch.autograd.backward: one call
                value = run(*args, **kwargs)
            finally:
                self._inside = inside
            found = value if isinstance(value, tuple) else [leaf.grad for leaf in leaves]
            kept = [g for g in found if g is not None]  # (the tensors themselves, and copies of their values)
            self.results, self.tensors = (self.results + [_copy(g) for g in kept])[-50:], (self.tensors + kept)[-50:]
            return value
        spy._kit_original = run
        return spy

    def computed(self, value, itself=False) -> bool:
        """Whether ``value`` equals a gradient computed lately (same shape, close values); ``itself``: is one."""
        if itself:  # (create_graph=True's gradient has a grad_fn of its own: being one is what counts)
            return any(value is t for t in self.tensors)
        array = _copy(value)  # None: not a number or array
        return array is not None and any(r.shape == array.shape and np.allclose(r, array, rtol=1e-6, atol=1e-9)
                                         for r in self.results)


_LOGS = {}  # id(torch module) -> its GradientLog


def _listed(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _copy(value):
    try:
        return np.array(value.detach().numpy() if hasattr(value, "detach") else value, dtype=float)
    except (TypeError, ValueError, RuntimeError):
        return None


def _leaves_of(outputs):
    """The leaves behind ``outputs`` (walked along ``next_functions``, without recursion)."""
    stack, seen = [getattr(o, "grad_fn", None) for o in outputs], set()
    leaves = [o for o in outputs if getattr(o, "grad_fn", 1) is None and getattr(o, "requires_grad", False)]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            leaves += [node.variable] if getattr(node, "variable", None) is not None else []
            stack.extend(child for child, _ in getattr(node, "next_functions", ()))
    return leaves


def backward_calls(torch, call):
    """``(call()'s value, the backward calls it made)``, recorded in the student's process.

    A method check for a task that asks for a way of computing: each call through ``Tensor.backward``,
    ``torch.autograd.backward`` or ``torch.autograd.grad`` is ``(output, shape, gradient shape)``, outputs
    numbered in the order first seen (the same ``y`` twice: 0, 0; a ``y`` built twice: 0, 1), the gradient
    shape ``None`` where none was given. It runs beside the student's code, which could change anything
    here: it catches honest mistakes only; points rest on the values the trusted test checks.
    """
    calls, outputs = [], []

    def note(output, gradient):
        number = next((i for i, seen in enumerate(outputs) if seen is output), None)
        if number is None:
            outputs.append(output)
            number = len(outputs) - 1
        shape = None if gradient is None else tuple(getattr(gradient, "shape", np.shape(gradient)))
        calls.append((number, tuple(output.shape), shape))

    log = record_gradients(torch)
    log.listeners.append(note)
    try:
        value = call()
    finally:
        log.listeners.remove(note)
    return value, calls


def with_grad_fn(value):
    """``(value, the name of the operation the engine recorded as producing it)``, in the student's process:
    ``None`` for a leaf, a gradient or anything that is not a tensor, ``'DivBackward0'`` for ``f(a) / a``."""
    grad_fn = getattr(value, "grad_fn", None)
    return value, None if grad_fn is None else type(grad_fn).__name__
