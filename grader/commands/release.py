"""``release``: nbgrader generates the student versions; the kit proves each one before it goes out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from ..notebook.notebook_chains import sanitize
from ..course import Course, ensure_nbgrader_tools_on_path
from ..foundations.errors import EnvironmentFault, UsageError
from ..foundations.faults import describe, logged_errors
from .local_grading import LocalGrader, NotebookResult
from ..sandbox.policy import policy_for
from ..notebook.released_files import read_released_files


@dataclass
class ReleaseProof:
    """The instructor solution and the blank release of one notebook, graded with every test."""

    notebook: str
    solution: NotebookResult
    blank: NotebookResult

    @property
    def problems(self) -> list[str]:
        problems = [f"{self.notebook}: the instructor solution fails {t.grade_id!r} ({t.score:g}/{t.max_score:g}; {t.error})"
                    for t in self.solution.tests if not t.passed]
        problems += [f"{self.notebook}: the blank release passes {t.grade_id!r} ({t.score:g}/{t.max_score:g})"
                     for t in self.blank.tests if t.score > 0]
        if not self.solution.tests:
            problems.append(f"{self.notebook}: no autograded tests")
        return problems


def generate_release(course: Course, assignment: str, log_level: str = "ERROR") -> None:
    """Run nbgrader's ``GenerateAssignment`` converter (student versions in ``release/``, cells in the gradebook).

    If the machine fails meanwhile (the disk fills up), nbgrader removes ``release/<assignment>``;
    the exchange is not touched, and the command says so (``EnvironmentFault``).
    """
    ensure_nbgrader_tools_on_path()
    from nbgrader.converters import GenerateAssignment
    from nbgrader.converters.base import NbGraderException

    coursedir = course.coursedir(assignment_id=assignment)
    converter = GenerateAssignment(coursedir=coursedir, config=course.config())
    converter.log.setLevel(log_level)
    converter.force = True
    with logged_errors(converter.log) as errors:
        try:
            converter.start()
        except NbGraderException:
            faults = [describe(e, course.path("release", assignment), course.gradebook_path) for e in errors]
            if not any(faults):
                raise
            raise EnvironmentFault(f"{assignment}: not released, because {next(f for f in faults if f)}; nbgrader "
                                   f"removed {course.path('release', assignment)} and the exchange was not changed; "
                                   "run the release again once this is put right", status=1) from None


def prove_release(course: Course, assignment: str) -> list[ReleaseProof]:
    """Grade the solution (must pass every test) and the blank release (must fail them), hidden tests included."""
    settings = course.settings()
    policy = policy_for(settings, course.policy(assignment)["forbidden_imports"])
    data_files = read_released_files(course, assignment, policy.limits)  # what students receive, as autograde copies them
    proofs = []
    with LocalGrader(course.preload(assignment)) as grader:
        for source in course.source_notebooks(assignment):
            graded = {}
            for kind, path in (("solution", source), ("blank", course.path("release", assignment, source.name))):
                nb = nbformat.read(path, as_version=4)
                nb, _ = sanitize(nb, course.config(), course.db_url, assignment, source.stem)
                _, graded[kind] = grader.execute_and_score(nb, policy, data_files)
            proofs.append(ReleaseProof(source.stem, graded["solution"], graded["blank"]))
    return proofs


def exchange_root(course: Course) -> Path:
    """nbgrader's exchange folder of the course (``Exchange.root``; nbgrader's default if not set)."""
    from nbgrader.exchange.default import Exchange

    return Path(Exchange(config=course.config()).root)


def check_exchange(course: Course) -> None:
    """Refuse to release into an exchange that is not there (a moved course, nbgrader's unset default)."""
    root = exchange_root(course)
    if not course.course_id:
        raise UsageError(f"the course has no id (CourseDirectory.course_id in {course.root / 'nbgrader_config.py'}); "
                         "nbgrader's exchange needs one (or release with --no-exchange)")
    if not root.is_dir():
        raise UsageError(f"the exchange folder {root} (Exchange.root) does not exist; create it "
                         f"(nbgrader needs it writable by every student), set Exchange.root in nbgrader_config.py, "
                         "or release with --no-exchange")


def _same_files(a: Path, b: Path) -> bool:
    def listing(folder: Path) -> dict:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    return listing(a) == listing(b)


def release_to_exchange(course: Course, assignment: str, log_level: str = "ERROR") -> tuple[str, str]:
    """Put the release into nbgrader's exchange (``nbgrader release_assignment --force``).

    Returns ``(state, detail)``: ``"new"``, ``"updated"`` (the exchange held another version),
    ``"unchanged"`` (it already held this one) or ``"failed"`` (with nbgrader's reason).
    """
    from nbgrader.apps.api import NbGraderAPI

    outbound = exchange_root(course) / course.course_id / "outbound" / assignment
    if outbound.is_dir() and _same_files(outbound, course.path("release", assignment)):
        return "unchanged", ""
    state = "updated" if outbound.is_dir() else "new"
    config = course.config()
    config.ExchangeReleaseAssignment.force = True
    api = NbGraderAPI(coursedir=course.coursedir(), config=config)
    api.log.setLevel(log_level)
    result = api.release_assignment(assignment)
    if not result.get("success"):
        lines = [line for line in (result.get("log") or result.get("error") or "").splitlines() if line.strip()]
        return "failed", lines[-1] if lines else "nbgrader gave no reason"
    return state, ""
