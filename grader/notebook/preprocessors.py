"""nbgrader preprocessors the kit adds to nbgrader's own chains (through nbgrader's config).

* ``DetectTampering`` (sanitizing, before ``OverwriteCells``): notes every edited, deleted, renamed
  or re-flagged instructor cell, so the report can say why.
* ``RestoreCellFlags`` (sanitizing, before ``OverwriteCells``): puts back the nbgrader flags of every
  cell the gradebook knows (``OverwriteCells`` restores sources and points but keeps e.g. a
  ``solution`` flag a student added to a test cell, and then fails on its own checksum check).
* ``ReplayExecution`` (autograding, in place of ``Execute``): takes the outputs the kit's sandboxed
  workers produced for this very notebook.
* ``HideHiddenTests`` (feedback): removes hidden-test regions and their tracebacks from feedback.
"""

from __future__ import annotations

import json
import os
import re

import nbformat
from nbconvert.exporters.exporter import ResourcesDict
from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from traitlets import Unicode

from ..student_language import hidden_count_pattern, notebook_language, say

FINDINGS = "kitgrade_findings"


def _findings(resources: ResourcesDict) -> list:
    return resources.setdefault(FINDINGS, [])


def notebook_flags(gradebook: Gradebook, notebook: str, assignment: str) -> dict[str, dict]:
    """The nbgrader flags (and checksum) the gradebook holds for every cell of one notebook."""
    source_notebook = gradebook.find_notebook(notebook, assignment)
    flags = {cell.name: {"grade": False, "solution": False, "task": False, "locked": bool(cell.locked),
                         "checksum": cell.checksum, "cell_type": cell.cell_type, "source": cell.source}
             for cell in source_notebook.source_cells}
    for kind, cells in (("grade", source_notebook.grade_cells), ("solution", source_notebook.solution_cells),
                        ("task", source_notebook.task_cells)):
        for cell in cells:
            if cell.name in flags:
                flags[cell.name][kind] = True
                if kind in ("grade", "task"):
                    flags[cell.name]["points"] = float(cell.max_score)
    return flags


def _released(source: str) -> str:
    """A test cell's source as the student received it (hidden tests removed, as nbgrader does)."""
    cell = NotebookNode(cell_type="code", source=source, metadata={})
    try:
        ClearHiddenTests()._remove_hidden_test_region(cell)
    except RuntimeError:
        return source
    return cell.source


class DetectTampering(NbGraderPreprocessor):
    """Record how a submission's instructor cells differ from the gradebook (changes nothing)."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict):
        notebook, assignment = resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"]
        findings = _findings(resources)
        seen = set()
        with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
            known = notebook_flags(gradebook, notebook, assignment)
        graded = {name for name, flags in known.items() if flags["grade"] or flags["task"]}
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if not meta or "grade_id" not in meta:
                continue
            grade_id = meta["grade_id"]
            if grade_id in seen:
                findings.append(f"cell {grade_id!r} appears more than once (duplicates ignored)")
                continue
            seen.add(grade_id)
            if grade_id not in known:
                findings.append(f"a cell claims the unknown id {grade_id!r} (its marks were removed)")
                continue
            expected = known[grade_id]
            changed = [flag for flag in ("grade", "solution", "task") if bool(meta.get(flag, False)) != expected[flag]]
            if "points" in expected and "points" in meta:
                try:
                    if float(meta["points"]) != expected["points"]:
                        changed.append("points")
                except (TypeError, ValueError):
                    changed.append("points")
            if utils.is_locked(cell) != expected["locked"]:
                changed.append("locked")
            if changed:
                findings.append(f"cell {grade_id!r}: changed nbgrader metadata ({', '.join(changed)}); restored")
            if cell.cell_type != expected["cell_type"]:
                findings.append(f"cell {grade_id!r}: cell type changed; restored")
            if expected["locked"] and cell.source not in (expected["source"], _released(expected["source"])):
                findings.append(f"cell {grade_id!r}: read-only/test cell was edited; restored")
        for grade_id in sorted(graded - seen):
            findings.append(f"cell {grade_id!r} was deleted or renamed; restored from the gradebook")
        return nb, resources


class RestoreCellFlags(NbGraderPreprocessor):
    """Reset the nbgrader flags of every known cell to the gradebook's (before ``OverwriteCells``),
    and take the marks off every other cell: one that claims an id the gradebook does not know, or
    the earlier copies of a duplicated one (``DeduplicateIds`` leaves them an empty record). Left
    there, nbgrader's ``OverwriteCells`` stopped on them, and the whole notebook scored 0 as not
    gradable: a student who copied a test cell in JupyterLab (which copies its metadata) lost
    every point."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict):
        notebook, assignment = resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"]
        with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
            known = notebook_flags(gradebook, notebook, assignment)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if meta is None:
                continue
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(grade_id, str) or grade_id not in known:
                del cell.metadata["nbgrader"]
                continue
            expected = known[grade_id]
            meta.update({k: expected[k] for k in ("grade", "solution", "locked", "checksum")})
            if "points" in expected:
                meta["points"] = expected["points"]
            else:
                meta.pop("points", None)
            if expected["task"]:
                meta["task"] = True
            else:
                meta.pop("task", None)
        return nb, resources


