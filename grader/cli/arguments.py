"""``kitgrade``: the instructor's round trip over nbgrader, and the student's ``check``.

    kitgrade init course --course-id ad101          # nbgrader layout, exercises staged in source/
    kitgrade release ex1                             # student versions, proven, into the exchange
    kitgrade collect ex1 [--from downloads.zip]      # from the exchange, or LMS downloads (--roster students.csv)
    kitgrade autograde ex1 [--workers N]             # parallel, sandboxed; report in reports/ex1.csv
    kitgrade autograde ex1 --cluster tls://HOST:8786 # the same on the workers of a dask scheduler
    kitgrade summary ex1 [--lang zh]                 # what the class got wrong: reports/ex1.html
    kitgrade feedback ex1 [--show-hidden-tests]      # HTML per student in feedback/ (hidden tests left out)
                          [--student NAME]           #   only this student (repeatable)
                          [--release]                #   and back to the students through the exchange
    kitgrade export [--lms-csv grades.csv] [--dry-run]   # nbgrader's CSV plus a Canvas gradebook import file
                    [--allow-manual-pending]            #   even with written answers not graded yet
    kitgrade check ex1.ipynb                         # a student: run my notebook's tests

Every command checks what it is asked to do before it writes anything: a mistake (a misspelled
assignment, a folder that is not a course, a setting of the wrong type) or a fault of the machine
(a folder it cannot write, a gradebook locked by another process or damaged) is one or two lines
on stderr and exit status 2, with nothing changed.
"""
# This docstring is the usage `kitgrade --help` prints; below it, every command's options.

from __future__ import annotations

import argparse

from ..foundations.settings import CELL_TIMEOUT
from .after_grading import cmd_export, cmd_feedback, cmd_summary
from .collecting import cmd_collect
from .course_setup import cmd_init, cmd_release
from .grading import cmd_autograde
from .student import cmd_check


def _worker_count(text: str) -> int:
    """``--workers``: as ``c.KitGrade.workers``, 0 is one per core."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of workers, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of workers >= 0 (0: one per core), not {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, not {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text}")
    return value


class _Versions(argparse.Action):
    """``--version``: the kit's version (with the digest of its grader, which its grading records) and nbgrader's."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the kit's and nbgrader's versions and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from ..foundations.versions import kit_versions

        print(" ".join(f"{name} {version}" for name, version in kit_versions().items()))
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kitgrade", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--version", action=_Versions)
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name, handler, help_text, course=True):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if course:
            sub.add_argument("--course", help="the course directory (default: here, or CourseDirectory.root "
                                              "of your nbgrader config)")
        sub.set_defaults(handler=handler)
        return sub

    sub = command("init", cmd_init, "create a course directory and stage the kit's exercises", course=False)
    sub.add_argument("directory")
    sub.add_argument("--course-id", help="the course id (default for a new course: autograd-kit)")
    sub.add_argument("--exercises", help="a folder of exercises, one folder each (default: the kit's own, installed with it)")
    sub.add_argument("--exchange", help="nbgrader exchange folder of a new course (default: <course>/exchange)")
    sub.add_argument("--force", action="store_true",
                     help="add the exercises to an existing course or a non-empty folder (files you changed are kept)")

    sub = command("release", cmd_release, "generate the student versions, prove them and release them")
    sub.add_argument("assignments", nargs="*")
    sub.add_argument("--no-exchange", action="store_true", help="only write release/")

    sub = command("collect", cmd_collect, "collect submissions from the exchange or from LMS downloads")
    sub.add_argument("assignment")
    sub.add_argument("--from", dest="source", help="a folder or zip of Canvas, Moodle or Blackboard downloads")
    sub.add_argument("--roster", help="CSV of students (Canvas's gradebook export, or id,first_name,last_name,"
                                      "email,lms_user_id) to map LMS names to students")

    sub = command("autograde", cmd_autograde, "grade every submission in parallel sandboxes")
    sub.add_argument("assignment")
    sub.add_argument("--student", action="append", help="only this student (repeatable)")
    sub.add_argument("--workers", type=_worker_count, help="worker processes; 0: one per core (default: c.KitGrade.workers)")
    sub.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_argument("--force", action="store_true", help="grade again what an earlier run graded already")
    sub.add_argument("--cluster", help="grade on a dask cluster: tcp://HOST:PORT, tls://HOST:PORT or local:N "
                     "(see docs/grading.md)")
    sub.add_argument("--tls-ca-file", help="with --cluster tls://: the CA certificate (else dask's configuration)")
    sub.add_argument("--tls-cert", help="with --cluster tls://: this client's certificate")
    sub.add_argument("--tls-key", help="with --cluster tls://: this client's private key")
    sub.add_argument("--unsafe-no-sandbox", action="store_true",
                     help="grade without the bubblewrap sandbox where it cannot run: for your own tests only, never a class")

    sub = command("feedback", cmd_feedback, "write HTML feedback for every graded student")
    sub.add_argument("assignment")
    sub.add_argument("--student", action="append", help="only this student (repeatable)")
    shown = sub.add_mutually_exclusive_group()
    shown.add_argument("--show-hidden-tests", action="store_true",
                       help="show the hidden tests' code and messages in the feedback (left out by default)")
    shown.add_argument("--hide-hidden-tests", action="store_true", help="leave them out (the default)")
    sub.add_argument("--release", action="store_true",
                     help="return it to the students through the exchange (they fetch it in their Assignments panel)")

    sub = command("export", cmd_export, "export grades: nbgrader's CSV and a Canvas gradebook import CSV")
    sub.add_argument("--csv", default="grades.csv")
    sub.add_argument("--lms-csv", default="grades_lms.csv")
    sub.add_argument("--roster", help="Canvas's gradebook export (or a roster CSV) for the ID, SIS and Section columns")
    sub.add_argument("--dry-run", action="store_true", help="show what would change against the last export; write nothing")
    sub.add_argument("--allow-manual-pending", action="store_true",
                     help="export even if written answers still wait for a manual grade (they count as 0)")

    sub = command("check", cmd_check, "run the tests of one notebook and print each result", course=False)
    sub.add_argument("notebook")
    sub.add_argument("--timeout", type=_positive_float, default=CELL_TIMEOUT, help="seconds per cell")

    sub = command("summary", cmd_summary, "what the class got wrong: reports/<assignment>.html and a table")
    sub.add_argument("assignment")
    sub.add_argument("--lang", choices=["en", "zh"], default="en", help="language of the texts (default: en)")
    sub.add_argument("--show-hidden-tests", action="store_true", help="show hidden-test source in the page")
    return parser
