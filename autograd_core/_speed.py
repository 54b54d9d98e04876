"""Speed: every part of the engine that exists only to make it faster, in one room.

Nothing here changes a result. Each function below is a shortcut for a common case that
the plain code handles too; the plain code is what a reader should read first. With the
switch off the engine takes the plain path everywhere and must compute the same numbers,
nodes, errors and warnings (the comparisons with PyTorch run both ways):

    AUTOGRAD_CORE_SPEED=0 python ...        # off from the start
    autograd_core._speed.enabled = False    # off from now on (True: on again)

What is here, and who calls it:

* ``operands_ready``: type promotion with nothing to do (``functional._coerce``).
* ``arithmetic``: ``x + y``, ``x * y``, ``x - y`` on those operands go straight to NumPy
  when nothing is recorded, and when something is, ``_record`` makes the node in a few
  steps instead of ``Op.apply``'s general ones (``methods.py``; ``function.py`` hands it
  what recording takes with ``can_record``).
* ``in_place_unrecorded`` and ``zero_unrecorded``: ``w -= lr * w.grad`` and
  ``w.grad.zero_()`` under ``no_grad`` write into the tensor's memory with no temporary
  copy (``inplace.py``).
* ``keep_where``: a masked gradient (relu's, clamp's) as one product of its bits and the mask
  rather than ``np.where``, which branches per element (``ops.py``).
* ``shared_description``: nodes whose inputs look alike share their tuples, so a large
  graph holds fewer objects for Python's garbage collector to scan (``function.py``).
* ``walk``: the backward walk's loop with its small steps written out, and a node that
  becomes ready on an empty queue run at once, not through the heap (``backward.walk``).
* ``may_take``: a leaf's first gradient becomes its ``.grad`` without a copy when nothing
  else can reach it, as PyTorch "steals" it (``graph.AccumulateGrad``).
* ``window_sums``: average pooling's window sums as a few whole-array additions, in NumPy's
  order (``nn/pooling.py``).
* ``keep_columns``, ``kept_columns``: a convolution's weight gradient multiplies the columns its
  forward made rather than making them again (``nn/conv.py``).
* ``record_traces``: with anomaly detection on, ``_record`` steps aside (``autograd/anomaly_mode.py``).
"""
from __future__ import annotations

import os
import sys

import numpy as np

from . import grad_mode
from .broadcast import check_broadcast
from .tensor import Tensor

enabled = os.environ.get("AUTOGRAD_CORE_SPEED", "1") != "0"
_State = grad_mode._State  # (grad mode's flags, one lookup nearer)

# The tensor classes the shortcuts below take. ``type(x) in _TENSORS`` costs the same for any
# object, where ``isinstance(x, Tensor)`` is slow for everything but a plain Tensor (a number,
# a Parameter: Tensor's metaclass sends each such test through ``__instancecheck__``). Any
# other subclass of Tensor takes the plain path. ``nn.Parameter``, a layer above, adds itself.
_TENSORS = frozenset({Tensor})


def takes_shortcuts(cls):
    """Let the shortcuts take ``cls``, a subclass of Tensor that changes nothing they rely on."""
    global _TENSORS
    _TENSORS = _TENSORS | {cls}


# -- type promotion and arithmetic ------------------------------------------------------
def operands_ready(a, b):
    """True when type promotion has nothing to do: two tensors of one dtype (whose shapes
    are checked here), or a float tensor and a Python number (a number never changes a
    float tensor's dtype)."""
    if type(a) in _TENSORS:
        if type(b) in _TENSORS:
            if a._data.dtype != b._data.dtype:
                return False
            if a._data.shape != b._data.shape:
                check_broadcast(a._data.shape, b._data.shape)
            return True
        return (type(b) is float or type(b) is int) and a._data.dtype.kind == "f"
    return type(b) in _TENSORS and (type(a) is float or type(a) is int) and b._data.dtype.kind == "f"


