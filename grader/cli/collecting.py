"""``kitgrade collect``: submissions from nbgrader's exchange, or from LMS downloads (``--from``)."""

from __future__ import annotations

from pathlib import Path

from ..course import KIT_DIR
from ..foundations.errors import UsageError
from .preflight import find_course, will_write


def cmd_collect(args) -> int:
    from ..commands.collect import collect_from_downloads, collect_from_exchange

    course = find_course(args)
    course.require_assignment(args.assignment, released=True)
    will_write(course, "collect", course.path("submitted"), course.path(KIT_DIR),
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
