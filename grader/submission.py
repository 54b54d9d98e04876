"""Check and stage one student's submission: a clean copy in nbgrader's layout, and what was wrong.

The submitted files are only read. Notebooks that are not valid nbformat-4 JSON are left out (and
score zero, as nbgrader scores a missing notebook); a notebook under another name is graded as the
expected one when its cell ids show which one it is; extra notebooks are ignored.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat


def read_notebook_strictly(path: Path):
    """Return ``(notebook, None)`` or ``(None, reason)`` for a submitted file."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        return None, f"unreadable ({error.strerror})"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        return None, f"not valid notebook JSON ({type(error).__name__}: {str(error)[:80]}); file truncated or corrupted?"
    if not isinstance(data, dict) or "cells" not in data and "worksheets" not in data:
        return None, "not a notebook (no cells)"
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
    return {cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") for cell in notebook.cells} - {None}


def stage_submission(submitted: Path, staged: Path, expected: dict[str, set[str]]) -> list[str]:
    """Copy the gradable notebooks of ``submitted`` into ``staged`` under their expected names.

    ``expected`` maps each notebook name (without ``.ipynb``) to the cell ids of its source.
    Returns the findings, one sentence each.
    """
    findings: list[str] = []
    if staged.exists():
        shutil.rmtree(staged)
    staged.mkdir(parents=True)
    if (submitted / "timestamp.txt").is_file():
        shutil.copy(submitted / "timestamp.txt", staged / "timestamp.txt")
    valid: dict[str, tuple[Path, object]] = {}
    for path in sorted(submitted.glob("*.ipynb")):
        notebook, reason = read_notebook_strictly(path)
        if reason:
            findings.append(f"{path.name}: {reason}")
        else:
            valid[path.stem] = (path, notebook)
    placed: dict[str, Path] = {}
    for name in expected:
        if name in valid:
            placed[name] = valid.pop(name)[0]
    for stem, (path, notebook) in sorted(valid.items()):
        ids = grade_ids(notebook)
        matches = [name for name, source_ids in expected.items()
                   if name not in placed and source_ids and len(ids & source_ids) >= len(source_ids) / 2]
        if len(matches) == 1:
            placed[matches[0]] = path
            findings.append(f"{path.name}: graded as {matches[0]}.ipynb (renamed)")
        else:
            findings.append(f"{path.name}: extra notebook, ignored")
    for name in expected:
        if name in placed:
            shutil.copy(placed[name], staged / f"{name}.ipynb")
        elif f"{name}.ipynb" not in " ".join(findings):
            findings.append(f"{name}.ipynb: missing (scored 0)")
        else:
            findings.append(f"{name}.ipynb: not gradable (scored 0)")
    return findings
