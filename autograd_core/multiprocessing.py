"""``torch.multiprocessing``: Python's ``multiprocessing``, which is all it is for CPU tensors here.

PyTorch's module wraps Python's to send tensors between processes through shared memory. The
engine's tensors are NumPy arrays, which ``pickle`` copies between processes as they are: so
``mp.Pool(2).map(dataset.__getitem__, batches)`` (fastai's foundations notebook builds a loader this
way) gives the same batches, copied instead of shared. What needs shared memory (a tensor changed in
one process and seen in another, ``share_memory_()``) is not here.
"""
from multiprocessing import *  # noqa: F403 (the module's whole public surface, as PyTorch re-exports it)
from multiprocessing import get_all_start_methods, get_start_method, set_start_method  # noqa: F401

from . import beyond as _beyond

__getattr__ = _beyond.module_getattr("torch.multiprocessing")  # (spawn, sharing strategies: not here)
