"""Warnings worded as PyTorch's, with the suffix PyTorch adds to those its C++ code raises.

A warning raised in PyTorch's C++ code ends in ``(Triggered internally at <its source file>:<line>.)``;
the suffix below is the one PyTorch 2.13's CPU wheels print (built in a checkout at
``/__w/pytorch/pytorch``). Some of these warnings show once per process (``TORCH_WARN_ONCE``):
``warn(..., once=True)``.
"""
from __future__ import annotations

import warnings

# Where PyTorch 2.13 raises each warning the engine repeats: the file and line in its suffix.
WHERE = {
    "x.T": "aten/src/ATen/native/TensorShape.cpp:4314",
    "meshgrid": "aten/src/ATen/native/TensorShape.cpp:4215",
    "item": "torch/csrc/autograd/generated/python_variable_methods.cpp:822",
    "create_graph": "torch/csrc/autograd/engine.cpp:1307",
    "non-leaf grad": "build/aten/src/ATen/core/TensorBody.h:493",
    "out resized": "aten/src/ATen/native/Resize.cpp:30",
    "index_put_": "aten/src/ATen/native/TensorAdvancedIndexing.cpp:976",
    "masked_fill_": "aten/src/ATen/native/TensorAdvancedIndexing.cpp:2450",
    "anomaly": "torch/csrc/autograd/python_anomaly_mode.cpp:122",
    "anomaly without trace": "torch/csrc/autograd/python_anomaly_mode.cpp:100",
}
_shown_once = set()


def warn(message, where, *, once=False, category=UserWarning, stacklevel=2):
    """Warn with PyTorch's text: ``message`` and the suffix of ``WHERE[where]``."""
    if once:
        if where in _shown_once:
            return
        _shown_once.add(where)
    warnings.warn(f"{message} (Triggered internally at /__w/pytorch/pytorch/{WHERE[where]}.)", category,
                  stacklevel=stacklevel + 1)
