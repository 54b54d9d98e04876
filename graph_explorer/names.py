"""Which tensors of the graph have a name in the student's code: ``y``, ``z``, ``out``.

A box of the picture is a node (``MulBackward0``), but what a student wrote is ``z = y * y * 3``:
the box of the node that produced ``z`` is labelled ``z``. The names come from two places:

* the code that called the explorer: its variables (the notebook's, or a function's locals and
  then its module's globals) that hold a tensor of the graph, or a list or tuple of tensors
  (``params[3]``). Names starting with ``_`` are left out (IPython's ``_``, ``_3``, ``__``: the
  same tensors again);
* an explicit ``names={"x": x}``, first and in its order; the leaves named there are also drawn
  in that order, at the bottom of the picture (layout.py).

A leaf is found by its tensor (``AccumulateGrad.variable``), any other tensor by its ``grad_fn``.
A name that holds a tensor of another graph names nothing here.
"""
from __future__ import annotations

import sys

PACKAGE = __name__.split(".")[0]
LISTED = 100  # a longer list of tensors (a data set) names nothing


def is_tensor(value) -> bool:
    """A tensor of either engine (duck typing): it has a shape, ``grad_fn`` and ``detach``."""
    return not isinstance(value, type) and all(hasattr(value, a) for a in ("shape", "grad_fn", "detach", "requires_grad"))


def caller_tensors(depth: int = 1) -> dict:
    """``{name: tensor}`` of the variables of the first caller outside this package, in their order."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == PACKAGE:
        frame = frame.f_back
    if frame is None:
        return {}
    found = {}
    scopes = [frame.f_locals] if frame.f_locals is frame.f_globals else [frame.f_locals, frame.f_globals]
    for scope in scopes:
        for name, value in list(scope.items()):
            if name.startswith("_") or name in found:
                continue
            if is_tensor(value):
                found[name] = value
            elif isinstance(value, (list, tuple)) and 0 < len(value) <= LISTED and all(map(is_tensor, value)):
                found.update((f"{name}[{i}]", item) for i, item in enumerate(value))
    return found


def merged(names: dict | None, found: dict | None) -> dict:
    """The explicit ``names`` first, then the ones found, skipping a found tensor that already has a name."""
    combined = dict(names or {})
    given = {id(t) for t in combined.values()}
    for name, tensor in (found or {}).items():
        if name not in combined and id(tensor) not in given:
            combined[name] = tensor
    return combined


def names_by_node(nodes, index: dict, names: dict) -> dict:
    """``{node index: [names]}``: each name on the node whose output it holds (its leaf, for a leaf)."""
    leaves = {id(n.fn.variable): i for i, n in enumerate(nodes) if n.is_leaf and getattr(n.fn, "variable", None) is not None}
    by_node = {}
    for name, tensor in names.items():
        fn = getattr(tensor, "grad_fn", None)
        i = index.get(id(fn)) if fn is not None else leaves.get(id(tensor))
        if i is not None and name not in by_node.setdefault(i, []):
            by_node[i].append(name)
    return {i: found for i, found in by_node.items() if found}
