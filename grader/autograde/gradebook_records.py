"""The gradebook as it was before a run, so that what a failed grading wrote can be put back."""

from __future__ import annotations

import warnings

from nbgrader.api import Gradebook, MissingEntry

from ..course import Course


class GradebookRecords:
    """What grading may change in the gradebook for each of ``students``, as it was: ``restore(student)``
    puts a student's back.

    nbgrader's ``Autograde`` creates the student and the submission, sets its timestamp, each
    notebook's late penalty, each grade's automatic score and each comment's automatic text;
    manual scores and comments are the instructor's and grading leaves them alone. Read once, before
    anyone is graded (one run grades a student once).
    """

    def __init__(self, course: Course, assignment: str, students: list[str]):
        self.course, self.assignment = course, assignment
        self.existed: set[str] = set()
        self.submissions: dict[str, dict] = {}
        with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gradebook:
            warnings.simplefilter("ignore")
            known = {s.id for s in gradebook.students}
            self.existed = known & set(students)
            try:
                submissions = gradebook.find_assignment(assignment).submissions
            except MissingEntry:
                submissions = []
            for submission in submissions:
                if submission.student.id in self.existed:
                    self.submissions[submission.student.id] = {"timestamp": submission.timestamp, "notebooks": {
                        notebook.name: {"penalty": notebook.late_submission_penalty,
                                        "grades": {g.name: (g.auto_score, g.needs_manual_grade) for g in notebook.grades},
                                        "comments": {c.name: c.auto_comment for c in notebook.comments}}
                        for notebook in submission.notebooks}}

    def restore(self, student: str) -> None:
        saved = self.submissions.get(student)
        with warnings.catch_warnings(), Gradebook(self.course.db_url, self.course.course_id) as gradebook:
            warnings.simplefilter("ignore")
            if saved is None:
                try:
                    gradebook.remove_submission(self.assignment, student)
                except MissingEntry:
                    pass
                if student not in self.existed:
                    try:
                        if not gradebook.find_student(student).submissions:
                            gradebook.remove_student(student)
                    except MissingEntry:
                        pass
                return
            submission = gradebook.find_submission(self.assignment, student)
            submission.timestamp = saved["timestamp"]
            for notebook in submission.notebooks:
                kept = saved["notebooks"].get(notebook.name)
                if kept is None:
                    continue
                notebook.late_submission_penalty = kept["penalty"]
                for grade in notebook.grades:
                    if grade.name in kept["grades"]:
                        grade.auto_score, grade.needs_manual_grade = kept["grades"][grade.name]
                for comment in notebook.comments:
                    if comment.name in kept["comments"]:
                        comment.auto_comment = kept["comments"][comment.name]
            gradebook.db.commit()
