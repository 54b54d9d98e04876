"""Check and stage one student's submission: a clean copy in nbgrader's layout, and what was wrong.

The submitted files are only read. Notebooks that are not valid nbformat-4 JSON are left out (and
score zero, as nbgrader scores a missing notebook); a notebook under another name is graded as the
expected one when its cell ids show which one it is; extra notebooks are ignored.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import warnings
from pathlib import Path

import nbformat

from ..lms.download_files import read_as_file
from .notebook_outputs import clear_malformed_saved_outputs
from ..sandbox.protocol import MAX_JSON_DEPTH, as_unicode, nesting_depth

#: Most cells a submitted notebook may have (each is a round trip to the student's process and a
#: record in nbgrader's pipeline: 100,000 cells took minutes and a report of megabytes).
MAX_CELLS = 2000
#: Largest submitted notebook read when no limit is given (``KitGrade.notebook_size_limit_mb``).
DEFAULT_SIZE_LIMIT = 20 * 1024 * 1024


def read_submitted_file(path: Path, size_limit: int = DEFAULT_SIZE_LIMIT):
    """Return ``(bytes, None)`` or ``(None, reason)``: a submitted file read as a file, never followed
    (a link, hard link, device, pipe or file over the size limit is not read; ``read_as_file``)."""
    return read_as_file(str(path), size_limit)


def read_notebook_strictly(path: Path, size_limit: int = DEFAULT_SIZE_LIMIT):
    """Return ``(notebook, None)`` or ``(None, reason)`` for a submitted file."""
    raw, reason = read_submitted_file(path, size_limit)
    if reason:
        return None, reason
    return parse_notebook(raw)


def parse_notebook(raw: bytes):
    """Return ``(notebook, None)`` or ``(None, reason)`` for a submitted file's bytes (its saved
    outputs cleared if malformed: ``parse_submitted`` says so)."""
    notebook, reason, _ = parse_submitted(raw)
    return notebook, reason


def parse_submitted(raw: bytes):
    """Return ``(notebook, None, notes)`` or ``(None, reason, [])`` for a submitted file's bytes.

    Malformed saved outputs (``grader.notebook.notebook_outputs``) do not make a notebook ungradable, as
    they do not for nbgrader, which clears them: they are cleared, and ``notes`` says so."""
    try:
        data, not_unicode = as_unicode(json.loads(raw.decode("utf-8")))
    except RecursionError:
        return None, f"nested more than {MAX_JSON_DEPTH} levels deep: not a notebook Jupyter writes; not graded", []
    except (UnicodeDecodeError, ValueError) as error:
        return None, f"not valid notebook JSON ({type(error).__name__}: {str(error)[:80]}); file truncated or corrupted?", []
    if not isinstance(data, dict) or "cells" not in data and "worksheets" not in data:
        return None, "not a notebook (no cells)", []
    if nesting_depth(data) > MAX_JSON_DEPTH:
        return None, f"nested more than {MAX_JSON_DEPTH} levels deep: not a notebook Jupyter writes; not graded", []
    cells = data.get("cells")
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        return None, (f"{len(cells)} cells, more than the {MAX_CELLS} a notebook may have; not graded "
                      "(hand in the assignment's notebook with your answers in its cells)"), []
    major = data.get("nbformat")
    if major != 4:
        return None, f"wrong notebook format (nbformat {major!r}, expected 4)", []
    notes = clear_malformed_saved_outputs(data) + clear_malformed_marks(data)
    if not_unicode:  # JSON's "\ud800": no part of grading could write it (nbformat, the gradebook, a page)
        notes.append(f"{not_unicode} character(s) that are not Unicode (lone surrogates) replaced by \ufffd")
    try:
        notebook = nbformat.v4.to_notebook_json(data)  # (what nbformat.reads makes of the text, parsed once)
        nbformat.validate(notebook)
    except Exception as error:  # nbformat raises several kinds here
        reason = f"invalid nbformat 4 notebook ({type(error).__name__}: {str(error).splitlines()[0][:100]})"
        notebook = _without_invalid_metadata(data)
        if notebook is None:
            return None, reason, []
        notes.append(f"metadata nbformat does not allow was removed ({reason[len('invalid nbformat 4 notebook ('):-1]})")
    return notebook, None, notes


def _without_invalid_metadata(data: dict):
    """The notebook with the metadata nbformat's schema refuses removed (``nbformat.validator.normalize``
    with ``strip_invalid_metadata``: a cell's ``collapsed: "yes"``, a ``language_info`` of the wrong
    shape), if that is all that was wrong; else None."""
    from nbformat.validator import normalize

    try:
        with warnings.catch_warnings():  # (nbformat's own notes on what it repairs: the finding says it)
            warnings.simplefilter("ignore")
            _, repaired = normalize(data, strip_invalid_metadata=True)
            notebook = nbformat.reads(json.dumps(repaired), as_version=4)
            nbformat.validate(notebook)
    except Exception:  # more is wrong than metadata
        return None
    return notebook


def clear_malformed_marks(data: dict) -> list[str]:
    """nbgrader's marks on a submitted notebook's cells that nbgrader's own chain stops on, fixed in
    ``data`` before it sees them: marks that are not an object or name no id are removed (the cell is
    then the student's own, as one that claims an unknown id is), a ``schema_version`` other than
    nbgrader's is put back (the gradebook restores every other flag). The findings."""
    from nbgrader.nbgraderformat import SCHEMA_VERSION

    cells = data.get("cells")
    findings = []
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        metadata = cell.get("metadata") if isinstance(cell, dict) else None
        if not isinstance(metadata, dict) or "nbgrader" not in metadata:
            continue
        marks = metadata["nbgrader"]
        grade_id = marks.get("grade_id") if isinstance(marks, dict) else None
        if not isinstance(grade_id, str) or not grade_id:
            del metadata["nbgrader"]
            findings.append(f"cell {index}: its nbgrader marks are not nbgrader's ({str(marks)[:60]}); removed")
        elif marks.get("schema_version") != SCHEMA_VERSION or type(marks.get("schema_version")) is not int:
            marks["schema_version"] = SCHEMA_VERSION
            findings.append(f"cell {grade_id!r}: changed nbgrader metadata (schema_version); restored")
    return findings


def grade_ids(notebook) -> set[str]:
    """The nbgrader cell ids of a notebook (ids that are not strings are no ids)."""
    ids = set()
    for cell in notebook.cells:
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        grade_id = nbgrader.get("grade_id") if isinstance(nbgrader, dict) else None
        if isinstance(grade_id, str):
            ids.add(grade_id)
    return ids


class SubmissionUnreadable(Exception):
    """The submission cannot be read as a folder of files (it is a link, or the machine cannot read it)."""


def check_timestamp(raw: bytes) -> None:
    """A submission time nbgrader can read (or none): an unreadable one would fail nbgrader's grading
    of the student, whose correct notebook would then score 0 without a word."""
    from nbgrader.utils import parse_utc

    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return  # nbgrader takes an empty timestamp.txt as no time
    try:
        parse_utc(text)
    except (ValueError, OverflowError):
        raise SubmissionUnreadable(f"timestamp.txt holds {text[:40]!r}, which is not a time (as nbgrader writes it: "
                                   "2026-01-15 11:00:00.000000 UTC); correct it or remove it") from None


def stage_submission(submitted: Path, staged: Path, expected: dict[str, set[str]],
                     size_limit: int = DEFAULT_SIZE_LIMIT) -> list[str]:
    """Copy the gradable notebooks of ``submitted`` into ``staged`` under their expected names.

    ``expected`` maps each notebook name (without ``.ipynb``) to the cell ids of its source.
    Returns the findings, one sentence each. Files are read as files (``read_submitted_file``).
    """
    findings: list[str] = []
    if os.path.islink(submitted) or not submitted.is_dir():
        raise SubmissionUnreadable(f"{submitted} is not a folder (a link is not followed)")
    if staged.exists():
        shutil.rmtree(staged)
    staged.mkdir(parents=True)
    if os.path.lexists(submitted / "timestamp.txt"):
        raw, reason = read_submitted_file(submitted / "timestamp.txt", 4096)
        if reason:
            raise SubmissionUnreadable(f"timestamp.txt: {reason}")
        check_timestamp(raw)
        (staged / "timestamp.txt").write_bytes(raw)
    valid: dict[str, tuple[Path, bytes, object]] = {}  # each file is read once; what was checked is staged
    for path in sorted(submitted.glob("*.ipynb")):
        raw, reason = read_submitted_file(path, size_limit)
        if reason and reason.startswith("unreadable"):  # the machine's fault (permissions, a failing disk)
            raise SubmissionUnreadable(f"{path.name}: {reason}")
        notebook, notes = None, []
        if not reason:
            notebook, reason, notes = parse_submitted(raw)
        if reason:
            findings.append(f"{path.name}: {reason}")
        else:
            findings += [f"{path.name}: {note}" for note in notes]
            valid[path.stem] = (path, nbformat.writes(notebook).encode("utf-8") if notes else raw, notebook)
    placed: dict[str, tuple[Path, bytes]] = {}
    for name in expected:
        if name in valid:
            placed[name] = valid.pop(name)[:2]
    for stem, (path, raw, notebook) in sorted(valid.items()):
        ids = grade_ids(notebook)
        matches = [name for name, source_ids in expected.items()
                   if name not in placed and source_ids and len(ids & source_ids) >= len(source_ids) / 2]
        if len(matches) == 1:
            placed[matches[0]] = (path, raw)
            findings.append(f"{path.name}: graded as {matches[0]}.ipynb (renamed)")
        else:
            findings.append(f"{path.name}: extra notebook, ignored")
    for name in expected:
        if name in placed:
            (staged / f"{name}.ipynb").write_bytes(placed[name][1])
        elif f"{name}.ipynb" not in " ".join(findings):
            findings.append(f"{name}.ipynb: missing (scored 0)")
        else:
            findings.append(f"{name}.ipynb: not gradable (scored 0)")
    return findings
