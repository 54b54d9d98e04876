"""After autograde: ``kitgrade summary`` (what the class got wrong), ``feedback`` (a page per student) and
``export`` (nbgrader's CSV and the LMS's)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..course import KIT_DIR, Course
from ..foundations.errors import UsageError
from ..foundations.student_text import for_terminal
from .preflight import find_course, will_write


def cmd_summary(args) -> int:
    from ..commands.summary import summarize

    course = find_course(args)
    course.require_assignment(args.assignment)
    will_write(course, "summary", course.path("reports"), gradebook="read")
    table, page = summarize(course, args.assignment, lang=args.lang, show_hidden=args.show_hidden_tests)
    print(table)
    print(f"summary: {page}")
    return 0


def cmd_feedback(args) -> int:
    from ..feedback import generate_feedback
    from ..commands.release import exchange_root

    course = find_course(args)
    course.require_assignment(args.assignment)
    if not course.students_with("autograded", args.assignment):
        raise UsageError(f"no autograded submission of {args.assignment} yet; run `kitgrade autograde "
                         f"{args.assignment}` first")
    students = require_graded(course, args.assignment, args.student)
    will_write(course, "feedback", course.path("feedback"),
               *([exchange_root(course) / course.course_id / "feedback"] if args.release else []), gradebook="read")
    # hidden by default; --hide-hidden-tests is still accepted (it was the way to hide them)
    hide = not args.show_hidden_tests and (args.hide_hidden_tests or course.settings().hide_hidden_tests_in_feedback)
    written = generate_feedback(course, args.assignment, hide_hidden_tests=hide, students=students)
    print(f"{args.assignment}: {len(written.pages)} feedback file(s) in feedback/" + (" (hidden tests left out)" if hide else ""))
    waiting = [s for s in awaiting_manual(course, args.assignment) if not students or s in students]
    if waiting:
        print(f"note: written answers of {len(waiting)} student(s) wait for a manual grade ({', '.join(waiting)}): "
              "their feedback shows the score without them; run feedback again once they are graded", file=sys.stderr)
    if args.release:
        from ..feedback import release_feedback

        released, skipped = release_feedback(course, args.assignment, students)
        print(f"{args.assignment}: feedback of {len(released)} student(s) released to the exchange: {', '.join(released)}")
        if skipped:
            print(f"{args.assignment}: not released (submitted outside the exchange, or not graded): {', '.join(skipped)}")
    if written.unrendered:
        print(f"kitgrade feedback: {len(written.unrendered)} of {len(written.pages)} page(s) could not be rendered; each "
              "of these students got a plain page that gives their score and says so:", file=sys.stderr)
        for student, notebook, why in written.unrendered:
            print(f"  {for_terminal(student)}/{for_terminal(notebook)}: {for_terminal(why)}", file=sys.stderr)
        return 1
    return 0


def require_graded(course: Course, assignment: str, students: list[str] | None) -> list[str] | None:
    """The students named with ``--student`` (None: all), each graded by ``autograde`` (or in its
    report, as not graded): else a mistake, refused before anything is written."""
    if not students:
        return None
    known = set(course.students_with("autograded", assignment))
    report = course.path("reports", f"{assignment}.json")
    try:
        known |= set(json.loads(report.read_text(encoding="utf-8"))) if report.is_file() else set()
    except (OSError, ValueError):
        pass
    unknown = [s for s in students if s not in known]
    if unknown:
        raise UsageError(f"{', '.join(map(repr, unknown))}: not graded by `kitgrade autograde {assignment}` yet, so "
                         f"there is no feedback to write; graded: {', '.join(sorted(known)[:20])}")
    return list(dict.fromkeys(students))


def awaiting_manual(course: Course, assignment: str) -> list[str]:
    """The students with written answers of ``assignment`` still waiting for a manual grade."""
    from nbgrader.api import Gradebook

    from ..notebook.manual_grades import awaiting_by_student

    with Gradebook(course.db_url, course.course_id) as gradebook:
        return list(awaiting_by_student(gradebook, assignment))


def cmd_export(args) -> int:
    from ..commands.export import AwaitingManualGrades, export_grades

    course = find_course(args)
    written = [] if args.dry_run else [p if p.is_absolute() else course.root / p
                                       for p in (Path(args.csv), Path(args.lms_csv))]
    will_write(course, "export", *written, *([course.path(KIT_DIR)] if args.roster and not args.dry_run else []),
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
