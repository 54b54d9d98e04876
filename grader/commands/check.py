"""``check``: a student runs the tests of one notebook on their own machine and sees every result."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from . import kit_exercises
from ..course import kit_exercise_paths, modules_imported, modules_imported_by_files
from ..sandbox import spare_zygotes, workers
from ..sandbox.policy import policy_for
from ..sandbox.scratch import DataFilesTooLarge, read_data_files
from ..foundations.settings import CELL_TIMEOUT, KitGrade, preload_for
from ..student_language import notebook_language, say
from ..notebook.submission import read_notebook_strictly


def check_notebook(path: Path, timeout: float = CELL_TIMEOUT, out=print) -> int:
    """Execute ``path`` in a sandbox, print one line per test cell and the total; 0 if all pass.

    The tests in the notebook run (a released notebook holds the visible ones; the others run when
    the instructor grades), except in a copy of one of the kit's own exercises (a learner's
    workspace): there the exercise's hidden tests run too, taken from the installed kit
    (``grader.commands.kit_exercises``), each failed hidden part saying only how many of its checks passed.
    Written answers (nbgrader's manually graded cells) are listed, answered or not, but not
    counted: the instructor grades them. The notebook file is not changed. The lines speak the
    notebook's language (``grader.student_language``).
    """
    nb, reason = read_notebook_strictly(Path(path))
    if reason:
        out(f"{path}: {reason}")
        return 2
    language = notebook_language(nb)
    exercise = kit_exercises.find(nb)
    hidden = exercise is not None and not exercise.differing
    meta = exercise.policy if hidden else json.loads(json.dumps(nb.metadata.get("kitgrade", {})))
    forbidden = meta.get("forbidden_imports", []) if isinstance(meta, dict) else []
    settings = KitGrade(cell_timeout=timeout)
    # the kit's own exercises (solutions, hidden tests) are never readable by the notebook's code
    policy = policy_for(settings, [name for name in forbidden if isinstance(name, str)], kit_exercise_paths())
    preload = _preload(nb, Path(path).resolve().parent, settings)
    # ``kitgrade check``'s zygote (if it started one) loads these while this process imports nbgrader
    # (0.7 s; that is why it is imported only here)
    spare_zygotes.load(1, workers.zygote_modules(preload, policy.forbidden_imports))
    from .local_grading import LocalGrader
    from ..notebook.manual_grades import written_answers
    from ..sandbox.trusted_tests import is_trusted_test

    source_version = _holds_solutions(nb)
    notes = [say("instructor_version", language)] if source_version else []
    if hidden:
        nb = kit_exercises.with_hidden_tests(nb, exercise, is_trusted_test)
    elif exercise is not None and not source_version:  # edited tests, or another course's version of it
        notes.append(say("tests_differ", language, cells=", ".join(exercise.differing), exercise=exercise.name))
    written = written_answers(nb)
    try:
        data_files = read_data_files(Path(path).resolve().parent, policy.limits)
    except DataFilesTooLarge as error:
        out(say("note", language, text=f"{error}; no data files copied"))
        data_files = {}
    with LocalGrader(preload, policy.forbidden_imports) as grader:
        _, result = grader.execute_and_score(nb, policy, data_files)
    if not result.tests:
        out(say("no_tests", language, path=path)
            + (say("no_tests_written", language, count=len(written)) if written else ""))
        return 2
    width = max(len(name) for name in [t.grade_id for t in result.tests] + [w.grade_id for w in written])
    status_width = max(_width(say(key, language)) for key in ("PASS", "PARTIAL", "FAIL", "WRITTEN"))
    for test in result.tests:
        status = say("PASS" if test.passed else ("PARTIAL" if test.score > 0 else "FAIL"), language)
        detail = f"  {test.error.removeprefix('StudentCodeError: ')}" if test.error else ""
        out(f"{_pad(status, status_width)} {test.grade_id:<{width}}  {test.score:g}/{test.max_score:g}{detail}")
    for answer in written:
        state = say({True: "answered", False: "unanswered", None: "graded_by_instructor"}[answer.answered], language)
        out(f"{_pad(say('WRITTEN', language), status_width)} {answer.grade_id:<{width}}  -/{answer.points:g}  {state}")
    # (a failed hidden check's input and expected value, ``result.hidden_failures``, are the
    # instructor's: the learner sees only the count, in the test's line)
    for finding in notes + result.findings:
        out(say("note", language, text=finding))
    by_hand = say("by_hand", language, points=f"{sum(w.points for w in written):g}") if written else ""
    total = "total_source" if source_version else "total_hidden" if hidden else "total"
    out(say(total, language, score=f"{result.score:g}", max_score=f"{result.max_score:g}", by_hand=by_hand,
            exercise=exercise.name if hidden else ""))
    return 0 if all(t.passed for t in result.tests) else 1


def _preload(nb, folder: Path, settings: KitGrade) -> list[str]:
    """What the grading interpreter loads first for this notebook, chosen as ``autograde`` chooses
    it for an assignment (``settings.preload_for``): the modules of ``preload_modules`` that the
    notebook or a Python file beside it imports (matplotlib alone is a quarter of a second for a
    notebook that does not plot). Unlike ``autograde``, which reads the course's configuration and
    the files of its whole ``source/`` folder, it takes the kit's default list and the files at the
    top of the notebook's folder only (a student's folder may hold anything). A module it leaves out
    is imported when the student's code imports it, and is not watched by the integrity guard, a
    speed bump only (docs/threat-model.md)."""
    imports: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            imports |= modules_imported(cell.source)
    imports |= modules_imported_by_files(sorted(folder.glob("*.py"))[:200])
    return preload_for(settings.preload_modules, sorted(imports))


def _holds_solutions(nb) -> bool:
    """Whether a notebook still holds nbgrader's solution or hidden-test delimiters (an instructor's
    version), as nbgrader's own preprocessors find them (``ClearSolutions``, ``ClearHiddenTests``:
    their defaults, since a learner's notebook has no course configuration; the comment mark is
    not part of them)."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    markers = (ClearSolutions().begin_solution_delimeter, ClearHiddenTests().begin_test_delimeter)
    return any(marker in cell.source for cell in nb.cells for marker in markers)


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))
