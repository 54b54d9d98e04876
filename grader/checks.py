"""What an exercise's test cells use: ``student()``, ``check()``, ``check_close()``, ``describe()``.

A test cell asks for the student's answers with ``student("code")`` and checks the values it gets back::

    got = student("second_derivative(lambda x: x ** 3, 2.0)")
    check_close("second_derivative(x ** 3) at 2", got, 12.0, {"x0": 2.0})

In a notebook's kernel (a student working, plain nbgrader) ``student`` runs the code right there.
When ``kitgrade`` grades, a test cell that uses ``student`` runs in the grader's own process
instead: ``student`` sends the code to the student's process and receives only the value, as plain
data (``grader.plain_values``). Either way the test sees the same plain values: numbers, strings,
lists, tuples, dicts, NumPy arrays (a tensor arrives as its array), ``StudentException`` for an
exception object, ``Opaque`` for anything else.

A failed check says what it expected, what came back and for which input, in the notebook's
language (``grader.student_language``): a Chinese notebook's setup cell binds ``checks_in("zh")``.
"""

from __future__ import annotations

import ast
import functools
import sys

import numpy as np

from .method_checks import GradientLog, backward_calls, hook_calls, record_gradients, with_grad_fn
from .plain_values import Opaque, StudentException, plain
from .student_language import raised, say

__all__ = ["student", "student_batch", "check", "check_close", "describe", "Opaque", "StudentException",
           "StudentCodeError", "NoAnswer", "checks_in", "backward_calls", "hook_calls", "record_gradients", "with_grad_fn", "GradientLog",
           "gradients_by_node", "first_wrong_node"]


class StudentCodeError(Exception):
    """The student's code gave no value while a test asked it for one.

    Its text is for people only: when the student's code raised, the text is what the student's
    process *reported* (a type name and message anyone can type), so a test never decides anything
    from it. Points rest on the values the code must compute.
    """


class NoAnswer:
    """An item of ``student_batch`` that gave no value (it raised, or the process stopped): fails every check.

    Indexing it gives itself, so a test written for a tuple answer fails its checks instead of
    crashing. Its text is for people only (see ``StudentCodeError``).
    """

    def __init__(self, text: str, language: str = "en"):
        self.text, self.language = text, language

    def __getitem__(self, key):
        return self

    def __repr__(self):
        return say("no_answer", self.language, text=self.text)

    __hash__ = None

    def __eq__(self, other):
        return False


def run_code(code: str, namespace: dict):
    """Run ``code`` in ``namespace``; its last line, if an expression, is the value returned."""
    tree = ast.parse(code, "<test>", "exec")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<test>", "exec"), namespace)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), "<test>", "eval"), namespace)


def student(code: str):
    """The value of ``code`` run in the student's notebook, as plain data (see the module's docstring)."""
    namespace = sys._getframe(1).f_globals
    try:
        value = run_code(code, namespace)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:
        raise StudentCodeError(f"{type(error).__name__}: {error}") from error
    return plain(value)


def checks_in(language: str):
    """``check`` and ``check_close`` that speak ``language`` (``"en"``, ``"zh"``)."""
    return functools.partial(check, language=language), functools.partial(check_close, language=language)


def student_batch(codes):
    """The values of several pieces of code, evaluated in one go (a ``NoAnswer`` for each that raised).

    Hidden tests ask for all their answers this way, before checking any: under ``kitgrade`` the
    whole list goes to the student's process as one request, so nothing the student's code sees
    or does during it depends on a verdict (docs/threat-model.md).
    """
    namespace = sys._getframe(1).f_globals
    return [_from_item(item) for item in plain(answer_all(list(codes), namespace))]


def answer_all(codes, namespace):
    """Run in the student's process: ``[("value", v) | ("raised", text)]`` for each piece of code."""
    answers = []
    for code in codes:
        try:
            answers.append(("value", run_code(code, namespace)))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as error:
            answers.append(("raised", f"{type(error).__name__}: {error}"[:2000]))
    return answers


def batch_probe_code(codes) -> str:
    """The one request that evaluates ``codes`` in the student's notebook (see ``answer_all``)."""
    return f"__import__('grader.checks', fromlist=['answer_all']).answer_all({list(codes)!r}, globals())"


def from_batch_answer(answer, count: int, language: str = "en") -> list:
    """The grader's side of ``batch_probe_code``: ``count`` values, a ``NoAnswer`` for each missing one."""
    if not isinstance(answer, list) or len(answer) != count:
        return [NoAnswer(say("did_not_answer", language), language) for _ in range(count)]
    return [_from_item(item, language) for item in answer]


