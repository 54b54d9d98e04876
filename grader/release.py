"""``release``: nbgrader generates the student versions; the kit proves each one before it goes out."""

from __future__ import annotations

from dataclasses import dataclass

import nbformat

from .autograde import sanitize
from .course import Course, ensure_nbgrader_tools_on_path
from .local_grading import LocalGrader, NotebookResult
from .sandbox.policy import policy_for
from .sandbox.scratch import read_data_files


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
    """Run nbgrader's ``GenerateAssignment`` converter (student versions in ``release/``, cells in the gradebook)."""
    ensure_nbgrader_tools_on_path()
    from nbgrader.converters import GenerateAssignment

    coursedir = course.coursedir(assignment_id=assignment)
    converter = GenerateAssignment(coursedir=coursedir, config=course.config())
    converter.log.setLevel(log_level)
    converter.force = True
    converter.start()


def prove_release(course: Course, assignment: str) -> list[ReleaseProof]:
    """Grade the solution (must pass every test) and the blank release (must fail them), hidden tests included."""
    settings = course.settings()
    policy = policy_for(settings, course.policy(assignment)["forbidden_imports"])
    data_files = read_data_files(course.path("source", assignment), policy.limits)  # as autograde copies them
    proofs = []
    with LocalGrader(settings.preload_modules) as grader:
        for source in course.source_notebooks(assignment):
            graded = {}
            for kind, path in (("solution", source), ("blank", course.path("release", assignment, source.name))):
                nb = nbformat.read(path, as_version=4)
                nb, _ = sanitize(nb, course.config(), course.db_url, assignment, source.stem)
                _, graded[kind] = grader.execute_and_score(nb, policy, data_files)
            proofs.append(ReleaseProof(source.stem, graded["solution"], graded["blank"]))
    return proofs


def release_to_exchange(course: Course, assignment: str, log_level: str = "ERROR") -> bool:
    """Put the release into nbgrader's exchange (``nbgrader release_assignment``)."""
    from nbgrader.apps.api import NbGraderAPI

    api = NbGraderAPI(coursedir=course.coursedir(), config=course.config())
    api.log.setLevel(log_level)
    result = api.release_assignment(assignment)
    return bool(result.get("success"))
