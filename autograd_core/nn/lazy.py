"""Lazy modules: layers that read their input size from their first input (``nn.LazyLinear``,
``nn.LazyConv2d``, ``nn.LazyBatchNorm1d``, ...).

d2l builds its models as ``nn.LazyLinear(1)``: the number of input features is left open until
data flows. Until then the layer's parameters are ``UninitializedParameter``s (no shape, no
numbers; a batch norm's running statistics are ``UninitializedBuffer``s). The first call
materializes them from the input's shape, initializes them as the ordinary layer would
(``reset_parameters``), and turns the module into that ordinary layer (``LazyLinear`` becomes
``Linear``: its class changes, as in PyTorch, so it prints as one). Until then ``state_dict()``
holds the uninitialized tensors themselves, as PyTorch's does (saving it, or loading it into an
ordinary layer, stops on their missing shape).
"""
from __future__ import annotations

from .parameter import is_lazy


class LazyModuleMixin:
    """Mixed in before the ordinary layer: ``class LazyLinear(LazyModuleMixin, Linear)``."""

    cls_to_become = None  # what the module is once its parameters have their shapes

    def has_uninitialized_params(self):
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def __call__(self, *args, **kwargs):
        # PyTorch does this in a forward pre-hook that removes itself after the first call (so a
        # module whose parameters came from load_state_dict becomes a Linear on its first call too,
        # keeping in_features=0, as in PyTorch)
        self.initialize_parameters(*args, **kwargs)  # (each layer's does nothing once it has its shapes)
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become
            return self(*args, **kwargs)  # called again as what it has become
        return super().__call__(*args, **kwargs)

    def _lazy_load_hook(self, state_dict, prefix):
        """Before ``load_state_dict`` copies the numbers: a parameter without a shape takes the
        shape of the one it is given (PyTorch's hook of the same name)."""
        for name, t in (*self._parameters.items(), *self._buffers.items()):
            given = state_dict.get(prefix + name)
            if is_lazy(t) and given is not None and not is_lazy(given):
                t.materialize(given.shape)
