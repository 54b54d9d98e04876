"""float32 ``log`` and ``sincos`` as PyTorch's AVX2 code computes them, for ``randn``'s Box-Muller.

On an x86 processor with AVX2 (or AVX-512), PyTorch 2.13 makes 16 or more float32 normal numbers
with ``normal_fill_16_AVX2`` (aten/src/ATen/native/cpu/DistributionTemplates.h), which takes its
logarithm, sine and cosine from aten/src/ATen/native/cpu/avx_mathfun.h: Cephes polynomials on
8 floats at a time, each within a unit or two of the exact value. To get PyTorch's numbers the
same operations must run in the same order, in float32; this file is that code with NumPy arrays
in place of AVX registers.

The compiler turns the header's ``a * b + c`` into fused multiply-adds (one rounding instead of
two); the ``fma`` calls below are those. Which ones are fused was found by comparing with
PyTorch's output: without the fused polynomial steps, the log's ``y * z + e * q1`` or the
cosine's ``y * z - z / 2``, a few numbers in a thousand differ; with them, millions out of
millions agree bit for bit (tests/engine/test_random_vs_torch.py). In the range reduction, fused or not
gives the same float32 on every input tried.

Altered source: a NumPy transcription of avx_mathfun.h, constants kept verbatim.
    AVX implementation of sin, cos, sincos, exp and log, based on "sse_mathfun.h" by Julien
    Pommier. Copyright (C) 2012 Giovanni Garberoglio, Interdisciplinary Laboratory for
    Computational Science (LISC), Fondazione Bruno Kessler and University of Trento.
    This software is provided 'as-is', without any express or implied warranty. In no event
    will the authors be held liable for any damages arising from the use of this software.
    Permission is granted to anyone to use this software for any purpose, including commercial
    applications, and to alter it and redistribute it freely, subject to the following
    restrictions: 1. The origin of this software must not be misrepresented; you must not claim
    that you wrote the original software. If you use this software in a product, an
    acknowledgment in the product documentation would be appreciated but is not required.
    2. Altered source versions must be plainly marked as such, and must not be misrepresented
    as being the original software. 3. This notice may not be removed or altered from any
    source distribution. (the zlib license)
"""
from __future__ import annotations

import numpy as np

from .exact_math import fma

f32 = np.float32

_SQRTHF = f32(0.707106781186547524)
_LOG_P = [f32(p) for p in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                           +1.4249322787E-1, -1.6668057665E-1, +2.0000714765E-1, -2.4999993993E-1,
                           +3.3333331174E-1)]
_LOG_Q1, _LOG_Q2 = f32(-2.12194440e-4), f32(0.693359375)

_FOPI = f32(1.27323954473516)  # 4 / pi
_MINUS_DP1, _MINUS_DP2, _MINUS_DP3 = f32(-0.78515625), f32(-2.4187564849853515625e-4), f32(-3.77489497744594108e-8)
_SINCOF = [f32(p) for p in (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)]
_COSCOF = [f32(p) for p in (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002)]


def log(x):
    """``log256_ps``: the natural logarithm of positive float32 numbers."""
    x = np.maximum(x, np.int32(0x00800000).view(f32))  # cut off denormals
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(f32) + f32(1)  # the exponent ...
    x = ((bits & ~0x7F800000) | np.int32(0x3F000000)).view(f32)  # ... and the mantissa, in [0.5, 1)
    # if x < SQRTHF: e -= 1; x = x + x - 1.0  else: x = x - 1.0
    small = x < _SQRTHF
    e = e - np.where(small, f32(1), f32(0))
    x = (x - f32(1)) + np.where(small, x, f32(0))
    z = x * x
    y = _LOG_P[0]
    for p in _LOG_P[1:]:
        y = fma(y, x, p)  # y = y * x + p
    y = y * x
    y = fma(y, z, e * _LOG_Q1)  # y = y * z + e * q1
    y = y - z * f32(0.5)
    x = x + y
    return x + e * _LOG_Q2


def sincos(x):
    """``sincos256_ps``: the sine and cosine of float32 numbers (for |x| < 8192), as a pair."""
    sin_negative = np.signbit(x)
    x = np.abs(x)
    j = (x * _FOPI).astype(np.int32)  # the octant, truncated,
    j = (j + 1) & ~1  # made even (see the Cephes sources)
    y = j.astype(f32)
    sin_negative = sin_negative ^ ((j & 4) != 0)
    cos_negative = (~(j - 2) & 4) != 0
    sine_polynomial_here = (j & 2) == 0

    # "Extended precision modular arithmetic": x = ((x - y * DP1) - y * DP2) - y * DP3
    x = fma(y, _MINUS_DP1, x)
    x = fma(y, _MINUS_DP2, x)
    x = fma(y, _MINUS_DP3, x)

    z = x * x
    cos_poly = fma(fma(_COSCOF[0], z, _COSCOF[1]), z, _COSCOF[2]) * z  # for 0 <= x <= pi/4
    cos_poly = fma(cos_poly, z, -(z * f32(0.5))) + f32(1)
    sin_poly = fma(fma(_SINCOF[0], z, _SINCOF[1]), z, _SINCOF[2]) * z  # for pi/4 <= x <= pi/2
    sin_poly = fma(sin_poly, x, x)

    s = np.where(sine_polynomial_here, sin_poly, cos_poly)
    c = np.where(sine_polynomial_here, cos_poly, sin_poly)
    return np.where(sin_negative, -s, s), np.where(cos_negative, -c, c)
