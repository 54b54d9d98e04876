"""``kitgrade feedback``: a page per student and notebook, as nbgrader's ``GenerateFeedback`` makes
it, and the kit's own page wherever nbgrader's cannot be made.

Every page a student receives passes the same hidden-test policy (no hidden test's code, input,
expected value or message unless the instructor gives ``--show-hidden-tests``), runs no script,
fetches nothing and carries the kit's Content-Security-Policy; one notebook whose page cannot be
rendered never stops the class's feedback.

=================  =================================================================================
``generate.py``    ``generate_feedback``: nbgrader's converter over the class; a page it cannot render
                   replaced by the kit's, the "not graded" pages written
``exporter.py``    nbconvert's exporter for the page (``grader/templates/kit_feedback``): the outputs
                   checked again, markdown cleaned, the preprocessors before it
``formulas.py``    formulas as MathML, made with the page (no MathJax, nothing fetched)
``pages.py``       the kit's own pages ("not graded", "could not be shown") and the hidden-test
                   policy for the reasons they give
``release.py``     ``release_feedback``: into nbgrader's exchange
=================  =================================================================================
"""

from .exporter import TEMPLATES, feedback_exporter, nbgrader_templates
from .generate import Feedback, generate_feedback, write_ungraded_notices
from .release import release_feedback

# the names an earlier feedback.py gave them
_feedback_exporter, _nbgrader_templates = feedback_exporter, nbgrader_templates

__all__ = ["TEMPLATES", "Feedback", "feedback_exporter", "generate_feedback", "nbgrader_templates", "release_feedback",
           "write_ungraded_notices"]
