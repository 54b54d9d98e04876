"""``torch.save`` and ``torch.load``: tensors (and dicts, lists of them, state_dicts) to a file and back.

The file is a pickle. By default ``load`` (like PyTorch's since 2.6, ``weights_only=True``)
rebuilds only tensors, NumPy arrays, numbers, strings and containers, and refuses anything
else: unpickling arbitrary objects can run code, so a file from elsewhere cannot.
"""
from __future__ import annotations

import collections
import io
import pickle

# What a file of weights may contain: (module, name) of everything a tensor, a state_dict or an
# optimizer's state needs to be rebuilt.
_ALLOWED = {
    ("autograd_core.tensor", "_rebuild"), ("collections", "OrderedDict"),
    ("numpy", "dtype"), ("numpy", "ndarray"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
}


class _WeightsUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED or (module.startswith("numpy") and name.endswith("DType")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Weights only load failed. Unsupported global: GLOBAL {module}.{name} was not an allowed global by "
            "default. Load with weights_only=False only if you trust the source of the file."
        )


def save(obj, f, pickle_module=pickle, pickle_protocol=4, _use_new_zipfile_serialization=True):
    """Write ``obj`` to ``f`` (a file name or a binary file object)."""
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "wb") as file:
            pickle_module.dump(obj, file, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **kwargs):
    """Read back what ``save`` wrote (``map_location`` is accepted: everything is on the CPU)."""
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "rb") as file:
            data = file.read()
    else:
        data = f.read()
    if weights_only:
        return _WeightsUnpickler(io.BytesIO(data)).load()
    return pickle.loads(data)


__all__ = ["save", "load"]
