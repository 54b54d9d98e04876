"""``nn.Module``: a container that finds its parameters by itself.

Lesson 9 kept ``w`` and ``b`` in variables and listed them by hand for the update. A module
does the listing: every ``Parameter`` (or module) assigned as an attribute is recorded, in
order, so ``parameters()`` can hand them all to an optimizer, ``zero_grad()`` can reset
their ``.grad``, and ``state_dict()`` can save their numbers.

    class Line(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(1))    # recorded in self._parameters
        def forward(self, x):
            return x * self.w
    Line()(torch.ones(3))                            # calling a module calls forward
"""
from __future__ import annotations

import collections

from .. import grad_mode
from ..hooks import add_hook
from ..tensor import Tensor
from .parameter import Parameter, is_lazy


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class Module:
    """Base class of every layer and model: subclass it, assign parameters and layers in
    ``__init__``, and say what it computes in ``forward``."""

    training = True

    def __init__(self):
        # object.__setattr__: these three must exist before __setattr__ below can file anything
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        pre_hooks, hooks = self.__dict__.get("_forward_pre_hooks"), self.__dict__.get("_forward_hooks")
        for hook in list(pre_hooks.values()) if pre_hooks else ():
            new = hook(self, args)  # may return new inputs (a tuple, or one input)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        result = self.forward(*args, **kwargs)
        for hook in list(hooks.values()) if hooks else ():
            new = hook(self, args, result)  # may return a new output
            if new is not None:
                result = new
        return result

    def register_forward_pre_hook(self, hook):
        """``hook(module, inputs)`` runs before each ``forward``; returns a handle with ``.remove()``."""
        return add_hook(self.__dict__.setdefault("_forward_pre_hooks", {}), hook)

    def register_forward_hook(self, hook):
        """``hook(module, inputs, output)`` runs after each ``forward``; returns a handle with ``.remove()``."""
        return add_hook(self.__dict__.setdefault("_forward_hooks", {}), hook)

    # -- attributes: parameters and submodules are filed as they are assigned -----------
    def __setattr__(self, name, value):
        parameters = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if parameters is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            parameters[name] = value
        elif isinstance(value, Module):
            if parameters is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            self._modules[name] = value
        elif parameters is not None and name in parameters:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (torch.nn.Parameter or None expected)"
                )
            parameters[name] = None
        elif parameters is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (torch.nn.Module or None expected)")
            self._modules[name] = None
        elif parameters is not None and name in self._buffers:
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        for store in (self.__dict__, self._parameters, self._buffers, self._modules):
            store.pop(name, None)

    def __getattr__(self, name):
        # Only reached when normal lookup fails: parameters, buffers and submodules live in their dicts.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' (torch.nn.Parameter or None required)")
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that belongs to the module's state but is not trained (saved in ``state_dict``)."""
        self._forget(name)
        self._buffers[name] = tensor

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    # -- walking the tree ----------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """This module and every module below it, each once, with dotted names (``"0"``, ``"net.1"``)."""
        memo = set() if memo is None else memo
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(name, parameter)`` pairs, this module's first, then each submodule's in order."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every parameter below this module: what an optimizer is given to update."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- training state ------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Forget the gradients of the last backward: ``.grad = None`` for every parameter."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_()
                    p.grad.zero_()

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def _apply_to_tensors(self, convert):
        with grad_mode.no_grad():
            for module in self.modules():
                for store in (module._parameters, module._buffers):
                    for name, t in store.items():
                        if t is not None:  # (t.data: a lazy layer's parameter has no numbers but an empty tensor)
                            t.data = convert(t.data)
        return self

    def to(self, *args, **kwargs):
        """``model.to("cpu")``, ``model.to(torch.float64)``: parameters converted in place, as in PyTorch."""
        return self._apply_to_tensors(lambda t: t.to(*args, **kwargs) if t.is_floating_point() else t)

    def float(self):
        return self._apply_to_tensors(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply_to_tensors(lambda t: t.double() if t.is_floating_point() else t)

    def cpu(self):
        return self

    def cuda(self, device=None):
        raise AssertionError("Torch not compiled with CUDA enabled")

    # -- saving and loading --------------------------------------------------------------
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """The numbers that define the model, by name: ``{"0.weight": tensor(...), ...}``."""
        state = collections.OrderedDict() if destination is None else destination
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip(".")):
            dotted = f"{module_prefix}." if module_prefix else ""
            for store in (module._parameters, module._buffers):
                for name, t in store.items():
                    if t is not None:  # (a lazy layer's uninitialized ones as they are: no numbers to detach)
                        state[dotted + name] = t if keep_vars or is_lazy(t) else t.detach()
        return state

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy the numbers of ``state_dict`` into this model's parameters and buffers."""
        for module_prefix, module in self.named_modules():
            if hasattr(module, "_lazy_load_hook"):  # a lazy layer's parameters take the given shapes first
                module._lazy_load_hook(state_dict, f"{module_prefix}." if module_prefix else "")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for name, target in own.items():
            if name in state_dict:
                source = state_dict[name]
                if is_lazy(target):  # still without a shape: it was given one without a shape too (nothing to copy)
                    continue
                if tuple(source.shape) != tuple(target.shape):
                    errors.append(
                        f"size mismatch for {name}: copying a param with shape {source.shape} from checkpoint, "
                        f"the shape in current model is {target.shape}."
                    )
                    continue
                with grad_mode.no_grad():
                    target.copy_(source)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- printing --------------------------------------------------------------------------
    def extra_repr(self):
        """What goes between the parentheses of this module's own line (``in_features=2, ...``)."""
        return ""

    def __repr__(self):
        children = [f"({name}): " + _indent(repr(module)) for name, module in self._modules.items()]
        extra = self.extra_repr()
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = (extra.split("\n") if extra else []) + children
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers) | set(self._modules))


def _indent(text):
    return text.replace("\n", "\n  ")


def _typename(value):
    if isinstance(value, Tensor):
        return "torch." + value.dtype.legacy_name
    module = type(value).__module__
    return type(value).__qualname__ if module == "builtins" else f"{module}.{type(value).__qualname__}"
