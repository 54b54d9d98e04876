"""Float operations rounded exactly as PyTorch's compiled kernels round them: what NumPy lacks.

``fma(a, b, c)``  ``a * b + c`` with ONE rounding. PyTorch's CPU kernels are built for processors
                  with fused multiply-add, and the compiler fuses ``x * scale + shift``: a uniform
                  number is ``fma(u, to - from, from)``, a normal one ends in ``fma(z, std, mean)``.
                  NumPy rounds the product and then the sum, which differs on about 40% of them.
``log(x)``        the C library's ``log`` for float64 (PyTorch's kernels call it; NumPy's own
``log1p(x)``      vectorised loops differ from it in the last bit on some inputs).

The fused multiply-add is built from exact pieces (error-free transformations): Knuth's
``two_sum`` (the rounding error of a sum), Dekker's ``two_product`` (that of a product), and
rounding to odd, which makes two roundings in a row give the once-rounded result (S. Boldo and
G. Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to
odd", IEEE Transactions on Computers 57(4), 2008). Every step is a NumPy array operation.
"""
from __future__ import annotations

import math

import numpy as np

_FLOAT32 = np.dtype(np.float32)


def _two_sum(a, b):
    """``s = a + b`` rounded, and its rounding error: ``a + b == s + err`` exactly."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


def _two_product(a, b):
    """``p = a * b`` rounded, and its rounding error (Veltkamp's split into 26-bit halves)."""
    def halves(x):
        big = 134217729.0 * x  # 2**27 + 1
        high = big - (big - x)
        return high, x - high

    p = a * b
    a_high, a_low = halves(a)
    b_high, b_low = halves(b)
    return p, ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low


def _round_to_odd(s, err):
    """``s + err`` rounded to odd: ``s`` if exact, else the neighbour with an odd last bit."""
    inexact_even = (err != 0) & ((s.view(np.int64) & 1) == 0)
    return np.where(inexact_even, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def fma(a, b, c):
    """``a * b + c`` rounded once, elementwise, in ``a``'s dtype (float32 or float64).

    For example ``fma(np.float32(0.1), 3, -0.3)`` is the float32 nearest to 0.1f * 3 - 0.3f.
    """
    a = np.asarray(a)
    if np.ndim(b) == 0 and b == 1:  # a * 1 is exact: one rounding already (and PyTorch's zero signs)
        return (a + np.asarray(c, a.dtype)).astype(a.dtype, copy=False)
    if a.dtype == _FLOAT32:
        return _fma_float32(a, np.asarray(b, np.float32), np.asarray(c, np.float32))
    a, b, c = np.broadcast_arrays(a.astype(np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64))
    product, product_err = _two_product(a, b)
    high, low = _two_sum(c, product)
    result = high + _round_to_odd(*_two_sum(low, product_err))
    # infinities and overflow in the split (|x| > 2**996): the plain expression; and a zero result,
    # exact there, with the sign IEEE gives it (-0.0 * 0.1 + -0.0 is -0.0, which the splits lose)
    return np.where(np.isfinite(result) & (result != 0), result, a * b + c)


def _fma_float32(a, b, c):
    """float32 * float32 is exact in float64, so float64 rounds ``a * b + c`` once; rounding
    that to float32 is a second rounding, which matters only where the float64 sum landed exactly
    halfway between two float32 numbers (its 29 low bits 1000...0). Those few, and results too
    small for float32's normal range, are redone with the sum rounded to odd."""
    wide = np.multiply(a, b, dtype=np.float64)
    wide += c
    result = wide.astype(np.float32)
    redo = ((wide.view(np.int64) & 0x1FFFFFFF) == 0x10000000) | (np.abs(result) < np.finfo(np.float32).tiny)
    if redo.any():
        a, b, c = (np.broadcast_to(x, wide.shape)[redo].astype(np.float64) for x in (a, b, c))
        result[redo] = _round_to_odd(*_two_sum(a * b, c)).astype(np.float32)
    return result


_libm_log1p = np.frompyfunc(math.log1p, 1, 1)  # (math.log1p is the C library's log1p)


def log1p(x):
    """The C library's ``log1p`` of a float64 array (one call per element: used for a few only)."""
    return _libm_log1p(np.asarray(x, np.float64)).astype(np.float64)


def log(x):
    """The C library's ``log`` of a float64 array.

    glibc's log is correctly rounded except within 0.02 units in the last place of a tie, so:
    compute in long double (x87, 64-bit mantissa) and round, and ask the C library itself
    (``math.log``) for the few results that lie near a tie. Where long double is no wider than
    double, ask it for all.
    """
    x = np.asarray(x, np.float64)
    if np.finfo(np.longdouble).nmant < 63:
        return np.frompyfunc(math.log, 1, 1)(x).astype(np.float64)
    wide = np.log(x.astype(np.longdouble))
    result = wide.astype(np.float64)
    near_tie = np.abs(wide - result) > 0.47 * np.spacing(result).astype(np.longdouble)
    result[near_tie] = [math.log(v) for v in x[near_tie].tolist()]
    return result
