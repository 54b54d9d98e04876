"""Starting a backward pass: ``tensor.backward()``, ``autograd.backward`` and ``autograd.grad``."""
from __future__ import annotations


import numpy as np

from .. import torch_warnings
from ..backward import capture_grads, run_backward
from ..function import accumulator_of
from ..tensor import Tensor


_CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid "
    "this. If you have to use this function, make sure to reset the .grad fields of your parameters to None "
    "after use to break the cycle and avoid the leak."
)


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _root_edges(outputs):
    """The node each output's gradient starts from; PyTorch's error for a constant."""
    edges = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"backward expects tensors, but element {i} is a {type(out).__name__}")
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append((out._grad_fn, out._output_nr) if out._grad_fn is not None else (accumulator_of(out), 0))
    return edges


def _initial_grads(outputs, grad_outputs, create_graph):
    """``gradient`` as given, or 1 for a scalar output (the only case it can be implied)."""
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if i < len(grad_outputs) else None
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._data.dtype.kind != "f":
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {out.dtype}"
                )
            g = Tensor._make(np.ones_like(out._data))
        else:
            if not isinstance(g, Tensor):
                g = Tensor._make(np.asarray(g, dtype=out._data.dtype))
            if g._data.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                    f"shape of {out.shape}."
                )
            if not create_graph:
                g = g.detach()
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate into ``.grad`` of the leaves the gradient of ``tensors``.

    ``retain_graph`` defaults to ``create_graph``: without it, the saved tensors
    of every node that ran are freed, and a second pass through such a node
    raises "Trying to backward through the graph a second time".
    """
    outputs = _as_tuple(tensors)
    grads = _initial_grads(outputs, _as_tuple(grad_tensors), create_graph)
    roots = _root_edges(outputs)
    retain = create_graph if retain_graph is None else retain_graph
    inputs = _as_tuple(inputs)
    if not inputs:
        if create_graph:
            torch_warnings.warn(_CREATE_GRAPH_WARNING, "create_graph", once=True, stacklevel=3)
        run_backward(roots, grads, retain, create_graph)
        return
    # backward(inputs=...): only these tensors get .grad, whether leaves or not.
    capture = {_edge_of_input(t, i): i for i, t in enumerate(inputs)}
    for t in inputs:
        if t._grad_fn is not None:
            t.retain_grad()  # as PyTorch does; its hook stores the gradient
    found = capture_grads(roots, grads, capture, retain, create_graph)
    for t, g in zip(inputs, found):
        if g is not None and t._grad_fn is None:  # a leaf: its AccumulateGrad adds it in (hooks included)
            accumulator_of(t).accumulate(g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return the gradients of ``outputs`` with respect to ``inputs`` (``.grad`` is left alone).

    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> (dy,) = torch.autograd.grad(x ** 3, x, create_graph=True)   # 3x^2 = 27
    >>> torch.autograd.grad(dy, x)                                   # 6x  = 18
    """
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if not inputs_t:
        raise RuntimeError("grad requires non-empty inputs.")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    grads = _initial_grads(outputs, _as_tuple(grad_outputs), create_graph)
    roots = _root_edges(outputs)
    retain = create_graph if retain_graph is None else retain_graph
    targets = {_edge_of_input(t, i): i for i, t in enumerate(inputs_t)}
    found = capture_grads(roots, grads, targets, retain, create_graph)
    result = []
    for i, (t, g) in enumerate(zip(inputs_t, found)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = Tensor._make(np.zeros_like(t._data))
        result.append(g)
    return tuple(result)


def _edge_of_input(t, i):
    if not isinstance(t, Tensor):
        raise TypeError(f"inputs to grad must be Tensors, but input {i} is a {type(t).__name__}")
    if not t._requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return (t._grad_fn, t._output_nr) if t._grad_fn is not None else (accumulator_of(t), 0)