def arithmetic(plain, ufunc, node=None, reflected=False):
    """``plain`` (``x + other``, ...) with a shortcut for a float tensor and a Python number,
    or two tensors of one float dtype and one shape: nothing to promote or broadcast, so
    when something must be recorded the ``node`` class is applied directly, and when not
    (under ``no_grad``, and inside every backward formula) the result is NumPy's ``ufunc``."""
    recordable = node is not None and not node.saves_result  # (a node that saves its output: the plain path)

    def operator(self, other):
        a = self._data
        if enabled and a.dtype.kind == "f":
            if type(other) is float or type(other) is int:
                b = other
            elif type(other) in _TENSORS and other._data.dtype == a.dtype and other._data.shape == a.shape:
                b = other._data
            else:
                return plain(self, other)
            if _State.enabled and (self._requires_grad or type(other) in _TENSORS and other._requires_grad):
                if recordable and _recording is not None and type(self) in _TENSORS:
                    return _record(node, self, other)
                if node is not None:
                    return node.apply(self, other)
            else:
                out = ufunc(b, a) if reflected else ufunc(a, b)
                return Tensor._make(out if type(out) is np.ndarray else np.asarray(out))  # 0-d: NumPy gives a scalar
        return plain(self, other)

    operator.__doc__ = plain.__doc__
    return operator


# What recording a node takes, from function.py (a layer above this one), which owns it and
# hands it over when it is imported: accumulator_of, the creation counter, _describe_inputs.
_recording = _recorder = None


def can_record(accumulator_of, sequence, describe_inputs):
    global _recording, _recorder
    _recording = _recorder = (accumulator_of, sequence, describe_inputs)


def record_traces(on):
    """With anomaly detection on, every node keeps the forward call that made it, which the plain
    path records (``function._start_recording``): ``_record`` steps aside meanwhile."""
    global _recording
    _recording = None if on else _recorder


def _record(node, a, b):
    """``node.apply(a, b)`` for a tensor ``a`` and a tensor or Python number ``b`` when one of
    them requires grad and grad mode is on: the same node with the same edges, in fewer steps
    (``Op.apply`` and ``function._start_recording`` are the plain path)."""
    accumulator_of, sequence, describe_inputs = _recording
    ctx = node()  # (an operation's node has no __init__: this is node.__new__(node), and quicker)
    if a._requires_grad:
        first = a._grad_fn
        if first is None:
            first = accumulator_of(a)
        a_nr = a._output_nr
    else:
        first = a_nr = None
    if type(b) in _TENSORS:
        if b._requires_grad:
            second = b._grad_fn
            if second is None:
                second = accumulator_of(b)
            signature = (a_nr, a._data.shape, b._output_nr, b._data.shape)
        else:
            second, signature = None, (a_nr, a._data.shape, None, b._data.shape)
    else:
        second, signature = None, (a_nr, a._data.shape, None, None)
    ctx._seq = next(sequence)
    ctx._next_nodes = (first, second)
    described = _DESCRIPTIONS.get(signature)  # (shared_description, written out)
    if described is None:
        described = shared_description(signature, describe_inputs)
    ctx._next_nrs, ctx.needs_input_grad, ctx._input_shapes = described
    ctx._gradients_fit = True  # (the inputs have the output's shape: nothing to sum back in backward)
    out = node.forward(ctx, a, b)
    return Tensor._make(out if type(out) is np.ndarray else np.asarray(out), True, ctx)



def in_place_unrecorded(tensor, ufunc, other):
    """``tensor op= other`` when nothing is recorded: NumPy writes straight into the tensor's
    memory. Returns None where the plain path must decide (something to record, or an
    operand it would reject with PyTorch's error)."""
    if not enabled or grad_mode._State.enabled and (tensor._requires_grad or getattr(other, "_requires_grad", False)):
        return None
    operand = other._data if type(other) in _TENSORS else other
    if type(operand) not in (np.ndarray, float, int) or tensor._data.dtype.kind == "b" or 0 in tensor._data.strides:
        return None  # (a stride of 0: an expanded tensor, which the plain path may refuse)
    if type(operand) is np.ndarray and np.may_share_memory(tensor._data, operand):
        return None  # (the plain path refuses an operand that covers part of the tensor)
    try:
        ufunc(tensor._data, operand, out=tensor._data, casting="same_kind")
    except (TypeError, ValueError):  # int tensor and float operand, shapes that do not fit
        return None
    tensor._version_counter.bump()
    return tensor


