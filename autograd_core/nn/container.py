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


class ModuleList(Module):
    """A list of modules whose parameters the owner finds (a plain Python list would hide them):
    ``self.blocks = nn.ModuleList([Block() for _ in range(6)])``, then ``for block in self.blocks``."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _index(self, index):
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} is out of range")
        return index % len(self)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[str(self._index(index))]

    def __setitem__(self, index, module):
        self.add_module(str(self._index(index)), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def __repr__(self):
        """Runs of equal lines are printed once, as ``(0-5): 6 x Block(...)`` (as PyTorch prints them)."""
        lines = [repr(m) for m in self._modules.values()]
        if not lines:
            return "ModuleList()"
        rows, start = [], 0
        for i in range(1, len(lines) + 1):
            if i == len(lines) or lines[i] != lines[start]:
                count = i - start
                label = f"({start})" if count == 1 else f"({start}-{i - 1}): {count} x"
                rows.append(f"{label}: {_indent(lines[start])}" if count == 1 else f"{label} {_indent(lines[start])}")
                start = i
        return "ModuleList(\n  " + "\n  ".join(rows) + "\n)"


class ModuleDict(Module):
    """A dict of modules (in the order they were put in) whose parameters the owner finds."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        for key, module in (modules.items() if hasattr(modules, "items") else modules):
            self[key] = module


def _indent(text):
    return text.replace("\n", "\n  ")
