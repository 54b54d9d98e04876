"""The recorded graph, read from an output tensor.

Nodes are the ``grad_fn`` objects; an edge goes from a node to each entry of its
``next_functions`` (the direction gradients flow). Leaves appear as
``AccumulateGrad`` nodes whose ``.variable`` is the leaf tensor.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .names import merged, names_by_node
from .saved import has_saved_tensors
from .values import Shown, node_values, output_shapes


@dataclass(eq=False)
class GraphNode:
    """One node of the graph as the explorer shows it."""

    fn: object                 # the grad_fn object itself
    name: str                  # e.g. "MulBackward0", or "AccumulateGrad"
    label: str                 # the node as the drawing names it ("MulBackward0 ×10" for a folded chain)
    is_leaf: bool              # an AccumulateGrad node (the end of a path)
    saves_tensors: bool        # held saved tensors when the graph was read
    depth: int = 0             # longest distance from the output (0 = the output's grad_fn)
    rank: int | None = None    # a named leaf's place in ``names``: leaves are drawn in that order
    children: list = field(default_factory=list)  # indices of next_functions, in order
    names: tuple = ()          # the names of the tensor it produced (names.py): ("z",)
    value: Shown | None = None  # that tensor's value, or its shape only (values.py); None: unknown


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


def extract_graph(output, names: dict | None = None, language: str = "en", read_values: bool = True,
                  found: dict | None = None) -> Graph:
    """Read the graph below ``output`` (a tensor with a ``grad_fn``).

    ``names`` maps names to tensors of the graph, e.g. ``{"x": x, "z": z}``, and orders the leaves it
    names; ``found`` adds names without an order (``GraphExplorer`` and ``show_graph`` pass the
    caller's variables, names.py). Each node gets the names of the tensor it produced and, unless
    ``read_values`` is False, that tensor's value (values.py). ``language`` is kept for callers of
    earlier versions: the words of a box are chosen when it is drawn.

    >>> g = extract_graph(((x + 2) * 3).sum(), names={"x": x})   # doctest: +SKIP
    >>> [n.name for n in g.nodes]                                # doctest: +SKIP
    ['SumBackward0', 'MulBackward0', 'AddBackward0', 'AccumulateGrad']
    """
    root = getattr(output, "grad_fn", None)
    if root is None:
        raise ValueError("this tensor has no grad_fn: it is a leaf or was computed without tracking")
    ordered = list(names or {})
    names = merged(names, found)
    nodes, edges, index = [], [], {}

    def add(fn) -> int:
        if id(fn) not in index:
            name = node_name(fn)
            index[id(fn)] = len(nodes)
            nodes.append(GraphNode(fn, name, name, name == "AccumulateGrad", has_saved_tensors(fn)))
        return index[id(fn)]

    add(root)
    stack, seen = [root], {id(root)}
    while stack:  # iterative: a long chain of ops must not hit the recursion limit
        fn = stack.pop()
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
    _name_and_value(output, nodes, edges, index, names, ordered, read_values)
    return Graph(nodes, edges, index)


def _name_and_value(output, nodes, edges, index, names, ordered, read_values) -> None:
    by_node = names_by_node(nodes, index, names)
    for i, found in by_node.items():
        nodes[i].names = tuple(found)
        if nodes[i].is_leaf and found[0] in ordered:
            nodes[i].rank = ordered.index(found[0])
    if not read_values:
        return
    named = {i: names[found[0]] for i, found in by_node.items()}
    values = node_values(output, nodes, index, named)
    shapes = output_shapes(nodes, edges)
    for i, node in enumerate(nodes):
        node.value = values.get(i) or (Shown(shapes[i], known=False) if i in shapes else None)


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
    return len(extract_graph(output, read_values=False).ops())
