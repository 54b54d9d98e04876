"""What a box says, as micrograd's drawing does: the tensor's name, its value, and its gradient.

    z · MulBackward0            the names of the tensor the node produced, and the node
    data [[27, 27],             its value when the graph was read (a 2×2 as rows, as NumPy prints it)
          [27, 27]]
    grad [0.25 ×4]              once backward has run the node: the gradient it received

A tensor too big for a few lines is written as its shape and its first numbers
(``3×4 [0.1, 0.2, 0.3, …]``, or ``3×4 all 0.25``); a value the explorer could not find, as its
shape only, ``(2×2, not kept)`` (``values.py`` says where values come from). Every line fits ``WIDTH`` columns, so the
boxes of a layer never overlap (``draw.py`` spaces the columns by the widest box).
"""
from __future__ import annotations

import unicodedata

from .texts import text
from .values import KEPT, Shown, summarize

WIDTH = 26  # columns of a value line, label included


def columns(line: str) -> int:
    """How many columns ``line`` takes in a monospace font: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def number(value) -> str:
    """A number in at most four significant digits: ``27``, ``0.25``, ``-1.125``, ``7.389``."""
    if isinstance(value, bool):
        return str(value)
    text_ = f"{value:.4g}"
    return "0" if text_ == "-0" else text_


def shape_text(shape, language: str = "en") -> str:
    """``2×3`` for a matrix (and more dimensions), ``10 entries`` for a vector, ``scalar`` for a 0-d tensor."""
    if len(shape) == 1:
        return text(language, "entries", count=shape[0])
    return "×".join(str(s) for s in shape) or text(language, "scalar")


def value_lines(shown: Shown, width: int, language: str = "en") -> list:
    """A tensor's value in lines of at most ``width`` columns (see the module's docstring)."""
    if not shown.known:
        return [text(language, "not kept", shape=shape_text(shown.shape, language))]
    if shown.shape == ():
        return [number(shown.values[0])]
    if 0 < shown.size <= KEPT and len(shown.shape) <= 2:
        rows = _rows(shown)
        if max(columns(row) for row in rows) <= width and len(rows) <= 4:
            return rows
    head = shape_text(shown.shape, language)
    if shown.size == 0:
        return [f"{head} []"]
    if shown.all_equal:
        return [f"{head} {text(language, 'all', value=number(shown.values[0]))}"]
    line = f"{head} ["
    for k, value in enumerate(shown.values):
        piece = number(value) + ("" if k + 1 == shown.size else ", ")
        if columns(line + piece + "…]") > width:
            return [line + "…]"]
        line += piece
    return [line + ("…]" if shown.size > len(shown.values) else "]")]


def _rows(shown: Shown) -> list:
    """A vector as one line, a matrix as NumPy prints it: one line per row, the columns aligned."""
    texts = [number(v) for v in shown.values]
    if len(shown.shape) == 1:
        return ["[" + ", ".join(texts) + "]"]
    n, m = shown.shape
    widths = [max(len(texts[r * m + c]) for r in range(n)) for c in range(m)]
    cells = [", ".join(texts[r * m + c].rjust(widths[c]) for c in range(m)) for r in range(n)]
    return [("[[" if r == 0 else " [") + cell + ("]]" if r == n - 1 else "],") for r, cell in enumerate(cells)]


def labelled(label: str, lines: list) -> list:
    """``label`` before the first line, the others indented under it (no space before a full-width bracket)."""
    indent = " " * (columns(label) + 1)
    space = "" if lines[0].startswith("（") else " "
    return [f"{label}{space}{lines[0]}"] + [indent + line for line in lines[1:]]


def title(node, language: str = "en") -> str:
    """``z · MulBackward0``: the tensor's names (two at most), then the node; the node alone if unnamed."""
    if not node.names:
        return node.label
    names = ", ".join(node.names[:2]) + (", …" if len(node.names) > 2 else "")
    return f"{names} · {node.label}"


def data_lines(node, language: str = "en") -> list:
    """The value part of a box: ``data ...`` (``值 ...``), or nothing if neither value nor shape is known."""
    if node.value is None:
        return []
    label = text(language, "data")
    return labelled(label, value_lines(node.value, WIDTH - columns(label) - 1, language))


def one_line(grad, width: int = 40, language: str = "en") -> str:
    """A gradient on one line, its shape shown as a box shows it (``value_lines``, the rows joined): ``1``,
    ``[4.5, 4.5]``, ``[[0.25, 0.25], [0.25, 0.25]]``, ``10 entries [0, 1, 2, …]``, ``3×4 all 0.25``."""
    if grad is None:
        return "None"
    shown = summarize(grad)
    return "?" if shown is None else " ".join(" ".join(value_lines(shown, width, language)).split())


def grad_lines(grad, language: str = "en") -> list:
    """The gradient part of a box: ``grad ...`` (``梯度 ...``)."""
    label = text(language, "grad")
    if grad is None:
        return [f"{label} None"]
    shown = summarize(grad)
    if shown is None:
        return [f"{label} ?"]
    return labelled(label, value_lines(shown, WIDTH - columns(label) - 1, language))
