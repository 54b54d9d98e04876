"""``kitgrade``: the instructor's round trip over nbgrader, and the student's ``check``.

    kitgrade init course --course-id ad101          # nbgrader layout, exercises staged in source/
    kitgrade release ex1                             # student versions, proven, into the exchange
    kitgrade collect ex1 [--from downloads.zip]      # from the exchange, or LMS downloads
    kitgrade autograde ex1 [--workers N]             # parallel, sandboxed; report in reports/ex1.csv
    kitgrade feedback ex1 [--hide-hidden-tests]      # HTML per student in feedback/
                          [--release]                #   and back to the students through the exchange
    kitgrade export [--lms-csv grades.csv]           # nbgrader's CSV plus an LMS import file
    kitgrade check ex1.ipynb                         # a student: run my notebook's tests
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .course import Course, init_course

DEFAULT_EXERCISES = Path(__file__).resolve().parent.parent / "exercises"


def _course(args) -> Course:
    return Course(Path(args.course))


def cmd_init(args) -> int:
    course = init_course(Path(args.directory), args.course_id, Path(args.exercises),
                         exchange=Path(args.exchange) if args.exchange else None)
    assignments = course.assignments()
    print(f"course {course.course_id!r} in {course.root}: {len(assignments)} assignment(s) staged in source/"
          + (": " + ", ".join(assignments) if assignments else f" (none found in {args.exercises})"))
    return 0


def cmd_release(args) -> int:
    from .release import generate_release, prove_release, release_to_exchange

    course = _course(args)
    status = 0
    for assignment in args.assignments or course.assignments():
        generate_release(course, assignment)
        problems = [p for proof in prove_release(course, assignment) for p in proof.problems]
        if problems:
            status = 1
            print(f"{assignment}: NOT released")
            for problem in problems:
                print(f"  - {problem}")
            continue
        where = "release/ and the exchange" if not args.no_exchange and release_to_exchange(course, assignment) else "release/"
        print(f"{assignment}: proven (solution passes every test, blank release fails them); in {where}")
    return status


def cmd_collect(args) -> int:
    from .collect import collect_from_exchange, collect_from_downloads

    course = _course(args)
    if args.source:
        students = collect_from_downloads(course, args.assignment, Path(args.source))
    else:
        students = collect_from_exchange(course, args.assignment)
    print(f"{args.assignment}: {len(students)} submission(s) in submitted/: {', '.join(students)}")
    return 0


def cmd_autograde(args) -> int:
    from .autograde import Interrupted, autograde
    from .report import format_report

    course = _course(args)
    try:
        results = autograde(course, args.assignment, students=args.student or None, workers=args.workers,
                            progress=not args.quiet)
    except Interrupted as stopped:
        print(f"kitgrade: {stopped}", file=sys.stderr)
        return 130
    print(format_report(args.assignment, results))
    print(f"report: {course.path('reports', args.assignment + '.csv')}")
    not_graded = [r.student for r in results.values() if not r.graded]
    if not_graded:
        print(f"kitgrade: {len(not_graded)} submission(s) not graded (see the reasons above); run autograde again",
              file=sys.stderr)
        return 1
    return 0


def cmd_feedback(args) -> int:
    from .feedback import generate_feedback

    course = _course(args)
    hide = args.hide_hidden_tests or course.settings().hide_hidden_tests_in_feedback
    files = generate_feedback(course, args.assignment, hide_hidden_tests=hide)
    print(f"{args.assignment}: {len(files)} feedback file(s) in feedback/" + (" (hidden tests left out)" if hide else ""))
    if args.release:
        from .feedback import release_feedback

        released, skipped = release_feedback(course, args.assignment)
        print(f"{args.assignment}: feedback of {len(released)} student(s) released to the exchange: {', '.join(released)}")
        if skipped:
            print(f"{args.assignment}: not released (submitted outside the exchange, or not graded): {', '.join(skipped)}")
    return 0


def cmd_export(args) -> int:
    from .export import export_grades

    course = _course(args)
    paths = export_grades(course, Path(args.csv), Path(args.lms_csv))
    print("\n".join(f"wrote {p}" for p in paths))
    return 0


def cmd_check(args) -> int:
    from .check import check_notebook

    return check_notebook(Path(args.notebook), timeout=args.timeout)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kitgrade", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name, handler, help_text, course=True):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if course:
            sub.add_argument("--course", default=".", help="the course directory (default: here)")
        sub.set_defaults(handler=handler)
        return sub

    sub = command("init", cmd_init, "create a course directory and stage the kit's exercises", course=False)
    sub.add_argument("directory")
    sub.add_argument("--course-id", default="autograd-kit")
    sub.add_argument("--exercises", default=str(DEFAULT_EXERCISES), help="folder of exercises (one folder each)")
    sub.add_argument("--exchange", help="nbgrader exchange folder (default: <course>/exchange)")

    sub = command("release", cmd_release, "generate the student versions, prove them and release them")
    sub.add_argument("assignments", nargs="*")
    sub.add_argument("--no-exchange", action="store_true", help="only write release/")

    sub = command("collect", cmd_collect, "collect submissions from the exchange or from LMS downloads")
    sub.add_argument("assignment")
    sub.add_argument("--from", dest="source", help="a folder or zip of LMS downloads")

    sub = command("autograde", cmd_autograde, "grade every submission in parallel sandboxes")
    sub.add_argument("assignment")
    sub.add_argument("--student", action="append", help="only this student (repeatable)")
    sub.add_argument("--workers", type=int, help="worker processes (default: the machine's cores)")
    sub.add_argument("--quiet", action="store_true", help="no progress bar")

    sub = command("feedback", cmd_feedback, "write HTML feedback for every graded student")
    sub.add_argument("assignment")
    sub.add_argument("--hide-hidden-tests", action="store_true", help="keep hidden-test source out of feedback")
    sub.add_argument("--release", action="store_true",
                     help="return it to the students through the exchange (they fetch it in their Assignments panel)")

    sub = command("export", cmd_export, "export grades: nbgrader's CSV and an LMS import CSV")
    sub.add_argument("--csv", default="grades.csv")
    sub.add_argument("--lms-csv", default="grades_lms.csv")

    sub = command("check", cmd_check, "run the tests of one notebook and print each result", course=False)
    sub.add_argument("notebook")
    sub.add_argument("--timeout", type=float, default=30.0, help="seconds per cell")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kitgrade`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except FileNotFoundError as error:
        print(f"kitgrade: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
