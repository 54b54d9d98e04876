"""``feedback``: nbgrader's HTML feedback per student, optionally without the hidden tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from traitlets.config import Config

from .course import Course, ensure_nbgrader_tools_on_path
from .errors import EnvironmentFault
from .faults import describe, logged_errors
from .preprocessors import HideHiddenTests
from .sandbox.trusted_tests import is_trusted_test
from .report import write_whole
from .student_text import CSP_META, for_html, with_csp


def generate_feedback(course: Course, assignment: str, hide_hidden_tests: bool = False,
                      log_level: str = "ERROR") -> list[Path]:
    """Run nbgrader's ``GenerateFeedback`` converter for every autograded student."""
    ensure_nbgrader_tools_on_path()
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters import GenerateFeedback
    from nbgrader.converters.base import NbGraderException

    config = course.config()
    preprocessors = [_pending_grades(), CSSHTMLHeaderPreprocessor]
    if hide_hidden_tests:
        preprocessors.insert(0, _HideHiddenTests)
    config.merge(Config({"GenerateFeedback": {"preprocessors": preprocessors}, "BaseConverter": {"force": True},
                         # a student's markup in an output or a markdown cell is shown, never run
                         "HTMLExporter": {"sanitize_html": True,
                                          "filters": {"clean_html": "grader.student_text.clean_html"},
                                          # nbgrader's page, with pending written answers said to be pending
                                          "template_name": "kit_feedback",
                                          "extra_template_basedirs": [str(TEMPLATES), _nbgrader_templates()]}}))
    config.GenerateFeedback.exporter_class = _feedback_exporter()
    coursedir = course.coursedir(assignment_id=assignment, student_id="*")
    converter = GenerateFeedback(coursedir=coursedir, config=config)
    converter.log.setLevel(log_level)
    converter.force = True
    with logged_errors(converter.log) as errors:
        try:
            converter.start()
        except NbGraderException:
            faults = [describe(e, course.path("feedback"), course.gradebook_path) for e in errors]
            if not any(faults):
                raise
            missing = [s for s in course.students_with("autograded", assignment)
                       if not list(course.path("feedback", s, assignment).glob("*.html"))]
            for student in missing:  # nbgrader removed their feedback folder and left the student's, empty
                try:
                    course.path("feedback", student).rmdir()
                except OSError:
                    pass
            raise EnvironmentFault(f"no feedback for {', '.join(missing)}, because {next(f for f in faults if f)} "
                                   "(nbgrader removed what it had begun of it); run it again once this is put right",
                                   status=1) from None
    write_ungraded_notices(course, assignment)
    pages = sorted(course.path("feedback").glob(f"*/{assignment}/*.html"))
    for page in pages:  # no script runs on a page but MathJax, whatever the cleaning above missed
        text = page.read_text(encoding="utf-8")
        if CSP_META not in text:
            write_whole(page, with_csp(text))
    return pages


TEMPLATES = Path(__file__).resolve().parent / "templates"


class _HideHiddenTests(HideHiddenTests):
    """``HideHiddenTests`` knowing which test cells the kit's grader runs as trusted tests."""

    is_trusted_test = staticmethod(is_trusted_test)


def _nbgrader_templates() -> str:
    """nbgrader's own feedback template's folder, which ``kit_feedback`` extends."""
    import nbgrader

    return str(Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates")


def _pending_grades():
    """nbgrader's ``GetGrades``, marking the answers that wait for a person's grade as pending, not 0.

    nbgrader gives such an answer the score 0 until someone grades it, and its feedback page shows
    that 0 as if it were final. The cell is marked ``pending`` (the page says "pending / 2") and the
    page's heading says how many points still wait for hand grading.
    """
    from nbgrader.preprocessors import GetGrades

    class PendingGrades(GetGrades):
        def preprocess(self, nb, resources):
            resources.setdefault("nbgrader", {})["pending"] = 0.0
            return super().preprocess(nb, resources)

        def _get_score(self, cell, resources):
            super()._get_score(cell, resources)
            grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                              self.assignment_id, self.student_id)
            if grade.needs_manual_grade and grade.manual_score is None:
                cell.metadata.nbgrader["pending"] = True
                resources["nbgrader"]["pending"] += grade.max_score

    return PendingGrades


def _feedback_exporter():
    """nbconvert's HTML exporter, with markdown cleaned as ``sanitize_html`` cleans outputs: nbgrader's
    feedback template renders markdown cells (the student's own among them) and comments without it."""
    from nbconvert.exporters import HTMLExporter
    from jinja2 import FileSystemLoader, pass_context
    from traitlets import default

    from .student_text import clean_html

    class FeedbackHTMLExporter(HTMLExporter):
        @default("extra_loaders")
        def _nbgrader_loader(self):  # for kit_feedback's {% extends 'feedback/index.html.j2' %}
            return [FileSystemLoader(_nbgrader_templates())]

        @pass_context
        def markdown2html(self, context, source):
            return clean_html(super().markdown2html(context, source))

    return FeedbackHTMLExporter


def release_feedback(course: Course, assignment: str, log_level: str = "ERROR") -> tuple[list[str], list[str]]:
    """``nbgrader release_feedback``: each student's feedback into the exchange, where only they find it.

    Returns the students whose feedback was released and those skipped: nbgrader names each
    released file by a hash of the submission's secret, which only a submission that came
    through the exchange has (not one collected from LMS downloads).
    """
    from nbgrader.apps.api import NbGraderAPI

    released, skipped = [], []
    for folder in sorted(course.path("feedback").glob(f"*/{assignment}")):
        student = folder.parent.name
        # the kit's autograde stages notebooks and timestamp only: the secret comes from the collected
        # submission (always the newest: a resubmission has a new secret)
        for name in ("submission_secret.txt", "timestamp.txt"):
            collected = course.path("submitted", student, assignment, name)
            if collected.is_file():
                shutil.copy(collected, folder / name)
        ready = (folder / "submission_secret.txt").is_file() and (folder / "timestamp.txt").is_file()
        (released if ready and list(folder.glob("*.html")) else skipped).append(student)
    if not released:
        return released, skipped
    api = NbGraderAPI(coursedir=course.coursedir(student_id_exclude=",".join(skipped)), config=course.config())
    api.log.setLevel(log_level)
    result = api.release_feedback(assignment)
    if not result.get("success"):
        raise RuntimeError(f"nbgrader release_feedback failed: {result.get('error') or result.get('log')}")
    return released, skipped


def write_ungraded_notices(course: Course, assignment: str) -> None:
    """A short HTML page for each student with nothing gradable (no notebook nbgrader could read)."""
    report_path = course.path("reports", f"{assignment}.json")
    if not report_path.exists():
        return
    for student, result in json.loads(report_path.read_text()).items():
        folder = course.path("feedback", student, assignment)
        if list(folder.glob("*.html")) or list(course.path("autograded", student, assignment).glob("*.ipynb")):
            continue
        folder.mkdir(parents=True, exist_ok=True)
        items = "".join(f"<li>{for_html(reason)}</li>" for reason in result["reasons"])
        (folder / "not_graded.html").write_text(
            f"<!DOCTYPE html><html><head>{CSP_META}<meta charset='utf-8'><title>{for_html(assignment)}</title></head>"
            f"<body><h1>{for_html(assignment)}: "
            f"{'not graded' if result['score'] is None else format(result['score'], 'g')} / {result['max_score']:g}</h1>"
            f"<p>Your submission could not be graded:</p><ul>{items}</ul></body></html>", encoding="utf-8")
