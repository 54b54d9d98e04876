"""``kitgrade``: the instructor's round trip over nbgrader, and the student's ``check``.

    kitgrade init course --course-id ad101          # nbgrader layout, exercises staged in source/
    kitgrade release ex1                             # student versions, proven, into the exchange
    kitgrade collect ex1 [--from downloads.zip]      # from the exchange, or LMS downloads (--roster students.csv)
    kitgrade autograde ex1 [--workers N]             # parallel, sandboxed; report in reports/ex1.csv
    kitgrade autograde ex1 --cluster tls://HOST:8786 # the same on the workers of a dask scheduler
    kitgrade feedback ex1 [--show-hidden-tests]      # HTML per student in feedback/ (hidden tests left out)
                          [--release]                #   and back to the students through the exchange
    kitgrade export [--lms-csv grades.csv] [--dry-run]   # nbgrader's CSV plus a Canvas gradebook import file
                    [--allow-manual-pending]            #   even with written answers not graded yet
    kitgrade check ex1.ipynb                         # a student: run my notebook's tests

Every command checks what it is asked to do before it writes anything: a mistake (a misspelled
assignment, a folder that is not a course, a setting of the wrong type) or a fault of the machine
(a folder it cannot write, a gradebook locked by another process or damaged) is one or two lines
on stderr and exit status 2, with nothing changed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .course import KIT_DIR, Course
from .errors import INTERNAL_ERROR, UsageError, log_internal_error
from .faults import describe, require_gradebook, require_writable
from .settings import CELL_TIMEOUT
from .temporary import in_process_folder

DEFAULT_EXERCISES = Path(__file__).resolve().parent.parent / "exercises"


def _course(args) -> Course:
    """The course, with the working directory moved into it: nbgrader resolves some settings
    (``IncludeHeaderFooter.header``, ...) from the working directory, as when run in the course."""
    course = Course.find(args.course)
    os.chdir(course.root)
    args.found_course = course  # a fault that stops the command halfway names this course's files
    return course


def _will_write(course: Course, command: str, *places: Path, gradebook: str = "write") -> None:
    """Before anything is written: the places the command writes can be written, and the gradebook
    can be read (``gradebook="read"``) or written, neither damaged nor locked by another process."""
    book = course.gradebook_path
    require_writable(command, *places, *([book] if book is not None and gradebook == "write" else []))
    require_gradebook(book, write=gradebook == "write")


def cmd_init(args) -> int:
    from .course_init import init_course

    result = init_course(Path(args.directory), args.course_id, Path(args.exercises),
                         exchange=Path(args.exchange) if args.exchange else None, force=args.force)
    course = result.course
    if result.created:
        print(f"course {course.course_id!r} in {course.root}: {len(result.added)} assignment(s) staged in source/: "
              + ", ".join(result.added))
    else:
        print(f"course {course.course_id!r} in {course.root}: "
              + (f"added {', '.join(result.added)}" if result.added else "no new assignment")
              + (f"; updated {len(result.updated)} file(s) init had copied" if result.updated else ""))
    for kept in result.kept:
        print(f"  kept {kept} (you changed it; the exercise's version was not copied over it)")
    return 0


def cmd_release(args) -> int:
    from .release import check_exchange, exchange_root, generate_release, prove_release, release_to_exchange

    course = _course(args)
    assignments = args.assignments or course.assignments()
    if not assignments:
        course.require_assignment("")  # says what is missing
    for assignment in assignments:
        course.require_assignment(assignment)
    if not args.no_exchange:
        check_exchange(course)
    _will_write(course, "release", course.path("release"),
                *([] if args.no_exchange else [exchange_root(course) / course.course_id / "outbound"]))
    status = 0
    for assignment in assignments:
        generate_release(course, assignment)
        problems = [p for proof in prove_release(course, assignment) for p in proof.problems]
        if problems:
            status = 1
            print(f"{assignment}: NOT released (release/ holds the unproven version; the exchange was not changed)")
            for problem in problems:
                print(f"  - {problem}")
            continue
        proven = f"{assignment}: proven (solution passes every test, blank release fails them)"
        if args.no_exchange:
            print(f"{proven}; in release/ (the exchange was not changed: --no-exchange)")
            continue
        state, detail = release_to_exchange(course, assignment)
        if state == "failed":
            status = 1
            print(f"{proven}; in release/, but the exchange was NOT updated: {detail}")
        else:
            print(f"{proven}; in release/ and the exchange "
                  + {"new": "(first release)", "unchanged": "(the exchange already held this version)",
                     "updated": "(updated: it held an older version; students who fetched that one keep it "
                                "until they fetch again)"}[state])
    return status


def cmd_collect(args) -> int:
    from .collect import collect_from_downloads, collect_from_exchange

    course = _course(args)
    course.require_assignment(args.assignment, released=True)
    _will_write(course, "collect", course.path("submitted"), course.path(KIT_DIR),
                gradebook="write" if args.source else "read")  # LMS downloads record names and LMS ids
    if args.source:
        outcome = collect_from_downloads(course, args.assignment, Path(args.source),
                                         roster=Path(args.roster) if args.roster else None)
        print(outcome.summary())
        return outcome.status
    if args.roster:
        raise UsageError("--roster maps LMS downloads to students; use it with --from")
    students = collect_from_exchange(course, args.assignment)
    print(f"{args.assignment}: {len(students)} submission(s) in submitted/: {', '.join(students)}" if students else
          f"{args.assignment}: no submission in nbgrader's exchange yet (students submit from the Assignments tab)")
    return 0


def cmd_autograde(args) -> int:
    from .autograde import Interrupted, ReportNotWritten, autograde
    from .autograde.dask_executor import ClusterError
    from .autograde.report import format_report

    course = _course(args)
    course.require_assignment(args.assignment, released=True)
    students = course.require_students(args.assignment, args.student)
    if course.gradebook_path is None or not course.gradebook_path.is_file():
        raise UsageError(f"autograde works on nbgrader's sqlite gradebook file; CourseDirectory.db_url is "
                         f"{course.db_url!r}" + (", which does not exist yet (run `kitgrade release` first)"
                                                 if course.gradebook_path else ""))
    changed = course.changed_since_release(args.assignment)
    if changed:
        print(f"note: {', '.join(changed)} changed in source/ after the last release; autograde grades against the "
              f"tests of that release (run `kitgrade release {args.assignment}` to grade against the new ones)",
              file=sys.stderr)
    tls = [args.tls_ca_file, args.tls_cert, args.tls_key]
    if any(tls) and not all(tls):
        raise UsageError("--tls-ca-file, --tls-cert and --tls-key go together")
    if any(tls) and not args.cluster:
        raise UsageError("the --tls-* options are for --cluster")
    _will_write(course, "autograde", course.path("autograded"), course.path("reports"), course.path(KIT_DIR))
    course.settings().unsafe_no_sandbox |= args.unsafe_no_sandbox
    try:  # students named with --student are graded again; a whole-class run grades what is not recorded yet
        results = autograde(course, args.assignment, students=students, workers=args.workers,
                            progress=not args.quiet, cluster=args.cluster, force=args.force or bool(args.student),
                            security=tls if all(tls) else None)
    except Interrupted as stopped:
        print(f"kitgrade: {stopped}", file=sys.stderr)
        return 130
    except ClusterError as error:
        print(f"kitgrade: {error}", file=sys.stderr)
        return 2
    except ReportNotWritten as fault:
        print(format_report(args.assignment, fault.results))
        print(f"kitgrade autograde: {fault}", file=sys.stderr)
        return fault.status
    print(format_report(args.assignment, results))
    print(f"report: {course.path('reports', args.assignment + '.csv')}")
    gone = sorted(r.student for r in results.values() if not r.submitted)
    if gone:
        print(f"kitgrade autograde: in the gradebook but no longer submitted: {', '.join(gone)} (the gradebook keeps "
              f"the grade an earlier run gave; so do the report and the exports)", file=sys.stderr)
    not_graded = [r.student for r in results.values() if not r.graded]
    if not_graded:
        print(f"kitgrade: {len(not_graded)} submission(s) not graded (see the reasons above); run autograde again",
              file=sys.stderr)
        return 1
    return 0


def cmd_feedback(args) -> int:
    from .feedback import generate_feedback
    from .release import exchange_root

    course = _course(args)
    course.require_assignment(args.assignment)
    if not course.students_with("autograded", args.assignment):
        raise UsageError(f"no autograded submission of {args.assignment} yet; run `kitgrade autograde "
                         f"{args.assignment}` first")
    _will_write(course, "feedback", course.path("feedback"),
                *([exchange_root(course) / course.course_id / "feedback"] if args.release else []), gradebook="read")
    # hidden by default; --hide-hidden-tests is still accepted (it was the way to hide them)
    hide = not args.show_hidden_tests and (args.hide_hidden_tests or course.settings().hide_hidden_tests_in_feedback)
    files = generate_feedback(course, args.assignment, hide_hidden_tests=hide)
    print(f"{args.assignment}: {len(files)} feedback file(s) in feedback/" + (" (hidden tests left out)" if hide else ""))
    waiting = awaiting_manual(course, args.assignment)
    if waiting:
        print(f"note: written answers of {len(waiting)} student(s) wait for a manual grade ({', '.join(waiting)}): "
              "their feedback shows the score without them; run feedback again once they are graded", file=sys.stderr)
    if args.release:
        from .feedback import release_feedback

        released, skipped = release_feedback(course, args.assignment)
        print(f"{args.assignment}: feedback of {len(released)} student(s) released to the exchange: {', '.join(released)}")
        if skipped:
            print(f"{args.assignment}: not released (submitted outside the exchange, or not graded): {', '.join(skipped)}")
    return 0


def awaiting_manual(course: Course, assignment: str) -> list[str]:
    """The students with written answers of ``assignment`` still waiting for a manual grade."""
    from nbgrader.api import Gradebook

    from .manual_grades import awaiting_by_student

    with Gradebook(course.db_url, course.course_id) as gradebook:
        return list(awaiting_by_student(gradebook, assignment))


def cmd_export(args) -> int:
    from .export import AwaitingManualGrades, export_grades

    course = _course(args)
    written = [] if args.dry_run else [p if p.is_absolute() else course.root / p
                                       for p in (Path(args.csv), Path(args.lms_csv))]
    _will_write(course, "export", *written, *([course.path(KIT_DIR)] if args.roster and not args.dry_run else []),
                gradebook="write" if args.roster and not args.dry_run else "read")  # a roster is recorded there
    try:
        lines = export_grades(course, Path(args.csv), Path(args.lms_csv),
                              roster=Path(args.roster) if args.roster else None, dry_run=args.dry_run,
                              allow_manual_pending=args.allow_manual_pending)
    except AwaitingManualGrades as refused:
        print("\n".join(f"kitgrade export: {line}" if i == 0 else line for i, line in enumerate(refused.lines)),
              file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def cmd_check(args) -> int:
    from .check import check_notebook

    path = Path(args.notebook)
    if not path.is_file():
        raise UsageError(f"{path}: no such file" if not path.exists() else f"{path} is a folder, not a notebook")
    with open(path, "rb") as handle:
        start = handle.read(4096).lstrip()
    if path.suffix != ".ipynb" or not start.startswith(b"{"):
        raise UsageError(f"{path} is not a Jupyter notebook (.ipynb); check the notebook you work on, "
                         "e.g. `kitgrade check autograd_basics.ipynb`")
    return check_notebook(path, timeout=args.timeout)


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kitgrade", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
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
    sub.add_argument("--exercises", default=str(DEFAULT_EXERCISES), help="folder of exercises (one folder each)")
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


def cmd_summary(args) -> int:
    """``kitgrade summary ex1 [--lang zh]``: what the class got wrong, in reports/ex1.html and a table."""
    from .summary import summarize

    course = _course(args)
    course.require_assignment(args.assignment)
    _will_write(course, "summary", course.path("reports"), gradebook="read")
    table, page = summarize(course, args.assignment, lang=args.lang, show_hidden=args.show_hidden_tests)
    print(table)
    print(f"summary: {page}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kitgrade`` console script."""
    from .student_text import escaped_terminal

    with escaped_terminal():  # student text in any message is shown escaped, never acted on by the terminal
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    for name in ("course", "source", "roster", "directory", "exercises", "exchange", "notebook"):
        if getattr(args, name, None):  # as the user meant them, before a command moves into the course
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


if __name__ == "__main__":
    sys.exit(main())
