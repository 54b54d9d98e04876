"""What a notebook's outputs may hold: one gate before nbgrader, nbconvert or a page sees them.

Outputs reach nbgrader from two places: those the sandbox recorded while a notebook ran (what the
student's process sent, ``autograde``, ``check`` and the release proof) and those saved in a
submitted file (which nbgrader clears, but reads first). Both pass here. An output must be one
as nbformat's schema defines it, checked strictly (nbconvert's own check relaxes the MIME bundle
and let a number under ``text/markdown`` through, which then stopped every feedback page), and
within the kit's limits:

- a MIME value is text (a string; a saved file may split it into a list of strings), except under
  a JSON type (``application/json``, ``application/…+json``); a MIME type looks like one;
- at most ``MAX_MIME_TYPES`` per output, ``MAX_OUTPUTS_PER_CELL`` per cell, ``MAX_TRACEBACK_LINES``
  lines of traceback, JSON nested at most ``MAX_JSON_DEPTH`` levels;
- a stream is ``stdout`` or ``stderr``; an execution count is a whole number from 0 (not ``true``,
  ``-7`` or ``"seven"``), or none;
- an output's metadata is an object, its entry for a MIME type of the output an object too; it
  holds no ``filenames`` (nbconvert would show a file of the machine in their place), and a
  ``width`` or ``height`` is a size (nbconvert writes it into the page unquoted).

The rule is one, ``sandbox/outputs.py``'s ``output_problem``: the supervisor applies it to each
output as the student's process sends it, and this gate to a notebook as a whole (its counts, its
number of outputs) and to a submitted file's saved outputs.

What fails is never shown or graded as it was: a recorded output is replaced by an error output
that says why (in a test cell it fails the test, as any error does), a wrong execution count
becomes none, and each is one finding for the instructor's report. A submitted file's saved
outputs are cleared (grading runs the notebook again) and the notebook is graded, with the finding.
"""

from __future__ import annotations

from ..sandbox.outputs import MAX_OUTPUTS_PER_CELL, execution_count_problem, malformed_output, output_problem, shown

__all__ = ["MAX_OUTPUTS_PER_CELL", "output_problem", "gate_cell", "gate_notebook", "clear_malformed_saved_outputs"]

def gate_cell(cell, label: str) -> tuple[list[str], list[str]]:
    """Check the recorded outputs and execution counts of one code cell (a dict or a notebook
    node), in place: a wrong execution count (the cell's, or its result's) made none, each other
    malformed output replaced by ``malformed_output``, those beyond the limit dropped.
    Returns the findings (each naming ``label``) and the wrong counts seen."""
    from nbformat import from_dict

    findings, counts = [], []
    if execution_count_problem(cell.get("execution_count")):
        counts.append(shown(cell.get("execution_count")))
        cell["execution_count"] = None
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        outputs = [] if outputs is None else [outputs]
    kept = []
    for output in outputs[:MAX_OUTPUTS_PER_CELL]:
        if isinstance(output, dict) and output.get("output_type") == "execute_result" \
                and execution_count_problem(output.get("execution_count")):
            counts.append(shown(output.get("execution_count")))
            output = {**output, "execution_count": None}
        problem = output_problem(output)
        if problem:
            findings.append(f"{label}: an output was not kept, because {problem}")
            output = malformed_output(problem)
        kept.append(from_dict(output))
    if len(outputs) > MAX_OUTPUTS_PER_CELL:
        findings.append(f"{label}: {len(outputs) - MAX_OUTPUTS_PER_CELL} output(s) beyond the {MAX_OUTPUTS_PER_CELL} "
                        "a cell may have were not kept")
        kept.append(from_dict(malformed_output(f"more than {MAX_OUTPUTS_PER_CELL} outputs")))
    cell["outputs"] = kept
    return findings, counts


def cell_label(cell, index: int) -> str:
    """How a finding names a cell: by its nbgrader id, else by its place (as the sandbox's findings do)."""
    metadata = cell.get("metadata")
    nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
    return f"cell {grade_id!r}" if isinstance(grade_id, str) and grade_id else f"cell {index}"


#: findings of malformed outputs kept per notebook (the rest counted in one more)
FINDINGS_LIMIT = 10


def gate_notebook(nb) -> list[str]:
    """``gate_cell`` for every code cell of a notebook that ran; the findings (wrong execution
    counts in one, at most ``FINDINGS_LIMIT`` others and their count)."""
    findings, counts = [], {}
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") == "code":
            label = cell_label(cell, index)
            found, wrong = gate_cell(cell, label)
            findings += found
            if wrong:
                counts[label] = wrong[0]
    if len(findings) > FINDINGS_LIMIT:
        findings[FINDINGS_LIMIT:] = [f"{len(findings) - FINDINGS_LIMIT} more output(s) were not kept"]
    if counts:
        first = next(iter(counts))
        findings.append(f"execution counts that are not whole numbers from 0 were recorded as none ({counts[first]} "
                        f"in {first}{f' and {len(counts) - 1} more cell(s)' if len(counts) > 1 else ''})")
    return findings


def clear_malformed_saved_outputs(data: dict) -> list[str]:
    """A submitted notebook's JSON (``json.loads``) with the saved outputs and counts of every
    code cell cleared if any of them is malformed (grading runs the notebook again, and nbgrader
    clears them anyway); the findings (one sentence, or none)."""
    cells = data.get("cells")
    problems = []
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        outputs = cell.get("outputs", [])
        problem = execution_count_problem(cell.get("execution_count"))
        problem = problem and f"the cell's {problem}"
        if not problem and not isinstance(outputs, list):
            problem = "its outputs are not a list"
        if not problem and len(outputs) > MAX_OUTPUTS_PER_CELL:
            problem = f"it has more than {MAX_OUTPUTS_PER_CELL} outputs"
        if not problem:
            problem = next((p for p in (output_problem(o, stored=True) for o in outputs) if p), None)
        if problem:
            problems.append(f"{cell_label(cell, index)}: {problem}")
    if not problems:
        return []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
    return [f"the outputs saved in it were malformed ({problems[0]}{more}); they were cleared, as grading runs "
            "the notebook again"]
