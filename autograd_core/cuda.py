"""``torch.cuda`` on a machine without a GPU: tutorials ask ``torch.cuda.is_available()`` first."""
from . import beyond as _beyond


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    """Seeding a GPU that is not there does nothing, as in PyTorch."""


manual_seed_all = manual_seed


def synchronize(device=None):
    raise AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    raise AssertionError("Torch not compiled with CUDA enabled")

__getattr__ = _beyond.module_getattr("torch.cuda")  # what PyTorch has here and the engine has not: its error
