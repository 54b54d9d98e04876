"""nbgrader's notebook chains as the kit runs them, shared by autograde, release and check.

* ``sanitize_preprocessors`` / ``sanitize``: nbgrader's sanitizing chain (clear outputs, restore the
  instructor's cells from the gradebook) with the kit's ``DetectTampering`` and ``RestoreCellFlags``.
* ``autograde_preprocessors``: nbgrader's autograding chain, its ``Execute`` replaced by
  ``ReplayExecution`` (the outputs come from the sandbox).
* ``instructor_sources``: the instructor's code cells as the gradebook holds them (the trusted tests).
* ``keep_warnings_harmless``: stray stderr in a passing test cell is not a failure.
"""

from __future__ import annotations

import copy
import warnings

from nbgrader import utils as nbgrader_utils
from nbgrader.api import Gradebook
from traitlets.config import Config

from .preprocessors import FINDINGS, DetectTampering, ReplayExecution, RestoreCellFlags, notebook_flags


def sanitize_preprocessors(in_worker: bool = True):
    """nbgrader's sanitizing chain, with the kit's tamper detection before ``OverwriteCells``.

    The workers run all of it. The grading pass that follows (``Autograde`` over the same staged
    notebook) skips the two steps that only inspect, as the worker already ran them on the very
    same notebook: ``DetectTampering`` (its findings are in the report) and nbgrader's
    ``CheckCellMetadata`` (a notebook that fails it gets no execution record, so every cell of it
    scores zero, with the reason in the report, instead of the student getting no grade at all).
    """
    from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec

    if in_worker:
        return [ClearOutput, DeduplicateIds, OverwriteKernelspec, DetectTampering, RestoreCellFlags, OverwriteCells,
                CheckCellMetadata]
    return [ClearOutput, DeduplicateIds, OverwriteKernelspec, RestoreCellFlags, OverwriteCells]


def autograde_preprocessors():
    """nbgrader's autograding chain with ``Execute`` replaced by the kit's ``ReplayExecution``.

    (Its final ``CheckCellMetadata`` is left out for the reason given in ``sanitize_preprocessors``:
    nothing between the worker's check and here changes cell metadata.)
    """
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import AssignLatePenalties, IgnorePattern, LimitOutput, SaveAutoGrades

    return [ReplayExecution, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties]


def sanitize(nb, config: Config, db_url: str, assignment: str, notebook: str, *, student: str = "."):
    """Run nbgrader's sanitizing chain on ``nb``; return it with the findings of the kit's checks."""
    resources = {"nbgrader": {"notebook": notebook, "assignment": assignment, "student": student, "db_url": db_url},
                 "unique_key": notebook}
    nb = copy.deepcopy(nb)
    for preprocessor in sanitize_preprocessors():  # as nbconvert's exporter applies them
        nb, resources = preprocessor(config=config, enabled=True)(nb, resources)
    return nb, list(resources.get(FINDINGS, []))


def instructor_sources(db_url: str, assignment: str, notebook: str) -> dict[str, str]:
    """The instructor's code cells of a notebook (read-only cells and tests) as the gradebook holds them."""
    with warnings.catch_warnings(), Gradebook(db_url) as gradebook:
        warnings.simplefilter("ignore")
        flags = notebook_flags(gradebook, notebook, assignment)
    return {name: f["source"] for name, f in flags.items()
            if f["cell_type"] == "code" and (f["locked"] or f["grade"]) and not f["solution"]}


def keep_warnings_harmless(nb) -> list[str]:
    """Stray stderr (warnings) in a test cell that raised no error must not fail it (nbgrader would)."""
    notes = []
    for cell in nb.cells:
        if cell.cell_type == "code" and nbgrader_utils.is_grade(cell) and not nbgrader_utils.is_solution(cell):
            if any(o.output_type == "error" for o in cell.outputs):
                continue
            for output in cell.outputs:
                if output.output_type == "stream" and output.name == "stderr":
                    output.name = "stdout"
                    notes.append(f"cell {cell.metadata.nbgrader['grade_id']!r}: stderr output (warnings) kept, not counted as a failure")
    return notes
