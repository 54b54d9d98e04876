"""Simulated submissions of the sample assignment: honest ones, broken ones and attempts to cheat.

Each builder takes the instructor's source notebook and the blank release (as nbformat nodes) and
returns what the student hands in: a notebook node, raw bytes, or a dict of file name to either.
``CASES`` lists, per student id: the builder, the score the kit must give (out of 7) and a phrase
that must appear among the reasons in the instructor's report.
"""

from __future__ import annotations

import copy

import nbformat

SOLUTIONS = {
    "square": "def square(x):\n    return x * x",
    "mean_abs": "def mean_abs(values):\n    return float(np.mean(np.abs(values)))",
    "derivative": "def derivative(f, x, h=1e-6):\n    return (f(x + h) - f(x - h)) / (2 * h)",
}


def cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def answered(release, **answers):
    """The release with the given solution cells replaced (``grade_id=source``)."""
    nb = copy.deepcopy(release)
    for grade_id, source in answers.items():
        cell(nb, grade_id).source = source
    return nb


def solution(source, release):
    return answered(release, **SOLUTIONS)


def blank(source, release):
    return copy.deepcopy(release)


def partial(source, release):
    # square right; mean_abs wrong on negative-only input (2 of 3 cases); derivative left blank
    return answered(release, square=SOLUTIONS["square"],
                    mean_abs="def mean_abs(values):\n    return float(np.mean(np.abs(values))) if max(values) > 0 else 0.0")


def malformed_json(source, release):
    return nbformat.writes(solution(source, release)).encode()[:400]


def wrong_nbformat(source, release):
    text = nbformat.writes(solution(source, release)).replace('"nbformat": 4', '"nbformat": 3')
    return text.encode()


def missing(source, release):
    return {"notes.txt": b"I forgot the notebook"}


def renamed(source, release):
    return {"sample_ex (1).ipynb": solution(source, release)}


def extra(source, release):
    return {"sample_ex.ipynb": solution(source, release), "scratch.ipynb": blank(source, release)}


def deleted_test(source, release):
    nb = answered(release, square=SOLUTIONS["square"], mean_abs=SOLUTIONS["mean_abs"])
    nb.cells.remove(cell(nb, "test_derivative"))
    return nb


def edited_test(source, release):
    nb = blank(source, release)
    for grade_id in ("test_square", "test_mean_abs", "test_derivative"):
        cell(nb, grade_id).source = "pass"
    return nb


def changed_metadata(source, release):
    nb = blank(source, release)
    for grade_id in ("test_square", "test_derivative"):
        meta = cell(nb, grade_id).metadata.nbgrader
        meta.update(solution=True, locked=False, points=100, checksum="0" * 32)
        cell(nb, grade_id).source = "pass"
    return nb


def _with_derivative(release, source_code):
    return answered(release, square=SOLUTIONS["square"], mean_abs=SOLUTIONS["mean_abs"], derivative=source_code)


def kernel_dies(source, release):
    return _with_derivative(release, "import os\nos._exit(3)")


def infinite_loop(source, release):
    return _with_derivative(release, "while True:\n    pass")


def ignores_interrupt(source, release):
    return _with_derivative(release, "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except BaseException:\n        pass")


def memory_hog(source, release):
    return _with_derivative(release, "hog = bytearray(8 * 1024 ** 3)")


def output_flood(source, release):
    return answered(release, **{**SOLUTIONS, "derivative": SOLUTIONS["derivative"] + "\nprint('x' * 10_000_000)"})


def stderr_warnings(source, release):
    # correct answers that warn on stderr when called (plain nbgrader scores such tests zero)
    return answered(release, **{**SOLUTIONS, "square": "import warnings, sys\n\ndef square(x):\n"
                                "    warnings.warn('square: consider numpy.square')\n"
                                "    print('debug: squaring', file=sys.stderr)\n    return x * x"})


def patched_assert_helpers(source, release):
    # wrong answers, and the assertion helpers the tests call patched to always pass
    return answered(release, square="def square(x):\n    return x * x if np.isscalar(x) else x\n"
                    "np.allclose = lambda *args, **kwargs: True",
                    mean_abs=SOLUTIONS["mean_abs"],
                    derivative="def derivative(f, x, h=1e-6):\n    return 1.0\n"
                    "np.testing.assert_allclose = lambda *args, **kwargs: None")


def patches_during_test(source, release):
    # the answer itself patches the helper the test's next line calls
    return answered(release, square=SOLUTIONS["square"], mean_abs=SOLUTIONS["mean_abs"],
                    derivative="def derivative(f, x, h=1e-6):\n"
                    "    np.testing.assert_allclose = lambda *args, **kwargs: None\n    return 1.0")


def patched_formatter(source, release):
    # the partial-credit test prints its score; make every float print as full marks
    return answered(release, mean_abs="get_ipython().display_formatter.formatters['text/plain'].for_type(\n"
                    "    float, lambda value, printer, cycle: printer.text('3.0'))\n"
                    "def mean_abs(values):\n    return 0.0")


def wrapped_in_try(source, release):
    # every later cell (tests included) wrapped in try/except by an input transformer
    return answered(release, square="def _swallow(lines):\n"
                    "    return ['try:\\n'] + ['    ' + line for line in lines] + ['\\nexcept BaseException:\\n    pass\\n']\n"
                    "get_ipython().input_transformers_post.append(_swallow)\n"
                    "def square(x):\n    return 0")


