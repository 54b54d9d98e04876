"""``generate_feedback``: nbgrader's ``GenerateFeedback`` over the class, a page per student and
notebook; a page nbconvert cannot render is replaced by the kit's, the others are written."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from course_files import notebook_language
from traitlets.config import Config

from ..foundations.atomic import write_whole
from ..course import Course, ensure_nbgrader_tools_on_path
from ..foundations.errors import EnvironmentFault
from ..foundations.faults import describe, logged_errors
from ..foundations.student_text import CSP_META, with_csp
from .exporter import TEMPLATES, HideHiddenTestsOfTheKit, feedback_exporter, nbgrader_templates, pending_grades
from .pages import for_student, not_graded_page, unrendered_page


@dataclass
class Feedback:
    """What ``generate_feedback`` wrote: every page, and the pages it could not render
    (student, notebook, why: for the instructor), each replaced by the kit's page."""

    pages: list[Path] = field(default_factory=list)
    unrendered: list[tuple[str, str, str]] = field(default_factory=list)


def generate_feedback(course: Course, assignment: str, hide_hidden_tests: bool = False, students: list[str] | None = None,
                      log_level: str = "ERROR") -> Feedback:
    """Run nbgrader's ``GenerateFeedback`` converter for every autograded student (or ``students``),
    then write the "not graded" pages."""
    ensure_nbgrader_tools_on_path()
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters.base import NbGraderException

    config = course.config()
    preprocessors = [pending_grades(), CSSHTMLHeaderPreprocessor]
    if hide_hidden_tests:
        preprocessors.insert(0, HideHiddenTestsOfTheKit)
    config.merge(Config({"GenerateFeedback": {"preprocessors": preprocessors}, "BaseConverter": {"force": True},
                         # a student's markup in an output or a markdown cell is shown, never run
                         "HTMLExporter": {"sanitize_html": True,
                                          "filters": {"clean_html": "grader.foundations.student_text.clean_html"},
                                          # nbgrader's page, with pending written answers said to be pending
                                          "template_name": "kit_feedback",
                                          "extra_template_basedirs": [str(TEMPLATES), nbgrader_templates()]}}))
    config.GenerateFeedback.exporter_class = feedback_exporter()
    everyone = course.students_with("autograded", assignment)
    others = sorted(set(everyone) - set(students)) if students else []
    coursedir = course.coursedir(assignment_id=assignment, student_id="*", student_id_exclude=",".join(others))
    converter = _converter_class()(coursedir=coursedir, config=config)
    converter.log.setLevel(log_level)
    converter.force = True
    written = Feedback()
    try:
        with logged_errors(converter.log) as errors:
            try:
                converter.start()
            except NbGraderException:
                faults = [describe(e, course.path("feedback"), course.gradebook_path) for e in errors]
                if not any(faults):
                    raise
                _machine_failed(course, assignment, next(f for f in faults if f))
        written.unrendered = list(getattr(converter, "unrendered", []))
        write_ungraded_notices(course, assignment, hide_hidden_tests, students)
    finally:
        written.pages = _with_policy(course, assignment, students)
    return written


def _machine_failed(course: Course, assignment: str, fault: str) -> None:
    missing = [s for s in course.students_with("autograded", assignment)
               if not list(course.path("feedback", s, assignment).glob("*.html"))]
    for student in missing:  # nbgrader removed their feedback folder and left the student's, empty
        try:
            course.path("feedback", student).rmdir()
        except OSError:
            pass
    raise EnvironmentFault(f"no feedback for {', '.join(missing)}, because {fault} (nbgrader removed what it had "
                           "begun of it); run it again once this is put right", status=1) from None


def _with_policy(course: Course, assignment: str, students: list[str] | None) -> list[Path]:
    """The pages of this run, each made sure to carry the Content-Security-Policy (the kit's pages
    and its template write it; this holds whatever wrote a page)."""
    pages = sorted(course.path("feedback").glob(f"*/{assignment}/*.html"))
    if students:
        pages = [page for page in pages if page.parent.parent.name in students]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if CSP_META not in text:
            write_whole(page, with_csp(text))
    return pages


def _converter_class():
    """nbgrader's ``GenerateFeedback``, a notebook it cannot render given the kit's page instead
    (the student's other notebooks, and the class, go on); a fault of the machine stays nbgrader's."""
    from nbgrader.converters import GenerateFeedback

    class KitFeedback(GenerateFeedback):
        unrendered: list

        def convert_notebooks(self):
            self.unrendered = []
            super().convert_notebooks()

        def convert_single_notebook(self, notebook_filename: str) -> None:
            try:
                super().convert_single_notebook(notebook_filename)
            except Exception as error:
                if describe(error):
                    raise
                info = self.init_single_notebook_resources(notebook_filename)["nbgrader"]
                student, assignment, notebook = info["student"], info["assignment"], info["notebook"]
                folder = Path(self._format_dest(assignment, student))
                folder.mkdir(parents=True, exist_ok=True)
                write_whole(folder / f"{notebook}.html",
                            unrendered_page(assignment, notebook, _grade(self.coursedir.db_url, info),
                                            notebook_language(notebook_filename)))
                self.unrendered.append((student, notebook, f"{type(error).__name__}: {str(error)[:200]}"))

    return KitFeedback


def _grade(db_url: str, info: dict) -> tuple | None:
    """(score, maximum, final) of one student's notebook, from the gradebook; None if it cannot say."""
    from nbgrader.api import Gradebook

    try:
        with Gradebook(db_url) as gradebook:
            graded = gradebook.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            return graded.score, graded.max_score, not graded.needs_manual_grade
    except Exception:  # the page says what it can; the gradebook's faults are the other pages' to report
        return None


def hidden_test_cells(course: Course, assignment: str) -> set[str]:
    """The grade ids of the source cells that hold hidden tests (nbgrader's delimiter, as configured)."""
    from nbgrader.preprocessors import ClearHiddenTests

    delimiter = ClearHiddenTests(config=course.config()).begin_test_delimeter
    cells = set()
    for path in course.source_notebooks(assignment):
        for cell in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
            source = cell.get("source", "")
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id and delimiter in ("".join(source) if isinstance(source, list) else source):
                cells.add(grade_id)
    return cells


def write_ungraded_notices(course: Course, assignment: str, hide_hidden_tests: bool = True,
                           students: list[str] | None = None) -> None:
    """A page for each student with nothing gradable (no notebook nbgrader graded), with the report's
    reasons as a student may read them (``pages.for_student``)."""
    report_path = course.path("reports", f"{assignment}.json")
    if not report_path.exists():
        return
    hidden = hidden_test_cells(course, assignment)
    sources = course.source_notebooks(assignment)
    language = notebook_language(sources[0]) if sources else "en"
    for student, result in json.loads(report_path.read_text(encoding="utf-8")).items():
        if students and student not in students:
            continue
        if list(course.path("autograded", student, assignment).glob("*.ipynb")):
            continue  # nbgrader's pages (or the kit's in place of one) are theirs
        folder = course.path("feedback", student, assignment)
        folder.mkdir(parents=True, exist_ok=True)
        reasons = for_student(result.get("reasons", []), hidden, not hide_hidden_tests, language)
        write_whole(folder / "not_graded.html", not_graded_page(assignment, result, reasons, language))
