"""``kitgrade autograde``: its options checked, the run (``grader/autograde/``), its table and exit status."""

from __future__ import annotations

import sys

from ..course import KIT_DIR
from ..foundations.errors import UsageError
from ..foundations.stop_signals import stops_as_keyboard_interrupt
from .preflight import find_course, will_write


def cmd_autograde(args) -> int:
    from ..sandbox import spare_zygotes

    # from the command's first line, not only once the run has begun: the workers' zygotes are started
    # first, and a command stopped as it imports must end them
    with stops_as_keyboard_interrupt():
        tls = [args.tls_ca_file, args.tls_cert, args.tls_key]
        if any(tls) and not all(tls):
            raise UsageError("--tls-ca-file, --tls-cert and --tls-key go together")
        if any(tls) and not args.cluster:
            raise UsageError("the --tls-* options are for --cluster")
        try:
            if not args.cluster:  # they start up while this process imports what it needs
                start_zygotes(args)
            return _autograde(args, tls)
        finally:
            spare_zygotes.reap()  # (its workers are gone: the zygotes are idle, or ending)


def _autograde(args, tls: list) -> int:
    course = find_course(args)
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
    will_write(course, "autograde", course.path("autograded"), course.path("reports"), course.path(KIT_DIR))
    course.settings().unsafe_no_sandbox |= args.unsafe_no_sandbox
    if not args.cluster:  # the zygotes load the students' modules while this process imports the rest
        load_zygotes(course, args.assignment, students, args.workers)
    from ..autograde import Interrupted, ReportNotWritten, autograde
    from ..autograde.dask_executor import ClusterError
    from ..autograde.report import format_report

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


def start_zygotes(args) -> None:
    """Start a zygote for each worker the run may fork (``grader/sandbox/spare_zygotes.py``): at most
    one per core and per student named (a worker beyond them starts its own)."""
    from ..sandbox import bubblewrap, spare_zygotes
    from ..foundations.settings import default_workers

    if bubblewrap.unavailable_because() is None or args.unsafe_no_sandbox:  # (else the run refuses, and says why)
        spare_zygotes.start(min(args.workers or default_workers(), default_workers(), len(args.student or ()) or 1 << 16))


def load_zygotes(course, assignment: str, students: list[str], workers: int | None) -> None:
    """Keep as many zygotes as the run's workers, loading what ``autograde`` itself will ask of them."""
    from ..sandbox import spare_zygotes, workers as grading_workers
    from ..foundations.settings import worker_count

    notebooks = len(students) * max(1, len(course.source_notebooks(assignment)))
    spare_zygotes.load(min(worker_count(workers, course.settings()), notebooks),
                       grading_workers.zygote_modules(course.preload(assignment),
                                                      course.policy(assignment)["forbidden_imports"]))
