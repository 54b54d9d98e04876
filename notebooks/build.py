"""Build the course notebooks from their single source, in English and in Chinese.

Each lesson is one file in ``notebooks/source/NN_name.lesson``: code cells and,
for every piece of prose, an English and a Chinese version side by side. The
code cells are shared, so the two languages can never teach different code.

A lesson file is a sequence of blocks, each starting with a marker line::

    %%% en          prose in English (a markdown cell) ...
    %%% zh          ... immediately followed by the same prose in Chinese
    %%% code        a code cell, the same in both notebooks ...
    %%% code pytorch-only   ... or one for PyTorch only, tagged ``pytorch-only``: it starts with
                    ``if torch.__name__ == "torch":``, so on the kit's engine it does nothing

... except for the words a student reads in it: inside a code cell,
``«English|中文»`` becomes ``English`` in the English notebook and ``中文`` in the
Chinese one (plot titles, axis labels, comments, printed messages). Only the
text inside strings and comments may differ; the tests check that.

Run ``python notebooks/build.py`` to write ``notebooks/en/*.ipynb`` and
``notebooks/zh/*.ipynb`` (without outputs), or ``--check`` to verify that the
committed notebooks are exactly what the sources produce.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "source"
LANGUAGES = ("en", "zh")
MARKER = "%%% "

# The one line that chooses the engine; tests switch it to run on PyTorch.
ENGINE_LINE = 'import autograd_core as torch  # the kit\'s engine; change this line to "import torch" to run on PyTorch'

# «English|中文» inside a code cell: the words in each language (no « » | inside them)
TRANSLATED = re.compile(r"«([^«»|]*)\|([^«»|]*)»")

# A code cell that only PyTorch runs (what the kit's engine does not have), and the line that skips it elsewhere
PYTORCH_ONLY = "pytorch-only"
PYTORCH_ONLY_GUARD = 'if torch.__name__ == "torch":'

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def parse_lesson(text: str, name: str = "<lesson>") -> list[dict]:
    """The cells of one lesson: ``{"type": "markdown", "en": ..., "zh": ...}`` or ``{"type": "code", "source": ...}``."""
    blocks: list[tuple[str, list[str]]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith(MARKER):
            kind = line[len(MARKER):].strip()
            if kind not in ("en", "zh", "code", "code pytorch-only"):
                raise ValueError(f"{name}:{lineno}: unknown block {kind!r}")
            blocks.append((kind, []))
        elif blocks:
            blocks[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"{name}:{lineno}: text before the first block marker")

    cells: list[dict] = []
    i = 0
    while i < len(blocks):
        kind, lines = blocks[i]
        body = "\n".join(lines).strip("\n")
        if kind.startswith("code"):
            code = [line for line in body.splitlines() if line.strip() and not line.startswith("#")]
            if kind == "code pytorch-only" and code[:1] != [PYTORCH_ONLY_GUARD]:
                raise ValueError(f"{name}: a PyTorch-only cell's code starts with {PYTORCH_ONLY_GUARD!r}")
            cells.append({"type": "code", "source": body, "tags": [PYTORCH_ONLY] if kind != "code" else []})
            i += 1
        elif kind == "en":
            if i + 1 >= len(blocks) or blocks[i + 1][0] != "zh":
                raise ValueError(f"{name}: every '%%% en' block needs a '%%% zh' block right after it")
            zh = "\n".join(blocks[i + 1][1]).strip("\n")
            cells.append({"type": "markdown", "en": body, "zh": zh})
            i += 2
        else:
            raise ValueError(f"{name}: a '%%% zh' block must follow a '%%% en' block")
    return cells


def localize(code: str, language: str) -> str:
    """A code cell's text in one language: every ``«English|中文»`` replaced by its part."""
    part = LANGUAGES.index(language) + 1
    text = TRANSLATED.sub(lambda m: m.group(part), code)
    if "«" in text or "»" in text:
        raise ValueError(f"a '«' or '»' without its pair in: {code.splitlines()[0]!r}...")
    return text


def build_notebook(cells: list[dict], language: str, stem: str) -> nbformat.NotebookNode:
    """One language's notebook: shared code cells, that language's prose, no outputs."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
    }
    for n, cell in enumerate(cells):
        cell_id = f"{stem[:2]}-{n:02d}"  # stable ids: rebuilding never changes a file needlessly
        if cell["type"] == "code":
            code = nbformat.v4.new_code_cell(localize(cell["source"], language), id=cell_id)
            if cell["tags"]:
                code.metadata["tags"] = list(cell["tags"])
            nb.cells.append(code)
        else:
            nb.cells.append(nbformat.v4.new_markdown_cell(cell[language], id=cell_id))
    return nb


def lessons() -> list[Path]:
    return sorted(SOURCE.glob("*.lesson"))


def render(language: str, path: Path) -> str:
    cells = parse_lesson(path.read_text(encoding="utf-8"), path.name)
    nb = build_notebook(cells, language, path.stem)
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def target(language: str, path: Path) -> Path:
    return HERE / language / f"{path.stem}.ipynb"


def ran_in_place(path: Path) -> bool:
    """Whether a notebook was run and saved where it is: it holds outputs or execution counts."""
    nb = nbformat.read(path, as_version=4)
    return any(c.get("outputs") or c.get("execution_count") for c in nb.cells if c.cell_type == "code")


def problems(here: Path = HERE) -> list[str]:
    """What differs between the committed notebooks in ``here`` and what their sources build, as advice."""
    found = []
    sources = sorted((here / "source").glob("*.lesson"))
    for path in sources:
        for language in LANGUAGES:
            out = here / language / f"{path.stem}.ipynb"
            where = out.relative_to(here.parent)
            if not out.exists():
                found.append(f"missing: {where} (run: python notebooks/build.py)")
            elif out.read_text(encoding="utf-8") != render(language, path):
                if ran_in_place(out):
                    found.append(
                        f"{where} holds outputs: it was run and saved in place (JupyterLab saves what it runs). "
                        f"Nothing is wrong with the course. Run the lessons from your copies in my-notebooks/ "
                        f"(make lab opens them); to clean this one: git checkout -- {where}")
                else:
                    found.append(f"out of date: {where} differs from source/{path.name} "
                                 f"(after editing a source, run: python notebooks/build.py)")
    expected = {here / lang / f"{p.stem}.ipynb" for p in sources for lang in LANGUAGES}
    for lang in LANGUAGES:
        for p in sorted((here / lang).glob("*.ipynb")):
            if p not in expected:
                found.append(f"no source for: {p.relative_to(here.parent)}")
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed notebook differs from its source")
    args = parser.parse_args(argv)
    if args.check:
        found = problems()
        for problem in found:
            print(problem)
        return 1 if found else 0
    for path in lessons():
        for language in LANGUAGES:
            out = target(language, path)
            out.parent.mkdir(exist_ok=True)
            out.write_text(render(language, path), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
