"""``torch.get_num_threads()`` and ``torch.set_num_threads(n)``: how many threads PyTorch's kernels
would split work between. The engine computes in one (NumPy's), but where PyTorch's numbers depend
on the split (``arange`` of more than 32,768 floats) the engine splits as PyTorch would.

PyTorch's default: ``OMP_NUM_THREADS`` if set, else the number of physical cores.
"""
from __future__ import annotations

import os
from pathlib import Path


def _physical_cores():
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    cores = set()
    for cpu in cpus:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add(((topology / "physical_package_id").read_text(), (topology / "core_id").read_text()))
        except OSError:
            cores.add(cpu)
    return len(cores) or 1


def _default():
    try:
        return max(1, int(os.environ["OMP_NUM_THREADS"]))
    except (KeyError, ValueError):
        return _physical_cores()


_threads = [None]


def get_num_threads():
    if _threads[0] is None:
        _threads[0] = _default()
    return _threads[0]


def set_num_threads(n):
    if not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads[0] = n
