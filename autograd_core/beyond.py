"""What PyTorch has and the engine has not: a one-line ``NotImplementedError`` that names it.

    >>> torch.fft                       # (the engine as torch)
    NotImplementedError: torch.fft is beyond autograd_core; the engine covers ...

``torch_names.py`` lists the public names of PyTorch 2.13's namespaces (``torch``, ``torch.nn``,
``torch.nn.functional``, ``Tensor``'s attributes, ...) and its submodules. A name PyTorch has and the
engine lacks raises ``NotImplementedError`` naming it; a name PyTorch lacks too raises the
``AttributeError`` PyTorch raises. The error is both a ``NotImplementedError`` and an
``AttributeError``, so ``hasattr(torch, "compile")`` and ``getattr(torch.backends, "mps", None)``
(how scripts ask what is there) answer "not here" instead of failing.

Regenerate the list with PyTorch installed: ``python -c "from autograd_core import beyond; beyond._record()"``.
"""
from __future__ import annotations

import builtins
import dis
import sys
from pathlib import Path

from . import torch_names as _recorded

NAMES_FILE = Path(__file__).with_name("torch_names.py")
NAMESPACES = {  # the namespace as a script names it -> how PyTorch's AttributeError names its owner
    "torch": "module 'torch'", "torch.nn": "module 'torch.nn'", "torch.nn.functional": "module 'torch.nn.functional'",
    "torch.nn.init": "module 'torch.nn.init'", "torch.optim": "module 'torch.optim'",
    "torch.autograd": "module 'torch.autograd'", "torch.cuda": "module 'torch.cuda'",
    "torch.backends": "module 'torch.backends'", "torch.utils": "module 'torch.utils'",
    "torch.utils.data": "module 'torch.utils.data'", "Tensor": "'Tensor' object",
}
COVERS = ("the engine covers CPU tensors, autograd, torch.nn's common layers and losses, torch.optim's common "
          "optimizers and schedulers, torch.utils.data (see docs/engine.md, 'Running PyTorch scripts')")
_names = {}


def torch_names(namespace):
    if not _names:
        _names.update((k, frozenset(v.split())) for k, v in _recorded.NAMES.items())
    return _names.get(namespace, frozenset())


class NotImplementedError(builtins.NotImplementedError):  # noqa: A001 (printed as PyTorch users know it)
    """A feature of PyTorch that the engine does not have (what ``from torch.fft import fft`` raises)."""


class BeyondAttribute(NotImplementedError, AttributeError):
    """The same, for ``torch.fft`` or ``x.stft``: also an ``AttributeError``, so that ``hasattr`` says no."""


for _error in (NotImplementedError, BeyondAttribute):  # a traceback's last line reads "NotImplementedError: ..."
    _error.__module__, _error.__name__, _error.__qualname__ = "builtins", "NotImplementedError", "NotImplementedError"


def beyond(feature):
    return BeyondAttribute(f"{feature} is beyond autograd_core; {COVERS}")


def missing(namespace, name, owner=None):
    """The error for ``namespace.name`` that the engine lacks (``owner``: the object, for an AttributeError)."""
    if not name.startswith("_") and (name in torch_names(namespace) or f"{namespace}.{name}" in torch_names("modules")):
        return beyond(f"{namespace}.{name}")
    what = NAMESPACES.get(namespace, f"module '{namespace}'")
    if owner is not None and namespace == "Tensor":
        what = "'Parameter' object" if owner._is_parameter else f"'{type(owner).__name__}' object"
    return AttributeError(f"{what} has no attribute '{name}'")


def module_getattr(namespace):
    """A module's ``__getattr__`` (PEP 562): called only for names the module lacks."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module '{namespace}' has no attribute '{name}'")
        error = missing(namespace, name)
        if isinstance(error, BeyondAttribute) and _importing_from(sys._getframe(1)):
            raise NotImplementedError(*error.args) from None
        raise error

    return __getattr__


def _importing_from(frame):
    """Is ``frame`` running ``from module import name``? Python turns an ``AttributeError`` raised
    there into "ImportError: cannot import name ... (a path inside the engine)", so the one-line
    error is raised there as a plain ``NotImplementedError``."""
    return frame.f_code.co_code[frame.f_lasti] == _IMPORT_FROM


_IMPORT_FROM = dis.opmap["IMPORT_FROM"]


def names_of_installed_torch():
    """{namespace: sorted public names} of the installed PyTorch (what torch_names.py records)."""
    import importlib
    import pkgutil

    import torch

    names = {ns: sorted(n for n in dir(torch.Tensor if ns == "Tensor" else importlib.import_module(ns))
                        if not n.startswith("_")) for ns in NAMESPACES}
    modules = set()
    for package in ("torch", "torch.nn", "torch.utils", "torch.autograd", "torch.backends", "torch.optim"):
        path = importlib.import_module(package).__path__
        modules.update(f"{package}.{m.name}" for m in pkgutil.iter_modules(path) if not m.name.startswith("_"))
    names["modules"] = sorted(modules)
    return names


def _record():  # run by hand, with PyTorch installed
    import torch

    names = names_of_installed_torch()
    version = torch.__version__.split("+")[0]
    lines = [f'"""The public names of PyTorch {version}\'s namespaces (written by ``autograd_core.beyond._record()``)."""',
             "NAMES = {"]
    for namespace, found in names.items():
        lines.append(f"    {namespace!r}: (")
        row = ""
        for name in found:
            if len(row) + len(name) > 100:
                lines.append(f"        {row!r}")
                row = ""
            row += name + " "
        lines += [f"        {row!r}", "    ),"]
    NAMES_FILE.write_text("\n".join(lines + ["}", ""]), encoding="utf-8")
