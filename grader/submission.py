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
from pathlib import Path

import nbformat

from .download_files import read_as_file
from .sandbox.protocol import MAX_JSON_DEPTH, nesting_depth

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
    """Return ``(notebook, None)`` or ``(None, reason)`` for a submitted file's bytes."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        return None, f"nested more than {MAX_JSON_DEPTH} levels deep: not a notebook Jupyter writes; not graded"
    except (UnicodeDecodeError, ValueError) as error:
        return None, f"not valid notebook JSON ({type(error).__name__}: {str(error)[:80]}); file truncated or corrupted?"
    if not isinstance(data, dict) or "cells" not in data and "worksheets" not in data:
        return None, "not a notebook (no cells)"
    if nesting_depth(data) > MAX_JSON_DEPTH:
        return None, f"nested more than {MAX_JSON_DEPTH} levels deep: not a notebook Jupyter writes; not graded"
    cells = data.get("cells")
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        return None, (f"{len(cells)} cells, more than the {MAX_CELLS} a notebook may have; not graded "
                      "(hand in the assignment's notebook with your answers in its cells)")
    major = data.get("nbformat")
    if major != 4:
        return None, f"wrong notebook format (nbformat {major!r}, expected 4)"
    try:
        notebook = nbformat.reads(raw.decode("utf-8"), as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # nbformat raises several kinds here
        return None, f"invalid nbformat 4 notebook ({type(error).__name__}: {str(error).splitlines()[0][:100]})"
    return notebook, None


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
        notebook = None
        if not reason:
            notebook, reason = parse_notebook(raw)
        if reason:
            findings.append(f"{path.name}: {reason}")
        else:
            valid[path.stem] = (path, raw, notebook)
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
