"""``kitgrade check``: a student runs their notebook's tests (the work is in ``grader/commands/check.py``)."""

from __future__ import annotations

from pathlib import Path

from ..foundations.errors import UsageError
from ..foundations.stop_signals import stops_as_keyboard_interrupt


def cmd_check(args) -> int:
    from ..sandbox import spare_zygotes

    path = Path(args.notebook)
    if not path.is_file():
        raise UsageError(f"{path}: no such file" if not path.exists() else f"{path} is a folder, not a notebook")
    with open(path, "rb") as handle:
        start = handle.read(4096).lstrip()
    if path.suffix != ".ipynb" or not start.startswith(b"{"):
        raise UsageError(f"{path} is not a Jupyter notebook (.ipynb); check the notebook you work on, "
                         "e.g. `kitgrade check autograd_basics.ipynb`")
    with stops_as_keyboard_interrupt():  # SIGTERM and a closed terminal stop it as Ctrl-C does
        try:
            # it starts up while this process imports nbgrader (``spare_zygotes``); where bubblewrap
            # cannot run, behind the kit's own walls (docs/threat-model.md)
            spare_zygotes.start(1)
            from ..commands.check import check_notebook

            return check_notebook(path, timeout=args.timeout)
        finally:
            spare_zygotes.reap()
