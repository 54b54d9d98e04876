"""``torch.backends.cuda``: no CUDA here (``torch.backends.cuda.matmul.allow_tf32`` can be set)."""
from types import SimpleNamespace

matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True)


def is_built():
    return False
