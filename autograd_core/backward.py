"""The backward pass: walking the recorded graph from the outputs back to the leaves.

The walk, as the textbook writes it (``walk`` below; loops only, no recursion, so a
chain of 100,000 ops is fine):

    deps  = count_dependencies(roots)   # for each node: how many edges lead into it
    ready = the roots
    while ready:
        node = ready.pop()                      # every gradient for it has arrived
        grad_inputs = node.backward(*buffers.pop(node))
        for (child, g) in zip(node's input edges, grad_inputs):
            buffers[child] += g                 # a node's gradient is the sum of what arrives
            deps[child] -= 1
            if deps[child] == 0: ready.push(child)

``ready`` hands out the newest node first, as PyTorch does; an ``AccumulateGrad``
node (a leaf) adds what arrives into ``leaf.grad``. Each node's gradients are
brought back to its inputs' shapes (``broadcast.sum_to_shape``), and after a node ran
its saved tensors are freed unless ``retain_graph=True``.

Two ways to use the walk: ``run_backward`` (``tensor.backward()``: the gradients go into
the leaves' ``.grad``) and ``capture_grads`` (``autograd.grad``: the gradients that reach
the inputs are returned instead, and only nodes on a path to an input run).
"""
from __future__ import annotations

import heapq

import numpy as np

from . import _speed, grad_mode, torch_warnings
from .graph import _LEAVES_FIRST, AccumulateGrad, fit_gradients


def run_backward(roots, grads, retain_graph=False, create_graph=False):
    """Propagate ``grads`` from ``roots`` (a list of ``(node, output_nr)``) into the leaves' ``.grad``."""
    walk(roots, grads, run_node, retain_graph, create_graph)


def capture_grads(roots, grads, targets, retain_graph=False, create_graph=False):
    """Propagate ``grads`` from ``roots`` and return, in a list, the gradients that reach
    ``targets`` (a dict ``{(node, output_nr): slot}``): that is ``autograd.grad``.
    Nothing is added to any ``.grad``; a node runs only if a target lies below it."""
    captured = [None] * len(set(targets.values()))
    needed = nodes_to_run([node for node, _ in roots], {node for node, _ in targets})

    def run_if_needed(node, grad_outputs, retain_graph, create_graph):
        for nr, g in enumerate(grad_outputs):
            slot = targets.get((node, nr))
            if slot is not None and g is not None:
                captured[slot] = g if captured[slot] is None else captured[slot] + g
        if node in needed and type(node) is not AccumulateGrad:
            return run_node(node, grad_outputs, retain_graph, create_graph)
        return (None,) * len(node._next_nodes)  # nothing flows on, but its inputs are no longer waiting

    walk(roots, grads, run_if_needed, retain_graph, create_graph)
    return captured


def walk(roots, grads, run, retain_graph, create_graph):
    """The walk of the module's docstring; ``run(node, grad_outputs, ...)`` returns ``grad_inputs``."""
    deps = count_dependencies([node for node, _ in roots])
    buffers = {}
    for (node, nr), g in zip(roots, grads):
        _add_to_buffer(buffers, node, nr, g)
    ready = ReadyQueue(node for node, _ in roots if not deps.get(node))
    if grad_mode._State.anomaly:
        run = reporting_anomalies(run)
    # PyTorch computes inf and nan in a backward formula silently (sqrt's at 0, say): so does NumPy here
    with grad_mode.set_grad_enabled(create_graph), np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if run is run_node and _speed.enabled:  # the same walk, with this loop's steps written out
            def plain_step(node, grad_outputs):  # the loop body below, for the nodes the shortcut leaves to it
                if node._pre_hooks:
                    grad_outputs = _run_pre_hooks(node, grad_outputs)
                _send(node, run(node, grad_outputs, retain_graph, create_graph), buffers, deps, ready)
            _speed.walk(ready, buffers, deps, retain_graph, fit_gradients, plain_step)
            return
        while ready.heap:
            node = ready.pop()
            grad_outputs = buffers.pop(node, None) or [None]
            if node._pre_hooks:
                grad_outputs = _run_pre_hooks(node, grad_outputs)
            # One call, so that no variable of this loop still holds a gradient when the
            # next node runs: a leaf can then take its gradient without a copy.
            _send(node, run(node, grad_outputs, retain_graph, create_graph), buffers, deps, ready)


def _send(node, grad_inputs, buffers, deps, ready):
    """Each input's gradient into the buffer of the node it flows to; a node whose last
    edge delivered is ready."""
    for child, nr, g in zip(node._next_nodes, node._next_nrs, grad_inputs):
        if child is None:  # a constant input: its gradient goes nowhere
            continue
        if g is not None:
            _add_to_buffer(buffers, child, nr, g)
        deps[child] -= 1
        if not deps[child]:
            ready.push(child)


