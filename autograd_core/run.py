"""Run a PyTorch script on the engine, unchanged: ``import torch`` finds ``autograd_core``.

    python -m autograd_core.run train.py --epochs 3      # the script and its arguments, as with python
    %load_ext autograd_core                               # in a notebook: from here on, torch is the engine

``import torch``, ``import torch.nn as nn``, ``from torch.utils.data import DataLoader``, ... all find
the engine's modules (``torch.X`` is ``autograd_core.X``), in this process only: the real PyTorch,
if installed, is untouched on disk and in every other process. Where the script reaches beyond the
engine (``torch.fft``, ``x.stft()``, ``import torch.distributions``), it stops with one line that
names what is missing::

    NotImplementedError: torch.fft is beyond autograd_core; the engine covers ...

Any other error is the script's own, shown as Python shows it (without this runner's frames).
What the engine covers and what it leaves out, and why: docs/engine.md, "Running PyTorch scripts".
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys
import traceback
from pathlib import Path

from . import beyond
from .tensor import Tensor

USAGE = "usage: python -m autograd_core.run SCRIPT.py [ARGUMENTS ...]"


class _EngineAsTorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import torch.X`` -> the engine's ``autograd_core.X``; one of PyTorch's modules the engine
    lacks -> the one-line NotImplementedError; a module PyTorch lacks too -> ModuleNotFoundError."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("autograd_core."):  # `from torch import linalg` looks for autograd_core.linalg
            torch_name = "torch" + fullname[len("autograd_core"):]
            if not _in_engine(fullname) and torch_name in beyond.torch_names("modules"):
                raise beyond.beyond(torch_name)
            return None
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        engine_name = "autograd_core" + fullname[len("torch"):]
        if _in_engine(engine_name):
            return importlib.util.spec_from_loader(fullname, self)
        parent, _, name = fullname.rpartition(".")
        if fullname in beyond.torch_names("modules") or name in beyond.torch_names(parent):
            raise beyond.beyond(fullname)
        return None  # PyTorch has no such module either: Python's ModuleNotFoundError

    def create_module(self, spec):
        return importlib.import_module("autograd_core" + spec.name[len("torch"):])

    def exec_module(self, module):
        """The engine's module ran when it was imported under its own name."""


def _in_engine(name):
    """Is ``autograd_core.a.b`` a module of the engine (a file or a package in its folder)?"""
    path = _PACKAGE.joinpath(*name.split(".")[1:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


_PACKAGE = Path(__file__).parent
_finder = _EngineAsTorch()
_put_aside = {}  # what ``torch`` and ``torch.*`` were before the engine took their place


def engine_as_torch():
    """From now on, in this process, ``import torch`` (and every ``torch.X``) finds the engine."""
    import autograd_core

    if _finder in sys.meta_path:
        return
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        _put_aside[name] = sys.modules.pop(name)
    sys.modules["torch"] = autograd_core
    sys.meta_path.insert(0, _finder)


def torch_back():
    """Undo ``engine_as_torch``: ``import torch`` finds what it found before."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.modules.update(_put_aside)
    _put_aside.clear()


def _one_line(etype, value):
    return f"NotImplementedError: {value}"


_LOOKUPS = {beyond.module_getattr("torch").__code__, Tensor.__getattr__.__code__}  # (x.name, torch.name: not found)


def _print_error(exc, path):
    """The traceback from the first frame of ``path`` on (this runner's and runpy's frames left out),
    and without the frame of the engine's lookup that found no such name: Python's own look."""
    tb = exc.__traceback__
    while tb is not None and Path(tb.tb_frame.f_code.co_filename).resolve() != path:
        tb = tb.tb_next
    shown = traceback.TracebackException(type(exc), exc, tb or exc.__traceback__)
    if isinstance(exc, AttributeError):
        shown.stack = traceback.StackSummary.from_list(
            [frame for frame, (code_frame, _) in zip(shown.stack, traceback.walk_tb(tb or exc.__traceback__))
             if code_frame.f_code not in _LOOKUPS])
    print("".join(shown.format()), end="", file=sys.stderr)


def run(script, args=()):
    """Run ``script`` as ``__main__`` with the engine as torch; return the exit status Python would give."""
    path = Path(script).resolve()
    if not path.is_file():
        print(f"autograd_core.run: no such script: {script}", file=sys.stderr)
        return 2
    engine_as_torch()
    sys.argv = [script, *args]
    sys.path.insert(0, str(path.parent))  # as `python script.py` does: the script's folder first
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit:
        raise  # sys.exit(...) in the script: its status, as Python gives it
    except beyond.NotImplementedError as exc:
        print(_one_line(type(exc), exc), file=sys.stderr)
        return 1
    except BaseException as exc:  # the script's own error: shown as Python shows it, from the script on
        _print_error(exc, path)
        return 1
    finally:
        sys.stdout.flush()
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 0 if argv else 2
    return run(argv[0], argv[1:])


# --- the notebook magic: %load_ext autograd_core ------------------------------------------------
def load_ipython_extension(ipython):
    """``%load_ext autograd_core``: in this kernel, ``import torch`` finds the engine from the next
    import on (a ``torch`` imported before keeps its name bound to the real one), and reaching
    beyond the engine shows its one-line error instead of a traceback."""
    engine_as_torch()

    def one_line(shell, etype, value, tb, tb_offset=None):
        stb = [_one_line(etype, value)]
        shell._showtraceback(etype, value, stb)  # the cell's error output: this one line, no traceback
        return stb

    ipython.set_custom_exc((beyond.NotImplementedError,), one_line)


def unload_ipython_extension(ipython):
    """``%unload_ext autograd_core``: ``import torch`` finds the real PyTorch again."""
    torch_back()
    ipython.set_custom_exc((), None)


if __name__ == "__main__":
    sys.exit(main())
