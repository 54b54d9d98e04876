"""The IPython shell student code runs in, prepared once per zygote (``Template``).

It behaves as a Jupyter kernel's shell where students expect it to: ``%matplotlib inline`` works
(figures are recorded as images), ``!pip install ...`` and other shell lines are skipped with a
note instead of failing their cell, ``%%time``/``%timeit``/``%load_ext`` work as usual.
"""

from __future__ import annotations

import os
import sys

from .guard import IntegrityGuard
from .recorder import OutputRecorder


def _grading_shell_class():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.text import SList

    class GradingShell(InteractiveShell):
        """An InteractiveShell that answers GUI and shell requests as a grading kernel should."""

        #: Shell lines (``!cmd``, ``%pip``, ``%conda``) skipped while this notebook ran.
        skipped_shell_lines: list = []

        def enable_gui(self, gui=None):  # no event loop here: inline figures need none
            pass

        def system(self, cmd):
            self.skipped_shell_lines.append(str(cmd)[:200])

        def getoutput(self, cmd, split=True, depth=0):
            self.skipped_shell_lines.append(str(cmd)[:200])
            return SList() if split else ""

    return GradingShell


class Template:
    """A pre-warmed interpreter state that every notebook starts from (by ``fork``)."""

    def __init__(self, preload_modules=()):
        os.environ["MPLBACKEND"] = "Agg"  # no screen: figures are drawn off-screen
        for name in preload_modules:
            try:
                __import__(name)
            except Exception:  # a missing optional module is not an error of the grader
                pass
        if "matplotlib.pyplot" in sys.modules:  # settle its lazily chosen backend and font cache now
            pyplot = sys.modules["matplotlib.pyplot"]
            pyplot.figure()
            pyplot.close("all")
        from traitlets.config import Config

        config = Config()
        config.HistoryManager.enabled = False
        config.HistoryManager.hist_file = ":memory:"
        config.InteractiveShell.colors = "nocolor"
        config.InteractiveShell.autocall = 0
        config.InteractiveShell.xmode = "Context"
        self.shell = _grading_shell_class().instance(config=config)
        self.recorder = OutputRecorder(self.shell)
        self.guard = IntegrityGuard(self.shell)
        self._readable: dict[tuple, list[str]] = {}
        from .allow_list import readable_paths

        readable_paths()  # the allow-list (its worker sent it: ``zygote.main``), settled before any fork

    def readable_roots(self, protected: list[str]) -> list[str]:
        """The folders a grading process may read (computed once per protected set)."""
        from . import landlock

        key = tuple(protected)
        if key not in self._readable:
            self._readable[key] = landlock.readable_roots(protected)
        return self._readable[key]
