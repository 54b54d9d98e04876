"""Placing the graph on a page without graphviz: layers by depth, ordered to avoid crossings.

The output's node sits at the top; every edge points down. All leaves share
the bottom layer, where a reader expects the inputs. Within a layer, nodes are
ordered by the average position of their parents (the barycenter heuristic),
which untangles the small graphs of a course well enough; leaves the reader
named appear in the order they were named.
"""
from __future__ import annotations


def layout(graph) -> dict:
    """``{node index: (x, y)}`` with ``y = -layer`` and x centred on 0."""
    nodes = graph.nodes
    if not nodes:
        return {}
    # the bottom layer: below every operation, and deep enough for every leaf
    bottom = max([n.depth for n in nodes if n.is_leaf] + [n.depth + 1 for n in nodes if not n.is_leaf])
    layer_of = {i: (bottom if n.is_leaf else n.depth) for i, n in enumerate(nodes)}
    count = max(layer_of.values()) + 1
    layers = [[] for _ in range(count)]
    for i in range(len(nodes)):  # discovery order: a stable first guess
        layers[layer_of[i]].append(i)

    parents = {i: [] for i in range(len(nodes))}
    for p, c, position in graph.edges:
        parents[c].append((p, position))

    pos = {}
    for layer in range(count):
        if layer > 0:
            def key(i):
                ps = parents[i]
                if not ps:
                    return 0.0
                # the parent's x, nudged by which input this is, keeps inputs in argument order
                return sum(pos[p][0] + 0.01 * position for p, position in ps) / len(ps)
            layers[layer].sort(key=key)
            if all(nodes[i].rank is not None for i in layers[layer]):
                layers[layer].sort(key=lambda i: nodes[i].rank)  # named leaves: in the order the reader named them
        width = len(layers[layer])
        for k, i in enumerate(layers[layer]):
            pos[i] = (k - (width - 1) / 2, -layer)
    return pos
