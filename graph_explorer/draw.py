"""Drawing one moment of backward: the graph, what already ran, what flowed where, what was freed.

Each box says what micrograd's drawing says of a value (labels.py): the tensor's name, its data,
and, once backward has run the node, the gradient it received (the sum over its incoming edges).
What flows along an edge is written on that edge (the gradient the parent sent to that input).
Long chains of one operation are folded into one box (view.py); edges are routed around
the boxes (layout.py). The columns are as wide as the widest box and the layers as tall as
the tallest, so no two boxes overlap; arrows end at the edge of their box.

Uses matplotlib's object API (``Figure``, not ``pyplot``), so drawing never pops up stray
plots in a notebook and works without a display.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Patch
from matplotlib.path import Path as CurvePath

from .fonts import use_chinese_font, with_chinese
from .labels import columns, data_lines, grad_lines, one_line, title
from .layout import arrange
from .texts import text
from .view import fold_chains

PENDING, DONE, CURRENT = "#eeeeee", "#c7e9c0", "#fdae6b"
SAVED_EDGE, FREED_EDGE = "#3182bd", "#de2d26"
EDGE, EDGE_TEXT = "#888888", "#08519c"
X_INCH, Y_INCH = 2.0, 1.25  # the smallest size of one unit of the layout on the page
FONT_SIZE, LINE_SPACING, BOX_PAD = 8.5, 1.3, 0.4  # a box's text (points), its line spacing, its padding (em)
COLUMN_INCH = 0.602 * FONT_SIZE / 72  # one column of the monospace font (DejaVu Sans Mono: 0.602 em)
LINE_INCH = LINE_SPACING * FONT_SIZE / 72


@dataclass(frozen=True)
class Page:
    """How big one unit of the layout is on the page, in inches (``x_inch`` across, ``y_inch`` down)."""

    x_inch: float = X_INCH
    y_inch: float = Y_INCH

    def inches(self, point):
        return point[0] * self.x_inch, point[1] * self.y_inch


def page_for(texts) -> Page:
    """A page where the widest box fits its column with room to spare, and the tallest its layer."""
    pad = 2 * BOX_PAD * FONT_SIZE / 72
    widest = max((columns(line) for t in texts for line in t.split("\n")), default=0) * COLUMN_INCH + pad
    tallest = max((t.count("\n") + 1 for t in texts), default=1) * LINE_INCH + pad
    return Page(max(X_INCH, widest + 0.35), max(Y_INCH, tallest + 0.6))


def box_size(text_: str, page: Page) -> tuple:
    """A box's half width and half height in inches, with a little room around it."""
    pad = BOX_PAD * FONT_SIZE / 72
    widest = max(columns(line) for line in text_.split("\n"))
    return widest * COLUMN_INCH / 2 + pad + 0.05, (text_.count("\n") + 1) * LINE_INCH / 2 + pad + 0.05


def half_height(text_: str, page: Page) -> float:
    """Half a box's height, in layout units: where an arrow to or from it starts or ends."""
    return ((text_.count("\n") + 1) * LINE_INCH / 2 + BOX_PAD * FONT_SIZE / 72 + 0.04) / page.y_inch


def format_grad(grad, limit: int = 4, compact: bool = False) -> str:
    """A gradient in a few characters: ``4.5`` or ``[0, 4, 8, 12]`` (at most ``limit`` numbers).

    ``compact``: a tensor whose entries are all equal is written ``[0.25 ×4]``.
    """
    if grad is None:
        return "None"
    values = grad.detach().reshape(-1).tolist()
    shown = [f"{v:.4g}" for v in values[:limit]]
    if len(grad.shape) == 0:
        return shown[0]
    if compact and len(values) > 1 and all(v == values[0] for v in values):
        return f"[{shown[0]} ×{len(values)}]"
    more = ", …" if len(values) > limit else ""
    return "[" + ", ".join(shown) + more + "]"


