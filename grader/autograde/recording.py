"""A student's notebooks ran: nbgrader grades them and the ledger records it (or, if the machine
fails meanwhile, what nbgrader wrote is undone and the student is "not graded, because ...")."""

from __future__ import annotations

import json
import logging
import shutil
import warnings
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters.base import NbGraderException
from traitlets.config import Config

from ..course import KIT_DIR, Course
from ..foundations.faults import describe, error_text, logged_errors
from ..notebook.notebook_chains import autograde_preprocessors, sanitize_preprocessors

STAGED = f"{KIT_DIR}/staged"
#: nbgrader's own log while it grades (its errors are caught and reported by the kit)
NBGRADER_LOG_LEVEL = "ERROR"


def write_record(task: dict, outcome: dict) -> None:
    """Store the execution record a worker returned (read by ``ReplayExecution``)."""
    record = outcome.pop("record", None)
    if record is None:
        return
    path = Path(task["record"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(record, handle)


def grade_student(run, student: str) -> str | None:
    """nbgrader grades one student of ``run`` and the ledger records it; returns None, or why they are not graded.

    If the machine fails meanwhile (the disk fills up under ``autograded/`` or ``.kitgrade/``, the
    gradebook is locked), what the gradebook got of this grading is undone (``run.before`` holds it
    as it was) and so is the ledger's entry: the student has no grade from this run (an earlier one
    is kept), and the next run grades them. If the undo fails too, the ledger's ``unfinished`` mark
    stays, and export leaves out what the gradebook holds of them. If nbgrader fails on the
    notebooks for any other reason, the same happens, with nbgrader's reason in one line
    (``nbgrader_failed``): what it recorded of a grading it did not finish is never a grade.
    """
    course, assignment, ledger = run.course, run.assignment, run.ledger
    try:
        ledger.begin(student)
    except OSError as error:  # nothing of this run is in the gradebook: an earlier grade stays as it was
        return describe(error, ledger.path) or f"the grading could not be noted ({error})"
    try:
        errors = grade_with_nbgrader(course, assignment, [student], run.run_dir)
        faults = [e for e in errors if describe(e)]
        if faults:
            raise faults[0]
        failures = [e for e in errors if not isinstance(e, NbGraderException)] or errors
        if failures:  # never taken as a grade: nbgrader recorded part of it, or nothing
            why = nbgrader_failed(failures[0])
        else:
            ledger.record(student, run.results[student].reasons)  # graded and in the gradebook: a rerun keeps it
            return None
    except Exception as error:
        why = describe(error, course.path("autograded", student, assignment), course.gradebook_path) \
            or f"nbgrader could not grade this submission ({error_text(error)})"
    return _undo(run, student, why)


def nbgrader_failed(error: BaseException) -> str:
    """Why a student is not graded when nbgrader failed on their notebooks (not the machine): one
    line, no traceback. The notebooks passed the kit's checks (``grader.notebook.notebook_outputs``), so this
    is a case the kit does not know yet."""
    text = str(error).strip().splitlines()[0][:160] if str(error).strip() else ""
    return (f"nbgrader could not grade this submission ({type(error).__name__}{': ' + text if text else ''}); "
            "a case the kit does not handle yet: please report it to the kit's maintainers")


def _undo(run, student: str, why: str) -> str:
    """Put back what a failed grading of ``student`` wrote; return why they are not graded."""
    course = run.course
    shutil.rmtree(course.path("autograded", student, run.assignment), ignore_errors=True)
    try:
        course.path("autograded", student).rmdir()  # nothing else of theirs there: no empty folder left
    except OSError:
        pass
    try:
        run.before.restore(student)
        if student in run.before.submissions:
            why += "; the gradebook keeps the grade of the earlier run"
    except Exception as error:  # the gradebook cannot be written either (still locked, the disk still full)
        problem = describe(error, gradebook=course.gradebook_path) or error
        # the ledger's mark stays: export leaves the grade out, the next run grades them again
        return why + f"; part of this grading may be in the gradebook ({problem}): it is not exported as a grade"
    try:
        run.ledger.undone(student)
    except Exception as error:  # the mark stays: the next run grades them again, and the grade is theirs
        why += f"; {describe(error, run.ledger.path) or error}"
    return why


def grade_with_nbgrader(course: Course, assignment: str, students: list[str], run_dir: Path) -> list[BaseException]:
    """Run nbgrader's ``Autograde`` converter over the staged copies, replaying the recorded outputs.

    Returns the exceptions nbgrader caught and logged (a submission it failed to grade: nbgrader
    removed its ``autograded/`` folder, but may have recorded part of it in the gradebook)."""
    if not students:
        return []
    from nbgrader.converters import Autograde

    config = course.config()
    config.merge(Config({
        "Autograde": {"sanitize_preprocessors": sanitize_preprocessors(in_worker=False),
                      "autograde_preprocessors": autograde_preprocessors(), "create_student": True},
        "ReplayExecution": {"run_directory": str(run_dir)},
        "BaseConverter": {"force": True},
    }))
    # one student, or every staged one (the staged copies are exactly this run's submissions)
    student_id = students[0] if len(students) == 1 else "*"
    coursedir = course.coursedir(assignment_id=assignment, student_id=student_id, submitted_directory=STAGED)
    converter = Autograde(coursedir=coursedir, config=config)
    converter.log.setLevel(NBGRADER_LOG_LEVEL)
    converter.force = True
    with logged_errors(converter.log) as errors:
        # every failure nbgrader logs is the kit's to report, in its words (a reason of the report)
        converter.log.addFilter(_errors_not_shown)
        try:
            with warnings.catch_warnings():  # nbgrader's own SQLAlchemy session warnings are not ours to show
                warnings.simplefilter("ignore")
                converter.start()
        except NbGraderException as error:
            if all(error is not seen for seen in errors):
                errors.append(error)
        finally:
            converter.log.removeFilter(_errors_not_shown)
    return errors


def _errors_not_shown(record) -> bool:
    return record.levelno < logging.ERROR


def score_missing_as_zero(course: Course, assignment: str, students: list[str]) -> None:
    """Give a zero to every student whose submission had no gradable notebook."""
    with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gradebook:
        for student in students:
            try:
                gradebook.find_submission(assignment, student)
                continue
            except MissingEntry:
                pass
            warnings.simplefilter("ignore")
            gradebook.update_or_create_student(student)
            submission = gradebook.update_or_create_submission(assignment, student)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gradebook.db.commit()