def run_node(node, grad_outputs, retain_graph, create_graph):
    """One step of the walk: a leaf's ``AccumulateGrad`` adds into ``.grad``; any other node
    runs its backward formula (then frees what it saved, unless ``retain_graph``)."""
    if type(node) is AccumulateGrad:
        if grad_outputs[0] is not None:
            node.accumulate(grad_outputs[0], create_graph)
        grad_inputs = ()
    else:
        grad_inputs = _call_backward(node, grad_outputs)
        if not retain_graph:
            node.release_saved_tensors()
    if node._post_hooks:
        grad_inputs = _run_post_hooks(node, grad_inputs, grad_outputs)
    return grad_inputs


def reporting_anomalies(run):
    """``run`` with anomaly detection's reports: a node whose backward fails, or (``check_nan``)
    returns nan, is named in a warning with the forward call that made it, as PyTorch does."""
    def run_reporting(node, grad_outputs, retain_graph, create_graph):
        try:
            grad_inputs = run(node, grad_outputs, retain_graph, create_graph)
            if grad_mode._State.anomaly_check_nan:
                for i, g in enumerate(grad_inputs):
                    if g is not None and np.isnan(g._data).any():
                        raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
        except Exception:
            trace = getattr(node, "_forward_trace", None)
            if trace is None:
                torch_warnings.warn(f"Error detected in {node.name()}. No forward pass information available. Enable "
                                    "detect anomaly during forward pass for more information.", "anomaly without trace")
            else:
                torch_warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                                    f"error:\n{''.join(trace)}", "anomaly")
            raise
        return grad_inputs

    return run_reporting


def count_dependencies(roots):
    """How many edges of the graph below ``roots`` lead into each node."""
    deps = {}
    stack = list(dict.fromkeys(roots))
    walked = set(stack)  # the roots: already on the stack
    while stack:
        node = stack.pop()
        for child in node._next_nodes:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:  # found for the first time: walk on below it
                deps[child] = 1
                if child not in walked:
                    stack.append(child)
    return deps


def nodes_to_run(roots, targets):
    """The nodes whose backward must run for gradients to reach ``targets``."""
    order, pending = [], count_dependencies(roots)
    ready = [r for r in set(roots) if pending.get(r, 0) == 0]
    while ready:  # a topological order, by Kahn's algorithm
        node = ready.pop()
        order.append(node)
        for child in node._next_nodes:
            if child is not None:
                pending[child] -= 1
                if pending[child] == 0:
                    ready.append(child)
    leads, run = set(targets), set()
    for node in reversed(order):
        if any(c in leads for c in node._next_nodes if c is not None):
            run.add(node)
            leads.add(node)
    return run


def _run_pre_hooks(node, grad_outputs):
    grad_outputs = tuple(grad_outputs)
    for hook in list(node._pre_hooks.values()):
        new = hook(grad_outputs)
        if new is not None:
            grad_outputs = tuple(new)
    return grad_outputs


def _run_post_hooks(node, grad_inputs, grad_outputs):
    # A hook sees None for an input that needs no gradient, as in PyTorch.
    grad_inputs = tuple(None if child is None else g for child, g in zip(node._next_nodes, grad_inputs))
    for hook in list(node._post_hooks.values()):
        new = hook(grad_inputs, tuple(grad_outputs))
        if new is not None:
            grad_inputs = tuple(new)
    return grad_inputs


class ReadyQueue:
    """Nodes whose gradient is complete, in PyTorch's order: leaves (``AccumulateGrad``)
    first, so ``.grad`` is filled as soon as possible; then the most recently created node.
    All leaves rank the same, as in PyTorch (their sequence number is the largest there
    is): several ready leaves come out in the order the binary heap gives them, and
    ``heapq`` moves equal entries exactly as the C++ ``std::priority_queue`` does."""

    def __init__(self, nodes=()):
        self.heap = []
        for node in dict.fromkeys(nodes):
            self.push(node)

    def push(self, node):
        if type(node) is AccumulateGrad:
            heapq.heappush(self.heap, (_LEAF_RANK, _Tied(node)))
        else:  # op nodes never tie: each has its own place in creation order
            heapq.heappush(self.heap, (-node._seq, node))

    def pop(self):
        node = heapq.heappop(self.heap)[1]
        return node.node if type(node) is _Tied else node


_LEAF_RANK = -_LEAVES_FIRST  # below every op node's -_seq: leaves come out first


class _Tied:
    """A leaf in the heap: equal to every other leaf, so that their entries tie."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __eq__(self, other):
        return True

    __hash__ = None


def _add_to_buffer(buffers, node, nr, grad):
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * node._num_outputs
    slots[nr] = grad if slots[nr] is None else slots[nr] + grad


def _call_backward(node, grad_outputs):
    """Run one node's backward formula and bring each gradient to its input's shape."""
    for g in grad_outputs:
        if g is not None:
            break
    else:  # nothing arrived: nothing flows on
        return (None,) * len(node._next_nodes)
    return fit_gradients(node, type(node).backward(node, *grad_outputs))
