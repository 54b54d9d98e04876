"""``optim.SGD``: stochastic gradient descent, with momentum, Nesterov momentum and weight decay."""
from __future__ import annotations

from .. import grad_mode
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """``p -= lr * p.grad`` for every parameter (the update of lesson 9), and its variants.

    With ``momentum`` the step follows a running sum of gradients (``buf = momentum * buf + grad``);
    ``nesterov`` looks one step ahead; ``weight_decay`` adds ``weight_decay * p`` to each gradient.
    The arithmetic is PyTorch's, operation for operation.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    @grad_mode.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad if not group["maximize"] else -p.grad
                if group["weight_decay"] != 0:
                    grad = grad.add(p, alpha=group["weight_decay"])
                if momentum != 0:
                    state = self.state.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = grad.clone().detach()
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
                p.add_(grad, alpha=-lr)
        return loss
