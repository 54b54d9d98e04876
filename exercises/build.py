"""Build the nbgrader source notebooks of ``exercises/`` from their plain-text sources.

Each assignment is written as one readable text file in ``exercises/_src/``; this script turns it
into ``exercises/<assignment>/<notebook>.ipynb`` with nbgrader's cell metadata and no outputs::

    python exercises/build.py           # (re)write every notebook
    python exercises/build.py --check   # exit 1 if a notebook differs from its source

Source format
-------------
The first line names the notebook: ``%% notebook <assignment>/<name>.ipynb``, optionally followed
by ``%% metadata {json}`` (merged into the notebook's metadata, e.g. the kit's grading policy).
Then every cell starts with a header line at column 0:

``%% markdown <grade_id>``      read-only instructions (locked)
``%% code <grade_id>``          read-only code (locked): imports, given classes, helpers
``%% solution <grade_id>``      the student's cell (``### BEGIN SOLUTION`` / ``### END SOLUTION``)
``%% test <grade_id> <points>`` an autograded, locked test cell worth ``<points>``
``%% answer <grade_id> <points>`` a written answer worth ``<points>``, graded by a person: nbgrader's
                                "manually graded answer" (a markdown cell, ``solution`` and ``grade``)

An answer cell holds the model answer and the rubric between ``### BEGIN SOLUTION`` and
``### END SOLUTION``: nbgrader's ``generate_assignment`` replaces that region with "YOUR ANSWER
HERE", so students never see it, and graders read it in ``source/``. nbgrader scores an answer
left unchanged 0 by itself; any other answer waits for a manual grade in the gradebook.

Test cells ask for the student's answers with ``student("code")`` and check the plain values that
come back with ``check``/``check_close`` (``grader/checks.py``). When ``kitgrade`` grades, such a
test cell runs in the grader's process, never in the student's (docs/threat-model.md); in a
notebook's kernel it runs as any cell does. Hidden tests go between ``### BEGIN HIDDEN TESTS`` and
``### END HIDDEN TESTS`` as nbgrader defines.

Two placeholders are filled in:

* ``{{check_helpers}}`` (in a read-only code cell): imports ``student``, ``check``, ``check_close``
  and ``describe`` from ``grader.checks``.
* ``{{reference}}`` (in a hidden block): imports the kit's engine as ``_ref`` and defines
  ``reference_gradients(op, inputs, grad)``, the gradients the engine computes, to compare with.
  (It runs in the grader's process: an exercise may forbid the engine in student code.)
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "_src"

CHECK_HELPERS = ("from grader.checks import NoAnswer, StudentCodeError, check, check_close, describe, student, "
                 "student_batch")

REFERENCE = '''\
import numpy as np
import autograd_core as _ref  # the kit's engine, the reference


def reference_gradients(op, inputs, grad):
    """The gradients of op(*inputs) for the output gradient grad, computed by the kit's engine."""
    tensors = [_ref.tensor(np.asarray(x, dtype=float), dtype=_ref.float64, requires_grad=True) for x in inputs]
    op(*tensors).backward(_ref.tensor(np.asarray(grad, dtype=float), dtype=_ref.float64))
    return [t.grad.numpy() for t in tensors]'''


HEADER = re.compile(r"^%% (notebook|metadata|markdown|code|solution|test|answer)\b ?(.*)$")


def _cell_meta(kind, grade_id, points=None):
    meta = {"grade": kind in ("test", "answer"), "grade_id": grade_id, "locked": kind in ("markdown", "code", "test"),
            "schema_version": 3, "solution": kind in ("solution", "answer")}
    if kind in ("test", "answer"):
        meta["points"] = points
    return {"nbgrader": meta}


def _fill(source: str, kind: str) -> str:
    return source.replace("{{check_helpers}}", CHECK_HELPERS).replace("{{reference}}", REFERENCE)


def parse(path: Path):
    """(notebook path relative to exercises/, NotebookNode) of one source file."""
    target, metadata, cells, current = None, {}, [], None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = HEADER.match(line)
        if not match:
            if current is None:
                if line.strip():
                    raise SyntaxError(f"{path}:{number}: text before the first cell")
                continue
            current["lines"].append(line)
            continue
        kind, rest = match.groups()
        if kind == "notebook":
            target = rest.strip()
        elif kind == "metadata":
            metadata.update(json.loads(rest))
        else:
            words = rest.split()
            if kind in ("test", "answer"):
                grade_id, points = words[0], float(words[1])
                points = int(points) if points.is_integer() else points
            else:
                grade_id, points = words[0], None
            current = {"kind": kind, "id": grade_id, "points": points, "lines": []}
            cells.append(current)
    if target is None:
        raise SyntaxError(f"{path}: no '%% notebook' line")
    ids = [c["id"] for c in cells]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SyntaxError(f"{path}: duplicate grade ids {duplicates}")

    nb = nbformat.v4.new_notebook()
    nb.metadata.update({
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        **metadata,
    })
    for cell in cells:
        text = "\n".join(cell["lines"]).strip("\n")
        text = _fill(text, cell["kind"])
        meta = _cell_meta(cell["kind"], cell["id"], cell["points"])
        if cell["kind"] in ("markdown", "answer"):
            nb.cells.append(nbformat.v4.new_markdown_cell(text, metadata=meta))
        else:
            nb.cells.append(nbformat.v4.new_code_cell(text, metadata=meta))
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:02d}-{cell.metadata['nbgrader']['grade_id']}"[:64]
    nbformat.validate(nb)
    return target, nb


def render(nb) -> str:
    return nbformat.writes(nb) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    stale = []
    for source in sorted(SOURCES.glob("*.txt")):
        target, nb = parse(source)
        path = HERE / target
        text = render(nb)
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(HERE)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(HERE)} ({len(nb.cells)} cells)")
    if stale:
        print("out of date (run python exercises/build.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
