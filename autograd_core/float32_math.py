"""float32 ``exp``, ``log``, ``log10``, ``sin``, ``cos``, ``sinh``, ``cosh``, ``tanh`` and ``sigmoid`` to within PyTorch's rounding.

NumPy's float32 kernels are fast approximations: ``np.exp(np.float32(12))`` is 162754.78 where the
exact value rounds to 162754.80, and PyTorch prints the latter. Computing in float64 and rounding
once gives the correctly rounded float32 on all but a vanishing share of inputs. PyTorch's own
vectorised kernels are within one unit in the last place of that (they agree with it on about
93-99% of inputs, depending on the function; NumPy's float32 kernels on 60-87%).

float64 tensors go straight to NumPy: this module only costs float32 a cast each way.
"""
from __future__ import annotations

import numpy as np

_FLOAT32 = np.dtype(np.float32)


def _through_float64(ufunc):
    def compute(x):
        if x.dtype == _FLOAT32:
            # NumPy's float64 loop, reading and writing float32 in cache-sized chunks: no
            # full-size float64 temporaries (which cost more than the function itself)
            return ufunc(x, out=np.empty(x.shape, np.float32), dtype=np.float64, casting="same_kind")
        return ufunc(x)

    compute.__name__ = ufunc.__name__
    return compute


exp = _through_float64(np.exp)
log = _through_float64(np.log)
sin = _through_float64(np.sin)
cos = _through_float64(np.cos)
tanh = _through_float64(np.tanh)
log10 = _through_float64(np.log10)
sinh = _through_float64(np.sinh)
cosh = _through_float64(np.cosh)


def sigmoid(x):
    """PyTorch computes float32 sigmoid as ``1 / (1 + exp(-x))`` in float32 (with its exp);
    float64 takes the form that cannot overflow for either sign."""
    if x.dtype == _FLOAT32:
        one = np.float32(1)
        return one / (one + exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def add_scaled(a, b, alpha):
    """``a + alpha * b`` (``torch.add(a, b, alpha=...)``, an optimizer's ``p.add_(grad, alpha=-lr)``).

    PyTorch's kernel fuses the multiply and the add into one rounding, with ``alpha`` first made a
    float32 for a float32 tensor; for float32 the float64 product of two float32 numbers is exact,
    so computing in float64 and rounding once gives the same numbers.
    """
    if a.dtype == _FLOAT32 and (b.dtype == _FLOAT32 if isinstance(b, np.ndarray) else True):
        alpha = np.float64(np.float32(alpha))
        return (a.astype(np.float64) + alpha * np.asarray(b, dtype=np.float32).astype(np.float64)).astype(np.float32)
    return a + alpha * b
