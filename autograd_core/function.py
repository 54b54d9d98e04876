"""Recording an operation: the one place where a forward call becomes a graph node.

Built-in operations (``ops.py``) and user-defined ``autograd.Function`` subclasses
share this path. An operation is a class with two static methods side by side:

    class MulBackward0(Op):
        @staticmethod
        def forward(ctx, a, b):            # tensors in, a NumPy array out
            ctx.save_for_backward(a, b)
            return a._data * b._data
        @staticmethod
        def backward(ctx, grad):           # Tensors in, one gradient per input out
            a, b = ctx.saved_tensors
            return grad * b, grad * a

``Op.apply(a, b)`` runs ``forward`` and, when grad mode is on and an input
requires grad, keeps the instance (``ctx``) as the new tensor's ``grad_fn``.
Positional arguments are the op's inputs (tensors or Python numbers, each with
an edge in ``next_functions``); keyword arguments are plain parameters.
"""
from __future__ import annotations

import inspect
import os
import traceback
import weakref
from pathlib import Path

import numpy as np

from . import _speed, grad_mode
from .dtypes import ShownAs
from .graph import AccumulateGrad, Node, SavedTensor, _sequence
from .tensor import Tensor


class _NotRecording:
    """Stands in for ``ctx`` when nothing is recorded: forgets whatever is put on it."""

    __slots__ = ()
    needs_input_grad = ()

    def save_for_backward(self, *tensors):
        pass

    def __setattr__(self, name, value):
        pass


NOT_RECORDING = _NotRecording()


def accumulator_of(leaf):
    """The leaf's ``AccumulateGrad`` node, created once and shared by all its uses."""
    ref = leaf._grad_accumulator
    node = ref() if ref is not None else None
    if node is None:
        if leaf._inherits_grad:  # a view that requires grad only through its base: no .grad (as in PyTorch)
            return None
        node = AccumulateGrad(leaf)
        leaf._grad_accumulator = weakref.ref(node)  # weak: the leaf must not keep its graph alive
    return node


def _start_recording(ctx, inputs):
    """Give a new node its edges (one per input), its input shapes and its place in creation order.

    An edge is the node that made the input (``AccumulateGrad`` for a leaf, ``None`` for a
    constant) and which of its outputs the input is; ``next_functions`` pairs them up.
    """
    nodes, signature = [], []  # signature: (output_nr or None, shape or None) per input, flat
    for t in inputs:
        if isinstance(t, Tensor):
            if t._requires_grad:
                fn = t._grad_fn
                nodes.append(fn if fn is not None else accumulator_of(t))
                signature += (t._output_nr, t._data.shape)
            else:
                nodes.append(None)
                signature += (None, t._data.shape)
        else:  # a Python number
            nodes.append(None)
            signature += (None, None)
    ctx._seq = next(_sequence)
    if _State.anomaly:
        ctx._forward_trace = forward_trace()
    ctx._next_nodes = tuple(nodes)
    described = _speed.shared_description(tuple(signature), _describe_inputs)
    ctx._next_nrs, ctx.needs_input_grad, ctx._input_shapes = described


def forward_trace():
    """Where the operation being recorded was called from, as ``traceback.format_stack`` lines, the
    engine's own frames left out: what anomaly detection shows when its backward fails."""
    return traceback.format_list([frame for frame in traceback.extract_stack()
                                  if not frame.filename.startswith(_ENGINE)])


_ENGINE = str(Path(__file__).parent) + os.sep
_State = grad_mode._State


def _describe_inputs(signature):
    """Output numbers, needs_input_grad and shapes of a node's inputs, from its signature."""
    nrs = signature[0::2]
    return tuple(0 if nr is None else nr for nr in nrs), tuple(nr is not None for nr in nrs), signature[1::2]


def made_view(view, of, kind=None):
    """Record that ``view`` shares ``of``'s memory: one storage, one version counter, and the base
    (``view._base``: the tensor at the root of the chain of views).

    ``kind`` says how PyTorch may treat an in-place change of the view (its "creation meta"):
    None for an ordinary view, whose change is recorded on its base (``CopySlices``);
    ``"multi_output"`` for an output of ``unbind`` or ``split``, ``"custom_function"`` for a view
    a custom ``Function`` returned, and ``"no_grad"`` (``"inference_mode"``) for a view made where
    nothing is recorded, all of which PyTorch refuses to change in place while recording. A view of
    such a view keeps its kind (an inference one above all). The counter keeps a weak reference to the
    view, to tell it when the storage changes (``tensor.StaleView``).
    """
    counter = of._version_counter
    view._counter = counter
    base, inherited = of._base, None
    if base is None:
        base = of
    else:
        inherited = of._view_kind
    view._base = base
    view._attr_version = counter.value  # the version its grad_fn was made at
    if not grad_mode._State.enabled:
        kind = "inference_mode" if grad_mode._State.inference else "no_grad"
        if base._requires_grad:  # in PyTorch a view of a tensor that requires grad requires grad too
            view._requires_grad = view._inherits_grad = True
    if inherited is not None and (kind is None or inherited == "inference_mode"):
        kind = inherited
    if kind is not None:
        view._view_kind = kind
    counter.add_view(view)
    return view


_speed.can_record(accumulator_of, _sequence, _describe_inputs)  # (what _speed.arithmetic records with)


