"""``nn.DataParallel``: splits a batch across GPUs. With none (as here) it runs the module itself."""
from __future__ import annotations

from .module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []  # no GPUs: PyTorch keeps an empty list and calls the module directly
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
