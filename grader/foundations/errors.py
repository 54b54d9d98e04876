"""What a user can get wrong, and what to do when the kit itself is wrong.

A ``UsageError`` is a mistake the user can fix (a misspelled assignment, a folder that is not a
course, a setting of the wrong type): the command prints its message (one or two lines: what
was wrong, what exists, what to do), writes nothing and exits with status 2. An
``EnvironmentFault`` is the same for a fault of the machine (a full disk, a folder that cannot be
written, a locked or damaged gradebook; see ``grader.foundations.faults``); one found after part of the work
was done says so and exits with status 1. A module of another project that is not installed is
an extra of the kit left out (``missing_extra``: one line naming it, status 2). Anything else
that escapes a command is a bug of the kit: the command says so, keeps the traceback in a log
file and says where to report it.
"""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
import traceback
from pathlib import Path

#: Exit status of a command refused because of a user's mistake (argparse uses the same).
USAGE_ERROR = 2
#: Exit status of a command stopped by a bug of the kit.
INTERNAL_ERROR = 3
#: Where the user's own temporary folder is, once a command has its own inside it (``grader.temporary``):
#: a log must outlive the command.
OUTER_TMPDIR = "KITGRADE_OUTER_TMPDIR"


class UsageError(Exception):
    """A mistake the user can fix; the message says what was wrong, what exists and what to do."""

    status = USAGE_ERROR


class EnvironmentFault(UsageError):
    """A fault of the machine; the message names the place and says what to do.

    ``status`` is 2 when it was found before anything was written, 1 when part of the work was done.
    """

    def __init__(self, message: str, status: int = USAGE_ERROR):
        super().__init__(message)
        self.status = status


#: The kit's own top-level packages: one of them missing is a broken installation, not an extra left out.
KIT_PACKAGES = ("grader", "autograd_core", "graph_explorer", "course_files", "learner")
#: ``pip install autograd-kit`` is the engine alone; what each extra is for, for the message.
EXTRAS = {"grade": "to grade a class", "lab": "to check your own exercises", "cluster": "to grade on a dask cluster"}


def missing_extra(error: BaseException, command: str | None = None) -> str | None:
    """The line to print when ``error`` is a module of another project, not installed: which extra brings it."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    module = error.name.split(".")[0]
    if module in KIT_PACKAGES:
        return None
    extras = ["cluster"] if module in ("dask", "distributed") else ["lab"] if command == "check" else \
        ["grade"] if command else ["grade", "lab"]
    install = " or ".join(f"pip install 'autograd-kit[{extra}]' ({EXTRAS[extra]})" for extra in extras)
    return f"kitgrade{' ' + command if command else ''}: {module} is not installed in this Python; {install}"


def log_internal_error(error: BaseException, log_dir: Path | None = None) -> Path:
    """Write ``error``'s traceback to a log file (in ``log_dir`` if writable, else the temp folder)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    header = f"kitgrade {' '.join(sys.argv[1:])}\npython {sys.version.split()[0]}\n\n"
    for folder in ([log_dir] if log_dir else []) + [Path(os.environ.get(OUTER_TMPDIR) or tempfile.gettempdir())]:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"kitgrade-error-{stamp}-{os.getpid()}.log"
            path.write_text(header + text, encoding="utf-8")
            return path
        except OSError:
            continue
    raise error
