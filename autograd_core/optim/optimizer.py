"""``Optimizer``: what every optimizer shares — the parameters it updates and ``zero_grad``.

Lesson 9's loop ended with

    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad = None; b.grad = None

An optimizer holds the list ``[w, b]`` (in ``param_groups``, with the settings such as
``lr``); ``step()`` is the ``no_grad`` update and ``zero_grad()`` the reset of ``.grad``.
"""
from __future__ import annotations

from .. import grad_mode
from ..tensor import Tensor

# A setting the caller must give (PyTorch's ``required``): SGD has no default learning rate.
required = type("_RequiredParameter", (), {"__repr__": lambda self: "<required parameter>"})()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = {}  # per parameter: what the method remembers between steps (momentum, averages)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + "torch." + params.dtype.legacy_name
            )
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        params = param_group["params"]
        param_group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Forget the last gradients: ``p.grad = None`` (so the next backward starts afresh)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        p.grad.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _loss_of(closure):
        """What ``step(closure)`` returns: the loss the closure computes again (with grad on), or None."""
        if closure is None:
            return None
        with grad_mode.enable_grad():
            return closure()

    def _gradients(self, group):
        """``(p, grad, state)`` for each parameter of ``group`` that has a gradient (negated with
        ``maximize``); ``state`` is the parameter's own dict in ``self.state``, made on first use."""
        for p in group["params"]:
            if p.grad is not None:
                yield p, (-p.grad if group.get("maximize") else p.grad), self.state.setdefault(p, {})

    def state_dict(self):
        ids = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [ids.setdefault(id(p), len(ids)) for p in group["params"]]
            groups.append(packed)
        state = {ids[id(p)]: s for p, s in self.state.items() if id(p) in ids}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        params = [p for group in self.param_groups for p in group["params"]]
        for group, saved in zip(self.param_groups, state_dict["param_groups"]):
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {params[i]: dict(s) for i, s in state_dict["state"].items()}

    def __repr__(self):
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}"
            for key in sorted(group):
                if key != "params":
                    text += f"\n    {key}: {group[key]}"
        return text + "\n)"
