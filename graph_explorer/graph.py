"""The recorded graph, read from an output tensor.

Nodes are the ``grad_fn`` objects; an edge goes from a node to each entry of its
``next_functions`` (the direction gradients flow). Leaves appear as
``AccumulateGrad`` nodes whose ``.variable`` is the leaf tensor.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .saved import has_saved_tensors
from .texts import text


@dataclass(eq=False)
class GraphNode:
    """One node of the graph as the explorer shows it."""

    fn: object                 # the grad_fn object itself
    name: str                  # e.g. "MulBackward0", or "AccumulateGrad"
    label: str                 # what the drawing shows
    is_leaf: bool              # an AccumulateGrad node (the end of a path)
    saves_tensors: bool        # held saved tensors when the graph was read
    depth: int = 0             # longest distance from the output (0 = the output's grad_fn)
    rank: int | None = None    # a named leaf's place in ``names``: leaves are drawn in that order
    children: list = field(default_factory=list)  # indices of next_functions, in order


@dataclass
class Graph:
    nodes: list                # GraphNode, in discovery order from the output
    edges: list                # (parent index, child index, input position)
    index: dict                # id(fn) -> index into nodes

    def node_of(self, fn) -> GraphNode:
        return self.nodes[self.index[id(fn)]]

    def ops(self) -> list:
        """The nodes that stand for operations (everything but the leaves)."""
        return [n for n in self.nodes if not n.is_leaf]


def node_name(fn) -> str:
    name = fn.name() if callable(getattr(fn, "name", None)) else type(fn).__name__
    return name.rsplit("::", 1)[-1]  # "torch::autograd::AccumulateGrad" -> "AccumulateGrad"


def _shape_text(tensor, language) -> str:
    return "×".join(str(s) for s in tensor.shape) or text(language, "scalar")


def _leaf_label(fn, names, language) -> str:
    variable = getattr(fn, "variable", None)
    if variable is None:
        return "AccumulateGrad"
    for name, tensor in names.items():
        if tensor is variable:
            return f"AccumulateGrad\n{name} ({_shape_text(variable, language)})"
    return f"AccumulateGrad\n({_shape_text(variable, language)})"


def extract_graph(output, names: dict | None = None, language: str = "en") -> Graph:
    """Read the graph below ``output`` (a tensor with a ``grad_fn``).

    ``names`` maps display names to leaf tensors, e.g. ``{"x": x}``; ``language`` is that of
    the leaves' labels ("scalar" or "标量" for a tensor without dimensions).

    >>> g = extract_graph(((x + 2) * 3).sum(), names={"x": x})   # doctest: +SKIP
    >>> [n.name for n in g.nodes]                                # doctest: +SKIP
    ['SumBackward0', 'MulBackward0', 'AddBackward0', 'AccumulateGrad']
    """
    root = getattr(output, "grad_fn", None)
    if root is None:
        raise ValueError("this tensor has no grad_fn: it is a leaf or was computed without tracking")
    names = dict(names or {})
    nodes, edges, index = [], [], {}

    def add(fn) -> int:
        if id(fn) not in index:
            name = node_name(fn)
            is_leaf = name == "AccumulateGrad"
            label = _leaf_label(fn, names, language) if is_leaf else name
            index[id(fn)] = len(nodes)
            node = GraphNode(fn, name, label, is_leaf, has_saved_tensors(fn))
            variable = getattr(fn, "variable", None) if is_leaf else None
            node.rank = next((k for k, t in enumerate(names.values()) if t is variable), None)
            nodes.append(node)
        return index[id(fn)]

    add(root)
    stack, seen = [root], {id(root)}
    order = []
    while stack:  # iterative: a long chain of ops must not hit the recursion limit
        fn = stack.pop()
        order.append(fn)
        parent = index[id(fn)]
        for position, (child, _) in enumerate(fn.next_functions):
            if child is None:
                continue
            c = add(child)
            edges.append((parent, c, position))
            nodes[parent].children.append(c)
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    _assign_depths(nodes, edges)
    return Graph(nodes, edges, index)


def _assign_depths(nodes, edges) -> None:
    """Longest distance from the root, so every edge points one layer down or more."""
    indegree = [0] * len(nodes)
    for _, c, _ in edges:
        indegree[c] += 1
    ready = [i for i, d in enumerate(indegree) if d == 0]
    while ready:  # Kahn's topological order
        i = ready.pop()
        for c in nodes[i].children:
            nodes[c].depth = max(nodes[c].depth, nodes[i].depth + 1)
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)


def count_ops(output) -> int:
    """How many operations the graph of ``output`` recorded (its nodes, leaves not counted).

    Zero for a tensor without history.
    """
    if getattr(output, "grad_fn", None) is None:
        return 0
    return len(extract_graph(output).ops())