def zero_unrecorded(tensor):
    """``tensor.zero_()`` when nothing is recorded: fill in place. False where the plain path must do it."""
    if not enabled or grad_mode._State.enabled and tensor._requires_grad or 0 in tensor._data.strides:
        return False
    tensor._data.fill(0)
    tensor._version_counter.bump()
    return True


# -- backward formulas -------------------------------------------------------------------
def keep_where(mask, grad):
    """``grad`` where ``mask`` holds, +0 elsewhere, when nothing is recorded; None when the
    plain ``where`` must do it. ``np.where`` branches per element (slow on a mask like relu's);
    instead the gradient's bits, read as unsigned integers, are multiplied by the mask: a bit
    pattern times 1 is itself (inf, nan and -0. included), times 0 is all zero bits, +0. One
    pass, exact for every value, and broadcast as the product would be."""
    if not enabled:
        return None
    g, m = grad._data, mask._data
    bits = _SAME_SIZE_UNSIGNED.get(g.dtype)
    if bits is None or m.dtype != np.bool_:
        return None
    kept = np.multiply(g.view(bits), m).view(g.dtype)
    return Tensor._make(kept if type(kept) is np.ndarray else np.asarray(kept))  # 0-d: NumPy gives a scalar


_SAME_SIZE_UNSIGNED = {np.dtype(np.float16): np.dtype(np.uint16), np.dtype(np.float32): np.dtype(np.uint32),
                       np.dtype(np.float64): np.dtype(np.uint64)}


# -- pooling ------------------------------------------------------------------------------
def window_sums(x, windows):
    """``windows.sum((-2, -1))`` for ``windows``, a view (..., Ho, Wo, kh, kw) of the windows of
    the array ``x`` (``nn.pooling``'s average pooling), added as whole slices instead of window by
    window. NumPy's reduction adds each window's rows one element after the other, then the rows
    one after the other; so does this, in the same order, so the bits are the same (the pooling
    tests run both ways). None where NumPy may add otherwise: a row of 8 or more (summed pairwise),
    float16 (summed in float32), ``x`` not contiguous or one output row or column (walked in
    another order)."""
    *_, ho, wo, kh, kw = windows.shape
    if (not enabled or kw >= 8 or kh >= 8 or ho < 2 or wo < 2 or x.dtype not in _SUMMED_IN_ORDER
            or not x.flags.c_contiguous):
        return None
    total = None
    for i in range(kh):
        row = windows[..., i, 0].copy()
        for j in range(1, kw):
            row += windows[..., i, j]
        total = row if total is None else np.add(total, row, out=total)
    return total


_SUMMED_IN_ORDER = (np.dtype(np.float32), np.dtype(np.float64))


# -- convolution --------------------------------------------------------------------------
def keep_columns(node, columns):
    """A convolution's node keeps the columns its forward multiplied (im2col's matrix, as
    (groups, N*L, k)): its weight's gradient multiplies the same matrix, which the plain backward
    makes again (``nn/conv.py``). Kept only where the node needs the weight's gradient."""
    if enabled and node is not None and node.needs_input_grad and node.needs_input_grad[1]:
        node._columns = columns


def kept_columns(node):
    """The kept columns, once (a second backward makes them again), as a tensor; None when the
    backward is recorded (``create_graph``: the plain path records the im2col it differentiates)."""
    columns = node.__dict__.pop("_columns", None)
    if columns is None or _State.enabled:
        return None
    return Tensor._make(columns)


# -- recording ---------------------------------------------------------------------------
_DESCRIPTIONS = {}


def shared_description(signature, describe):
    """``describe(signature)``, the same tuples for every node with this signature."""
    if not enabled:
        return describe(signature)
    described = _DESCRIPTIONS.get(signature)
    if described is None:
        if len(_DESCRIPTIONS) > 10_000:
            _DESCRIPTIONS.clear()
        described = _DESCRIPTIONS[signature] = describe(signature)
    return described


