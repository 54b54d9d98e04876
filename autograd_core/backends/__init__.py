"""``torch.backends``: what scripts ask before choosing a device. Here there is only the CPU.

    if torch.backends.mps.is_available(): ...       # False: no Apple GPU
    torch.backends.cudnn.benchmark = True           # accepted, changes nothing (no cuDNN)
"""
from . import cuda, cudnn, mps
from .. import beyond as _beyond

__getattr__ = _beyond.module_getattr("torch.backends")  # what PyTorch has here and the engine has not: its error
