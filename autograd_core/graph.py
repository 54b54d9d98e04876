"""The recorded graph: nodes (what ``tensor.grad_fn`` is), their edges and saved tensors.

Every operation on a tensor that requires grad leaves one ``Node`` behind. A node
knows

* ``next_functions``: one ``(node, output_nr)`` edge per input, pointing at the
  node that made that input (``AccumulateGrad`` for a leaf, ``None`` for a
  constant). Following these edges from ``out.grad_fn`` walks the whole history.
* the tensors it saved for its backward formula (``ctx.save_for_backward``).
  Backward frees them unless ``retain_graph=True``; a node that saved nothing
  has nothing to free, which is why ``x.sum()`` can be walked twice and
  ``x * x`` cannot.
"""
from __future__ import annotations

import functools
import itertools
import re

from . import _speed, grad_mode, saved_names
from .broadcast import sum_to_shape
from .hooks import add_hook, apply_tensor_hook
from .tensor import Tensor

_sequence = itertools.count()  # creation order: backward runs newest node first
_LEAVES_FIRST = 1 << 62  # added to an AccumulateGrad's place in that order

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


def short_name(node):
    """``MulBackward0`` -> ``Mul``, as PyTorch names a node inside error messages."""
    return re.sub(r"Backward\d*$", "", node.name())


# (pack, unpack) pairs of the saved_tensors_hooks blocks in force, innermost last.
SAVED_TENSORS_HOOKS = []


def _without_hooks(hook, value):
    """Run a pack or unpack hook; what the hook itself saves is saved plainly (as in PyTorch)."""
    outer = SAVED_TENSORS_HOOKS[:]
    SAVED_TENSORS_HOOKS.clear()
    try:
        return hook(value)
    finally:
        SAVED_TENSORS_HOOKS[:] = outer


INFERENCE_TENSOR_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


_HINT = ("enable anomaly detection to find the operation that failed to compute its gradient, with "
         "torch.autograd.set_detect_anomaly(True, check_nan=False).")
_ANOMALY_HINT = ("the backtrace further above shows the operation that failed to compute its gradient. The variable "
                 "in question was changed in there or anywhere later. Good luck!")


