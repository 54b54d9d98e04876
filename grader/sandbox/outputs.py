"""The outputs a student's process sends for a cell: checked against nbformat's shapes, clipped,
and kept within the notebook's budget (a test's error output always, since it is what makes
nbgrader score a test as failed)."""

from __future__ import annotations

import nbformat

from .protocol import MAX_JSON_DEPTH, nesting_depth
from .recorder import clip
from .trusted_tests import output_size


def keep_output(cell, output: dict, budget: list, always: bool = False) -> None:
    """Add an output to a cell within the notebook's budget (a test's error output always, clipped)."""
    if nesting_depth(output) > MAX_JSON_DEPTH:  # nbformat and nbgrader would fail on it in the instructor's process
        output = error_output("OutputTooDeep", f"an output nested more than {MAX_JSON_DEPTH} levels deep was dropped")
        always = True
    if output.get("output_type") == "error":
        output = {"output_type": "error", "ename": clip(str(output.get("ename", "Error")), 200),
                  "evalue": clip(str(output.get("evalue", "")), 2000),
                  "traceback": [clip(str(line), 2000) for line in list(output.get("traceback") or [])[-30:]]
                  if isinstance(output.get("traceback"), list) else []}
    size = output_size(output)
    if size > budget[0] and not always:
        budget[0] = 0
        return
    budget[0] = max(0, budget[0] - size)
    try:
        cell.outputs.append(nbformat.from_dict(output))
    except Exception:
        cell.outputs.append(nbformat.from_dict(error_output("MalformedOutput", "an output could not be read")))


def error_output(ename: str, evalue: str) -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": [f"{ename}: {evalue}"]}


def well_formed(output) -> bool:
    """An output as nbformat defines it (what the student's process sends is checked, not trusted)."""
    if not isinstance(output, dict):
        return False
    kind = output.get("output_type")
    if kind == "stream":
        return output.get("name") in ("stdout", "stderr") and isinstance(output.get("text"), str)
    if kind == "error":
        return isinstance(output.get("ename"), str) and isinstance(output.get("evalue"), str)
    if kind in ("display_data", "execute_result"):
        data = output.get("data")
        return isinstance(data, dict) and all(isinstance(k, str) for k in data) \
            and isinstance(output.get("metadata", {}), dict)
    return False