def describe_step(trace, k: int, language: str = "en") -> str:
    """One line saying what step ``k`` (1-based) did; step 0 is 'before backward'."""
    total = len(trace.steps)
    if k <= 0:
        return text(language, "before", nodes=len(trace.graph.nodes), steps=total)
    step = trace.steps[k - 1]
    node = trace.graph.nodes[step.node]
    return text(language, "step", k=k, total=total, name=title(node, language),
                grad=one_line(step.grads[0], 30, language))  # a 2×2 as its rows, as the table and the boxes


def box_text(view, b, trace, done, language: str = "en") -> str:
    """What box ``b`` says once the nodes ``done`` have run: name, data, and the gradient it received."""
    members = view.members[b]
    node = view.graph.nodes[b]
    lines = [title(node, language)] + data_lines(node, language)
    ran = [m for m in members if m in done]
    if len(members) > 1 and 0 < len(ran) < len(members):
        lines.append(text(language, "ran", done=len(ran), count=len(members)))
    if len(ran) == 1 and len(members) == 1:
        lines += grad_lines(trace.grad_of(ran[0]), language)
    elif ran:  # a folded chain: the gradients its first and its last node received
        first = format_grad(trace.grad_of(ran[0]), compact=True)
        last = format_grad(trace.grad_of(ran[-1]), compact=True)
        lines.append(f"{text(language, 'grad')} " + (first if len(ran) == 1 else f"{first} … {last}"))
    return "\n".join(lines)


def draw(trace, k: int, ax=None, language: str = "en", fold: bool = True, graph_only: bool = False):
    """Draw the graph after the first ``k`` steps of ``trace``; returns the matplotlib Axes.

    ``graph_only``: just the recorded graph, as it is before backward (no steps, no gradients).
    """
    mono = "monospace"
    if language != "en":
        use_chinese_font()
        mono = with_chinese("monospace")
    view = fold_chains(trace.graph) if fold else fold_chains(trace.graph, min_run=len(trace.graph.nodes) + 1)
    graph = view.graph
    arrangement = arrange(graph)
    pos = arrangement.positions
    k = max(0, min(k, len(trace.steps)))
    done = [s.node for s in trace.steps[:k]]
    current = done[-1] if done else None
    freed = trace.freed_at(k)
    texts = [box_text(view, b, trace, done, language) for b in range(len(graph.nodes))]
    # the page fits every box the run will show (a folded chain part run has one line more), so it keeps its size
    ended = [box_text(view, b, trace, [s.node for s in trace.steps], language) for b in range(len(graph.nodes))]
    page = page_for(texts + ended + [t + "\n" for b, t in enumerate(ended) if len(view.members[b]) > 1])
    xs = [p[0] for p in pos.values()] + [p[0] for r in arrangement.routes for p in r]
    ys = [p[1] for p in pos.values()]
    if ax is None:
        width, height = max(xs) - min(xs) + 1.6, max(ys) - min(ys) + 1
        fig = Figure(figsize=(max(6.5, page.x_inch * width + 2.2), 1.3 + page.y_inch * height), dpi=90)
        ax = fig.add_subplot()
    ax.explorer_page = page  # for a reader of the picture: the size of a layout unit on the page

    # edges: routed through their waypoints; an input used twice (x * x) gets two bent arrows
    parallel = {}
    for parent, child, _ in graph.edges:
        parallel[parent, child] = parallel.get((parent, child), 0) + 1
    seen, paths, bends = {}, [], []
    for e, (parent, child, _) in enumerate(graph.edges):
        route = arrangement.routes[e]
        repeat = seen[parent, child] = seen.get((parent, child), -1) + 1
        count = parallel[parent, child]
        bends.append(0.0 if count == 1 else 0.6 * (repeat / (count - 1) - 0.5))  # fanned out symmetrically
        start, end = half_height(texts[parent], page), half_height(texts[child], page)
        paths.append([(route[0][0], route[0][1] - start)] + route[1:-1] + [(route[-1][0], route[-1][1] + end)])
    sizes = {b: box_size(texts[b], page) for b in range(len(graph.nodes))}
    labels = _label_points(paths, bends, pos, page, sizes)  # the same places at every step
    for e, (parent, child, _) in enumerate(graph.edges):
        _arrow(ax, paths[e], bends[e])
        real_parent, _, position = view.origin[e]
        if real_parent in done:
            mid = labels[e]
            # a bent arrow's label reads outwards from its arc, so that the labels of two parallel arrows never meet
            ha = "center" if not bends[e] else "left" if bends[e] * (paths[e][-1][1] - paths[e][0][1]) > 0 else "right"
            ax.text(mid[0], mid[1], format_grad(trace.edge_grad(real_parent, position), compact=True), ha=ha,
                    va="center", fontsize=7.5, color=EDGE_TEXT, zorder=4,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9))

    for b, node in enumerate(graph.nodes):
        x, y = pos[b]
        members = view.members[b]
        fill = CURRENT if current in members else DONE if all(m in done for m in members) else PENDING
        edge, style = "#555555", "solid"
        if any(m in freed for m in members):
            edge, style = FREED_EDGE, "dashed"
        elif node.saves_tensors:
            edge = SAVED_EDGE
        ax.text(x, y, texts[b], ha="center", va="center", multialignment="left", fontsize=FONT_SIZE, family=mono,
                zorder=5, linespacing=LINE_SPACING, gid=f"node-{b}",
                bbox=dict(boxstyle=f"round,pad={BOX_PAD}", fc=fill, ec=edge, lw=2, ls=style))

    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(min(ys) - 0.5, max(ys) + 0.5)
    ax.axis("off")
    saved = Patch(fc="white", ec=SAVED_EDGE, lw=2, label=text(language, "saved"))
    if graph_only:
        title, caption, legend = text(language, "graph", nodes=len(trace.graph.nodes)), "graph caption", [saved]
    else:
        title, caption = describe_step(trace, k, language), "caption"
        legend = [
            Patch(fc=PENDING, ec="#555555", label=text(language, "pending")),
            Patch(fc=CURRENT, ec="#555555", label=text(language, "current")),
            Patch(fc=DONE, ec="#555555", label=text(language, "done")),
            saved,
            Patch(fc="white", ec=FREED_EDGE, lw=2, ls="dashed", label=text(language, "freed")),
        ]
    ax.set_title(title, fontsize=10, loc="left")
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7.5, frameon=False)
    ax.figure.text(0.01, 0.005, text(language, caption), fontsize=7.5, color="#444444", ha="left", va="bottom",
                   wrap=True)
    ax.figure.tight_layout(rect=(0, 0.04, 1, 1))
    return ax


