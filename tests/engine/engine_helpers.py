"""Shared helpers for the engine tests.

The central one is ``same(program)``: ``program`` is a function of a module
``m``; it is run once with ``m = autograd_core`` and once with ``m = torch``,
and what it returned (tensors with their dtype, values, repr and grad_fn,
graph nodes, numbers, exceptions) and which warnings it raised must agree.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import autograd_core
from torch_needed import import_torch  # noqa: F401 (the engine's tests import it from here too)


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\s*$", re.S)


def clean(text):
    """A message as the two engines can share it: no addresses, no C++ source location."""
    return _ADDRESS.sub("0xADDR", _TRIGGERED.sub("", str(text)))


class Raised:
    """An exception a program raised, by type name and cleaned message."""

    def __init__(self, exc):
        self.type = type(exc).__name__
        self.message = clean(exc)

    def __repr__(self):
        return f"Raised({self.type}: {self.message!r})"


def describe(obj, m, depth=0):
    """Turn what a program returned into plain data that is comparable across engines."""
    if isinstance(obj, m.Tensor):
        return {
            "kind": "tensor",
            "dtype": repr(obj.dtype),
            "shape": tuple(obj.shape),
            "values": obj.detach().numpy().copy(),
            "requires_grad": obj.requires_grad,
            "is_leaf": obj.is_leaf,
            "grad_fn": describe_node(obj.grad_fn, depth=1),
            "repr": clean(repr(obj)),
        }
    if isinstance(obj, m.Size):
        return ("Size", tuple(obj), repr(obj))
    if isinstance(obj, m.dtype):
        return ("dtype", repr(obj))
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__ if type(obj) in (tuple, list) else "namedtuple",
                [describe(o, m, depth + 1) for o in obj])
    if isinstance(obj, dict):
        return {k: describe(v, m, depth + 1) for k, v in obj.items()}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), obj.copy())
    if isinstance(obj, np.generic):
        return ("numpy scalar", str(obj.dtype), obj.item())
    if hasattr(obj, "next_functions"):
        return describe_node(obj, depth=3)
    return ("object", type(obj).__name__)


def describe_node(node, depth=3):
    """A node's name and, ``depth`` levels down, the names along its next_functions."""
    if node is None:
        return None
    if depth == 0:
        return node.name()
    return (node.name(), tuple(
        (describe_node(child, depth - 1), nr) for child, nr in node.next_functions
    ))


def outcome(program, m):
    """Run ``program(m)``: (what it returned or raised, the warnings it raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = describe(program(m), m)
        except Exception as exc:  # the error itself is what is compared
            result = Raised(exc)
    seen = [(w.category.__name__, clean(w.message)) for w in caught]
    return result, seen


def assert_alike(ours, theirs, path="result"):
    """Recursive comparison: floats within the precision of their dtype, the rest exactly."""
    if isinstance(theirs, Raised):
        assert isinstance(ours, Raised), f"{path}: torch raised {theirs}, autograd_core returned {ours!r}"
        assert (ours.type, ours.message) == (theirs.type, theirs.message), f"{path}: {ours} != {theirs}"
        return
    assert not isinstance(ours, Raised), f"{path}: autograd_core raised {ours}, torch returned {theirs!r}"
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), f"{path}: {ours!r} != {theirs!r}"
        if theirs.get("kind") == "tensor":
            for key in ("dtype", "shape", "requires_grad", "is_leaf", "grad_fn"):
                assert ours[key] == theirs[key], f"{path}.{key}: {ours[key]!r} != {theirs[key]!r}"
            assert_close_arrays(ours["values"], theirs["values"], f"{path}.values")
            assert ours["repr"] == theirs["repr"], f"{path}.repr:\n{ours['repr']}\n!=\n{theirs['repr']}"
            return
        for key in theirs:
            assert_alike(ours[key], theirs[key], f"{path}[{key!r}]")
        return
    if isinstance(theirs, tuple) and len(theirs) == 3 and theirs[0] == "ndarray":
        assert isinstance(ours, tuple) and ours[:2] == theirs[:2], f"{path}: {ours!r} != {theirs!r}"
        assert_close_arrays(ours[2], theirs[2], path)
        return
    if isinstance(theirs, tuple) and len(theirs) == 2 and isinstance(theirs[1], list):
        assert isinstance(ours, tuple) and ours[0] == theirs[0], f"{path}: {ours!r} != {theirs!r}"
        assert len(ours[1]) == len(theirs[1]), f"{path}: lengths {len(ours[1])} != {len(theirs[1])}"
        for i, (a, b) in enumerate(zip(ours[1], theirs[1])):
            assert_alike(a, b, f"{path}[{i}]")
        return
    if isinstance(theirs, float):
        assert type(ours) is float, f"{path}: {ours!r} is not a float like {theirs!r}"
        assert np.isclose(ours, theirs, rtol=1e-5, atol=1e-6, equal_nan=True), f"{path}: {ours} != {theirs}"
        return
    assert type(ours) is type(theirs) and ours == theirs, f"{path}: {ours!r} != {theirs!r}"


def assert_close_arrays(a, b, path):
    assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {a.dtype}{a.shape} != {b.dtype}{b.shape}"
    if a.dtype.kind == "f":
        rtol, atol = (1e-5, 1e-6) if a.dtype.itemsize <= 4 else (1e-10, 1e-12)
        # An element that is a sum of large terms which cancel carries the rounding of those terms, not
        # of its own size (a second derivative of a convolution: terms of 3e4 summing to near 0 differ by
        # 9e-10 between two summation orders, on some CPUs): the absolute tolerance grows with the array's scale.
        finite = np.abs(b[np.isfinite(b)])
        atol *= max(1.0, float(finite.max()) if finite.size else 1.0)
        assert np.allclose(a, b, equal_nan=True, rtol=rtol, atol=atol), f"{path}:\n{a}\n!=\n{b}"
    else:
        assert np.array_equal(a, b), f"{path}:\n{a}\n!=\n{b}"


def same(program, check_warnings=True):
    """Run ``program(m)`` with both engines and require the same outcome; return ours.

    ``check_warnings=False`` for programs whose PyTorch warning is issued only
    once per process (so whether it shows depends on which tests ran before).
    """
    import torch

    ours, our_warnings = outcome(program, autograd_core)
    theirs, their_warnings = outcome(program, torch)
    assert_alike(ours, theirs)
    if check_warnings:
        assert our_warnings == their_warnings, f"warnings: {our_warnings} != {their_warnings}"
    return ours


def numerical_grad(f, x, eps=1e-6):
    """Central finite differences of a scalar function ``f`` of a float64 array ``x``."""
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        plus = f(x)
        flat[i] = old - eps
        minus = f(x)
        flat[i] = old
        gflat[i] = (plus - minus) / (2 * eps)
    return g