# -- the backward walk ------------------------------------------------------------------
def walk(ready, buffers, deps, retain_graph, fit_gradients, plain_step):
    """The loop of ``backward.walk`` for ``x.backward()``, with ``run_node``, ``_call_backward``,
    ``_send`` and ``_add_to_buffer`` written out for an operation's node of one output, without
    hooks (``node._simple``), that received its gradient; a leaf's node and any other node take
    ``plain_step`` (the plain loop's body). Same order, same sums, same frees. A node made by
    ``_record`` returns gradients of its inputs' shapes (``_gradients_fit``): no fitting.

    One step more: a node made ready while the queue is empty is the node the queue would hand
    out next, so it is kept at hand (``node``, ``grad``) instead of going through the heap and
    the buffers; if anything else is pushed before it ran, it is pushed first, where the plain
    loop pushed it. Along a chain of operations, that is every node."""
    heap, pop, push = ready.heap, ready.pop, ready.push
    node = grad = None
    while node is not None or heap:
        if node is None:
            node = pop()
            grad_outputs = buffers.pop(node, None)
            if grad_outputs is None or len(grad_outputs) != 1 or grad_outputs[0] is None or not node._simple:
                plain_step(node, grad_outputs or [None])
                node = None
                continue
            grad = grad_outputs[0]
        grad_inputs = type(node).backward(node, grad)
        if not node._gradients_fit:
            grad_inputs = fit_gradients(node, grad_inputs)
        if not retain_graph and (node._saved or node._own_output is not None):  # (what release frees)
            node.release_saved_tensors()
        at_hand = at_hand_grad = None
        for child, nr, g in zip(node._next_nodes, node._next_nrs, grad_inputs):
            if child is None:
                continue
            waiting = deps[child] - 1
            deps[child] = waiting
            if (not waiting and not heap and at_hand is None and g is not None and child._simple
                    and child._num_outputs == 1 and child not in buffers):
                at_hand, at_hand_grad = child, g
                continue
            if g is not None:
                slots = buffers.get(child)
                if slots is None:
                    slots = buffers[child] = [None] * child._num_outputs
                slots[nr] = g if slots[nr] is None else slots[nr] + g
            if not waiting:
                if at_hand is not None:  # pushed where the plain loop pushed it
                    buffers[at_hand] = [at_hand_grad]
                    push(at_hand)
                    at_hand = at_hand_grad = None
                push(child)
        node, grad = at_hand, at_hand_grad
        # hold no gradient while the next node runs: a leaf may then take its gradient (may_take)
        grad_outputs = grad_inputs = g = at_hand_grad = None


# -- taking a gradient instead of copying it --------------------------------------------
# ``sys.getrefcount`` tells how many references an object has. How many of them the calls
# themselves add depends on the Python version, so the counts for a gradient that only the
# backward walk holds are measured once, below, in the same situation.

def may_take(grad, leaf):
    """True if ``grad`` can become ``leaf.grad`` as it is: no hook, other node or user
    variable holds this tensor, no other tensor, view or saved value shares its array, and
    the array is a plain one of the leaf's dtype and shape. Called only as
    ``AccumulateGrad.accumulate`` calls it, with the walk's list of gradients holding ``grad``."""
    if not enabled or sys.getrefcount(grad) > _WALK_ONLY or sys.getrefcount(grad._data) > _ONE_TENSOR:
        return False
    data = grad._data
    return (
        data.base is None and data.flags.writeable and data.flags.c_contiguous
        and data.dtype == leaf._data.dtype and data.shape == leaf._data.shape
    )


def _measure_private_references():
    def may_take(grad):  # stands in for the function above: same argument, same call
        return sys.getrefcount(grad), sys.getrefcount(grad._data)

    def accumulate(grad):  # stands in for AccumulateGrad.accumulate
        return may_take(grad)

    grad_outputs = [Tensor._make(np.zeros(1))]  # the walk's list of incoming gradients
    return accumulate(grad_outputs[0])


_WALK_ONLY, _ONE_TENSOR = _measure_private_references()
