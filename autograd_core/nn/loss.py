"""The losses as modules: ``loss = nn.MSELoss(); loss(y_hat, y)``."""
from __future__ import annotations

from . import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class MSELoss(_Loss):
    """Mean squared error: ``mean((input - target) ** 2)``."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_Loss):
    """Softmax of the scores, then minus the log-probability of the right class, averaged."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(reduction=reduction)

    def forward(self, input, target):
        return F.cross_entropy(input, target, reduction=self.reduction)


class NLLLoss(_Loss):
    def forward(self, input, target):
        return F.nll_loss(input, target, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of ``sigmoid(input)``, computed from the logits."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(reduction=reduction)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, reduction=self.reduction)


class BCELoss(_Loss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, reduction=self.reduction)
