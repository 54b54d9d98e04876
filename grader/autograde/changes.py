"""What a regrade changed: each graded cell's automatic score before the run and after it.

After the tests of an assignment change (a new release), ``kitgrade autograde --force`` grades
everyone again; the run lists every grade it changed, per student and cell, so the instructor
sees whom the new tests moved before the grades go out.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from nbgrader.api import Gradebook, MissingEntry

from ..course import Course
from .gradebook_records import GradebookRecords


@dataclass(frozen=True)
class GradeChange:
    """One cell's automatic score, changed by a regrade (``None``: it had none)."""

    notebook: str
    cell: str
    old: float | None
    new: float | None

    def __str__(self) -> str:
        def shown(score):
            return "none" if score is None else f"{score:g}"

        return f"{self.notebook}, {self.cell}: {shown(self.old)} -> {shown(self.new)}"


def changed_grades(course: Course, assignment: str, before: GradebookRecords, students: list[str]) -> dict:
    """``{student: [GradeChange, ...]}`` for each of ``students`` the gradebook held before the run."""
    changes = {}
    with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gradebook:
        warnings.simplefilter("ignore")
        for student in students:
            saved = before.submissions.get(student)
            if saved is None:
                continue
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                continue
            found = []
            for notebook in submission.notebooks:
                old_grades = saved["notebooks"].get(notebook.name, {}).get("grades", {})
                for grade in notebook.grades:
                    old = old_grades.get(grade.name, (None, None))[0]
                    if old != grade.auto_score:
                        found.append(GradeChange(notebook.name, grade.name, old, grade.auto_score))
            if found:
                changes[student] = sorted(found, key=lambda c: (c.notebook, c.cell))
    return changes
