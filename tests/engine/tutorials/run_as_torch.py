"""Run a tutorial extract and print what it prints, with the kit's engine or PyTorch as ``torch``.

    python run_as_torch.py engine extracts/d2l_en_autograd.py    # import torch -> autograd_core
    python run_as_torch.py torch  extracts/d2l_en_autograd.py    # the real PyTorch (to record)
    python run_as_torch.py engine extracts/micrograd_test_engine.py::call-tests   # then call test_*()
    python run_as_torch.py engine extracts/d2l_en_linear_regression_concise.py::library=d2l_en   # d2l is d2l_en
    python run_as_torch.py engine --each A.py B.py   # each in a forked process; prints {extract: output} as JSON

With ``engine``, the kit is put in torch's place before the extract runs (``import torch``,
``import torch.nn as nn``, ``from torch.autograd import Variable`` all find the kit), so the
extract runs unchanged: the package's own ``python -m autograd_core.run`` does it. An extract from a notebook has its cells separated by ``# %%`` lines;
as in a notebook, the value of a cell's last expression is shown (with ``repr``) after what the
cell printed. An exception ends the run and is shown as its type and message.

``library=NAME``: the extract's ``from d2l import torch as d2l`` finds the package NAME (d2l-en's
library, ``d2l_en``, beside d2l-zh's ``d2l``). d2l-en's training loop plots its losses as it goes
(``d2l.ProgressBoard``): the plot is drawn, headless, and not shown (see ``plots_drawn_not_shown``).

Random numbers: PyTorch seeds its generator differently in every process, so a tutorial's
``torch.randn(3)`` prints different numbers from run to run even on PyTorch. The runner calls
``torch.manual_seed(0)`` (and Python's ``random.seed(0)``, NumPy's ``numpy.random.seed(0)``) before each extract, with either
engine: the engine's random numbers are PyTorch's own, so both then draw the same ones, and
everything computed from them can be compared exactly. Nothing is patched.
"""
from __future__ import annotations

import ast
import importlib
import json
import os
import random
import sys
import types
from pathlib import Path

import numpy


def put_engine_in_torchs_place():
    """``import torch`` (and ``torch.nn``, ``torch.utils.data``, ...) finds the kit's engine: the
    package's own runner does it (``python -m autograd_core.run``, ``autograd_core/run.py``)."""
    from autograd_core.run import engine_as_torch

    engine_as_torch()


def use_library(name):
    """``import d2l`` finds the package ``name`` (a directory beside this file) from now on."""
    sys.modules["d2l"] = importlib.import_module(name)


def plots_drawn_not_shown():
    """d2l's ProgressBoard draws each point with matplotlib and shows the figure with IPython's
    ``display`` (clearing the last one with ``clear_output``): in a notebook, a picture that moves.
    Here the figure is drawn all the same (matplotlib's Agg backend: no screen), but showing it
    prints nothing: what is compared is the text the page prints, and a figure is no text (outside
    a notebook ``display`` would print ``<Figure size 350x250 with 1 Axes>``). Choosing the picture
    format of a notebook (``set_matplotlib_formats('svg')``) is nothing to do here either."""
    import matplotlib

    matplotlib.use("Agg")
    from IPython import display
    from matplotlib.figure import Figure
    from matplotlib_inline import backend_inline

    show = display.display

    def display_all_but_figures(*objs, **kwargs):
        objs = [obj for obj in objs if not isinstance(obj, Figure)]
        if objs:
            show(*objs, **kwargs)

    display.display = display_all_but_figures
    display.clear_output = lambda wait=False: None
    backend_inline.set_matplotlib_formats = lambda *formats, **kwargs: None


def cells(source):
    """The extract's cells: the text between ``# %%`` lines (the whole file if there are none)."""
    current, found = [], []
    for line in source.splitlines(keepends=True):
        if line.startswith("# %%"):
            found.append("".join(current))
            current = []
        else:
            current.append(line)
    found.append("".join(current))
    return [c for c in found if c.strip()]