def _pieces(points):
    """The smooth curve through ``points`` (a Catmull-Rom spline) as cubic Bézier pieces (p1, c1, c2, p2)."""
    padded = [points[0]] + list(points) + [points[-1]]
    pieces = []
    for k in range(1, len(padded) - 2):
        p0, p1, p2, p3 = padded[k - 1:k + 3]
        c1 = (p1[0] + (p2[0] - p0[0]) / 6, p1[1] + (p2[1] - p0[1]) / 6)
        c2 = (p2[0] - (p3[0] - p1[0]) / 6, p2[1] - (p3[1] - p1[1]) / 6)
        pieces.append((p1, c1, c2, p2))
    return pieces


def _along(points, steps: int = 8):
    """Points on the drawn route, ``steps`` per piece: straight for two points, else on the curve."""
    out = [points[0]]
    for p1, c1, c2, p2 in (_pieces(points) if len(points) > 2 else [(points[0], points[0], points[1], points[1])]):
        for i in range(1, steps + 1):
            t = i / steps
            a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t ** 3
            out.append((a * p1[0] + b * c1[0] + c * c2[0] + d * p2[0], a * p1[1] + b * c1[1] + c * c2[1] + d * p2[1]))
    return out


def _arrow(ax, points, bend):
    """An arrow through ``points``: straight, one arc when ``bend`` is not 0, or a smooth curve
    through the waypoints of a routed edge."""
    style = dict(arrowstyle="-|>", color=EDGE, lw=1.2, mutation_scale=12, zorder=2)
    if len(points) == 2:
        ax.add_patch(FancyArrowPatch(points[0], points[1], connectionstyle=f"arc3,rad={bend}", **style))
        return
    vertices, codes = [points[0]], [CurvePath.MOVETO]
    for _, c1, c2, p2 in _pieces(points):
        vertices += [c1, c2, p2]
        codes += [CurvePath.CURVE4] * 3
    ax.add_patch(FancyArrowPatch(path=CurvePath(vertices, codes), **style))


