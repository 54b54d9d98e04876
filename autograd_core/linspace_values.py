"""The numbers of ``torch.linspace``, computed the way PyTorch's CPU kernel computes them.

PyTorch takes ``step = (end - start) / (steps - 1)`` in the tensor's dtype and fills the first
half as ``start + step * i`` and the second half as ``end - step * (steps - 1 - i)`` (so both
ends are exact). Its compiler fuses each multiply-add into one rounding (an FMA); here the
product and sum are taken in a wider type and rounded once, which gives the same numbers.
NumPy's ``linspace`` rounds differently on about a third of float32 elements.
"""
from __future__ import annotations

import numpy as np

# A multiply-add of two float32 numbers is exact in float64; for float64 the x87 long double
# (64-bit mantissa) stands in for the fused operation.
_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.longdouble, np.dtype(np.float16): np.float64}


def linspace_values(start, end, steps, dtype):
    """``steps`` numbers from ``start`` to ``end`` as a NumPy array of ``dtype``."""
    dtype = np.dtype(dtype)
    i = np.arange(steps)
    first_half = (i < steps // 2) | (steps == 1)  # one step: start (the loop never reaches end)
    if dtype.kind != "f":  # integer dtypes: PyTorch steps in double and truncates
        s, e = float(dtype.type(start)), float(dtype.type(end))
        step = (e - s) / max(steps - 1, 1)
        return np.where(first_half, s + step * i, e - step * (steps - 1 - i)).astype(dtype)
    s, e = dtype.type(start), dtype.type(end)
    with np.errstate(invalid="ignore", divide="ignore"):
        step = dtype.type((e - s) / dtype.type(max(steps - 1, 1)))
    wide = _WIDER[dtype]
    up = wide(s) + wide(step) * i.astype(dtype).astype(wide)
    down = wide(e) - wide(step) * (steps - 1 - i).astype(dtype).astype(wide)
    return np.where(first_half, up, down).astype(dtype)