class SavedTensor:
    """A tensor saved for backward, with the version it had when it was saved.

    If the tensor is modified in place before backward reads it, the version
    no longer matches and unpacking raises PyTorch's error instead of silently
    using the wrong numbers.
    """

    __slots__ = ("tensor", "counter", "version", "data", "unpack_hook", "output_nr")

    def __init__(self, tensor, is_output=False, output_nr=0):
        if tensor._inference and not grad_mode._State.inference:
            raise RuntimeError(INFERENCE_TENSOR_SAVED)
        self.counter = tensor._version_counter
        self.version = self.counter.value
        self.unpack_hook = None
        if SAVED_TENSORS_HOOKS:  # inside autograd.graph.saved_tensors_hooks(pack, unpack)
            pack, self.unpack_hook = SAVED_TENSORS_HOOKS[-1]
            self.tensor, self.data = None, _without_hooks(pack, tensor)
        elif is_output:
            # Keeping the node's own output would make a cycle (out -> node -> out) that only
            # the garbage collector could free: keep its storage, rebuild it on demand.
            self.tensor, self.data = None, tensor._data
            self.output_nr = output_nr  # which of the node's outputs (a user Function may have several)
        else:
            self.tensor, self.data = tensor, None

    def register_hooks(self, pack_hook, unpack_hook):
        """Keep ``pack_hook(tensor)`` instead of the tensor; ``unpack_hook`` gives it back when needed
        (``y.grad_fn._raw_saved_self.register_hooks(pack, unpack)``)."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("Expected both arguments to be callable")
        if self.unpack_hook is not None:
            raise RuntimeError("SavedTensor hooks have already been set on this SavedTensor. You can only set them once.")
        tensor = self.tensor
        if tensor is None:  # a saved output: what it is rebuilt from
            from .tensor import Tensor

            tensor = Tensor._make(self.data, True)
            tensor._version_counter = self.counter
        self.tensor, self.data, self.unpack_hook = None, _without_hooks(pack_hook, tensor), unpack_hook

    def unpack(self, node):
        """The saved tensor; ``node`` is the node that saved it (a saved output's ``grad_fn``)."""
        t = self.tensor
        if self.unpack_hook is not None:
            t = _without_hooks(self.unpack_hook, self.data)
            if not isinstance(t, Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type {type(t).__name__}")
        elif t is None:
            t = Tensor._make(self.data, True, node)
            t._version_counter = self.counter
            t._output_nr = self.output_nr
        if self.counter.value != self.version:
            made_by = t.grad_fn
            which = f", which is output 0 of {short_name(made_by)}," if made_by is not None else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [torch.{t.dtype.legacy_name} [{', '.join(map(str, t.shape))}]]{which} is at "
                f"version {self.counter.value}; expected version {self.version} instead. Hint: "
                + (_ANOMALY_HINT if grad_mode._State.anomaly else _HINT)
            )
        return t


class Node:
    """Base of every ``grad_fn``. Subclasses say how gradients flow back in ``backward``."""

    # Most state is set lazily by the recording code (see function.py); the
    # defaults here keep a node that saved nothing cheap.
    _saved = ()
    _own_output = None
    _freed = False
    _pre_hooks = None
    _post_hooks = None
    _num_outputs = 1
    _simple = True  # no hooks and not a leaf's AccumulateGrad: what _speed.walk may run itself
    _gradients_fit = False  # its backward's gradients have its inputs' shapes already (set by _speed._record)
    needs_input_grad = ()
    _next_nodes = ()  # per input: the node its gradient flows to (None: a constant)
    _next_nrs = ()  # per input: which output of that node the input was

    def name(self):
        return type(self).__name__

    def __init_subclass__(cls, **kwargs):
        # What a node saved, by PyTorch's names: grad_fn._saved_self, grad_fn._raw_saved_self, ...
        # (properties of the class, not __getattr__, which would slow every attribute of every node)
        super().__init_subclass__(**kwargs)
        saved, raw = saved_names.names_of(cls)
        for name in saved:
            setattr(cls, f"_saved_{name}", property(functools.partial(saved_names.saved_value, name=name)))
        for name in raw:
            setattr(cls, f"_raw_saved_{name}", property(functools.partial(saved_names.saved_value, name=name, raw=True)))

    @property
    def next_functions(self):
        """One ``(node, output_nr)`` edge per input, as PyTorch shows them."""
        return tuple(zip(self._next_nodes, self._next_nrs))

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # -- saved tensors -----------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Keep tensors for the backward formula; read them back with ``ctx.saved_tensors``."""
        self._saved = tuple([None if t is None else SavedTensor(t) for t in tensors])

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        saved = self._saved
        if saved.count(None) == len(saved):  # nothing but placeholders (x * 2 saves no tensor): as they are
            return saved
        return tuple([None if s is None else s.unpack(self) for s in saved])

    @property
    def result(self):
        """The op's own output, for formulas like d exp(x) = exp(x) dx."""
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        return self._own_output.unpack(self)

    def has_saved_tensors(self):
        """True while the node holds tensors that a backward pass needs."""
        return bool(self._saved) or self._own_output is not None

    def release_saved_tensors(self):
        """Free what backward needed; only a node that saved something can be 'freed'."""
        if self._saved or self._own_output is not None:
            self._saved = ()
            self._own_output = None
            self._freed = True

    # -- hooks -------------------------------------------------------------------
    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs)`` runs after this node's backward."""
        if self._post_hooks is None:
            self._post_hooks = {}
        self._simple = False
        return add_hook(self._post_hooks, hook)

    def register_prehook(self, hook):
        """``hook(grad_outputs)`` runs before this node's backward; it may return new grads."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        self._simple = False
        return add_hook(self._pre_hooks, hook)

    def _add_tensor_hook(self, hook):
        # Hooks registered on a non-leaf tensor see the gradient of that tensor,
        # i.e. of this node's output; they run before the node's backward.
        return self.register_prehook(lambda grads: (apply_tensor_hook(hook, grads[0]),))


class AccumulateGrad(Node):
    """The end of every path: adds the incoming gradient into a leaf's ``.grad``."""

    _simple = False

    def __init__(self, variable):
        self.variable = variable
        # Ranks above every op node in creation order: leaves run first, as in PyTorch.
        self._seq = _LEAVES_FIRST + next(_sequence)

    def name(self):
        return "torch::autograd::AccumulateGrad"  # PyTorch's C++ name for it

    def accumulate(self, grad, create_graph):
        """Add ``grad`` into the leaf's ``.grad`` (after the leaf's hooks, which may replace it)."""
        leaf = self.variable
        if leaf._hooks:
            for hook in list(leaf._hooks.values()):
                grad = apply_tensor_hook(hook, grad)
        elif leaf._grad is None and not create_graph and _speed.may_take(grad, leaf):
            leaf._grad = grad.detach()  # nothing else can reach this array: no copy needed
            return
        if leaf._grad is None:
            # Own a copy: the same gradient may also flow to another leaf, or be held by user code.
            leaf._grad = grad if create_graph else grad.detach().clone()
        elif create_graph:
            leaf._grad = leaf._grad + grad
        else:
            leaf._grad._data += grad._data  # in place, like PyTorch: x.grad keeps its identity
            leaf._grad._version_counter.bump()


# -- what a backward formula returned, brought to its inputs' shapes -------------------------
def fit_gradients(node, result):
    """What a backward formula returned, as one gradient per input, each of its input's shape."""
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
