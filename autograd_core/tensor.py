"""The ``Tensor``: a NumPy array plus what autograd needs to know about it.

A tensor holds

* ``_data``: its numbers, a NumPy array;
* ``requires_grad``: whether operations on it are recorded;
* ``grad_fn``: the graph node that made it (``None`` for tensors you create: leaves);
* ``grad``: where ``backward()`` leaves the gradient of a leaf;
* ``_version_counter``: a counter bumped by every in-place change, shared with its views,
  so that a saved tensor that was modified can be caught (see ``graph.SavedTensor``).

This file says what a tensor *is*: its data, its autograd state, its conversions to
Python and NumPy. It sits near the bottom of the engine and imports nothing above it.
What you can *do* with a tensor (``x + y``, ``x.exp()``, ``x[0]``, ``x.add_(y)``,
``x.backward()``) is attached to it in one place at the top, ``methods.py``; the math
itself lives in ``ops.py``.
"""
from __future__ import annotations

import builtins
import weakref

import numpy as np

from . import dtypes, grad_mode, printing, torch_warnings
from .dtypes import ShownAs
from .hooks import add_hook

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
    "for more information."
)


class VersionCounter:
    """How many times a tensor's storage was modified in place, and the views of that storage
    that must hear of the next change."""

    value = 0  # a class default: making a counter costs no __init__ call
    views = None  # weak references to the views whose grad_fn is up to date (see StaleView)

    def bump(self):
        """One more in-place change of this storage: its views' ``grad_fn`` are out of date."""
        self.value += 1
        if self.views:
            self.tell_views()

    def add_view(self, view):
        views = self.views
        if views is None:
            views = self.views = []
        elif len(views) >= 64 and len(views) & (len(views) - 1) == 0:  # now and then, drop the dead ones
            views[:] = [ref for ref in views if ref() is not None]
        views.append(weakref.ref(view))

    def tell_views(self):
        """Each view alive becomes a ``StaleView`` (a view already stale is no longer listed)."""
        views, self.views = self.views, None
        for ref in views:
            view = ref()
            if view is not None and type(view) is Tensor:
                view.__class__ = StaleView


