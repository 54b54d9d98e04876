"""Build the nbgrader source notebooks of ``exercises/`` from their plain-text sources, in English and Chinese.

Each assignment is written as one readable text file in ``exercises/_src/``; this script turns it
into ``exercises/<assignment>/<notebook>.ipynb`` (English) and, when the source holds Chinese
prose, ``exercises/<assignment>_zh/<notebook>.ipynb`` (Chinese), with nbgrader's cell metadata and
no outputs. The two share every code, test and solution cell, grade id and point: only prose and
the words inside strings and comments differ (``exercises/README.md``, "Two languages")::

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

Two languages, one source (as ``notebooks/build.py`` does for the lessons):

* a ``markdown`` or ``answer`` cell holds its English text, then a line ``%% zh`` and the same text
  in Chinese. A source with no ``%% zh`` at all builds the English notebook only; one with some
  needs one in every such cell;
* inside a code, solution or test cell, ``«English|中文»`` becomes ``English`` in the English
  notebook and ``中文`` in the Chinese one (messages of checks, comments, labels);
* each notebook's metadata says its language, ``{"kitgrade": {"language": "en"}}`` or ``"zh"``:
  ``kitgrade check`` and the test messages speak it (``grader/student_language.py``).

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
  and ``describe`` from ``grader.checks``; in the Chinese notebook ``check`` and ``check_close``
  are ``checks_in("zh")``'s, which fail in Chinese.
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

LANGUAGES = ("en", "zh")
CHECK_HELPERS = {
    "en": "from grader.checks import NoAnswer, StudentCodeError, check, check_close, describe, student, student_batch",
    "zh": ("from grader.checks import NoAnswer, StudentCodeError, checks_in, describe, student, student_batch\n"
           'check, check_close = checks_in("zh")  # 检查未通过时用中文说明'),
}
# «English|中文» inside a code cell: the words in each language (the lessons' syntax, notebooks/build.py)
TRANSLATED = re.compile(r"«([^«»|]*)\|([^«»|]*)»")

REFERENCE = '''\
import numpy as np
import autograd_core as _ref  # the kit's engine, the reference


def reference_gradients(op, inputs, grad):
    """The gradients of op(*inputs) for the output gradient grad, computed by the kit's engine."""
    tensors = [_ref.tensor(np.asarray(x, dtype=float), dtype=_ref.float64, requires_grad=True) for x in inputs]
    op(*tensors).backward(_ref.tensor(np.asarray(grad, dtype=float), dtype=_ref.float64))
    return [t.grad.numpy() for t in tensors]'''


HEADER = re.compile(r"^%% (notebook|metadata|markdown|code|solution|test|answer|zh)\b ?(.*)$")


def _cell_meta(kind, grade_id, points=None):
    meta = {"grade": kind in ("test", "answer"), "grade_id": grade_id, "locked": kind in ("markdown", "code", "test"),
            "schema_version": 3, "solution": kind in ("solution", "answer")}
    if kind in ("test", "answer"):
        meta["points"] = points
    return {"nbgrader": meta}


def _fill(source: str, language: str) -> str:
    return source.replace("{{check_helpers}}", CHECK_HELPERS[language]).replace("{{reference}}", REFERENCE)


def localize(code: str, language: str) -> str:
    """A code cell's text in one language: every ``«English|中文»`` replaced by its part."""
    text = TRANSLATED.sub(lambda m: m.group(LANGUAGES.index(language) + 1), code)
    if "«" in text or "»" in text:
        raise SyntaxError(f"a '«' or '»' without its pair in: {code.splitlines()[0]!r}...")
    return text


def zh_target(target: str) -> str:
    """Where the Chinese notebook of ``<assignment>/<name>.ipynb`` goes: ``<assignment>_zh/<name>.ipynb``."""
    assignment, _, name = target.partition("/")
    return f"{assignment}_zh/{name}"


def parse(path: Path):
    """[(notebook path relative to exercises/, NotebookNode)] of one source file: English, then Chinese if any."""
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
        if kind == "zh":
            if current is None or current["kind"] not in ("markdown", "answer") or current["zh"] is not None:
                raise SyntaxError(f"{path}:{number}: '%% zh' belongs in a markdown or answer cell, once")
            current["zh"] = current["lines"] = []
            continue
        current = None if kind in ("notebook", "metadata") else current
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
            current = {"kind": kind, "id": grade_id, "points": points, "lines": [], "zh": None}
            current["en"] = current["lines"]
            cells.append(current)
    if target is None:
        raise SyntaxError(f"{path}: no '%% notebook' line")
    ids = [c["id"] for c in cells]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SyntaxError(f"{path}: duplicate grade ids {duplicates}")

    prose = [c for c in cells if c["kind"] in ("markdown", "answer")]
    untranslated = [c["id"] for c in prose if c["zh"] is None]
    if len(untranslated) < len(prose) and untranslated:
        raise SyntaxError(f"{path}: cells without their Chinese ('%% zh'): {untranslated}")
    languages = LANGUAGES if not untranslated else ("en",)
    built = [(target if language == "en" else zh_target(target), _notebook(cells, metadata, language))
             for language in languages]
    return built


def _notebook(cells, metadata, language):
    nb = nbformat.v4.new_notebook()
    kit = {**metadata.get("kitgrade", {}), "language": language}
    nb.metadata.update({
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        **metadata,
        "kitgrade": kit,
    })
    for cell in cells:
        meta = _cell_meta(cell["kind"], cell["id"], cell["points"])
        if cell["kind"] in ("markdown", "answer"):
            text = "\n".join(cell[language]).strip("\n")
            nb.cells.append(nbformat.v4.new_markdown_cell(text, metadata=meta))
        else:
            text = _fill(localize("\n".join(cell["lines"]).strip("\n"), language), language)
            nb.cells.append(nbformat.v4.new_code_cell(text, metadata=meta))
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:02d}-{cell.metadata['nbgrader']['grade_id']}"[:64]
    nbformat.validate(nb)
    return nb


def render(nb) -> str:
    return nbformat.writes(nb) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    stale = []
    for source in sorted(SOURCES.glob("*.txt")):
        for target, nb in parse(source):
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
