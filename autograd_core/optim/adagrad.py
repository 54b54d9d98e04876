"""``optim.Adagrad``: each parameter's step shrinks with the sum of its squared gradients so far."""
from __future__ import annotations

from .. import grad_mode
from ..creation import full_like, tensor
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """``sum += grad ** 2``; ``p -= lr / (1 + (step - 1) * lr_decay) * grad / (sqrt(sum) + eps)``.
    As in PyTorch, the sums (and step counts) are made when the optimizer is made, and the
    arithmetic is PyTorch's, operation for operation."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        for name, value in (("learning rate", lr), ("lr_decay value", lr_decay), ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value), ("epsilon value", eps)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = {"step": tensor(0.0), "sum": full_like(p, initial_accumulator_value)}

    @grad_mode.no_grad()
    def step(self, closure=None):
        loss = self._loss_of(closure)
        for group in self.param_groups:
            for p, grad, state in self._gradients(group):
                state["step"] += 1
                step = state["step"].item()
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                state["sum"].addcmul_(grad, grad, value=1)
                std = state["sum"].sqrt().add_(group["eps"])
                p.addcdiv_(grad, std, value=-clr)
        return loss
