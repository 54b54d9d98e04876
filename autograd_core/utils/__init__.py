"""``torch.utils``: only ``utils.data`` (datasets and the loader that batches them)."""
from . import data
from .. import beyond as _beyond

__getattr__ = _beyond.module_getattr("torch.utils")  # what PyTorch has here and the engine has not: its error
