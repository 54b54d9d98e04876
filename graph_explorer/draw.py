"""Drawing one moment of backward: the graph, what already ran, what arrived where, what was freed.

Uses matplotlib's object API (``Figure``, not ``pyplot``), so drawing never
pops up stray plots in a notebook and works without a display.
"""
from __future__ import annotations

import io

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .layout import layout

PENDING, DONE, CURRENT = "#eeeeee", "#c7e9c0", "#fdae6b"
SAVED_EDGE, FREED_EDGE = "#3182bd", "#de2d26"


def format_grad(grad, limit: int = 4) -> str:
    """A gradient in a few characters: ``4.5`` or ``[0, 4, 8, 12]`` (at most ``limit`` numbers)."""
    if grad is None:
        return "None"
    values = grad.detach().reshape(-1).tolist()
    text = [f"{v:.4g}" for v in values[:limit]]
    if len(grad.shape) == 0:
        return text[0]
    more = ", …" if len(values) > limit else ""
    return "[" + ", ".join(text) + more + "]"


def describe_step(trace, k: int) -> str:
    """One line saying what step ``k`` (1-based) did; step 0 is 'before backward'."""
    total = len(trace.steps)
    if k <= 0:
        return f"before backward: {len(trace.graph.nodes)} nodes, {total} steps to run"
    step = trace.steps[k - 1]
    node = trace.graph.nodes[step.node]
    return f"step {k}/{total}: {node.name} receives grad {format_grad(step.grads[0])}"


def draw(trace, k: int, ax=None):
    """Draw the graph after the first ``k`` steps of ``trace``; returns the matplotlib Axes."""
    graph = trace.graph
    pos = layout(graph)
    if ax is None:
        width = max(1, max((sum(1 for p in pos.values() if p[1] == y) for y in {p[1] for p in pos.values()}), default=1))
        height = len({p[1] for p in pos.values()})
        fig = Figure(figsize=(max(6.0, 2.6 * width), 1.0 + 1.45 * height), dpi=90)
        ax = fig.add_subplot()
    k = max(0, min(k, len(trace.steps)))
    done = [s.node for s in trace.steps[:k]]
    current = done[-1] if done else None
    freed = trace.freed_at(k)

    seen = {}
    for parent, child, _ in graph.edges:
        (x0, y0), (x1, y1) = pos[parent], pos[child]
        # an input used twice (x * x) gets two arrows: bend the repeats apart
        repeat = seen[parent, child] = seen.get((parent, child), -1) + 1
        bend = 0.0 if repeat == 0 else 0.4 * ((repeat + 1) // 2) * (1 if repeat % 2 else -1)
        ax.annotate("", xy=(x1, y1 + 0.22), xytext=(x0, y0 - 0.22),
                    arrowprops=dict(arrowstyle="-|>", color="#777777", lw=1.2, shrinkA=2, shrinkB=2,
                                    connectionstyle=f"arc3,rad={bend}"))

    for i, node in enumerate(graph.nodes):
        x, y = pos[i]
        fill = CURRENT if i == current else DONE if i in done else PENDING
        edge, style = "#555555", "solid"
        if i in freed:
            edge, style = FREED_EDGE, "dashed"
        elif node.saves_tensors:
            edge = SAVED_EDGE
        ax.text(x, y, node.label, ha="center", va="center", fontsize=9, family="monospace",
                bbox=dict(boxstyle="round,pad=0.4", fc=fill, ec=edge, lw=2, ls=style))
        notes = []
        if i in done:
            notes.append("grad " + format_grad(trace.grad_of(i)))
        if i in freed:
            notes.append("saved tensors freed")
        elif node.saves_tensors:
            notes.append("holds saved tensors")
        if notes:
            ax.text(x, y - 0.3, "\n".join(notes), ha="center", va="top", fontsize=7.5, color="#333333",
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.6))

    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 1.0, max(xs) + 1.0)
    ax.set_ylim(min(ys) - 0.9, max(ys) + 0.5)
    ax.axis("off")
    ax.set_title(describe_step(trace, k), fontsize=10, family="monospace")
    ax.legend(handles=[
        Patch(fc=PENDING, ec="#555555", label="not run yet"),
        Patch(fc=CURRENT, ec="#555555", label="running now"),
        Patch(fc=DONE, ec="#555555", label="done"),
        Patch(fc="white", ec=SAVED_EDGE, lw=2, label="holds saved tensors"),
        Patch(fc="white", ec=FREED_EDGE, lw=2, ls="dashed", label="saved tensors freed"),
    ], loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7.5, frameon=False)
    ax.figure.tight_layout()
    return ax


def render_png(trace, k: int) -> bytes:
    """The picture of step ``k`` as PNG bytes (for static pages and for the widget)."""
    ax = draw(trace, k)
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()