class Tensor(metaclass=ShownAs):
    """A multi-dimensional array that can record the operations applied to it."""

    _shown_as = "torch.Tensor"  # type(x) prints <class 'torch.Tensor'>, as tutorials show

    # Hot fields live in slots; rarely set ones fall back to the class defaults below.
    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_grad", "_output_nr", "_counter", "__dict__", "__weakref__")
    _base = None  # the tensor this one is a view of, if any (the root of a chain of views)
    _view_kind = None  # how it was made, for a view: see function.made_view
    _inherits_grad = False  # a view that requires grad only because its base does (no grad_fn, no .grad)
    _hooks = None  # hooks of a leaf, run by AccumulateGrad
    _grad_accumulator = None
    _retains_grad = False
    _is_parameter = False  # True for nn.Parameter (its subclass): prints "Parameter containing:", as in PyTorch
    __array_priority__ = 1000  # numpy scalars on the left defer to Tensor's operators

    @staticmethod
    def _make(data, requires_grad=False, grad_fn=None):
        """Wrap an ndarray without copying or checking: the engine's fast path."""
        t = object.__new__(Tensor)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = grad_fn
        t._grad = None
        t._output_nr = 0  # which output of grad_fn this is (0 but for multi-output functions)
        t._counter = None  # the version counter, made on first use (see _version_counter)
        return t

    @property
    def _version_counter(self):
        """This storage's ``VersionCounter``, shared with views. Made when first needed:
        most tensors are never saved for backward, viewed or changed in place."""
        counter = self._counter
        if counter is None:
            counter = self._counter = VersionCounter()
        return counter

    @_version_counter.setter
    def _version_counter(self, counter):
        self._counter = counter

    # -- what a tensor is ----------------------------------------------------------
    @property
    def shape(self):
        return dtypes.Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return dtypes.Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self):
        return self._data.ndim

    ndim = property(dim)
    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    @property
    def dtype(self):
        return dtypes.from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        return dtypes.device("cpu")

    @property
    def is_cuda(self):
        return False

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def element_size(self):
        return self._data.itemsize

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as PyTorch: views made by one UnbindBackward0

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        suffixes = []
        try:
            grad_fn = self._grad_fn
        except RuntimeError:  # a view PyTorch refuses to rebase (tensor.StaleView): so PyTorch prints it
            suffixes.append("grad_fn=<Invalid>")
            grad_fn = None
        if grad_fn is not None:
            suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
        elif not suffixes and self._requires_grad:
            suffixes.append("requires_grad=True")
        text = printing.format_tensor(self._data, suffixes, dtypes.get_default_dtype().numpy)
        return "Parameter containing:\n" + text if self._is_parameter else text

    __str__ = __repr__

    def __format__(self, spec):
        # f"{loss}" and f"{loss:.4f}" of a 0-d tensor format its number (0.10000000149011612 for a
        # float32 0.1), as PyTorch does; a parameter or a tensor of more dims formats as its printout.
        if self._data.ndim == 0 and not self._is_parameter and type(self) in (Tensor, StaleView):
            return format(self.item(), spec)
        if spec:
            kind = "Parameter" if self._is_parameter else type(self).__name__
            raise TypeError(f"unsupported format string passed to {kind}.__format__")
        return str(self)

    # -- autograd state -----------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if value:
            check_can_require_grad(self._data, "x.requires_grad = True")
        self._requires_grad = builtins.bool(value)
        if self._base is not None:
            self._inherits_grad = False  # a view that is a leaf of its own: it gets a .grad
        elif self._counter is not None and self._counter.views:
            self._counter.tell_views()  # a view's requires_grad follows its base's

    def requires_grad_(self, requires_grad=True):
        """Start (or stop) recording operations on this leaf tensor, in place."""
        if requires_grad:
            check_can_require_grad(self._data, "x.requires_grad_()")
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def _version(self):
        """How many in-place changes this tensor's storage has seen (PyTorch's ``x._version``)."""
        return self._version_counter.value

    _inference = False

    def is_inference(self):
        """Made inside ``torch.inference_mode()`` (autograd will not save it for backward)."""
        return self._inference

    @property
    def is_leaf(self):
        """Created by the user (or not requiring grad) rather than by a recorded op."""
        return self._grad_fn is None

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad:
            torch_warnings.warn(_NON_LEAF_GRAD_WARNING, "non-leaf grad")
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of size "
                    f"'{list(self.shape)}'. Please ensure that the gradient and the tensor are the same size"
                )
        self._grad = value

    @property
    def data(self):
        """The same numbers, detached from the graph and from the version counter."""
        return Tensor._make(self._data)

    @data.setter
    def data(self, value):
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value)

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Also keep ``.grad`` for this non-leaf tensor after backward."""
        if self._grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return  # leaves keep their grad anyway
        if self._retains_grad:
            return
        ref = weakref.ref(self)  # weak: the graph must not keep this tensor alive

        def store(grad):
            t = ref()
            if t is not None:
                if t._grad is None:
                    t._grad = grad.detach().clone() if not grad_mode.is_grad_enabled() else grad
                else:
                    t._grad = t._grad + grad
            return None

        self._retain_handle = self._grad_fn._add_tensor_hook(store)  # (inplace.py moves it to a new grad_fn)
        self._retains_grad = True

    def register_hook(self, hook):
        """Call ``hook(grad)`` whenever the gradient of this tensor is computed.

        The hook may return a new gradient to use instead. Returns a handle with ``.remove()``.
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._add_tensor_hook(hook)
        if self._hooks is None:
            self._hooks = {}
        return add_hook(self._hooks, hook)

    def detach(self):
        """A tensor sharing these numbers, cut off from the graph (changes show in both)."""
        t = Tensor._make(self._data)
        t._version_counter = self._version_counter
        return t

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        if self._counter is not None and self._counter.views:
            self._counter.tell_views()  # a view's requires_grad follows its base's
        return self

    # -- leaving the tensor world ---------------------------------------------------
    def numpy(self, *, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self._data.reshape(()))

    def __float__(self):
        if self._requires_grad:
            warn_scalar_conversion(stacklevel=3)
        return builtins.float(self.item())

    def __int__(self):
        return builtins.int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment."
            )
        t = Tensor._make(self._data.copy(), self._requires_grad)
        if self._is_parameter:
            t.__class__ = type(self)  # a parameter's copy is a parameter
        memo[id(self)] = t
        return t


