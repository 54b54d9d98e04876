"""Trusted tests: test cells that run in the grader's process and ask the student's process for values.

A test cell that calls ``student("...")`` (see ``grader.checks``) is a trusted test. Its code, its
reference values and its comparisons run here, in a namespace of their own; ``student`` sends the
code to the student's process and gets back plain data (``values.decode``). The instructor's
read-only code cells run here too (``run_setup``), so a test finds the imports and helpers the
notebook set up, but nothing the student defined. Whatever the student's process does to itself,
it can only change the values it answers with.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
from .. import checks
from .recorder import clip


def is_trusted_test(source: str) -> bool:
    """Whether a test cell's code asks for the student's values with ``student(...)``."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "student"
               for node in ast.walk(tree))


def _python(source: str) -> str:
    """A cell's source as plain Python (IPython magics turned into calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


class TrustedSide:
    """The grader's namespace for one notebook's trusted tests."""

    def __init__(self, probe):
        self.probe = probe
        self.namespace = {"__name__": "__trusted_test__", "__builtins__": __builtins__}
        self._bind()

    def _bind(self):
        self.namespace.update(student=self.probe, check=checks.check, check_close=checks.check_close,
                              describe=checks.describe, StudentCodeError=checks.StudentCodeError,
                              StudentException=checks.StudentException, Opaque=checks.Opaque)

    def run_setup(self, source: str) -> None:
        """Run an instructor's read-only code cell here too (its output and errors are not kept)."""
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                checks.run_code(_python(source), self.namespace)
            except Exception:  # e.g. a cell that uses the student's names: it means nothing here
                pass
        self._bind()

    def run_test(self, source: str, output_budget: int) -> tuple[list[dict], bool]:
        """Run a trusted test cell; return its nbformat outputs and whether it failed."""
        stream = io.StringIO()
        outputs: list[dict] = []
        failed = False
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            try:
                value = checks.run_code(_python(source), self.namespace)
            except Exception as error:  # the test failed: its message, never its code (hidden tests)
                failed = True
                ename, evalue = type(error).__name__, clip(str(error))
                error_output = {"output_type": "error", "ename": ename, "evalue": evalue,
                                "traceback": [f"{ename}: {evalue}" if evalue else ename]}
                value = None
        text = stream.getvalue()
        if text:
            outputs.append({"output_type": "stream", "name": "stdout", "text": text[:output_budget]})
        if failed:
            outputs.append(error_output)
        elif value is not None:
            outputs.append({"output_type": "execute_result", "execution_count": None, "metadata": {},
                            "data": {"text/plain": clip(repr(value))}})
        return outputs, failed


def output_size(output: dict) -> int:
    return len(json.dumps(output, default=str))
