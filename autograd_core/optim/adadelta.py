"""``optim.Adadelta``: steps sized by running averages of squared gradients and of squared steps."""
from __future__ import annotations

from .. import grad_mode
from ..creation import tensor, zeros_like
from .optimizer import Optimizer


class Adadelta(Optimizer):
    """``square_avg = rho * square_avg + (1 - rho) * grad ** 2``;
    ``delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * grad``;
    ``acc_delta = rho * acc_delta + (1 - rho) * delta ** 2``; ``p -= lr * delta``.
    The arithmetic is PyTorch's, operation for operation."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    @grad_mode.no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            rho, eps = group["rho"], group["eps"]
            for p, grad, state in self._gradients(group):
                if not state:
                    state["step"] = tensor(0.0)
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                state["step"] += 1
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_()
                delta.div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-group["lr"])
        return loss
