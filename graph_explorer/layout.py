"""Placing the graph on a page without graphviz: layers, an order that avoids crossings, routed edges.

The output's node sits at the top; every edge points down. The leaves share the bottom layer,
where a reader expects the inputs (those named with ``names=`` in that order), except a leaf
that only nodes far above use: it sits one layer below the deepest of them, next to it (as
graphviz places micrograd's parameters), so that a graph with many parameters needs no long
edges down to a crowded bottom row. "Far above" is more than ``NEAR_BOTTOM`` layers.
The steps are the classic layered drawing (Sugiyama's):

1. an edge that skips layers gets a waypoint on every layer it crosses, so it is routed
   *between* the boxes of those layers instead of straight through them;
2. within each layer, boxes and waypoints are ordered by the average position of their
   neighbours (the barycenter heuristic), sweeping down and up a few times and keeping
   the order with the fewest crossings; leaves the reader named stay in that order;
3. each box then moves towards its neighbours as far as the spacing in its layer allows.

``arrange(graph)`` returns the boxes' positions and each edge's route; ``layout(graph)``
only the positions.
"""
from __future__ import annotations

from dataclasses import dataclass

BOX_GAP, WAYPOINT_GAP = 1.0, 0.4  # horizontal room between neighbours in a layer (box, waypoint)
NEAR_BOTTOM = 1  # a leaf this many layers above the bottom or fewer is drawn at the bottom
SWEEPS = 8


@dataclass
class Arrangement:
    positions: dict     # node index -> (x, y), y = -layer
    routes: list        # per edge of graph.edges: the points it passes, from parent to child


def layout(graph) -> dict:
    """``{node index: (x, y)}`` with ``y = -layer`` and x centred on 0."""
    return arrange(graph).positions


def arrange(graph) -> Arrangement:
    nodes = graph.nodes
    if not nodes:
        return Arrangement({}, [])
    # the bottom layer: below every operation, and deep enough for every leaf; named leaves go there
    bottom = max([n.depth for n in nodes if n.is_leaf] + [n.depth + 1 for n in nodes if not n.is_leaf])
    layer_of = {i: bottom if n.is_leaf and (n.rank is not None or bottom - n.depth <= NEAR_BOTTOM) else n.depth
                for i, n in enumerate(nodes)}

    # 1. waypoints: ("w", edge number, layer) on every layer an edge skips
    chains = []  # per edge: the items it passes, parent and child included
    for e, (p, c, _) in enumerate(graph.edges):
        chains.append([p] + [("w", e, layer) for layer in range(layer_of[p] + 1, layer_of[c])] + [c])
    layer_of.update({item: item[2] for chain in chains for item in chain[1:-1]})
    layers = [[] for _ in range(bottom + 1)]
    for i in range(len(nodes)):  # discovery order: a stable first guess
        layers[layer_of[i]].append(i)
    up, down = {}, {}  # neighbours one layer up and one layer down, with the input position
    for e, chain in enumerate(chains):
        position = graph.edges[e][2]
        for a, b in zip(chain, chain[1:]):
            down.setdefault(a, []).append((b, position))
            up.setdefault(b, []).append((a, position))
    for chain in chains:
        for item in chain[1:-1]:
            layers[item[2]].append(item)

    # 2. order within layers
    def named_leaves_in_order(layer):
        if all(isinstance(i, int) and nodes[i].rank is not None for i in layer):
            layer.sort(key=lambda i: nodes[i].rank)

    def sweep(order, neighbours, layer_range, step):
        for layer in layer_range:
            place = {item: k for k, item in enumerate(order[layer - step])}  # the layer just swept
            place.update((item, k) for k, item in enumerate(order[layer]))

            def key(item, place=place):
                ns = neighbours.get(item, [])
                if not ns:
                    return place[item]
                # the neighbour's place, nudged by which input this is: inputs keep argument order
                return sum(place[n] + 0.01 * position for n, position in ns) / len(ns)
            order[layer].sort(key=key)
            named_leaves_in_order(order[layer])

    def crossings(order):
        total = 0
        for layer in range(len(order) - 1):
            place = {item: k for k, item in enumerate(order[layer + 1])}
            pairs = [(k, place[b]) for k, a in enumerate(order[layer]) for b, _ in down.get(a, [])]
            total += sum(1 for i, (a1, b1) in enumerate(pairs) for a2, b2 in pairs[i + 1:]
                         if (a1 - a2) * (b1 - b2) < 0)
        return total

    order = [list(layer) for layer in layers]
    sweep(order, up, range(1, len(order)), 1)
    best, best_count = [list(lay) for lay in order], crossings(order)
    for _ in range(SWEEPS):
        sweep(order, down, range(len(order) - 2, -1, -1), -1)
        sweep(order, up, range(1, len(order)), 1)
        count = crossings(order)
        if count < best_count:
            best, best_count = [list(lay) for lay in order], count
    order = best

    # 3. horizontal positions: start evenly spaced, then pull towards the neighbours
    def gap(a, b):
        return BOX_GAP if isinstance(a, int) and isinstance(b, int) else WAYPOINT_GAP if not (
            isinstance(a, int) or isinstance(b, int)) else (BOX_GAP + WAYPOINT_GAP) / 2

    x = {}
    for layer in order:
        at = 0.0
        for k, item in enumerate(layer):
            at += gap(layer[k - 1], item) if k else 0.0
            x[item] = at
    for _ in range(SWEEPS):
        for neighbours, layer_range in ((up, range(1, len(order))), (down, range(len(order) - 2, -1, -1))):
            for layer in layer_range:
                items = order[layer]
                wanted = [sum(x[n] for n, _ in neighbours[i]) / len(neighbours[i]) if neighbours.get(i) else x[i]
                          for i in items]
                x.update(zip(items, _spread(items, wanted, gap)))
    centre = (min(x.values()) + max(x.values())) / 2
    positions = {i: (x[i] - centre, -layer_of[i]) for i in range(len(nodes))}
    routes = [[(x[item] - centre, -layer_of[item]) for item in chain] for chain in chains]
    return Arrangement(positions, routes)


def _spread(items, wanted, gap):
    """Positions as close to ``wanted`` as the order and the gaps allow (left-to-right, then right-to-left)."""
    n = len(items)
    left = list(wanted)
    for k in range(1, n):
        left[k] = max(left[k], left[k - 1] + gap(items[k - 1], items[k]))
    right = list(wanted)
    for k in range(n - 2, -1, -1):
        right[k] = min(right[k], right[k + 1] - gap(items[k], items[k + 1]))
    both = [(a + b) / 2 for a, b in zip(left, right)]
    for k in range(1, n):
        both[k] = max(both[k], both[k - 1] + gap(items[k - 1], items[k]))
    return both
