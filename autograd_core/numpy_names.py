"""NumPy's argument names, which PyTorch accepts too: ``x.sum(axis=0)``, ``x.mean(keepdims=True)``.

PyTorch's argument parser takes ``axis`` for ``dim`` and ``keepdims`` for ``keepdim`` in every
function that has those arguments (d2l's chapters use them). Giving both names is PyTorch's
TypeError for an unexpected keyword.
"""
from __future__ import annotations

import functools
import inspect

_ALIASES = (("axis", "dim"), ("keepdims", "keepdim"))


def accepts_numpy_names(function):
    """Wrap ``function`` (which has ``dim``/``keepdim``) so that ``axis``/``keepdims`` work too."""
    name = function.__name__
    parameters = list(inspect.signature(function).parameters)
    # how many positional arguments it takes to reach each of the function's own names
    reached_at = {own: parameters.index(own) + 1 for _, own in _ALIASES if own in parameters}

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if kwargs:  # the common call has none: nothing to rename
            for alias, own in _ALIASES:
                if alias in kwargs:
                    if own in kwargs or len(args) >= reached_at.get(own, len(args) + 1):
                        raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
                    kwargs[own] = kwargs.pop(alias)
        return function(*args, **kwargs)

    return wrapper