class Op(Node):
    """A built-in operation; the class name is the ``grad_fn`` name PyTorch shows."""

    saves_result = False  # set by ops whose backward formula uses their own output

    @classmethod
    def apply(cls, *inputs, **params):
        if grad_mode._State.enabled:
            for t in inputs:
                if isinstance(t, Tensor) and t._requires_grad:
                    break
            else:  # no input requires grad: compute, record nothing
                return Tensor._make(_as_array(cls.forward(NOT_RECORDING, *inputs, **params)))
            ctx = cls.__new__(cls)
            _start_recording(ctx, inputs)
            out = Tensor._make(_as_array(cls.forward(ctx, *inputs, **params)), True, ctx)
            if cls.saves_result:
                ctx._own_output = SavedTensor(out, is_output=True)
            return out
        return Tensor._make(_as_array(cls.forward(NOT_RECORDING, *inputs, **params)))


def _as_array(value):
    # NumPy turns 0-d results into scalars; a tensor always holds an ndarray.
    return value if type(value) is np.ndarray else np.asarray(value)


class FunctionCtx:
    """What ``ctx`` offers inside a user ``Function``: the node itself, as in PyTorch."""


class BackwardCFunction(Node, metaclass=ShownAs):
    """The node class made for each user ``Function`` (``MyFuncBackward``), shown where PyTorch
    shows it: ``<torch.autograd.function.MyFuncBackward object at 0x...>``."""

    _forward_cls = None
    _shown_as = "torch.autograd.function.BackwardCFunction"

    def __repr__(self):
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors):
        pass  # in-place outputs are handled like any output here

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)

    @staticmethod
    def backward(ctx, *grad_outputs):
        # The user's backward returns one gradient per argument of forward;
        # only the tensor arguments have an edge in next_functions.
        if getattr(ctx, "_materialize_grads", True):  # an output nobody used gets zeros, not None
            grad_outputs = tuple(
                Tensor._make(np.zeros(*ctx._output_shapes[i])) if g is None and ctx._output_shapes[i] else g
                for i, g in enumerate(grad_outputs)
            )
        grads = ctx._forward_cls.backward(ctx, *grad_outputs)
        grads = grads if isinstance(grads, tuple) else (grads,)
        n = len(ctx.needs_input_grad)
        if len(grads) < n or any(g is not None for g in grads[n:]):
            raise RuntimeError(
                f"function {ctx.name()} returned an incorrect number of gradients (expected {n}, got {len(grads)})"
            )
        grads = tuple(grads[i] for i in ctx._tensor_args)
        for g in grads:  # user code: check what came back (built-in formulas always return tensors)
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        return grads


class Function:
    """Define a new differentiable operation with your own forward and backward.

    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> y = Square.apply(torch.tensor(3.0, requires_grad=True))   # grad_fn=<SquareBackward>
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__name__ + "Backward"
        cls._backward_cls = type(name, (BackwardCFunction,), {"_forward_cls": cls,
                                                              "_shown_as": f"torch.autograd.function.{name}"})
        cls._forward_signature = None  # inspect.signature(cls.forward), on the first apply that needs it

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method."
        )

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """PyTorch 2.0's other form: a ``forward(x, ...)`` without ``ctx``, and this method, given the
        arguments (defaults filled in) and what ``forward`` returned, prepares ``ctx`` for ``backward``.

        >>> class Exp(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(x):
        ...         return x.exp()
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         ctx.save_for_backward(output)
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         result, = ctx.saved_tensors
        ...         return grad * result
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it "
            "with backward mode AD."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = cls._backward_cls()
        separate_setup = cls.setup_context is not Function.setup_context
        if separate_setup:  # setup_context sees every argument, defaults filled in (as PyTorch binds them)
            signature = cls._forward_signature
            if signature is None:  # once per class: inspect.signature costs more than a small op
                signature = cls._forward_signature = inspect.signature(cls.forward)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        record = grad_mode._State.enabled and any(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)  # (grad mode aside)
        with grad_mode.no_grad():  # forward itself is not recorded, as in PyTorch
            if separate_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        if not record:
            wrapped = tuple(o.detach() if isinstance(o, Tensor) else o for o in outputs)
            return wrapped[0] if single else wrapped
        _start_recording(ctx, args)  # needs_input_grad: one flag per argument
        ctx._tensor_args = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx._next_nodes = tuple(ctx._next_nodes[i] for i in ctx._tensor_args)
        ctx._next_nrs = tuple(ctx._next_nrs[i] for i in ctx._tensor_args)
        ctx._input_shapes = tuple(ctx._input_shapes[i] for i in ctx._tensor_args)
        ctx._num_outputs = len(outputs)
        ctx._output_shapes = [(o._data.shape, o._data.dtype) if isinstance(o, Tensor) else None for o in outputs]
        non_diff = getattr(ctx, "_non_differentiable", set())
        wrapped = []
        for nr, o in enumerate(outputs):
            if isinstance(o, Tensor) and o.dtype.is_floating_point and id(o) not in non_diff:
                t = Tensor._make(o._data, True, ctx)
                t._version_counter = o._version_counter  # a tensor saved in forward is the same storage
                t._output_nr = nr
                if o._base is not None or any(o is a for a in args):  # a view, or an input returned as it is:
                    made_view(t, o, "custom_function")  # a view that may not change in place, as in PyTorch
                wrapped.append(t)
            elif isinstance(o, Tensor):
                wrapped.append(o.detach())
            else:
                wrapped.append(o)
        if ctx._saved:  # a saved output is kept as the output, so a second backward can go through it
            made = {id(o): nr for nr, (o, w) in enumerate(zip(outputs, wrapped)) if getattr(w, "_grad_fn", None) is ctx}
            ctx._saved = tuple(
                SavedTensor(wrapped[made[id(s.tensor)]], is_output=True, output_nr=made[id(s.tensor)])
                if s is not None and s.tensor is not None and id(s.tensor) in made else s
                for s in ctx._saved
            )
        return wrapped[0] if single else tuple(wrapped)
