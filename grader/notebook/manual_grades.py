"""Points that wait for a person: answers nbgrader leaves to manual grading, and who still has some.

An exercise may hold written answers (nbgrader's "manually graded answer" cells, ``solution`` and
``grade``; or "manually graded task" cells). nbgrader's autograde scores such an answer 0 when the
student left it as released ("No response."), and otherwise gives it no automatic score and flags
it ``needs_manual_grade`` until a grader gives it a manual score (the formgrader). Until then
nbgrader's score of the submission counts those points as 0: it is the automatic part only, not the
final score. Every command that shows a score says how many points still wait (``autograde``'s
report, ``summary``, ``export``); ``check`` tells a student which answers their instructor grades.
"""

from __future__ import annotations

from dataclasses import dataclass

from nbgrader import utils as nbgrader_utils
from nbgrader.api import Gradebook, MissingEntry


@dataclass(frozen=True)
class Awaiting:
    """One answer of one submission that waits for a manual grade."""

    notebook: str
    cell: str
    points: float

    def as_dict(self) -> dict:
        return {"notebook": self.notebook, "cell": self.cell, "points": self.points}


def awaiting_in(submission) -> list[Awaiting]:
    """The answers of a submitted assignment (nbgrader's ``SubmittedAssignment``) that wait for a person:
    flagged ``needs_manual_grade`` by nbgrader and given no score yet (neither automatic nor manual)."""
    return [Awaiting(notebook.name, grade.name, float(grade.max_score))
            for notebook in sorted(submission.notebooks, key=lambda n: n.name)
            for grade in sorted(notebook.grades, key=lambda g: g.name)
            if grade.needs_manual_grade and grade.manual_score is None and grade.auto_score is None]


def kept_for_review_in(submission) -> int:
    """How many manual scores of a submitted assignment nbgrader kept through a regrade and flagged for a
    review (``needs_manual_grade`` again: nbgrader's autograde does that to every manual score it keeps)."""
    return sum(1 for notebook in submission.notebooks for grade in notebook.grades
               if grade.manual_score is not None and grade.needs_manual_grade)


def awaiting_by_student(gradebook: Gradebook, assignment: str) -> dict[str, list[Awaiting]]:
    """student -> the answers still waiting for a manual grade, for every student who has some."""
    try:
        submissions = gradebook.find_assignment(assignment).submissions
    except MissingEntry:
        return {}
    found = {submission.student.id: awaiting_in(submission) for submission in submissions}
    return {student: answers for student, answers in sorted(found.items()) if answers}


def points(answers: list[Awaiting] | list[dict]) -> float:
    """The points of a list of waiting answers (``Awaiting`` or their ``as_dict``)."""
    return float(sum(a.points if isinstance(a, Awaiting) else float(a["points"]) for a in answers))


@dataclass(frozen=True)
class WrittenAnswer:
    """A cell of a notebook that the instructor grades by hand, as a student's copy holds it."""

    grade_id: str
    points: float
    answered: bool | None  # None: the notebook carries no checksum to tell (not a released copy)


def written_answers(nb) -> list[WrittenAnswer]:
    """The manually graded cells of a notebook: answer cells (``solution`` and ``grade``) and tasks.

    Whether an answer was changed from the release is decided as nbgrader decides it: by the
    checksum nbgrader's ``generate_assignment`` put in the cell's metadata.
    """
    found = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not isinstance(meta, dict) or not meta.get("grade_id"):
            continue
        manual = (meta.get("grade") and meta.get("solution")) or meta.get("task")
        if not manual:
            continue
        try:
            worth = float(meta.get("points", 0))
        except (TypeError, ValueError):
            worth = 0.0
        answered = None
        if meta.get("solution") and isinstance(meta.get("checksum"), str):
            try:
                answered = nbgrader_utils.compute_checksum(cell) != meta["checksum"]
            except Exception:  # metadata nbgrader cannot read (an edited copy): it cannot tell either
                answered = None
        found.append(WrittenAnswer(str(meta["grade_id"]), worth, answered))
    return found
