"""``torch.Generator``: a random-number stream of its own, for repeatable shuffling.

    g = torch.Generator().manual_seed(0)
    DataLoader(dataset, batch_size=10, shuffle=True, generator=g)   # the same order every run

The numbers come from NumPy's generator, so they are repeatable here but not PyTorch's.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .dtypes import ShownAs


class Generator(metaclass=ShownAs):
    _shown_as = "torch._C.Generator"  # as PyTorch prints its type

    def __init__(self, device="cpu"):
        dtypes.on_cpu(device)
        self._seed = int(np.random.SeedSequence().entropy % (1 << 63))
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self):
        return self.manual_seed(int(np.random.SeedSequence().entropy % (1 << 63)))._seed

    def initial_seed(self):
        return self._seed

    @property
    def device(self):
        return dtypes.device("cpu")


