"""Make the tutorial extracts from their sources, as ``sources.toml`` describes them.

    python extract.py NAME SOURCE_FILE     # SOURCE_FILE: the file at the commit sources.toml names

Takes the code of the page (for d2l's Markdown: the cells of the PyTorch tab, each followed by
a ``# %%`` line, as d2lbook builds the PyTorch notebook; for PyTorch's Sphinx pages: the
``.. code-block:: python`` blocks; for a notebook: its code cells; for a library: the line ranges listed), drops the
lines listed under ``drop`` (each must be found, exactly), changes the lines listed under ``replace``
(each must be found, exactly, ``times`` times if given, else once; the reason is beside it in
``sources.toml``), and writes ``extracts/NAME.py``.
"""
from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).parent


# A d2l cell written for several frameworks picks one with ``if tab.selected('pytorch', ...):``
# (older pages: ``if d2l.USE_PYTORCH:``); d2lbook's notebook builder keeps the body of each branch
# that names PyTorch, one indent less, and drops the other branches.
BRANCH = re.compile(r"^(\s*)(el)?if\b.*(tab\.selected|d2l\.USE_)")


def pytorch_branches(lines):
    """A cell's lines with only its PyTorch branches kept, as d2lbook keeps them."""
    marker = "tab.selected" if any("tab.selected" in line for line in lines) else "d2l.USE_"
    kept, branch, indent = [], None, 0  # branch: None outside a framework branch, else True/False
    for line in lines:
        found = BRANCH.match(line)
        if found and marker in line:
            indent = len(found.group(1))
            branch = "'pytorch'" in line or '"pytorch"' in line or "USE_PYTORCH" in line
            continue
        if branch is not None and line.strip() and len(line) - len(line.lstrip()) <= indent:
            branch = None  # back at the branch's own level: the branch is over
        if branch is None:
            kept.append(line)
        elif branch:
            kept.append(line[4:])
    return kept


def d2l_cells(markdown, default_tab=None):
    """The code cells d2l shows in its PyTorch tab (``%%tab pytorch``, ``#@tab all``, ...), as d2lbook
    makes them: a cell without a tab belongs to the book's default tab (the first of ``tabs`` in its
    config.ini), the cell that loads d2lbook's tab extension is left out, and a cell written for
    several frameworks keeps only its PyTorch branches (``if tab.selected('pytorch'):``)."""
    cells = re.findall(r"^```\{\.python \.input[^}]*\}\n(.*?)^```", markdown, re.S | re.M)
    chosen = []
    for cell in cells:
        cell = cell.lstrip("\n")  # (a cell may open with a blank line before its %%tab line)
        first, _, rest = cell.partition("\n")
        tabs = re.match(r"(?:%%tab|#@tab)\s+(.*)", first)
        if tabs and {"pytorch", "all"} & {t.strip() for t in tabs.group(1).split(",")}:
            chosen.append(pytorch_branches(rest.split("\n")))
        elif not tabs and default_tab == "pytorch" and "%load_ext d2lbook.tab" not in cell:
            chosen.append(pytorch_branches(cell.split("\n")))
    return ["\n".join(lines).rstrip("\n") + "\n" for lines in chosen]  # (a dropped last branch took the newline)


def rst_blocks(text):
    """The Python blocks of an rst page (``.. code::``/``.. code-block:: python``, and ``::`` blocks)."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if re.match(r"\s*\.\. code(-block)?::\s*(python)?\s*$", lines[i]) or lines[i].rstrip().endswith("::") and \
                not lines[i].lstrip().startswith(".."):
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith(":")):
                i += 1
            if i < len(lines) and lines[i].startswith((" ", "\t")):
                indent = len(lines[i]) - len(lines[i].lstrip())
                block = []
                while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) >= indent):
                    block.append(lines[i][indent:])
                    i += 1
                blocks.append("\n".join(block).strip("\n") + "\n")
                continue
        i += 1
    return blocks


def extract(name, source_file):
    entry = tomllib.loads((HERE / "sources.toml").read_text(encoding="utf-8"))[name]
    text = Path(source_file).read_text(encoding="utf-8")
    kind = entry["kind"]
    if kind == "d2l":
        code = "# %%\n".join(d2l_cells(text, entry.get("default_tab")))
    elif kind == "rst":
        blocks = rst_blocks(text)
        chosen = entry.get("blocks", list(range(len(blocks))))
        code = "# %%\n".join(blocks[i] for i in chosen)
    elif kind == "ipynb":  # a notebook: its code cells, in order
        cells = [c["source"] for c in json.loads(text)["cells"] if c["cell_type"] == "code"]
        code = "# %%\n".join("".join(c).rstrip("\n") + "\n" for c in cells)
    elif kind == "lines":  # parts of a library: the listed line ranges (1-based, inclusive)
        all_lines = text.splitlines(keepends=True)
        code = "".join("".join(all_lines[a - 1:b]) for a, b in entry["lines"])
    else:  # "script": the file itself; "code": its code, as transcribed without the prose
        code = text
    if "preamble" in entry:  # names the page takes as given (its own code never imports them)
        code = "# (not from the page: the names it takes as given; see sources.toml)\n" + entry["preamble"] + "# %%\n" + code
    lines = code.splitlines(keepends=True)
    for drop in entry.get("drop", []):
        for _ in range(drop.get("times", 1)):
            matches = [i for i, line in enumerate(lines) if line.rstrip("\n") == drop["line"]]
            if not matches:
                raise SystemExit(f"{name}: line to drop not found: {drop['line']!r}")
            del lines[matches[0]]
    for change in entry.get("replace", []):  # a line changed, not dropped: a training run shortened
        matches = [i for i, line in enumerate(lines) if line.rstrip("\n") == change["line"]]
        if len(matches) != change.get("times", 1):
            raise SystemExit(f"{name}: line to replace found {len(matches)} times: {change['line']!r}")
        for i in matches:
            lines[i] = change["with"] + "\n"
    output = HERE / entry.get("output", f"extracts/{name}.py")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("".join(lines), encoding="utf-8")


if __name__ == "__main__":
    extract(*sys.argv[1:])
