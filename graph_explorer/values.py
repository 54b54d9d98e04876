"""The value each box shows: what the node's tensor held when the graph was read.

A node does not keep its output (that would keep every intermediate tensor alive), so the
value is found where the graph or the caller still has it, read before backward frees anything:

* the output the explorer was given, for the top node;
* a tensor the caller named (``names.py``), for the node that produced it;
* a leaf's own tensor (``AccumulateGrad.variable``);
* the tensors a node saved for its backward (``_saved_self``, ``_saved_result``, ... in both
  engines): an input that another node produced, or the node's own result (``exp``, ``tanh``).

Where none of them has it, the box shows the tensor's shape only (PyTorch's node knows it; in the
kit's engine, the node that used the tensor does). What is kept is a summary (``Shown``): a few
numbers, never the tensor, so the explorer holds on to no memory of the graph. Reading a saved
tensor is what backward does with it: an unpack hook registered with ``saved_tensors_hooks`` runs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KEPT = 12  # numbers kept of a tensor: enough for a 3×4 matrix, or the first few of anything bigger


@dataclass(frozen=True)
class Shown:
    """A tensor as a box shows it: its shape, its first numbers, and whether they are all one number."""

    shape: tuple
    values: tuple = ()     # the first KEPT numbers, flattened
    size: int = 0
    all_equal: bool = False
    known: bool = True     # False: only the shape is known


def summarize(tensor) -> Shown | None:
    """A ``Shown`` of a tensor of either engine (or of a NumPy array), None if it cannot be read."""
    if tensor is None:
        return None
    try:
        data = tensor.detach() if hasattr(tensor, "detach") else tensor
        array = np.asarray(data.numpy() if hasattr(data, "numpy") else data)
        flat = array.reshape(-1)
        first = tuple(v.item() for v in flat[:KEPT])
        return Shown(tuple(array.shape), first, int(flat.size), bool(flat.size) and bool(np.all(flat == flat[0])))
    except Exception:  # a dtype NumPy cannot hold, a tensor on another device: shown as unknown
        return None


def output_nr(tensor) -> int:
    return getattr(tensor, "output_nr", getattr(tensor, "_output_nr", 0))


def saved_tensors_of(fn) -> list:
    """The tensors ``fn`` saved for its backward, as both engines name them (``_saved_<name>``)."""
    found = []
    for name in dir(fn):
        if not name.startswith("_saved_"):
            continue
        try:
            value = getattr(fn, name)
        except Exception:  # freed, or changed in place since: nothing to show from it
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if hasattr(item, "grad_fn") and hasattr(item, "shape"):
                found.append(item)
    return found


def node_values(output, nodes, index: dict, named: dict) -> dict:
    """``{node index: Shown}`` for every node whose tensor is known (see the module's docstring).

    ``named`` is ``{node index: tensor}`` from the caller's names.
    """
    tensors = {0: output} if output_nr(output) == 0 else {}
    for i, tensor in named.items():
        if output_nr(tensor) == 0:
            tensors.setdefault(i, tensor)
    for i, node in enumerate(nodes):
        if node.is_leaf and getattr(node.fn, "variable", None) is not None:
            tensors.setdefault(i, node.fn.variable)
    for node in nodes:
        if node.is_leaf:
            continue
        for tensor in saved_tensors_of(node.fn):
            fn = getattr(tensor, "grad_fn", None)
            if fn is not None and id(fn) in index and output_nr(tensor) == 0:
                tensors.setdefault(index[id(fn)], tensor)
    shown = {i: summarize(t) for i, t in tensors.items()}
    return {i: s for i, s in shown.items() if s is not None}


def output_shapes(nodes, edges) -> dict:
    """``{node index: shape}`` of each node's output, where the engine says it without the value."""
    shapes = {}
    for i, node in enumerate(nodes):
        try:  # PyTorch: what the node's backward expects, the shape of its output
            shapes[i] = tuple(node.fn._input_metadata[0].shape)
        except Exception:
            pass
    for parent, child, position in edges:  # the kit's engine: the shapes of the inputs of the node that used it
        try:
            shapes.setdefault(child, tuple(nodes[parent].fn._input_shapes[position]))
        except Exception:
            pass
    return shapes
