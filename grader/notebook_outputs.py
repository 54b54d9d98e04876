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

What fails is never shown or graded as it was: a recorded output is replaced by an error output
that says why (in a test cell it fails the test, as any error does), a wrong execution count
becomes none, and each is one finding for the instructor's report. A submitted file's saved
outputs are cleared (grading runs the notebook again) and the notebook is graded, with the finding.
"""

from __future__ import annotations

import functools
import re

from .sandbox.protocol import MAX_JSON_DEPTH, nesting_depth

MAX_OUTPUTS_PER_CELL = 1000
MAX_MIME_TYPES = 32
MAX_TRACEBACK_LINES = 200
#: the name of the error output that stands for a malformed one
MALFORMED = "MalformedOutput"

_MIME_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$")
_JSON_TYPE = re.compile(r"^application/(.*\+)?json$")
_STREAMS = ("stdout", "stderr")
_SIZE = re.compile(r"^[0-9]{1,6}(\.[0-9]{1,6})?(px|%)?$")
_REQUIRED = {"stream": ("name", "text"), "error": ("ename", "evalue", "traceback"),
             "display_data": ("data", "metadata"), "execute_result": ("data", "metadata", "execution_count")}


def _shown(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def execution_count_problem(value: object) -> str | None:
    """Why ``value`` is no execution count (None: it is one, or none at all)."""
    if value is None or (type(value) is int and value >= 0):
        return None
    return f"execution count {_shown(value)} is not a whole number from 0"


def _text_problem(value: object, stored: bool) -> bool:
    if isinstance(value, str):
        return False
    return not (stored and isinstance(value, list) and all(isinstance(line, str) for line in value))


def _bundle_problem(output: dict, stored: bool) -> str | None:
    data, metadata = output.get("data"), output.get("metadata")
    if not isinstance(data, dict):
        return "its data is not an object"
    if len(data) > MAX_MIME_TYPES:
        return f"it has {len(data)} MIME types, more than {MAX_MIME_TYPES}"
    for mime, value in data.items():
        if not _MIME_TYPE.match(mime):
            return f"{_shown(mime)} is no MIME type"
        if not _JSON_TYPE.match(mime) and _text_problem(value, stored):
            return f"its {mime!r} value is {type(value).__name__}, not text"
    if not isinstance(metadata, dict):
        return "its metadata is not an object"
    if "filenames" in metadata:
        return "its metadata names files"
    for mime in data:
        if mime in metadata and not isinstance(metadata[mime], dict):
            return f"its metadata for {mime!r} is not an object"
    for entry in (metadata, *(metadata[mime] for mime in data if mime in metadata)):
        for key in ("width", "height"):  # written into an <img> as they are
            if entry.get(key) is not None and not _is_size(entry[key]):
                return f"its metadata gives a {key} of {_shown(entry[key])}, not a size"
    return None


def _is_size(value: object) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value >= 0
    return isinstance(value, str) and bool(_SIZE.match(value))


def _kit_problem(output: object, stored: bool) -> str | None:
    if not isinstance(output, dict):
        return f"it is {type(output).__name__}, not an object"
    if nesting_depth(output) > MAX_JSON_DEPTH:
        return f"it is nested more than {MAX_JSON_DEPTH} levels deep"
    kind = output.get("output_type")
    if kind not in _REQUIRED:
        return f"its type {_shown(kind)} is none of nbformat's"
    missing = [name for name in _REQUIRED[kind] if name not in output]
    if missing:
        return f"it has no {', '.join(missing)}"
    if kind == "stream":
        if output["name"] not in _STREAMS:
            return f"its stream {_shown(output['name'])} is neither stdout nor stderr"
        return "its text is not text" if _text_problem(output["text"], stored) else None
    if kind == "error":
        traceback = output["traceback"]
        if not isinstance(traceback, list) or len(traceback) > MAX_TRACEBACK_LINES:
            return f"its traceback is not a list of at most {MAX_TRACEBACK_LINES} lines"
        return None
    if kind == "execute_result":
        problem = execution_count_problem(output["execution_count"])
        if problem:
            return f"its {problem}"
    return _bundle_problem(output, stored)


def output_problem(output: object, stored: bool = False) -> str | None:
    """Why ``output`` may not reach nbgrader (None: it may). ``stored``: saved in a notebook file,
    where text may be split into a list of lines."""
    problem = _kit_problem(output, stored)
    if problem:
        return problem
    from fastjsonschema import JsonSchemaException
    from nbformat.validator import ValidationError, validate

    try:
        _output_schema()(output)
        return None
    except JsonSchemaException:  # refused: nbformat's own validator says why
        pass
    try:
        validate(output, ref="output", version=4, version_minor=5)
    except ValidationError as error:
        where = "/".join(str(part) for part in getattr(error, "absolute_path", []))
        return f"it is not an output as nbformat defines it ({where + ': ' if where else ''}" \
               f"{str(getattr(error, 'message', error))[:120]})"
    return "it is not an output as nbformat defines it"


@functools.cache
def _output_schema():
    """nbformat 4.5's definition of an output, compiled by fastjsonschema (one of nbformat's own
    validators): 20 µs an output, where jsonschema takes 390."""
    import json
    import os

    import fastjsonschema
    import nbformat.v4

    path = os.path.join(os.path.dirname(nbformat.v4.__file__), nbformat.v4.nbformat_schema[(4, 5)])
    with open(path, encoding="utf-8") as handle:
        schema = json.load(handle)
    return fastjsonschema.compile({"$schema": schema["$schema"], "definitions": schema["definitions"],
                                   "$ref": "#/definitions/output"})


def malformed_output(problem: str) -> dict:
    """The error output that stands for a malformed one."""
    text = f"an output was not kept: {problem}"
    return {"output_type": "error", "ename": MALFORMED, "evalue": text, "traceback": [f"{MALFORMED}: {text}"]}


def gate_cell(cell, label: str) -> tuple[list[str], list[str]]:
    """Check the recorded outputs and execution counts of one code cell (a dict or a notebook
    node), in place: a wrong execution count (the cell's, or its result's) made none, each other
    malformed output replaced by ``malformed_output``, those beyond the limit dropped.
    Returns the findings (each naming ``label``) and the wrong counts seen."""
    from nbformat import from_dict

    findings, counts = [], []
    if execution_count_problem(cell.get("execution_count")):
        counts.append(_shown(cell.get("execution_count")))
        cell["execution_count"] = None
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        outputs = [] if outputs is None else [outputs]
    kept = []
    for output in outputs[:MAX_OUTPUTS_PER_CELL]:
        if isinstance(output, dict) and output.get("output_type") == "execute_result" \
                and execution_count_problem(output.get("execution_count")):
            counts.append(_shown(output.get("execution_count")))
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
