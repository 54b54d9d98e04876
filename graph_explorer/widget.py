"""The interactive explorer: the graph in an ipywidgets Output, with Step, Reset and a slider.

Creating a ``GraphExplorer`` runs ``backward()`` once (with hooks that only
record, see trace.py); the buttons then replay that real run one node at a
time. ``explorer.snapshot(k)`` shows step ``k`` as a plain PNG image, which
also survives in a rendered (non-live) notebook. Pictures are shown at their
own size (JupyterLab's "unconfined" images): a big graph scrolls rather than
shrinking to text nobody can read.
"""
from __future__ import annotations

import base64

from .draw import describe_step, render_png
from .graph import extract_graph
from .labels import columns, one_line, title
from .names import caller_tensors
from .texts import text
from .trace import BackwardTrace, trace_backward


class GraphExplorer:
    """Explore the graph behind ``output`` and replay its backward pass.

    >>> x = torch.ones(2, 2, requires_grad=True)             # doctest: +SKIP
    >>> y = x + 2                                            # doctest: +SKIP
    >>> out = (y * y * 3).mean()                             # doctest: +SKIP
    >>> explorer = GraphExplorer(out)                        # doctest: +SKIP
    >>> explorer                                             # doctest: +SKIP  (the widget)
    >>> explorer.snapshot(2)                                 # doctest: +SKIP  (a still picture)

    Each box shows the name the calling code gave the tensor (``y``, ``out``, ``x``), its data and,
    once backward has run the node, its gradient. ``names={"w": w}`` names tensors the code does not
    (and orders the named leaves); ``caller_names=False`` uses only those. ``language="zh"`` shows
    every text of the picture and the controls in Chinese.
    """

    def __init__(self, output, names: dict | None = None, gradient=None, retain_graph: bool = False,
                 language: str = "en", *, caller_names: bool = True):
        text(language, "step button")  # an unknown language fails here, not at the first picture
        self.language = language
        self.graph = extract_graph(output, names, language, found=caller_tensors() if caller_names else None)
        self.trace = trace_backward(output, gradient, retain_graph=retain_graph, graph=self.graph)
        self.position = 0
        self._widget = None
        self._pictures = {}  # step -> PNG bytes: each step is drawn once

    # -- the replay, without any widget -------------------------------------------
    @property
    def steps(self):
        return self.trace.steps

    def step(self) -> str:
        """Advance one node; returns what happened."""
        self.position = min(self.position + 1, len(self.steps))
        self._refresh()
        return describe_step(self.trace, self.position, self.language)

    def reset(self) -> None:
        self.position = 0
        self._refresh()

    def table(self) -> str:
        """The whole run as text: one line per node, in the order backward ran them."""
        lines = []
        for k, s in enumerate(self.steps, 1):
            node = self.graph.nodes[s.node]
            freed = self.trace.freed_at(k)
            note = "  " + text(self.language, "table freed") if s.node in freed else ""
            grad = text(self.language, "table grad")
            label = title(node, self.language)
            value = one_line(s.grads[0], language=self.language)  # a 2×2 as its two rows, as the boxes show it
            lines.append(f"{k:2d}. {label}{' ' * (28 - columns(label))} {grad} {value}{note}")
        return "\n".join(lines)

    def snapshot(self, k: int | None = None):
        """Step ``k`` (default: the current one) as a static PNG image."""
        from IPython.display import Image

        return Image(data=self._picture(self.position if k is None else k), unconfined=True)

    def _picture(self, k: int) -> bytes:
        k = max(0, min(k, len(self.steps)))
        if k not in self._pictures:
            self._pictures[k] = render_png(self.trace, k, self.language)
        return self._pictures[k]

    # -- the widget ---------------------------------------------------------------
    def widget(self):
        if self._widget is None:
            import ipywidgets as w

            n, say = len(self.steps), lambda key: text(self.language, key)
            self._step_button = w.Button(description=say("step button"), icon="step-forward",
                                         tooltip=say("step tooltip"))
            self._reset_button = w.Button(description=say("reset button"), icon="undo", tooltip=say("reset tooltip"))
            self._slider = w.IntSlider(value=self.position, min=0, max=n, description=say("slider"),
                                       continuous_update=False)
            self._out = w.Output()
            self._step_button.on_click(lambda _: self.step())
            self._reset_button.on_click(lambda _: self.reset())
            self._slider.observe(self._on_slider, names="value")
            controls = w.HBox([self._reset_button, self._step_button, self._slider])
            self._widget = w.VBox([controls, self._out])
            self._draw()
        return self._widget

    def _on_slider(self, change):
        if change["new"] != self.position:
            self.position = change["new"]
            self._draw()

    def _refresh(self):
        if self._widget is not None:
            self._slider.value = self.position
            self._draw()

    def _draw(self):
        # nothing left to run at the end, nothing to undo at the start
        self._step_button.disabled = self.position >= len(self.steps)
        self._reset_button.disabled = self.position == 0
        # Replace the Output's content in one assignment: no flicker, and it works
        # from button callbacks and outside a kernel alike.
        png = base64.b64encode(self._picture(self.position)).decode("ascii")
        self._out.outputs = ({
            "output_type": "display_data",
            "data": {"image/png": png, "text/plain": describe_step(self.trace, self.position, self.language)},
            "metadata": {"image/png": {"unconfined": True}},
        },)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget())


def show_graph(output, names: dict | None = None, language: str = "en", *, caller_names: bool = True):
    """A picture of the graph recorded behind ``output``, without running backward: each box with the
    name and the data of the tensor it produced (names as for ``GraphExplorer``).

    >>> show_graph(out)                                      # doctest: +SKIP  (an image)
    """
    from IPython.display import Image

    text(language, "graph caption")  # an unknown language fails here
    graph = extract_graph(output, names, language, found=caller_tensors() if caller_names else None)
    return Image(data=render_png(BackwardTrace(graph, [], frozenset()), 0, language, graph_only=True), unconfined=True)
