"""Each submission checked and copied in nbgrader's layout under ``.kitgrade/staged`` (the
submitted files are only read), and a task made for each of its notebooks."""

from __future__ import annotations

import shutil

import nbformat

from ..foundations.faults import describe
from ..notebook.released_files import read_released_files
from ..sandbox.policy import policy_for
from ..notebook.submission import SubmissionUnreadable, grade_ids, stage_submission
from .recording import STAGED


def stage_all(run) -> list[dict]:
    """Stage ``run.to_grade``; return the tasks (one per notebook). A student whose folder cannot be
    read or staged goes to ``run.not_graded`` with the reason."""
    course, assignment = run.course, run.assignment
    expected = {source.stem: grade_ids(nbformat.read(source, as_version=4))
                for source in course.source_notebooks(assignment)}
    for student in run.to_grade:
        if course.path(STAGED, student, assignment).exists():
            shutil.rmtree(course.path(STAGED, student, assignment))
    size_limit = run.policy.limits.notebook_size_limit_mb * 1024 * 1024
    tasks = []
    for student in run.to_grade:
        staged = course.path(STAGED, student, assignment)
        try:
            run.results[student].reasons += stage_submission(course.path("submitted", student, assignment), staged,
                                                             expected, size_limit)
        except SubmissionUnreadable as error:  # the machine's or the folder's fault, not the student's
            run.not_graded[student] = f"the submission could not be read ({error})"
            continue
        except OSError as error:  # its copy in .kitgrade/staged could not be written
            shutil.rmtree(staged, ignore_errors=True)
            run.not_graded[student] = describe(error, staged) or f"it could not be staged ({error})"
            continue
        for notebook in sorted(staged.glob("*.ipynb")):
            tasks.append({"student": student, "assignment": assignment, "notebook": notebook.stem,
                          "path": str(notebook), "db_url": f"sqlite:///{run.gradebook_copy}",
                          "record": str(run.run_dir / assignment / student / f"{notebook.stem}.json"),
                          "policy": run.policy, "data_files": run.data_files})
    return tasks


def sandbox_policy(run):
    """The sandbox's policy of ``run``'s assignment, and the data files a student receives with it
    (``released_files``: read once per run)."""
    policy = policy_for(run.settings, run.course.policy(run.assignment)["forbidden_imports"],
                        run.course.protected_paths())
    return policy, read_released_files(run.course, run.assignment, policy.limits)
