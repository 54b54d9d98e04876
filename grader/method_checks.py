"""How an answer was computed, asked in the student's process: the checks of a task that asks for a way.

``backward_calls`` lists the backward calls a piece of code made, ``hook_calls`` the tensor hooks it registered
and how often backward ran each, ``record_gradients`` keeps the gradients the
notebook's backward passes computed (and the clones made of them), ``with_grad_fn`` names the operation that
produced a tensor. Test cells import them from ``grader.checks``. They run beside the student's code, which
could change anything here: they catch honest mistakes, never forgery; points rest on the values the trusted
test checks (``grader/checks.py``).
"""

from __future__ import annotations

import numpy as np


def record_gradients(torch):
    """From now on, in this process, a ``GradientLog`` of every backward pass started through ``torch``'s API.

    ``Tensor.backward``, ``torch.autograd.backward`` and ``torch.autograd.grad`` are wrapped once (a
    name imported from ``torch.autograd`` later is the wrapped one: call it in a set-up cell). The log
    keeps the last gradients computed (``grad``'s results, the leaves' ``.grad`` after a backward) and
    the ``clone()`` of one (``Tensor.clone`` and ``torch.clone`` are wrapped too): ``log.computed(value)``.
    A method check for honest mistakes, like ``backward_calls``.
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
        for owner in (torch.Tensor, torch):  # a gradient's clone() (lesson 4's copy of one's own) is one too
            owner.clone = self._clone_spy(getattr(owner.clone, "_kit_original", owner.clone))

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

    def _clone_spy(self, run):
        def spy(tensor, *args, **kwargs):
            value = run(tensor, *args, **kwargs)
            if self.computed(tensor, itself=True):
                self.tensors = (self.tensors + [value])[-50:]
            return value
        spy._kit_original = run
        return spy

    def computed(self, value, itself=False) -> bool:
        """Whether ``value`` equals a gradient computed lately (same shape, close values).

        ``itself``: whether it is one: that tensor, a view of its memory (``detach()``, ``numpy()``) or its
        ``clone()``. A derivative written by hand (``torch.cos(x).detach()``) has the values of one, not its
        memory; create_graph=True's gradient has a grad_fn of its own, and is one all the same."""
        if itself:
            memory = _memory_of(value)
            return any(value is t or (memory is not None and _memory_of(t) is not None
                                      and np.may_share_memory(memory, _memory_of(t))) for t in self.tensors)
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


def _memory_of(value):
    """The NumPy array over a tensor's memory (``detach().numpy()`` copies nothing on either engine), or None."""
    try:
        return value if isinstance(value, np.ndarray) else value.detach().numpy()
    except (AttributeError, TypeError, ValueError, RuntimeError):
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


def hook_calls(torch, call):
    """``(call()'s value, the tensor hooks it registered)``, recorded in the student's process.

    A method check for a task that asks for a hook: each ``Tensor.register_hook`` made during ``call`` is
    ``(whether the tensor is a leaf, its shape, how many times backward called the hook)``, in the order
    registered. Like ``backward_calls``, it catches honest mistakes only.
    """
    hooks, own = [], "register_hook" in vars(torch.Tensor)
    register = torch.Tensor.register_hook

    def spy(tensor, hook):
        seen = [bool(tensor.is_leaf), tuple(tensor.shape), 0]
        hooks.append(seen)

        def counted(grad):
            seen[2] += 1
            return hook(grad)
        return register(tensor, counted)

    torch.Tensor.register_hook = spy
    try:
        value = call()
    finally:
        if own:
            torch.Tensor.register_hook = register
        else:
            del torch.Tensor.register_hook
    return value, [tuple(seen) for seen in hooks]


def with_grad_fn(value):
    """``(value, the name of the operation the engine recorded as producing it)``, in the student's process:
    ``None`` for a leaf, a gradient or anything that is not a tensor, ``'DivBackward0'`` for ``f(a) / a``."""
    grad_fn = getattr(value, "grad_fn", None)
    return value, None if grad_fn is None else type(grad_fn).__name__
