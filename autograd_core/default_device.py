"""``torch.set_default_device`` and ``torch.get_default_device``: the CPU is the only one here."""
from . import dtypes


def set_default_device(device):
    """Where new tensors go; ``set_default_device("cpu")`` (what tutorials write) changes nothing."""
    if device is not None:
        dtypes.on_cpu(device)


def get_default_device():
    return dtypes.device("cpu")
