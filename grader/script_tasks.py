"""A script task's answers (a cell that defines variables, not a function) asked for by a test cell.

``check(student(defined("x")), ...)``: whether the student's notebook defines ``x``. When a name is
missing because the cell that ran last still raises ``NotImplementedError`` itself, as nbgrader
hands the task out, the question raises that error again, so the test reads "not answered yet",
as it does for a function left blank (``student_language.raised``). Text for people only: it runs
in the student's process, and a missing name fails its check either way.
"""

from __future__ import annotations


def defined(*names) -> str:
    """The code that asks the student's notebook whether ``names`` are all defined (``all_defined``)."""
    return f"__import__('grader.script_tasks', fromlist=['all_defined']).all_defined({list(names)!r}, globals())"


def all_defined(names, namespace) -> bool:
    """Run in the student's process: whether every one of ``names`` is in ``namespace`` (see the module)."""
    if all(name in namespace for name in names):
        return True
    from IPython import get_ipython

    last = getattr(get_ipython(), "last_execution_result", None)
    error = getattr(last, "error_in_exec", None)
    if isinstance(error, NotImplementedError):
        trace = error.__traceback__
        while trace is not None and trace.tb_next is not None:
            trace = trace.tb_next
        if trace is not None and trace.tb_frame.f_code.co_name == "<module>":  # the cell's own line, not a function's
            raise NotImplementedError()
    return False