def run_cell(code, namespace, filename):
    tree = ast.parse(code, filename)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body.pop()
    exec(compile(tree, filename, "exec"), namespace)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        if value is not None:
            print(repr(value))


def print_plotted_losses(namespace):
    """What d2l-en's training loops plotted (each model's ``ProgressBoard``: the training and validation
    losses, averaged as the board averages them), printed after the page: the pages show them as a
    figure only, and a figure is not compared."""
    for name, value in list(namespace.items()):
        board = getattr(value, "board", None) if not isinstance(value, type) else None
        for label, points in (getattr(board, "data", None) or {}).items():
            print(f"{name}.board {label}:", " ".join(f"{float(p.x):.2f}:{float(p.y):.6f}" for p in points))


def call_tests(namespace):
    """Call the extract's ``test_*`` functions in order, as pytest would, and say how each went."""
    for name, function in list(namespace.items()):
        if name.startswith("test_") and callable(function):
            try:
                function()
                print(f"{name} passed")
            except Exception as exc:
                print(f"{name} failed: {type(exc).__name__}: {exc}")


def run_extract(extract):
    """Run ``PATH[::OPTION,...]`` (options: ``call-tests``, ``library=NAME``, ``allow-errors``: a cell's
    error is shown and the next cell runs; ``losses``: then what d2l-en's training plotted) and print what it prints."""
    random.seed(0)  # here, not only at start: Python reseeds its generator in every forked child
    numpy.random.seed(0)  # noqa: NPY002 (d2l's underfitting section draws with NumPy's global generator: seed that one)
    importlib.import_module("torch").manual_seed(0)  # PyTorch's own seed differs in every process
    path, _, options = extract.partition("::")
    options = dict(option.partition("=")[::2] for option in options.split(",") if option)
    if "library" in options:
        use_library(options["library"])
        plots_drawn_not_shown()
    path = Path(path)
    # the cells run in a module that is __main__, as a notebook's cells run in its kernel's __main__:
    # a class they define can be pickled (fastai's loader sends its Dataset to a process pool)
    main = types.ModuleType("__main__")
    main.__file__ = str(path)
    sys.modules["__main__"] = main
    namespace = main.__dict__
    try:
        for code in cells(path.read_text(encoding="utf-8")):
            try:
                run_cell(code, namespace, str(path))
            except Exception as exc:
                if "allow-errors" not in options:
                    raise
                print(f"{type(exc).__name__}: {exc}")  # and on to the next cell, as nbconvert --allow-errors
        if "call-tests" in options:
            call_tests(namespace)
        if "losses" in options:
            print_plotted_losses(namespace)
    except Exception as exc:  # shown, not raised: the two engines' outputs are compared, errors included
        print(f"{type(exc).__name__}: {exc}")
    sys.stdout.flush()


def run_each(extracts):
    """Run every extract in a process of its own, forked from this one (so torch or the engine
    is imported once); return {extract: what it printed}."""
    printed = {}
    for extract in extracts:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its stdout is the pipe
            os.close(read_end)
            os.dup2(write_end, 1)
            sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
            run_extract(extract)
            os._exit(0)
        os.close(write_end)
        with open(read_end, encoding="utf-8") as pipe:
            printed[extract] = pipe.read()
        os.waitpid(pid, 0)
    return printed


def main(engine, *extracts):
    if engine == "engine":
        put_engine_in_torchs_place()
    elif engine != "torch":
        raise SystemExit("usage: run_as_torch.py engine|torch [--each] EXTRACT[::call-tests|library=NAME|allow-errors] ...")
    if extracts and extracts[0] == "--each":
        print(json.dumps(run_each(extracts[1:])))
    else:
        for extract in extracts:
            run_extract(extract)


if __name__ == "__main__":
    main(*sys.argv[1:])
