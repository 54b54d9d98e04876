"""``kitgrade init`` (a course made, the exercises staged) and ``kitgrade release`` (proven, then released)."""

from __future__ import annotations

from pathlib import Path

from .preflight import find_course, will_write


def cmd_init(args) -> int:
    from ..commands.course_init import init_course, kit_exercises

    exercises = Path(args.exercises) if args.exercises else kit_exercises()
    result = init_course(Path(args.directory), args.course_id, exercises,
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
    from ..commands.release import check_exchange, exchange_root, generate_release, prove_release, release_to_exchange

    course = find_course(args)
    assignments = args.assignments or course.assignments()
    if not assignments:
        course.require_assignment("")  # says what is missing
    for assignment in assignments:
        course.require_assignment(assignment)
    if not args.no_exchange:
        check_exchange(course)
    will_write(course, "release", course.path("release"),
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
