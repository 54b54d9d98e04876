"""What an output may hold, and the outputs a student's process sends for a cell: each checked by
that one rule (``output_problem``: nbformat's schema, strictly, and the kit's limits), clipped, and
kept within the notebook's budget (a test's error output always, since it is what makes nbgrader
score a test as failed). ``grader/notebook/notebook_outputs.py`` applies the same rule to a notebook as a
whole and to a submitted file's saved outputs (its docstring says what the rule refuses, and why)."""

from __future__ import annotations

import functools
import re

import nbformat

from .protocol import MAX_JSON_DEPTH, as_unicode, nesting_depth
from .recorder import clip
from .trusted_tests import output_size


def keep_output(cell, output: dict, budget: list, always: bool = False) -> str | None:
    """Add an output to a cell within the notebook's budget (a test's error output always, clipped);
    one that breaks the rule (``output_problem``) is replaced by an error output that says why.
    Returns that problem (None: the output was as it should be). Text that is not Unicode (a lone
    surrogate: ``print('\\ud800')``) is kept with U+FFFD in its place: UTF-8 could not write it."""
    output, _ = as_unicode(output)
    if isinstance(output, dict) and output.get("output_type") == "error":
        output = {"output_type": "error", "ename": clip(str(output.get("ename", "Error")), 200),
                  "evalue": clip(str(output.get("evalue", "")), 2000),
                  "traceback": [clip(str(line), 2000) for line in list(output.get("traceback") or [])[-30:]]
                  if isinstance(output.get("traceback"), list) else []}
    counted = isinstance(output, dict) and output.get("output_type") == "execute_result" \
        and execution_count_problem(output.get("execution_count"))  # a wrong count: made none by the gate, said once
    problem = output_problem({**output, "execution_count": None} if counted else output)
    if problem:  # nbformat, nbgrader or a page would fail on it, or show what it must not
        output = malformed_output(problem)
    size = output_size(output)
    if size > budget[0] and not always:
        budget[0] = 0
        return problem
    budget[0] = max(0, budget[0] - size)
    cell.outputs.append(nbformat.from_dict(output))
    return problem


def error_output(ename: str, evalue: str) -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": [f"{ename}: {evalue}"]}


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


def shown(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def execution_count_problem(value: object) -> str | None:
    """Why ``value`` is no execution count (None: it is one, or none at all)."""
    if value is None or (type(value) is int and value >= 0):
        return None
    return f"execution count {shown(value)} is not a whole number from 0"


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
            return f"{shown(mime)} is no MIME type"
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
                return f"its metadata gives a {key} of {shown(entry[key])}, not a size"
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
        return f"its type {shown(kind)} is none of nbformat's"
    missing = [name for name in _REQUIRED[kind] if name not in output]
    if missing:
        return f"it has no {', '.join(missing)}"
    if kind == "stream":
        if output["name"] not in _STREAMS:
            return f"its stream {shown(output['name'])} is neither stdout nor stderr"
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
