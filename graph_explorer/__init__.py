"""graph_explorer: look at the graph autograd recorded, and watch backward walk it.

    import autograd_core as torch        # or: import torch
    from graph_explorer import GraphExplorer, show_graph

    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    GraphExplorer(out)                   # in a notebook: the graph, with Step / Reset
    show_graph(out)                      # only the picture of the graph, backward not run

Each box is drawn as micrograd draws a value: the name the notebook gave the tensor (``z``, found
among the caller's variables, or given as ``names={"z": z}``), its data, and, once backward has
run the node, its gradient.

Works with the kit's engine and with PyTorch alike: it only reads ``grad_fn``,
``next_functions`` and saved tensors, and it learns the order of backward by
hooking a real ``backward()`` call (it never re-implements backward).

Where things live:
    graph.py    extracting the graph from an output tensor; counting recorded ops
    names.py    the names of the graph's tensors in the calling code (``y``, ``z``, ``out``)
    values.py   the value each box shows, read before backward frees anything
    labels.py   what a box says: name, data, gradient, in a few short lines
    saved.py    whether a node holds saved tensors, and whether they were freed
    trace.py    running backward once with hooks, recording every step
    view.py     what the picture shows: long chains of one operation folded into one box
    layout.py   placing the nodes in layers and routing the edges around them (no graphviz needed)
    draw.py     drawing one moment of backward with matplotlib: gradients on edges and in boxes
    texts.py    every word the explorer shows, in English and Chinese
    fonts.py    a font with Chinese glyphs for matplotlib (the explorer's and the lessons' figures)
    widget.py   the ipywidgets explorer: Step, Reset, a slider and a still image
"""
try:
    import matplotlib  # noqa: F401  (every picture of the explorer is drawn with it)
except ModuleNotFoundError:
    raise ModuleNotFoundError("graph_explorer draws with matplotlib, which is not installed in this Python: "
                              "pip install 'autograd-kit[lab]'", name="matplotlib") from None

from .graph import Graph, GraphNode, count_ops, extract_graph
from .layout import arrange, layout
from .view import fold_chains
from .fonts import prepare_figures, use_chinese_font
from .saved import has_saved_tensors, saved_tensors_freed
from .trace import BackwardTrace, Step, trace_backward
from .draw import draw, render_png, render_svg
from .widget import GraphExplorer, show_graph

__all__ = [
    "Graph", "GraphNode", "count_ops", "extract_graph", "layout", "arrange", "fold_chains", "use_chinese_font", "prepare_figures",
    "has_saved_tensors", "saved_tensors_freed",
    "BackwardTrace", "Step", "trace_backward", "draw", "render_png", "render_svg", "GraphExplorer", "show_graph",
]