def _label_points(paths, bends, boxes, page=Page(), sizes=None):
    """Where each edge's label goes: on its own route, as far as it can from other edges, boxes and labels.

    Candidates are points along the drawn edge, the middle preferred; each costs how close it
    comes (in inches on the page) to another edge, a box (``sizes``: its half width and half
    height in inches) or a label already placed. NumPy compares every candidate of an edge with
    every segment of the others at once.
    """
    scale = np.array([page.x_inch, page.y_inch])
    drawn = [np.array(_along(path)) * scale for path in paths]
    starts = np.concatenate([line[:-1] for line in drawn])
    ends = np.concatenate([line[1:] for line in drawn])
    owner = np.concatenate([np.full(len(line) - 1, e) for e, line in enumerate(drawn)])
    centres = np.array([boxes[b] for b in sorted(boxes)]) * scale
    halves = np.array([(sizes or {}).get(b, (page.x_inch / 2 - 0.1, page.y_inch / 2 - 0.25)) for b in sorted(boxes)])
    placed = []
    for e, path in enumerate(paths):
        if bends[e]:
            placed.append(_label_point(path, bends[e], page))
            continue
        line = drawn[e]
        middle = (len(line) - 1) / 2
        index = np.arange(2, len(line) - 2)
        points = line[index]
        others = owner != e
        a, b = starts[others], ends[others]
        d = b - a
        length = np.maximum((d * d).sum(axis=1), 1e-12)
        t = np.clip(((points[:, None, :] - a) * d).sum(axis=2) / length, 0.0, 1.0)
        gap = np.hypot(*np.moveaxis(points[:, None, :] - a - t[..., None] * d, 2, 0))
        near_edges = np.maximum(0.0, 0.3 - gap).sum(axis=1)
        off = np.abs(points[:, None, :] - centres)
        near_boxes = ((off[..., 0] < halves[:, 0]) & (off[..., 1] < halves[:, 1])).sum(axis=1)
        labels = np.array(placed, dtype=float).reshape(-1, 2) * scale
        off = np.abs(points[:, None, :] - labels)
        near_labels = ((off[..., 0] < 0.6) & (off[..., 1] < 0.2)).sum(axis=1)
        cost = near_edges + 3 * near_boxes + 2 * near_labels + np.abs(index - middle) / len(line) * 0.4
        placed.append(tuple(points[int(np.argmin(cost))] / scale))
    return placed


def _label_point(points, bend, page=Page()):
    """Where an edge's label goes: the middle of its route (on the arc, for a bent arrow)."""
    if len(points) > 2:
        return points[len(points) // 2]
    (x0, y0), (x1, y1) = points
    mx, my = (x0 + x1) / 2, (y0 + y1) / 2
    if not bend:
        return mx, my
    # arc3 puts the arc's middle rad/2 of the arrow's length to its side (in inches, hence the
    # ratio); the label goes just outside it
    side = bend * (y1 - y0) * 0.5 * page.y_inch / page.x_inch
    return mx + side + (0.12 if side > 0 else -0.12), my


def render_png(trace, k: int, language: str = "en", graph_only: bool = False) -> bytes:
    """The picture of step ``k`` as PNG bytes (for static pages and for the widget)."""
    ax = draw(trace, k, language=language, graph_only=graph_only)
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def render_svg(trace, k: int, language: str = "en", graph_only: bool = False) -> str:
    """The picture of step ``k`` as SVG, its words kept as text and each box a group ``node-<index>``."""
    import matplotlib

    ax = draw(trace, k, language=language, graph_only=graph_only)
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        ax.figure.savefig(buffer, format="svg", bbox_inches="tight")
    # the spaces that align a matrix's rows are kept, as in the PNG: browsers drop a text's leading spaces
    return re.sub(r"(<text[^>]*>)( +)", lambda m: m.group(1) + "&#160;" * len(m.group(2)), buffer.getvalue())
