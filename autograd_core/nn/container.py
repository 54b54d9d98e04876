"""``nn.Sequential``: layers applied one after the other, named ``"0"``, ``"1"``, ..."""
from __future__ import annotations

import collections

from .module import Module


class Sequential(Module):
    """``Sequential(nn.Linear(2, 1))``: ``net(x)`` runs each layer on the output of the one before;
    ``net[0]`` is the first layer."""

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], collections.OrderedDict):
            for name, layer in layers[0].items():
                self.add_module(name, layer)
        else:
            for i, layer in enumerate(layers):
                self.add_module(str(i), layer)

    def forward(self, input):
        for layer in self._modules.values():
            input = layer(input)
        return input

    def __getitem__(self, index):
        layers = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(collections.OrderedDict(list(self._modules.items())[index]))
        if not -len(layers) <= index < len(layers):
            raise IndexError(f"index {index} is out of range")
        return layers[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self
