"""``kitgrade``: the command line (``python -m grader.cli`` is the same); the usage ``kitgrade --help``
prints is in ``arguments.py``.

Where each command is (this file only runs one and turns what it raises into an exit status):

    arguments.py     every command's options (``build_parser``)
    preflight.py     the course found, and what a command writes checked before it writes
    course_setup.py  ``init``, ``release``
    collecting.py    ``collect``
    grading.py       ``autograde``
    after_grading.py ``summary``, ``feedback``, ``export``
    student.py       ``check``
"""

from __future__ import annotations

import os
import select
import sys
from pathlib import Path

from ..course import KIT_DIR
from ..foundations.errors import INTERNAL_ERROR, UsageError, log_internal_error, missing_extra
from ..foundations.faults import describe
from ..temporary import in_process_folder
from .arguments import build_parser

#: The arguments that name files, made absolute as the user meant them before a command moves into the course.
PATH_ARGUMENTS = ("course", "source", "roster", "directory", "exercises", "exchange", "notebook")
#: Exit status when the command's output was closed by its reader (``kitgrade check nb | head -4``): the
#: status a shell shows for a program that SIGPIPE stopped.
OUTPUT_CLOSED = 128 + 13


def command() -> int:
    """Entry point of the ``kitgrade`` console script (and ``python -m grader.cli``): ``main``, in a
    process that ends when it returns."""
    from ..foundations import speed
    from ..sandbox import spare_zygotes

    spare_zygotes.allow()  # this process is the command: it may fork its workers (``autograde``, ``check``)
    try:
        return main()
    finally:
        speed.ending_quickly()


def main(argv: list[str] | None = None) -> int:
    """Run one ``kitgrade`` command (``argv``, or the command line's); return its exit status."""
    from ..foundations import speed  # noqa: F401  (first: it spares every command an import, see speed.py)
    from ..foundations.student_text import escaped_terminal

    try:
        with escaped_terminal():  # student text in any message is shown escaped, never acted on by the terminal
            return _main(argv)
    except BrokenPipeError:  # (the last lines written as the command ends)
        if not _output_closed():
            raise
        return _quietly_closed()


def _output_closed() -> bool:
    """Whether this process's standard output is a pipe its reader has closed."""
    try:
        poller = select.poll()
        poller.register(sys.__stdout__.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, ValueError, OSError):
        return False


def _quietly_closed() -> int:
    """The reader has what it wanted: the rest of the output goes nowhere (no error as Python exits)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.__stdout__.fileno())
    os.close(devnull)
    return OUTPUT_CLOSED


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):  # a bare `kitgrade`: its commands, as `git` and `pip` show
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    try:
        os.getcwd()
    except FileNotFoundError:  # the folder the command was started in was removed (or moved) meanwhile
        print(f"kitgrade {args.command}: the current folder no longer exists (it was removed or moved); cd into "
              "one that does and run the command again", file=sys.stderr)
        return 2
    for name in PATH_ARGUMENTS:
        if getattr(args, name, None):
            setattr(args, name, os.path.abspath(os.path.expanduser(getattr(args, name))))
    cwd = os.getcwd()
    try:
        with in_process_folder():  # every temporary file of the command, and of the processes it starts
            return args.handler(args)
    except UsageError as error:
        print(f"kitgrade {args.command}: {error}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        print(f"kitgrade {args.command}: stopped", file=sys.stderr)
        return 130
    except Exception as error:
        if isinstance(error, BrokenPipeError) and _output_closed():  # ``kitgrade check nb | head -4``
            return _quietly_closed()
        missing = missing_extra(error, args.command)
        if missing:  # an extra of the kit not installed (a module imported as the command needs it)
            print(missing, file=sys.stderr)
            return 2
        course = getattr(args, "found_course", None)
        fault = describe(error, gradebook=course.gradebook_path if course else None)
        if fault:  # a fault of the machine that struck halfway: what was done is kept
            print(f"kitgrade {args.command}: stopped, because {fault}; what was done before it is kept; put it "
                  "right and run the command again", file=sys.stderr)
            return 1
        # a bug of the kit: say so, keep the traceback
        kit_dir = Path(getattr(args, "course", None) or ".") / KIT_DIR
        log = log_internal_error(error, kit_dir / "logs" if kit_dir.is_dir() else None)
        print(f"kitgrade {args.command}: internal error ({type(error).__name__}: {str(error)[:200]}).\n"
              f"This is a bug in kitgrade, not a mistake of yours; please report it to the kit's maintainers "
              f"(the issue tracker of the repository you installed it from) with the log {log}", file=sys.stderr)
        return INTERNAL_ERROR
    finally:
        os.chdir(cwd)
