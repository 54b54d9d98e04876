"""Drawing from probabilities: ``torch.bernoulli``, ``torch.multinomial``, ``x.bernoulli_()``,
``x.exponential_()``, with PyTorch's numbers after the same seed (random.py and
random_kernels.py say how). Dropout (``nn/dropout.py``) draws its masks with ``bernoulli_``.
"""
from __future__ import annotations

import numpy as np

from . import grad_mode, random
from .function import Op
from .functional import register
from .inplace import write
from .tensor import Tensor


class BernoulliBackward0(Op):
    """``bernoulli(p)``: a draw has no gradient with respect to its probabilities (zeros, as in PyTorch)."""

    @staticmethod
    def forward(ctx, input, generator):
        return random.fill_bernoulli(np.empty_like(input._data), input._data, generator)

    @staticmethod
    def backward(ctx, grad):
        return (grad * 0,)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0 or 1 for each element: 1 with the probability the element holds (or ``p`` for all)."""
    if p is not None:
        return bernoulli_(Tensor._make(np.empty_like(input._data)), p, generator=generator)
    return BernoulliBackward0.apply(input, generator=generator)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0s and 1s, each 1 with probability ``p`` (a number or a tensor of probabilities)."""
    p = p._data if isinstance(p, Tensor) else p
    with grad_mode.no_grad():
        return write(self, lambda t: Tensor._make(random.fill_bernoulli(self._data, p, generator)))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential numbers of rate ``lambd`` (mean ``1/lambd``)."""
    with grad_mode.no_grad():
        return write(self, lambda t: Tensor._make(random.fill_exponential(self._data, lambd, generator)))


register("bernoulli", bernoulli)
register("multinomial", random.multinomial)
register("bernoulli_", bernoulli_, function=False)
register("exponential_", exponential_, function=False)
