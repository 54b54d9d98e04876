"""How PyTorch's CPU kernels turn the generator's 32-bit words into numbers (PyTorch 2.13).

Each function takes a ``torch.Generator`` (random_generator.py: ``random(n)`` gives ``n`` words,
``random64(n)`` ``n`` pairs of them) and returns a NumPy array. PyTorch's sources, in
aten/src/ATen/: core/TransformationHelper.h and core/DistributionsHelper.h (one number from a
word), native/cpu/DistributionTemplates.h (the kernels), native/TensorFactories.cpp (randperm).

uniform      float32: the low 24 bits of one word, times 2**-24; float64: the low 53 bits of
             ``random64``, times 2**-53. Then ``fma(u, to - from, from)``.
normal       16 or more numbers in a contiguous tensor: uniforms for all of them first, then
             Box-Muller on each block of 16 (radii from the first 8, angles from the last 8);
             when a part block is left, 16 fresh uniforms make the last 16 numbers.
             Fewer (or not contiguous): one double Box-Muller pair at a time, its second
             number kept in the generator for the next draw.
random_      ``(word % range) + from``; ranges of 2**28 or more take ``random64`` words.
randperm     Fisher-Yates from the front: swap place ``i`` with ``i + word % (n - i)``.
bernoulli    one uniform per element, 1 where it is below p: for one probability ``p`` (``bernoulli_(p)``,
             dropout) a 53-bit double uniform; for a tensor of probabilities, a 24-bit float uniform
             where they are float32, a 53-bit one where they are float64.
exponential  ``-1/lambda * log1p(-u)`` of a 53-bit double uniform, in double, then rounded to the dtype.
multinomial  with replacement: the running sum of each row (in its dtype) divided by the total; each
             sample a 53-bit double uniform, the first category whose running sum reaches it. (One
             sample, or none replaced: ``argmax``/``topk`` of ``p / exponential``: random.py.)
"""
from __future__ import annotations

import math

import numpy as np

from . import avx_mathfun, exact_math

_LOW_24, _LOW_53 = np.uint64(2**24 - 1), np.uint64(2**53 - 1)
_TWO_PI = 2.0 * math.pi  # 2.0f * c10::pi<double>, a double


def uniform(gen, n, dtype, low=0.0, high=1.0):
    """``n`` uniform numbers in [low, high): uniform_real_distribution and uniform_kernel."""
    if np.dtype(dtype) == np.float64:
        u = (gen.random64(n) & _LOW_53).astype(np.float64) * 2.0**-53
        low, high = np.float64(low), np.float64(high)
    else:  # float32 (float16 is drawn as float32 and rounded)
        u = (gen.random(n) & _LOW_24).astype(np.float32) * np.float32(2.0**-24)
        low, high = np.float32(low), np.float32(high)
    out = exact_math.fma(u, high - low, low).astype(dtype, copy=False)
    # a number rounded up to ``high`` becomes ``low``: the range stays [low, high)
    return np.where(out == np.dtype(dtype).type(high), np.dtype(dtype).type(low), out)


# -- normal ----------------------------------------------------------------------------------

def _box_muller_16_float32(blocks, mean, std):
    """normal_fill_16_AVX2 on rows of 16 float32 uniforms (x86 with AVX2 or AVX-512)."""
    radius = np.sqrt(np.float32(-2) * avx_mathfun.log(np.float32(1) - blocks[:, :8]))
    sin, cos = avx_mathfun.sincos(np.float32(_TWO_PI) * blocks[:, 8:])  # (both new, contiguous arrays)
    mean, std = np.float32(mean), np.float32(std)
    return np.concatenate([exact_math.fma(radius * cos, std, mean), exact_math.fma(radius * sin, std, mean)], axis=1)


def _box_muller_16_float64(blocks, mean, std):
    """normal_fill_16<double> on rows of 16 float64 uniforms (libm's log, cos and sin)."""
    radius = np.sqrt(-2 * exact_math.log(1 - blocks[:, :8]))
    theta = _TWO_PI * blocks[:, 8:]
    return np.concatenate([exact_math.fma(radius * np.cos(theta), std, mean),
                           exact_math.fma(radius * np.sin(theta), std, mean)], axis=1)


def _normal_fill(gen, n, dtype, mean, std):
    """normal_fill (n >= 16, contiguous): uniforms for all, Box-Muller per block of 16, then
    16 fresh uniforms for the last 16 places if a part block is left."""
    if dtype == np.float64:
        draw, box_muller = np.float64, _box_muller_16_float64
    else:
        draw, box_muller = np.float32, _box_muller_16_float32
    whole = n // 16 * 16
    # float16 draws uniforms for the whole blocks only (the kernel works block by block in float)
    out = uniform(gen, whole if dtype == np.float16 else n, draw)
    out = np.concatenate([out, np.empty(n - out.size, draw)])
    out[:whole] = box_muller(out[:whole].reshape(-1, 16), mean, std).ravel()
    if n % 16:
        out[n - 16:] = box_muller(uniform(gen, 16, draw).reshape(1, 16), mean, std).ravel()
    return out.astype(dtype, copy=False)


