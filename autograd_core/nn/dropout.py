"""Dropout: during training, each element is zeroed with probability ``p`` and the rest are
scaled by ``1/(1-p)``, so the expected value is unchanged; in evaluation it does nothing.

    torch.manual_seed(0)
    nn.Dropout(0.5)(torch.ones(4))     # tensor([0., 0., 2., 0.]): PyTorch's mask, bit for bit

The mask is PyTorch's: ``bernoulli_(1 - p)`` on a tensor of the input's shape (one 53-bit
uniform per element, sampling.py), divided by ``1 - p`` in the input's dtype, then multiplied
in (the node is ``MulBackward0``, as PyTorch's on the CPU).
"""
from __future__ import annotations

import numpy as np

from .. import random
from ..tensor import Tensor
from .module import Module


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)`` (when ``training``)."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        noise = Tensor._make(np.zeros((), input._data.dtype))
    else:
        mask = random.fill_bernoulli(np.empty_like(input._data), 1 - p)
        if input._data.dtype.kind != "f":  # PyTorch draws the mask, then cannot divide it in place
            raise RuntimeError(f"result type Float can't be cast to the desired output type {input.dtype.legacy_name[:-6]}")
        keep = np.asarray(1 - p).astype(input._data.dtype)  # (1 - p) as the dtype, as PyTorch's div_ takes it
        noise = Tensor._make(mask / keep)
    return input.mul_(noise) if inplace else input * noise


class Dropout(Module):
    """``dropout`` in training mode (``model.train()``), nothing in evaluation (``model.eval()``)."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
