"""What a run gives back: one ``StudentResult`` per student."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..foundations.errors import EnvironmentFault


@dataclass
class StudentResult:
    """One student's outcome in an autograde run."""

    student: str
    score: float = 0.0
    max_score: float = 0.0
    reasons: list[str] = field(default_factory=list)
    graded: bool = True
    seconds: float = 0.0  # wall-clock time its notebooks ran in the sandbox
    awaiting_manual: list[dict] = field(default_factory=list)  # answers waiting for a manual grade (manual_grades)
    manual_kept: int = 0  # manual grades kept through a regrade, which nbgrader flags for a review
    submitted: bool = True  # False: in the gradebook, but no longer in submitted/
    changed: list = field(default_factory=list)  # each grade a regrade changed (changes.GradeChange)
    regraded: bool = False  # graded before this run, and graded again by it


class ReportNotWritten(EnvironmentFault):
    """The students were graded (the gradebook holds their grades) but the report could not be written."""

    def __init__(self, message: str, results: dict[str, StudentResult]):
        super().__init__(message, status=1)
        self.results = results