class ReplayExecution(NbGraderPreprocessor):
    """Fill in the outputs the kit's sandboxed execution produced for this notebook.

    The record is keyed by student, assignment and notebook, and holds the sanitized sources it
    ran; if they do not match this notebook exactly, every code cell gets an error instead.
    """

    run_directory = Unicode("", help="Folder of the execution records of this autograde run.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict):
        info = resources["nbgrader"]
        path = os.path.join(self.run_directory, info["assignment"], info["student"], info["notebook"] + ".json")
        record = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                record = json.load(handle)
        sources = [cell.source for cell in nb.cells]
        if record is None or record.get("sources") != sources:
            self.log.error("No matching execution record for %s; marking its cells as not run", path)
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs = [NotebookNode(output_type="error", ename="NotExecuted",
                                                 evalue="this notebook could not be executed",
                                                 traceback=["NotExecuted: this notebook could not be executed"])]
            return nb, resources
        for cell, executed in zip(nb.cells, record["cells"]):
            if cell.cell_type == "code":
                cell.outputs = [nbformat.from_dict(o) for o in executed["outputs"]]
                cell.execution_count = executed["execution_count"]
        return nb, resources


#: What a trusted test's hidden part says when it fails (grader/sandbox/trusted_tests.py), in any
#: language: only a count, so feedback keeps it.
HIDDEN_COUNT = hidden_count_pattern()


class HideHiddenTests(ClearHiddenTests):
    """Remove hidden-test regions from feedback, and the tracebacks that would quote them.

    A trusted test run by the kit's grader (``grader.sandbox.trusted_tests``) reports a failed hidden
    part only as "k of n hidden checks passed", and its error's traceback is that one line, so any
    other message of its cell is a visible check's, on visible inputs: that message stays. A test run
    in a kernel (plain nbgrader) may quote its hidden part anywhere in its error: only its name stays.
    """

    #: Whether a test cell's source is a trusted test: set by the feedback step to the sandbox's own
    #: ``is_trusted_test`` (a layer above this module); by default no cell is.
    is_trusted_test = staticmethod(lambda source: False)
    language = "en"  # the notebook's (grader.student_language), read in preprocess

    def preprocess(self, nb, resources):
        self.language = notebook_language(nb)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        had_hidden = self.begin_test_delimeter in cell.source
        trusted = had_hidden and cell.cell_type == "code" and self.is_trusted_test(cell.source)
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if had_hidden and cell.cell_type == "code":
            for output in cell.get("outputs", []):
                if output.output_type == "error" and trusted and _one_line_traceback(output):
                    continue
                if output.output_type == "error" and not HIDDEN_COUNT.match(output.get("evalue", "")):
                    output.traceback = [say("details_hidden", self.language, ename=output.ename)]
                    output.evalue = ""
        return cell, resources


def _one_line_traceback(output) -> bool:
    """Whether an error output is as the kit's grader writes a trusted test's: the traceback "ename: evalue" alone."""
    return list(output.get("traceback") or []) == [f"{output.get('ename')}: {output.get('evalue')}"]
