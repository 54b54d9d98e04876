"""``torch.Generator``: PyTorch's CPU random-number generator, the Mersenne Twister (MT19937).

    g = torch.Generator().manual_seed(0)
    torch.rand(2, generator=g)          # tensor([0.4963, 0.7682]), as in PyTorch

The stream of 32-bit words is the standard MT19937 (aten/src/ATen/core/MT19937RNGEngine.h):
``manual_seed(s)`` fills its 624-word state from the low 32 bits of ``s`` (``init_genrand``);
NumPy's ``MT19937`` bit generator then draws the same words, fast. ``random64()`` joins two words,
the first as the high half (aten/src/ATen/CPUGeneratorImpl.cpp). random_kernels.py turns words
into numbers.

``get_state()`` is PyTorch's state, byte for byte: the 5056-byte ``CPUGeneratorImplState``
(seed, the twister's words and position, and the normal number kept from the last Box-Muller
pair), so a state saved by PyTorch can be loaded here and the other way round.

The default generator behind ``torch.rand`` and friends is ``default_generator``; like
PyTorch's, it starts from a seed that differs in every process. A new ``Generator()`` starts
from PyTorch's fixed default seed.
"""
from __future__ import annotations

import numbers
import os

import numpy as np

from . import dtypes
from .dtypes import ShownAs
from .tensor import Tensor

_N = 624  # MT19937's state: 624 32-bit words
_DEFAULT_SEED = 67280421310721  # c10::detail::default_rng_seed_val: a new Generator() starts here

# CPUGeneratorImplState (CPUGeneratorImpl.cpp) as C lays it out: the legacy part, then two fields
_LEGACY = np.dtype([("the_initial_seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
                    ("state", "<u8", (_N,)), ("normal_x", "<f8"), ("normal_y", "<f8"), ("normal_rho", "<f8"),
                    ("normal_is_valid", "<i4")], align=True)
_STATE = np.dtype([("legacy_pod", _LEGACY), ("next_float_normal_sample", "<f4"),
                   ("is_next_float_normal_sample_valid", "?")], align=True)  # 5056 bytes


def _init_genrand(seed):
    """The twister's first state from a 32-bit seed (MT19937RNGEngine.h, init_with_uint32)."""
    key = [seed & 0xFFFFFFFF]
    for j in range(1, _N):
        key.append((1812433253 * (key[-1] ^ (key[-1] >> 30)) + j) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


def nondeterministic_seed():
    """A fresh 64-bit seed from the operating system, as PyTorch's ``seed()``."""
    return int.from_bytes(os.urandom(8), "little")


class Generator(metaclass=ShownAs):
    _shown_as = "torch._C.Generator"  # as PyTorch prints its type

    def __init__(self, device="cpu"):
        dtypes.on_cpu(device)
        self._set_seed(_DEFAULT_SEED)

    def _set_seed(self, seed):
        """CPUGeneratorImpl::set_current_seed: a new twister, and no kept normal number."""
        self._initial_seed = seed % 2**64
        self._twister = np.random.MT19937()
        self._twister.state = {"bit_generator": "MT19937", "state": {"key": _init_genrand(seed), "pos": _N}}
        self._untouched = True  # no word drawn since seeding (PyTorch's state then says next = 0)
        self.next_double_normal = None  # the second number of the last Box-Muller pair, not yet used
        self._next_float_normal = None  # (kept only to give a loaded state back unchanged)

    # -- the stream ---------------------------------------------------------------------------

    def random(self, n):
        """``n`` 32-bit words (as uint64, ready for arithmetic): CPUGeneratorImpl::random."""
        if n:
            self._untouched = False
        return self._twister.random_raw(n)

    def random64(self, n):
        """``n`` 64-bit numbers, each two words with the first as the high half: random64."""
        words = self.random(2 * n)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    # -- seeds --------------------------------------------------------------------------------

    def manual_seed(self, seed):
        """Start the stream from ``seed`` (an int in [-2**63, 2**64); negative ones wrap); returns self."""
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._set_seed(seed)
        return self

    def seed(self):
        """Seed from the operating system's randomness; return that seed."""
        seed = nondeterministic_seed()
        self._set_seed(seed)
        return seed

    def initial_seed(self):
        return self._initial_seed

    @property
    def device(self):
        return dtypes.device("cpu")

    # -- PyTorch's state bytes ----------------------------------------------------------------

    def get_state(self):
        """The state as PyTorch's 5056-byte ``torch.ByteTensor``."""
        key, pos = self._twister.state["state"]["key"], self._twister.state["state"]["pos"]
        record = np.zeros((), _STATE)
        legacy = record["legacy_pod"]
        legacy["the_initial_seed"] = self._initial_seed
        legacy["seeded"] = 1
        # PyTorch counts down ``left`` to the next twist and up ``next`` through the words
        legacy["left"], legacy["next"] = (1, 0) if self._untouched else (_N + 1 - pos, pos)
        legacy["state"] = key
        if self.next_double_normal is not None:
            legacy["normal_is_valid"], legacy["normal_y"] = 1, self.next_double_normal
        if self._next_float_normal is not None:
            record["is_next_float_normal_sample_valid"] = True
            record["next_float_normal_sample"] = self._next_float_normal
        return Tensor._make(np.frombuffer(record.tobytes(), np.uint8).copy())

    def set_state(self, new_state):
        """Load a state from ``get_state()`` (here or in PyTorch); returns self."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state._data.size != _STATE.itemsize:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE.itemsize} but found the input "
                               f"RNG state size to be {new_state._data.size}")
        record = np.frombuffer(new_state._data.tobytes(), _STATE)[0]
        legacy = record["legacy_pod"]
        left, next_ = int(legacy["left"]), int(legacy["next"])
        if not legacy["seeded"] or not 0 < left <= _N or next_ > _N:
            raise RuntimeError("Invalid mt19937 state")
        self._initial_seed = int(legacy["the_initial_seed"])
        pos = _N if left == 1 else next_  # left == 1: the next word twists first
        self._twister.state = {"bit_generator": "MT19937",
                               "state": {"key": legacy["state"].astype(np.uint32), "pos": pos}}
        self._untouched = left == 1 and next_ == 0
        self.next_double_normal = float(legacy["normal_y"]) if legacy["normal_is_valid"] else None
        valid_float = record["is_next_float_normal_sample_valid"]
        self._next_float_normal = float(record["next_float_normal_sample"]) if valid_float else None
        return self

    def clone_state(self):
        """A new generator in this one's state."""
        return Generator().set_state(self.get_state())

    def __repr__(self):
        return f"<torch._C.Generator object at {hex(id(self))}>"


default_generator = Generator()
default_generator._set_seed(nondeterministic_seed())  # PyTorch's default differs in every process
