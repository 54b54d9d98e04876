"""The backward pass: walking the recorded graph from the output back to the leaves.

Two small steps, both loops (no recursion, so a chain of 100,000 ops is fine):

1. ``count_dependencies``: from the roots, count for every reachable node how
   many edges point at it. A node may only run once all of them delivered
   their gradient, because its gradient is the *sum* of what arrives.
2. ``run_backward``: start with the roots' gradients; repeatedly take a node
   whose gradient is complete (the newest first, like PyTorch), call its
   ``backward``, undo broadcasting, and add each result into the buffer of
   the node it flows to. ``AccumulateGrad`` nodes add into ``leaf.grad``.

After a node ran, its saved tensors are freed unless ``retain_graph=True``.
"""
from __future__ import annotations

import heapq

from . import grad_mode
from .broadcast import sum_to_shape
from .graph import AccumulateGrad
from .tensor import Tensor


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


def nodes_to_run(roots, targets, deps):
    """The nodes whose backward must run for gradients to reach ``targets``."""
    order, pending = [], dict(deps)
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


def run_backward(roots, grads, retain_graph=False, create_graph=False, capture=None):
    """Propagate ``grads`` from ``roots`` (a list of ``(node, output_nr)``).

    With ``capture`` (a dict ``{(node, output_nr): slot}``), the gradients that
    reach those edges are returned in a list instead of being accumulated into
    ``.grad``: that is ``autograd.grad``.
    """
    root_nodes = [node for node, _ in roots]
    deps = count_dependencies(root_nodes)
    needed = None
    captured = None
    if capture is not None:
        captured = [None] * len(set(capture.values()))
        needed = nodes_to_run(root_nodes, {node for node, _ in capture}, deps)

    buffers = {}
    for (node, nr), g in zip(roots, grads):
        _add_to_buffer(buffers, node, nr, g)

    ready = ReadyQueue()
    for node in dict.fromkeys(root_nodes):
        if deps.get(node, 0) == 0:
            ready.push(node)

    with grad_mode.set_grad_enabled(create_graph):
        while ready.heap:
            node = ready.pop()
            grad_outputs = buffers.pop(node, None) or [None]
            if node._pre_hooks:
                grad_outputs = _run_pre_hooks(node, grad_outputs)
            if capture is not None:
                for nr, g in enumerate(grad_outputs):
                    slot = capture.get((node, nr))
                    if slot is not None and g is not None:
                        captured[slot] = g if captured[slot] is None else captured[slot] + g
                if node not in needed or type(node) is AccumulateGrad:
                    _release_children(node, deps, ready)
                    continue

            if type(node) is AccumulateGrad:
                grad_inputs = ()  # first: the previous node's gradients are no longer held here
                if grad_outputs[0] is not None:
                    node.accumulate(grad_outputs[0], create_graph)
            else:
                grad_inputs = _call_backward(node, grad_outputs)
                if not retain_graph:
                    node.release_saved_tensors()
            if node._post_hooks:
                grad_inputs = _run_post_hooks(node, grad_inputs, grad_outputs)

            for child, nr, g in zip(node._next_nodes, node._next_nrs, grad_inputs):
                if child is None:  # a constant input: its gradient goes nowhere
                    continue
                if g is not None:
                    _add_to_buffer(buffers, child, nr, g)
                deps[child] -= 1
                if not deps[child]:
                    ready.push(child)
            g = None  # the buffers hold the gradients now, the walk's variables none: a leaf may take its own
    return captured


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
    Every node has its own place in that order (``_seq``), so there are no ties."""

    def __init__(self):
        self.heap = []

    def push(self, node):
        heapq.heappush(self.heap, (-node._seq, node))

    def pop(self):
        return heapq.heappop(self.heap)[1]


def _release_children(node, deps, ready):
    for child in node._next_nodes:
        if child is not None:
            deps[child] -= 1
            if deps[child] == 0:
                ready.push(child)


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
    result = type(node).backward(node, *grad_outputs)
    if type(result) is not tuple:
        result = (result,)
    if len(result) != len(node._next_nodes):
        result = _drop_extra_nones(node, result)
    shapes = node._input_shapes
    for i, g in enumerate(result):
        # An input that was broadcast in forward (constants need no gradient at all):
        if g is not None and g._data.shape != shapes[i] and node._next_nodes[i] is not None:
            result = result[:i] + (_unbroadcast(node, i, g, shapes[i]),) + result[i + 1:]
    return result


def _drop_extra_nones(node, result):
    n = len(node._next_nodes)
    if len(result) > n and all(r is None for r in result[n:]):
        return result[:n]
    raise RuntimeError(
        f"function {node.name()} returned an incorrect number of gradients (expected {n}, got {len(result)})"
    )


def _unbroadcast(node, i, grad, shape):
    try:
        return sum_to_shape(grad, shape)
    except Exception:
        raise RuntimeError(
            f"Function {node.name()} returned an invalid gradient at index {i} - got "
            f"{list(grad.shape)} but expected shape compatible with {list(shape)}"
        ) from None
