"""The class's Python kernel: ipykernel without its debugger.

JupyterLab's debugger panel has ipykernel start debugpy, whose adapter listens on a port of 127.0.0.1
and asks no credential of whoever connects (debugpy/adapter/clients.py): any account of the machine
could attach to a student's kernel, or the grader's, and run code as its owner. ipykernel runs
without a debugger where debugpy cannot be imported (ipykernel/debugger.py: ``_is_debugpy_available``),
and says so in its kernel_info; what JupyterLab reads to offer the panel is the kernel spec's
``metadata.debugger`` (``config_files.write_kernel_spec``). The kernel spec starts it with
``python -c BOOTSTRAP``: as ipykernel_launcher does, the working folder leaves ``sys.path`` before
anything is imported (a student's ``json.py``, or ``kithub/``, beside the notebook would shadow it;
``python -m`` would put that folder first), and only then is this module imported.
"""
from __future__ import annotations

import sys

#: what the kernel spec runs with ``python -c``: the working folder off ``sys.path``, then ``main``
BOOTSTRAP = "import sys; sys.path[:] = [p for p in sys.path if p]; from kithub.kernel import main; main()"


def main() -> None:
    sys.modules["debugpy"] = None  # ipykernel's own way of running without a debugger
    from ipykernel.kernelapp import launch_new_instance

    launch_new_instance()
