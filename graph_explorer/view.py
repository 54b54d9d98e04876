"""What the picture shows of a graph: a long chain of the same operation folded into one box.

Lesson 5's loop records ten ``MulBackward0`` nodes in a row; drawn one by one they make a
picture taller than a screen and say nothing more than "MulBackward0 ×10". A *chain* is a
run of nodes with the same name where each has exactly one edge out, to the next, and the
next has no other edge in. Runs of ``min_run`` or more become one box; everything else is
drawn as it is.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .graph import Graph, _assign_depths


@dataclass
class GraphView:
    graph: Graph        # the graph as drawn: one node per box
    members: list       # per drawn node: the indices of the real nodes it stands for, output side first
    origin: list        # per drawn edge: the real edge (parent, child, position) it stands for

    def box_of(self, real: int) -> int:
        return next(i for i, m in enumerate(self.members) if real in m)


def fold_chains(graph: Graph, min_run: int = 3) -> GraphView:
    """The graph with every chain of ``min_run`` or more identical operations drawn as one node."""
    nodes = graph.nodes
    out_edges = {i: [] for i in range(len(nodes))}
    in_count = [0] * len(nodes)
    for p, c, _ in graph.edges:
        out_edges[p].append(c)
        in_count[c] += 1

    def link(i):  # the next node of i's chain, or None
        out = out_edges[i]
        if nodes[i].is_leaf or len(out) != 1:
            return None
        c = out[0]
        same = nodes[c].name == nodes[i].name and not nodes[c].is_leaf
        return c if same and in_count[c] == 1 else None

    targets = {link(i) for i in range(len(nodes))} - {None}
    members = []
    for i in range(len(nodes)):  # discovery order: the output's chain comes first
        if i in targets:
            continue  # not the head of a chain
        run = [i]
        while (nxt := link(run[-1])) is not None:
            run.append(nxt)
        if len(run) >= min_run:
            members.append(run)
        else:
            members.extend([k] for k in run)
    members.sort(key=lambda m: m[0])

    box = {real: b for b, m in enumerate(members) for real in m}
    drawn = []
    for m in members:
        first = nodes[m[0]]
        if len(m) == 1:
            drawn.append(replace(first, children=[], depth=0))
        else:
            drawn.append(replace(first, label=f"{first.name} ×{len(m)}", children=[], depth=0,
                                 saves_tensors=any(nodes[k].saves_tensors for k in m)))
    edges, origin = [], []
    for edge in graph.edges:
        p, c, position = edge
        if box[p] == box[c]:
            continue  # inside a folded chain
        edges.append((box[p], box[c], position))
        origin.append(edge)
        drawn[box[p]].children.append(box[c])
    _assign_depths(drawn, edges)
    index = {id(n.fn): b for b, n in enumerate(drawn)}
    return GraphView(Graph(drawn, edges, index), members, origin)