class StaleView(Tensor):
    """A view whose storage was changed in place (through its base or another view), or whose
    base's ``requires_grad`` changed, since its ``grad_fn`` was made.

    PyTorch makes such a view's ``grad_fn`` anew when it is next asked for (an ``AsStridedBackward0``
    on the base's new history), or raises then if the view may not be rebased (a view made in
    ``no_grad``, an output of ``unbind``). So does the engine: ``VersionCounter.bump`` turns the views
    of a changed storage into ``StaleView``s, and the first read of ``_grad_fn`` (or ``_output_nr``)
    runs ``refresh`` (``inplace.refresh_view``, a layer above, plugs in here), which makes the view a
    plain ``Tensor`` again. No other tensor pays for this: only a stale view has these properties.
    """

    __slots__ = ()
    refresh = None  # inplace.refresh_view

    def _fresh(self):
        StaleView.refresh(self)
        return self

    def _requires_grad_now(self):
        # PyTorch's rule for a view: its own flag, or a grad_fn, or a base that requires grad
        return _REQUIRES_GRAD.__get__(self) or _GRAD_FN.__get__(self) is not None or self._base._requires_grad

    _grad_fn = property(lambda self: self._fresh()._grad_fn, lambda self, value: setattr(self._fresh(), "_grad_fn", value))
    _output_nr = property(lambda self: self._fresh()._output_nr,
                          lambda self, value: setattr(self._fresh(), "_output_nr", value))
    _requires_grad = property(_requires_grad_now, lambda self, value: setattr(self._fresh(), "_requires_grad", value))


_GRAD_FN, _REQUIRES_GRAD = Tensor._grad_fn, Tensor._requires_grad  # the slots themselves


# Only floating point tensors can require grad. PyTorch words the refusal three ways, by
# where it comes from; the engine keeps its words (the tests compare them with PyTorch's).
_NOT_FLOATING_POINT = {
    "x.requires_grad_()": "only Tensors of floating point dtype can require gradients",
    "x.requires_grad = True": "only Tensors of floating point and complex dtype can require gradients",
    "torch.tensor(..., requires_grad=True)": "Only Tensors of floating point and complex dtype can require gradients",
}


def check_can_require_grad(array, asked_by):
    """PyTorch's error if ``array`` cannot require grad; ``asked_by`` is a key of the table above."""
    if array.dtype.kind != "f":
        raise RuntimeError(_NOT_FLOATING_POINT[asked_by])


def warn_scalar_conversion(stacklevel=2):
    """PyTorch warns once per process when a tensor that requires grad becomes a plain number."""
    torch_warnings.warn(
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
        "Consider using tensor.detach() first.", "item", once=True, stacklevel=stacklevel,
    )


def _rebuild(data, requires_grad):
    return Tensor._make(data, requires_grad)


def _type_name(np_dtype):
    # PyTorch's scalar type names, as used in its error messages.
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}[np.dtype(np_dtype).name]


def _wrap_dim(dim, ndim):
    """Accept negative dims; PyTorch's IndexError for dims out of range."""
    lo, hi = -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % builtins.max(ndim, 1)
