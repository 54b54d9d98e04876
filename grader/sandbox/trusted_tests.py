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

from nbgrader.preprocessors import ClearHiddenTests

from .. import checks
from ..student_language import say
from .recorder import clip

BEGIN_HIDDEN = ClearHiddenTests.begin_test_delimeter.default_value
END_HIDDEN = ClearHiddenTests.end_test_delimeter.default_value


def is_trusted_test(source: str) -> bool:
    """Whether a test cell's code asks for the student's values with ``student(...)`` or ``student_batch(...)``."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("student", "student_batch")
               for node in ast.walk(tree))


def _python(source: str) -> str:
    """A cell's source as plain Python (IPython magics turned into calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


class TrustedSide:
    """The grader's namespace for one notebook's trusted tests, whose messages speak ``language``."""

    def __init__(self, probe, language: str = "en"):
        self.probe, self.language = probe, language
        self.check, self.check_close = checks.checks_in(language)
        self.hidden_failures: list[str] = []  # of the last test run: for the instructor's report, never its output
        self.namespace = {"__name__": "__trusted_test__", "__builtins__": __builtins__}
        self._bind()

    def _bind(self):
        self.namespace.update(student=self.probe, student_batch=self._batch, check=self.check,
                              check_close=self.check_close, describe=checks.describe,
                              StudentCodeError=checks.StudentCodeError, StudentException=checks.StudentException,
                              Opaque=checks.Opaque, NoAnswer=checks.NoAnswer)

    def _batch(self, codes):
        """``student_batch``: every piece of code in one request; no value for any if the request failed."""
        codes = list(codes)
        if not all(isinstance(code, str) for code in codes):
            raise TypeError("student_batch() takes a list of code strings")
        try:
            answer = self.probe(checks.batch_probe_code(codes))
        except checks.StudentCodeError:
            answer = None
        return checks.from_batch_answer(answer, len(codes), self.language)

    def run_setup(self, source: str) -> None:
        """Run an instructor's read-only code cell here too (its output and errors are not kept)."""
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                checks.run_code(_python(source), self.namespace)
            except Exception:  # e.g. a cell that uses the student's names: it means nothing here
                pass
        self._bind()

    def run_test(self, source: str, output_budget: int) -> tuple[list[dict], bool]:
        """Run a trusted test cell; return its nbformat outputs and whether it failed.

        The visible part runs as written. The hidden part (between nbgrader's hidden-test markers)
        runs as ``HiddenChecks`` says: its output is only "k of n hidden checks passed".
        """
        visible, hidden = split_hidden(_python(source))
        stream = io.StringIO()
        outputs: list[dict] = []
        error_output, value = None, None
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            try:
                value = checks.run_code(visible, self.namespace)
            except Exception as error:  # the test failed: its message, never its code
                ename, evalue = type(error).__name__, clip(str(error))
                error_output = _error(ename, evalue)
        text = stream.getvalue()
        if text:
            outputs.append({"output_type": "stream", "name": "stdout", "text": text[:output_budget]})
        self.hidden_failures = []
        if error_output is None and hidden is not None:
            value = None
            hidden_checks = HiddenChecks(self)
            verdict = hidden_checks.run(hidden)
            self.hidden_failures = hidden_checks.failures
            if verdict:
                error_output = _error("AssertionError", verdict)
        if error_output is not None:
            outputs.append(error_output)
        elif value is not None:
            outputs.append({"output_type": "execute_result", "execution_count": None, "metadata": {},
                            "data": {"text/plain": clip(repr(value))}})
        return outputs, error_output is not None


class HiddenChecks:
    """Runs the hidden part of a test so that nothing in its output depends on which case failed.

    The hidden part must ask for all its answers in one request (``student_batch``) before any
    check; every ``check``/``check_close`` then counts instead of stopping the test; what the part
    prints is dropped; and the only output is "k of n hidden checks passed". A failed request
    (the student's process stopped or ran out of time) leaves every answer a ``NoAnswer``, so the
    count is the same whichever case the student's code stopped at.
    """

    def __init__(self, side: TrustedSide):
        self.side = side
        self.passed = self.total = self.requests = 0
        self.checking = False
        self.failures: list[str] = []  # the first few messages, for the instructor's report only

    def run(self, code: str) -> str:
        """'' if every hidden check passed, else the sentence that fails the test."""
        namespace = self.side.namespace
        saved = {name: namespace[name] for name in ("student", "student_batch", "check", "check_close")}
        namespace.update(student=self._guarded(saved["student"]), student_batch=self._guarded(saved["student_batch"]),
                         check=self._counted(self.side.check), check_close=self._counted(self.side.check_close))
        stopped = False
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                checks.run_code(code, namespace)
        except _AuthoringError as error:
            return f"the hidden checks could not run: {error}"
        except Exception as error:  # e.g. test code that trips over a missing answer: the checks after it did not run
            stopped = True
            self._note(error)
        finally:
            namespace.update(saved)
        if self.passed == self.total and not stopped:
            return ""
        language = self.side.language
        rest = say("hidden_rest", language) if stopped else ""
        return say("hidden_count", language, passed=self.passed, total=self.total + stopped) + rest

    def _guarded(self, probe):
        def ask(*args, **kwargs):
            if self.checking or self.requests:
                raise _AuthoringError("a hidden test must ask for all its answers in one student_batch([...]) "
                                      "before its first check")
            self.requests += 1
            return probe(*args, **kwargs)
        return ask

    def _counted(self, function):
        def counted(*args, **kwargs):
            self.checking = True
            self.total += 1
            try:
                function(*args, **kwargs)
            except Exception as error:
                self._note(error)
                return False
            self.passed += 1
            return True
        return counted

    def _note(self, error: Exception) -> None:
        if len(self.failures) < 3:
            self.failures.append(clip(f"{type(error).__name__}: {error}", 500))


class _AuthoringError(Exception):
    """A hidden test written so that its answers could depend on its verdicts."""


def split_hidden(code: str) -> tuple[str, str | None]:
    """(the code before the hidden tests, the hidden tests) of a test cell; (code, None) without any.

    The markers are nbgrader's; a hidden part that cannot stand on its own (markers inside a
    block) makes the whole cell hidden.
    """
    lines = code.splitlines()
    begin = [i for i, line in enumerate(lines) if BEGIN_HIDDEN in line]
    if not begin:
        return code, None
    end = [i for i, line in enumerate(lines) if END_HIDDEN in line and i > begin[0]]
    stop = end[-1] if end else len(lines)
    visible = "\n".join(lines[:begin[0]])
    hidden = "\n".join(lines[begin[0] + 1:stop])
    after = "\n".join(lines[stop + 1:])
    try:
        for part in (visible, hidden, after):
            ast.parse(part)
    except SyntaxError:
        return "", code
    return visible, hidden + "\n" + after


def _error(ename: str, evalue: str) -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue,
            "traceback": [f"{ename}: {evalue}" if evalue else ename]}


def output_size(output: dict) -> int:
    return len(json.dumps(output, default=str))
