"""Running backward once, for real, and writing down what happened at every node.

A pre-hook on every node of the graph fires just before that node's backward
runs and sees the gradient that arrived there; a post-hook fires just after and
sees what the node sent on to each of its inputs. The hooks change nothing; they
only record:

* the order in which backward visited the nodes (the engine's own order),
* the gradient each node received (a detached copy): the sum over its incoming edges,
* the gradient each node sent along each of its edges (``next_functions``, in order),
* which nodes had their saved tensors freed by then.

The call accumulates into the leaves' ``.grad`` like any other ``backward()``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .graph import Graph, extract_graph
from .saved import saved_tensors_freed


@dataclass
class Step:
    """Backward reaching one node: which node, the gradient(s) it received and sent, what was freed before it ran."""

    node: int                  # index into graph.nodes
    grads: tuple               # the incoming gradient(s), detached copies (None where nothing arrived)
    freed_before: frozenset    # indices of nodes whose saved tensors were already freed
    sent: tuple = ()           # per entry of next_functions: the gradient sent along that edge (None: nothing)


@dataclass
class BackwardTrace:
    graph: Graph
    steps: list                # Step, in the order backward ran the nodes
    freed_after: frozenset     # nodes freed once the whole backward finished

    def order(self) -> list:
        """Node names in the order backward ran them."""
        return [self.graph.nodes[s.node].name for s in self.steps]

    def freed_at(self, k: int) -> frozenset:
        """Nodes whose saved tensors are gone once the first ``k`` steps have run."""
        if k <= 0:
            return frozenset()
        if k >= len(self.steps):
            return self.freed_after
        return self.steps[k].freed_before

    def edge_grad(self, parent: int, position: int):
        """The gradient that flowed from node ``parent`` along its edge number ``position``, or None."""
        for s in self.steps:
            if s.node == parent:
                return s.sent[position] if position < len(s.sent) else None
        return None

    def grad_of(self, index: int):
        """The gradient that arrived at node ``index`` (its first output), or None if backward never ran it."""
        for s in self.steps:
            if s.node == index:
                return s.grads[0]
        return None


def _copy(grad):
    return None if grad is None else grad.detach().clone()


def _freed_now(graph) -> frozenset:
    return frozenset(i for i, n in enumerate(graph.nodes) if n.saves_tensors and saved_tensors_freed(n.fn))


def trace_backward(output, gradient=None, retain_graph: bool = False, names: dict | None = None,
                   graph: Graph | None = None, language: str = "en") -> BackwardTrace:
    """Call ``output.backward(gradient, retain_graph=...)`` and record each node as backward reaches it.

    ``language`` is that of the leaves' labels when the graph is read here (without ``graph``).
    """
    graph = graph or extract_graph(output, names, language)
    steps = []

    def make_prehook(i):
        def hook(grad_outputs):
            steps.append(Step(i, tuple(_copy(g) for g in grad_outputs), _freed_now(graph)))
        return hook

    def make_posthook(i):
        def hook(grad_inputs, grad_outputs):
            step = next(s for s in reversed(steps) if s.node == i)
            step.sent = tuple(_copy(g) for g in grad_inputs)
        return hook

    handles = [node.fn.register_prehook(make_prehook(i)) for i, node in enumerate(graph.nodes)]
    handles += [node.fn.register_hook(make_posthook(i)) for i, node in enumerate(graph.nodes)]
    try:
        output.backward(gradient, retain_graph=retain_graph)
    finally:
        for h in handles:
            h.remove()
    return BackwardTrace(graph, steps, _freed_now(graph))