def _from_item(item, language: str = "en"):
    if isinstance(item, tuple) and len(item) == 2 and item[0] == "value":
        return item[1]
    if isinstance(item, tuple) and len(item) == 2 and item[0] == "raised" and isinstance(item[1], str):
        return NoAnswer(raised(item[1][:300], language), language)
    return NoAnswer(say("malformed", language), language)


def describe(value) -> str:
    """A short printable form of a number, array, tensor or anything else (with the dtype of arrays)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ", ".join(f"{k}={describe(v)}" for k, v in value.items())
    if hasattr(value, "detach") and hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.detach().numpy()
    if isinstance(value, np.generic):
        return f"{value.item()!r} ({value.dtype.name})"
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=8, threshold=12, separator=", ")
        return text if value.dtype == np.float64 else f"{text} ({value.dtype.name})"
    return repr(value)


def check(condition, what, expected, got, inp, *, language="en"):
    """Fail with 'WHAT: expected ..., got ..., for input ...' unless ``condition`` is true."""
    if not condition:
        raise AssertionError(say("check", language, what=what, expected=expected, got=got, inp=describe(inp)))


def check_close(what, got, expected, inp, *, rtol=1e-6, atol=1e-9, language="en"):
    """Fail unless ``got`` (number, array or tensor) has ``expected``'s shape and is close to it."""
    fail = functools.partial(check, what=what, inp=inp, language=language)
    fail(got is not None, expected=describe(expected), got=None)
    expected = np.asarray(expected.detach().numpy() if hasattr(expected, "detach") else expected, dtype=float)
    try:
        array = np.asarray(got.detach().numpy() if hasattr(got, "detach") else got)
        values = array.astype(float)
    except Exception:
        fail(False, expected=describe(expected), got=say("not_a_number", language, got=repr(got)))
    fail(values.shape == expected.shape, expected=say("shape", language, shape=expected.shape, values=describe(expected)),
         got=say("shape", language, shape=values.shape, values=describe(array)))
    if not np.allclose(values, expected, rtol=rtol, atol=atol):
        gap = float(np.max(np.abs(values - expected))) if values.size else 0.0
        fail(False, expected=describe(expected), got=say("off_by", language, got=describe(array), gap=f"{gap:.3g}", rtol=rtol, atol=atol))


def gradients_by_node(root, parents, backward):
    """``(the nodes in topological order from root, {id(node): the gradient reaching it})``: a reference pass.

    ``parents(node)`` lists a node's inputs (one may be listed twice, as in ``a * a``) and
    ``backward(node, grad)`` returns one gradient per input. A node runs once every node that uses
    it has run (Kahn's algorithm, no recursion), so its gradient is complete; the root's is 1.0.
    The grader runs it on its own copy of a graph, to say which node a student's pass got wrong. It
    holds nothing of a test (no input, no expected value), so the student's process, which can
    import this module, learns nothing from it; what a hidden check says is decided by the test
    cell in the grader's process (the node only).
    """
    nodes, users = [root], {id(root): 0}
    for node in nodes:
        for parent in parents(node):
            if id(parent) not in users:
                users[id(parent)] = 0
                nodes.append(parent)
            users[id(parent)] += 1
    grads, order, ready = {id(root): 1.0}, [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        inputs = list(parents(node))
        if not inputs:
            continue
        for parent, grad in zip(inputs, backward(node, grads[id(node)])):
            grads[id(parent)] = grads.get(id(parent), 0.0) + grad
            users[id(parent)] -= 1
            if users[id(parent)] == 0:
                ready.append(parent)
    return order, grads


def first_wrong_node(nodes, rtol=1e-6, atol=1e-9, language="en"):
    """The first node whose gradient differs from the reference's, or ``None`` if none does.

    ``nodes`` is ``[(label, expected, got), ...]`` in topological order from the output: the
    gradient the reference computed for each node and the one the student's backward pass sent it
    (``None``: none reached it, taken as 0). Returns ``(label, expected, got)`` as texts, with the
    shapes where they differ, for a message like "the gradient reaching `x * y` is wrong: expected
    0.5, got 1.0". Runs in the grader's process, on values the student's process returned.
    """
    for label, expected, got in nodes:
        want = np.asarray(expected, dtype=float)
        try:
            have = np.zeros_like(want) if got is None else np.asarray(got, dtype=float)
        except (TypeError, ValueError):
            return label, describe(want), say("not_an_array", language, got=repr(got))
        if have.shape != want.shape:
            return label, say("shape_only", language, shape=want.shape), say("shape_only", language, shape=have.shape)
        if not np.allclose(have, want, rtol=rtol, atol=atol):
            return label, _number(want), say("no_gradient", language) if got is None else _number(have)
    return None


def _number(array: np.ndarray) -> str:
    """A number as Python prints it (``1.0``, not NumPy's ``1.``); an array as ``describe`` does."""
    return repr(array.item()) if array.ndim == 0 else describe(array)