def silenced_errors(source, release):
    # no traceback shown, the execution result claims success
    return answered(release, square="import sys, IPython\n"
                    "get_ipython().showtraceback = lambda *a, **k: None\n"
                    "get_ipython()._showtraceback = lambda *a, **k: None\n"
                    "sys.excepthook = lambda *a: None\n"
                    "IPython.core.interactiveshell.ExecutionResult.success = property(lambda self: True)\n"
                    "def square(x):\n    return 0")


def rebound_numpy(source, release):
    # replace the instructor's `np` by an object whose checks always pass
    return answered(release, square="import numpy\nclass _Lenient:\n"
                    "    def __getattr__(self, name):\n        return getattr(numpy, name)\n"
                    "    def allclose(self, *args, **kwargs):\n        return True\n"
                    "np = _Lenient()\n"
                    "def square(x):\n    return x * x if numpy.isscalar(x) else x")


def solved_then(release, code):
    """The full solution, with ``code`` run right after ``square`` is defined (in its cell)."""
    return answered(release, **{**SOLUTIONS, "square": SOLUTIONS["square"] + "\n" + code})


def reads_instructor_files(course_root):
    path = course_root / "source/sample_ex/sample_ex.ipynb"
    return lambda source, release: solved_then(release, f"leaked = open({str(path)!r}).read()")


def lists_instructor_files(course_root):
    return lambda source, release: solved_then(release, f"import os\nleaked = os.listdir({str(course_root / 'source')!r})")


def writes_gradebook(course_root):
    return lambda source, release: solved_then(
        release, f"import sqlite3\ndb = sqlite3.connect({str(course_root / 'gradebook.db')!r})\n"
                 "db.execute('UPDATE grade SET auto_score = 100')\ndb.commit()")


def overwrites_classmate(course_root):
    target = course_root / "submitted" / "solution" / "sample_ex" / "sample_ex.ipynb"
    return lambda source, release: solved_then(release, f"open({str(target)!r}, 'w').write('{{}}')")


def disables_audit_hook(course_root):
    # switch the in-process audit hook off, then read the gradebook: the kernel (Landlock) refuses
    return lambda source, release: solved_then(
        release, "import gc\nfor hook in [o for o in gc.get_objects() if type(o).__name__ == 'AuditHook']:\n"
                 "    hook.active = False\n"
                 f"leaked = open({str(course_root / 'gradebook.db')!r}, 'rb').read(16)")


def honest_magics(source, release):
    return solved_then(release, "%matplotlib inline\n%load_ext autoreload\n%autoreload 2\n!pip install numpy")


def kills_grader(source, release):
    return solved_then(release, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")


def spawns_shell(source, release):
    return solved_then(release, "import subprocess\nsubprocess.run(['cat', '/etc/hostname'])")


def cases(course_root):
    """student id -> (builder, expected score out of 7, phrase expected among the reasons)."""
    return {
        "solution": (solution, 7, None),
        "blank": (blank, 0, None),
        "partial": (partial, 4, None),
        "malformed_json": (malformed_json, 0, "not valid notebook JSON"),
        "wrong_nbformat": (wrong_nbformat, 0, "wrong notebook format"),
        "missing": (missing, 0, "missing"),
        "renamed": (renamed, 7, "renamed"),
        "extra": (extra, 7, "extra notebook, ignored"),
        "deleted_test": (deleted_test, 5, "deleted or renamed; restored"),
        "edited_test": (edited_test, 0, "test cell was edited; restored"),
        "changed_metadata": (changed_metadata, 0, "changed nbgrader metadata"),
        "kernel_dies": (kernel_dies, 5, "exited early"),
        "infinite_loop": (infinite_loop, 5, "was interrupted"),
        "ignores_interrupt": (ignores_interrupt, 5, "ignored the interrupt"),
        "memory_hog": (memory_hog, 5, "ran out of memory"),
        "output_flood": (output_flood, 7, "output over the limit was dropped"),
        "stderr_warnings": (stderr_warnings, 7, "not counted as a failure"),
        "honest_magics": (honest_magics, 7, "shell command skipped"),
        "patched_assert_helpers": (patched_assert_helpers, 3, "numpy.allclose"),
        "patches_during_test": (patches_during_test, 5, "while it ran; test failed"),
        "patched_formatter": (patched_formatter, 0, "PlainTextFormatter"),
        "wrapped_in_try": (wrapped_in_try, 0, "input_transformers_post"),
        "silenced_errors": (silenced_errors, 0, "changed what this test relies on"),
        "rebound_numpy": (rebound_numpy, 0, "name 'np' bound by an instructor cell"),
        "reads_instructor_files": (reads_instructor_files(course_root), 7, "reading instructor"),
        "lists_instructor_files": (lists_instructor_files(course_root), 7, "touching instructor"),
        # the gradebook is not in the sandbox: under /tmp its path is the sandbox's own /tmp, where a database
        # is an honest habit (connect fails on the missing folder, no finding); elsewhere the audit hook refuses it
        "writes_gradebook": (writes_gradebook(course_root), 7,
                             None if str(course_root).startswith("/tmp/") else "opening a database"),
        "overwrites_classmate": (overwrites_classmate(course_root), 7, "writing to instructor or other students' files"),
        "disables_audit_hook": (disables_audit_hook(course_root), 7, "switched off the audit hook"),
        "kills_grader": (kills_grader, 7, "signalling a process"),
        "spawns_shell": (spawns_shell, 7, "starting a process"),
    }


#: Cases plain ``nbgrader autograde`` 0.9 misgrades (student id -> its score; the kit gives the one in ``cases``).
PLAIN_NBGRADER_WRONG = {"patched_assert_helpers": 7, "patches_during_test": 7, "patched_formatter": 3, "wrapped_in_try": 7,
                         "stderr_warnings": 5, "rebound_numpy": 2}
