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

Two placeholders are filled in:

* ``{{check_helpers}}`` (in a read-only code cell): ``check_close`` and ``check``, the helpers the
  visible tests use; each failure names what was expected, what came back and for which input.
* right after every ``### BEGIN HIDDEN TESTS`` line the same helpers are inserted again under
  private names (``_hidden_close``, ``_hidden_check``), so hidden tests never depend on a name a
  student's cell could have redefined.
* ``{{reference}}`` (in a hidden block): imports the kit's engine as ``_hidden_ref`` and defines
  ``_hidden_reference(op, inputs, grad)``, the gradients the engine computes, to compare with.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "_src"

CHECK_HELPERS = '''\
import numpy as {np}


def {fmt}(value):
    """A short printable form of a number, array, tensor (of any engine) or anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ", ".join(f"{{k}}={{{fmt}(v)}}" for k, v in value.items())
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        value = value.detach().numpy()
    if isinstance(value, {np}.ndarray):
        return {np}.array2string(value, precision=6, threshold=12, separator=", ")
    return repr(value)


def {check}(condition, what, expected, got, inp):
    """Fail with 'WHAT: expected ..., got ..., for input ...' unless condition is true."""
    if not condition:
        raise AssertionError(f"{{what}}: expected {{expected}}, got {{got}}, for input {{{fmt}(inp)}}")


def {close}(what, got, expected, inp, rtol=1e-6, atol=1e-9):
    """Fail unless got (number, array or tensor) has expected's shape and is close to it."""
    {check}(got is not None, what, {fmt}(expected), None, inp)
    expected = {np}.asarray(expected.detach().numpy() if hasattr(expected, "detach") else expected, dtype=float)
    try:
        array = {np}.asarray(got.detach().numpy() if hasattr(got, "detach") else got, dtype=float)
    except Exception:
        {check}(False, what, {fmt}(expected), f"{{got!r}} (not a number, array or tensor)", inp)
    {check}(array.shape == expected.shape, what, f"shape {{expected.shape}}: {{{fmt}(expected)}}",
          f"shape {{array.shape}}: {{{fmt}(array)}}", inp)
    if not {np}.allclose(array, expected, rtol=rtol, atol=atol):
        gap = float({np}.max({np}.abs(array - expected))) if array.size else 0.0
        {check}(False, what, {fmt}(expected), f"{{{fmt}(array)}} (off by up to {{gap:.3g}}; allowed: rtol={{rtol}}, atol={{atol}})", inp)'''

REFERENCE = '''\
import autograd_core as _hidden_ref  # the kit's engine, the reference (student code may not import it)


def _hidden_reference(op, inputs, grad):
    """The gradients of op(*inputs) for the output gradient grad, computed by the kit's engine."""
    tensors = [_hidden_ref.tensor(_hidden_np.asarray(x, dtype=float), dtype=_hidden_ref.float64, requires_grad=True)
               for x in inputs]
    op(*tensors).backward(_hidden_ref.tensor(_hidden_np.asarray(grad, dtype=float), dtype=_hidden_ref.float64))
    return [t.grad.numpy() for t in tensors]'''

VISIBLE = dict(np="np", fmt="describe", check="check", close="check_close")
HIDDEN = dict(np="_hidden_np", fmt="_hidden_describe", check="_hidden_check", close="_hidden_close")

HEADER = re.compile(r"^%% (notebook|metadata|markdown|code|solution|test)\b ?(.*)$")
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"


def _cell_meta(kind, grade_id, points=None):
    meta = {"grade": kind == "test", "grade_id": grade_id, "locked": kind != "solution",
            "schema_version": 3, "solution": kind == "solution"}
    if kind == "test":
        meta["points"] = points
    return {"nbgrader": meta}


def _fill(source: str, kind: str) -> str:
    source = source.replace("{{check_helpers}}", CHECK_HELPERS.format(**VISIBLE))
    source = source.replace("{{reference}}", REFERENCE)
    if kind == "test" and BEGIN_HIDDEN in source:
        hidden = CHECK_HELPERS.format(**HIDDEN).replace("\n\n\n", "\n\n")
        source = source.replace(BEGIN_HIDDEN, BEGIN_HIDDEN + "\n" + hidden + "\n", 1)
    return source


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
            if kind == "test":
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
        if cell["kind"] == "markdown":
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
