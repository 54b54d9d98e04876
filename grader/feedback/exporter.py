"""The feedback page as nbconvert makes it: nbgrader's template (``grader/templates/kit_feedback``
extends it), the kit's preprocessors before it, and the filters it calls.

- The exporter: every output checked again (``grader.notebook.notebook_outputs``) before anything else
  sees the notebook, so one autograded before the check, or changed since, shows "an output was
  not kept, because …" where nbconvert would have stopped; markdown (the student's among it)
  cleaned as outputs are; formulas as MathML (``formulas.py``); the page's head carrying the
  Content-Security-Policy and no script.
- The preprocessors before the template: ``HideHiddenTests`` (``--hide-hidden-tests``, the
  default) and ``pending_grades``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..notebook.notebook_outputs import gate_notebook
from ..notebook.preprocessors import HideHiddenTests
from ..sandbox.trusted_tests import is_trusted_test
from ..student_language import notebook_language
from ..foundations.student_text import clean_html, with_csp
from .formulas import latex_output, mathml_renderer

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
_SCRIPT = re.compile(r"<script\b.*?</script\s*>", re.I | re.S)


def nbgrader_templates() -> str:
    """nbgrader's own feedback template's folder, which ``kit_feedback`` extends."""
    import nbgrader

    return str(Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates")


def page_head(head: str, style: str = "") -> str:
    """nbgrader's ``<head>`` as a kit page has it: no script (nbgrader's loads MathJax from a CDN:
    the kit's formulas need none), the kit's ``style`` last (the exporter puts the
    Content-Security-Policy first, once nbconvert has rewritten the page)."""
    head = _SCRIPT.sub("", head)
    return re.sub(r"</head\s*>", lambda _: style + "</head>", head, count=1, flags=re.I)


class HideHiddenTestsOfTheKit(HideHiddenTests):
    """``HideHiddenTests`` knowing which test cells the kit's grader runs as trusted tests."""

    is_trusted_test = staticmethod(is_trusted_test)


def pending_grades():
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


def feedback_exporter():
    """nbconvert's HTML exporter for the kit's page: markdown cleaned as ``sanitize_html`` cleans
    outputs (nbgrader's template renders markdown cells, the student's own among them, and comments
    without it), formulas as MathML, and the template's filters."""
    from jinja2 import FileSystemLoader, pass_context
    from nbconvert.exporters import HTMLExporter
    from nbconvert.filters.markdown_mistune import MarkdownWithMath
    from traitlets import default

    renderer_class = mathml_renderer()

    class FeedbackHTMLExporter(HTMLExporter):
        @default("extra_loaders")
        def _nbgrader_loader(self):  # for kit_feedback's {% extends 'feedback/index.html.j2' %}
            return [FileSystemLoader(nbgrader_templates())]

        @pass_context
        def markdown2html(self, context, source):
            cell = context.get("cell", {})
            renderer = renderer_class(escape=False, attachments=cell.get("attachments", {}),
                                      embed_images=self.embed_images,
                                      path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                                      anchor_link_text=self.anchor_link_text,
                                      exclude_anchor_links=self.exclude_anchor_links, **self.lexer_options)
            return clean_html(MarkdownWithMath(renderer=renderer).render(source))

        def from_notebook_node(self, nb, resources=None, **kw):
            gate_notebook(nb)  # before any preprocessor: nbconvert validates the notebook after each
            html, resources = super().from_notebook_node(nb, resources, **kw)
            return with_csp(html), resources

        def default_filters(self):
            yield from super().default_filters()
            yield ("page_head", page_head)
            yield ("latex_output", lambda text: clean_html(latex_output(text)))
            yield ("notebook_language", notebook_language)

    return FeedbackHTMLExporter
