"""``nn.Parameter``: a leaf tensor that requires grad and that a ``Module`` registers as its own.

A parameter is nothing more than what lesson 2 called a leaf: ``requires_grad=True``, no
``grad_fn``, and ``.grad`` filled by ``backward()``. Here, as in PyTorch, it is a subclass of
``Tensor`` that adds only its name, so every operation treats it exactly like any other tensor.
"""
from __future__ import annotations

from .. import _speed
from ..tensor import Tensor


class Parameter(Tensor):
    """``nn.Parameter(torch.randn(3))``: a leaf that requires grad, registered by the module it is assigned to.

    A subclass of ``Tensor`` that adds nothing but its name (``type(p)`` prints
    ``<class 'torch.nn.parameter.Parameter'>``, and ``p`` prints "Parameter containing:"), as in
    PyTorch; every operation on it gives an ordinary ``Tensor``."""

    __slots__ = ()
    _shown_as = "torch.nn.parameter.Parameter"
    _is_parameter = True

    def __new__(cls, data=None, requires_grad=True):
        from ..creation import empty

        data = empty(0) if data is None else data
        p = object.__new__(cls)
        p._data, p._requires_grad, p._grad_fn = data._data, False, None  # shares data's numbers, as in PyTorch
        p._grad, p._output_nr, p._counter = None, 0, None
        p._version_counter = data._version_counter
        p.requires_grad = requires_grad
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # (made in __new__: Tensor's own __init__ is the legacy constructor torch.Tensor(data))


_speed.takes_shortcuts(Parameter)  # a Parameter is computed with exactly as a Tensor is


# PyTorch's words when an uninitialized parameter or buffer is used (it names the function; the engine
# cannot tell which operation is reading the numbers, so it says "an operation").
_USED_UNINITIALIZED = (
    "Attempted to use an uninitialized parameter in {}. This error happens when you are using a `LazyModule` or "
    "explicitly manipulating `torch.nn.parameter.{}` objects. When using LazyModules Call "
    "`forward` with a dummy batch to initialize the parameters before calling torch functions"
)
_NUMBERS = Tensor._data  # the slot that holds a tensor's numbers (an uninitialized tensor hides it)


class _Uninitialized:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share (PyTorch's
    ``UninitializedTensorMixin``): a tensor whose shape is not known yet.

    It has no numbers yet, so reading them is refused: its shape (``RuntimeError``) and every
    operation on it (``ValueError``), as in PyTorch (but an operation that checks shapes before it
    reads numbers, as ``F.linear`` does, raises the shape's error). ``.data`` is the empty tensor
    behind it (``model.double()`` converts that). ``materialize(shape)`` gives it numbers (unset, as
    ``torch.empty``'s) and turns it into what it stands for (``cls_to_become``): the same object, so an
    optimizer that was handed it updates it afterwards.
    """

    __slots__ = ()
    cls_to_become = None

    @property
    def _data(self):  # every operation reads a tensor's numbers through here: there are none yet
        raise ValueError(_USED_UNINITIALIZED.format("an operation", type(self).__name__))

    @property
    def data(self):
        return Tensor._make(_NUMBERS.__get__(self))

    @data.setter
    def data(self, value):  # model.to(...), model.double() before the first call: the empty numbers converted
        _NUMBERS.__set__(self, value._data)

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes."
        )

    def size(self, dim=None):
        return self.data.size(dim)

    @property
    def dtype(self):
        return self.data.dtype

    def is_floating_point(self):
        return self.data.is_floating_point()

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._requires_grad = bool(value)

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor numbers of ``shape`` (unset: fill them next) and make it an ordinary one."""
        from ..creation import empty

        numbers = empty(shape, dtype=dtype or self.dtype, device=device)._data
        _NUMBERS.__set__(self, numbers)
        self.__class__ = self.cls_to_become

    def __reduce_ex__(self, protocol):  # saved (torch.save of a lazy model) as what it is: no shape yet
        return _rebuild_uninitialized, (type(self), _NUMBERS.__get__(self).copy(), self._requires_grad)

    def __deepcopy__(self, memo):
        memo[id(self)] = copy = _rebuild_uninitialized(type(self), _NUMBERS.__get__(self).copy(), self._requires_grad)
        return copy

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__


def _rebuild_uninitialized(cls, numbers, requires_grad):
    t = Tensor._make(numbers, requires_grad)
    t.__class__ = cls
    return t


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape is not known yet: what ``nn.LazyLinear`` holds until its first input
    (``materialize`` makes it a ``Parameter``)."""

    __slots__ = ()
    _shown_as = "torch.nn.parameter.UninitializedParameter"
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ..creation import empty

        p = Tensor._make(empty(0, dtype=dtype, device=device)._data, requires_grad)
        p.__class__ = cls
        return p

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass  # (made in __new__: Tensor's own __init__ is the legacy constructor torch.Tensor(data))


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet: ``nn.LazyBatchNorm1d``'s running mean and variance until
    its first input (``materialize`` makes it a ``Tensor``)."""

    __slots__ = ()
    _shown_as = "torch.nn.parameter.UninitializedBuffer"
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from ..creation import empty

        b = Tensor._make(empty(0, dtype=dtype, device=device)._data, requires_grad)
        b.__class__ = cls
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def is_lazy(param):
    """True for a parameter or buffer whose shape is not known yet (PyTorch's ``nn.parameter.is_lazy``)."""
    return isinstance(param, _Uninitialized)
