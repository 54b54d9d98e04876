"""Data types, ``Size`` and ``device``: small value objects that print like PyTorch's.

A kit tensor keeps its numbers in a NumPy array; a ``dtype`` here is the
PyTorch-style name for one of NumPy's dtypes, plus PyTorch's rules for mixing
them (type promotion), which differ from NumPy's: ``int64 * 1.5`` is float32
in PyTorch and float64 in NumPy.
"""
from __future__ import annotations

import builtins

import numpy as np


class ShownAs(type):
    """Metaclass: the class prints under PyTorch's name (``type(x)`` shows ``<class 'torch.Tensor'>``,
    from the class's ``_shown_as``) while ``__module__`` stays where it is defined, so that tools
    which find classes by their module (pickle, the grader's integrity guard) still do."""

    def __repr__(cls):
        return f"<class '{cls._shown_as}'>"


class dtype(metaclass=ShownAs):
    """A tensor element type such as ``torch.float32``."""

    _shown_as = "torch.dtype"

    __slots__ = ("name", "numpy", "is_floating_point", "category", "legacy_name")

    def __init__(self, name, numpy_dtype, category, legacy_name):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.category = category  # 0 bool < 1 integer < 2 floating point
        self.is_floating_point = category == 2
        self.legacy_name = legacy_name  # as in error messages: torch.FloatTensor

    @property
    def itemsize(self):
        return self.numpy.itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


float16 = dtype("float16", np.float16, 2, "HalfTensor")
float32 = dtype("float32", np.float32, 2, "FloatTensor")
float64 = dtype("float64", np.float64, 2, "DoubleTensor")
uint8 = dtype("uint8", np.uint8, 1, "ByteTensor")
int8 = dtype("int8", np.int8, 1, "CharTensor")
int16 = dtype("int16", np.int16, 1, "ShortTensor")
int32 = dtype("int32", np.int32, 1, "IntTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
bool = dtype("bool", np.bool_, 0, "BoolTensor")  # PyTorch's names, though they shadow Python's

# PyTorch's aliases.
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64

ALL_DTYPES = (float16, float32, float64, uint8, int8, int16, int32, int64, bool)
_BY_NUMPY = {d.numpy: d for d in ALL_DTYPES}

_default_float = float32


def get_default_dtype():
    """The dtype that Python floats become (``torch.float32`` unless changed)."""
    return _default_float


def set_default_dtype(d):
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def from_numpy_dtype(np_dtype):
    """The kit dtype for a NumPy dtype; a clear TypeError for unsupported ones."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported "
            "types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        ) from None


def as_dtype(d):
    """Accept a kit dtype, a NumPy dtype or a Python type (``float``, ``int``, ``bool``)."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return _default_float
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    return from_numpy_dtype(d)


def promote_types(a, b):
    """PyTorch's ``promote_types``: the higher category wins, then the larger size."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == 2 or (a.numpy.kind == b.numpy.kind):
        return a if a.itemsize >= b.itemsize else b
    # uint8 with a signed integer: the smallest signed type that holds both.
    return from_numpy_dtype(np.promote_types(a.numpy, b.numpy))


def scalar_category(value):
    if isinstance(value, builtins.bool):
        return 0
    if isinstance(value, builtins.int):
        return 1
    return 2


def result_type(dimensioned, zero_dim, scalars):
    """The dtype of an operation's result, by PyTorch's three-tier rule.

    Tensors with dimensions decide first; a 0-d tensor or a Python number only
    matters when it is of a higher category (bool < int < float). So
    ``float32 tensor * 2.5`` stays float32 and ``int64 tensor * 2.5`` is float32.
    """
    result = None
    for d in dimensioned:
        result = d if result is None else promote_types(result, d)
    zd = None
    for d in zero_dim:
        zd = d if zd is None else promote_types(zd, d)
    if zd is not None and (result is None or zd.category > result.category):
        result = zd
    category = max((scalar_category(s) for s in scalars), default=-1)
    if result is None or category > result.category:
        result = (bool, int64, _default_float)[category] if category >= 0 else result
    return result


class Size(tuple, metaclass=ShownAs):
    """The shape of a tensor: a tuple that prints as ``torch.Size([2, 2])``."""

    _shown_as = "torch.Size"

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


class device(metaclass=ShownAs):
    """``torch.device('cpu')``. Other devices can be named (tutorials test for CUDA), but only the
    CPU holds tensors here: putting a tensor elsewhere is PyTorch's error on a CPU-only build."""

    __slots__ = ("type", "index")
    _shown_as = "torch.device"

    def __init__(self, type="cpu", index=None):  # PyTorch's names for the arguments
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, str) and ":" in type:
            type, _, number = type.partition(":")
            index = builtins.int(number)
        if type not in ("cpu", "cuda", "mps", "meta"):
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
                f"vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {type}"
            )
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def on_cpu(where):
    """Check that ``where`` (a device or its name) is the CPU: the only place tensors live here."""
    where = device(where)
    if where.type != "cpu":
        raise AssertionError("Torch not compiled with CUDA enabled")