def _normal_one_at_a_time(gen, n, mean, std):
    """normal_distribution<double>: each pair of double uniforms (u1, u2) gives r*cos(theta) now
    and r*sin(theta) later (kept in the generator); r = sqrt(-2 log1p(-u2)), theta = 2 pi u1."""
    kept = [] if gen.next_double_normal is None or n == 0 else [gen.next_double_normal]
    gen.next_double_normal = None
    pairs = (n - len(kept) + 1) // 2
    u = (gen.random64(2 * pairs) & _LOW_53).astype(np.float64) * 2.0**-53
    r = np.sqrt(-2.0 * exact_math.log1p(-u[1::2]))
    theta = _TWO_PI * u[0::2]
    z = np.empty(2 * pairs)
    z[0::2], z[1::2] = r * np.cos(theta), r * np.sin(theta)
    if (n - len(kept)) % 2:
        gen.next_double_normal = float(z[-1])
    return exact_math.fma(np.concatenate([kept, z[:n - len(kept)]]), std, mean)


def normal(gen, n, dtype, mean=0.0, std=1.0, contiguous=True):
    """``n`` normal numbers (normal_kernel): the block path for 16 or more in a contiguous
    tensor, else one at a time in double."""
    if n >= 16 and contiguous:
        return _normal_fill(gen, n, np.dtype(dtype), mean, std)
    return _normal_one_at_a_time(gen, n, mean, std).astype(dtype)


# -- integers --------------------------------------------------------------------------------

def random_from_to(gen, n, low, high):
    """``n`` integers in [low, high) as int64: uniform_int_from_to_distribution, whose words are
    64-bit from a range of 2**28 up (computed in uint64, wrapping as C does)."""
    span = (high - low) % 2**64
    words = gen.random64(n) if span >= 2**28 else gen.random(n)
    return ((words % np.uint64(span)) + np.uint64(low % 2**64)).view(np.int64)


def random_full(gen, n, dtype):
    """``random_()`` with no range: uniform_int_distribution (0 .. the dtype's largest value, or
    2**mantissa bits for floats); int64 and float64 take 64-bit words."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (gen.random(n) & np.uint64(1)).astype(np.bool_)
    wide = dtype in (np.int64, np.float64)
    words = gen.random64(n) if wide else gen.random(n)
    if dtype.kind == "f":
        top = 2 ** (np.finfo(dtype).nmant + 1) + 1  # std::numeric_limits<T>::digits counts the hidden bit
    else:
        top = int(np.iinfo(dtype).max) + 1
    return (words % np.uint64(top)).astype(dtype)


def uniform_unit_53(gen, n):
    """``n`` doubles in [0, 1): uniform_real_distribution<double>(0, 1), 53 bits of a 64-bit word."""
    return (gen.random64(n) & _LOW_53).astype(np.float64) * 2.0**-53


def bernoulli_scalar(gen, n, p):
    """``n`` draws of 0/1 (as bool), each 1 with probability ``p``: bernoulli_distribution<double>."""
    return uniform_unit_53(gen, n) < p


def bernoulli_tensor(gen, probabilities):
    """One 0/1 draw (as bool) per probability, in order: bernoulli_distribution<float> for float32
    (and float16) probabilities, <double> for float64 ones."""
    p = probabilities.ravel()
    if p.dtype == np.float64:
        return uniform_unit_53(gen, p.size) < p
    u = (gen.random(p.size) & _LOW_24).astype(np.float32) * np.float32(2.0**-24)
    return u < p.astype(np.float32)


def exponential(gen, n, dtype, lambd=1.0):
    """``n`` exponential numbers: exponential_distribution<double>, then rounded to ``dtype``."""
    u = uniform_unit_53(gen, n)
    return ((-1.0 / lambd) * exact_math.log1p(-u)).astype(dtype)


def multinomial_with_replacement(gen, rows, n_sample):
    """``n_sample`` categories per row of ``rows`` (2-d, non-negative), drawn with replacement:
    multinomial_with_replacement_apply (aten/src/ATen/native/cpu/MultinomialKernel.cpp)."""
    out = np.empty((rows.shape[0], n_sample), np.int64)
    for i, row in enumerate(rows):
        cumulative = np.cumsum(row, dtype=np.float32 if row.dtype == np.float16 else row.dtype)  # one by one, as C
        cumulative = cumulative / cumulative[-1]
        cumulative[-1] = 1
        out[i] = np.searchsorted(cumulative.astype(np.float64), uniform_unit_53(gen, n_sample), side="left")
    return out


def randperm(gen, n):
    """0 .. n-1 shuffled: randperm_cpu. The n - 1 words are drawn at once; the swaps depend on
    each other, so they run one after another (a plain loop over a list: ~5 ms for 60,000)."""
    steps = np.arange(max(n - 1, 0), dtype=np.uint64)
    targets = (gen.random(steps.size) % (np.uint64(n) - steps) + steps).tolist()
    order = list(range(n))
    for i, j in enumerate(targets):
        order[i], order[j] = order[j], order[i]
    return np.array(order, dtype=np.int64)
