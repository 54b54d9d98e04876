"""``check``: a student runs the tests of one notebook on their own machine and sees every result."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from .course import modules_imported, modules_imported_by_files
from .sandbox import spare_zygotes, workers
from .sandbox.policy import policy_for
from .sandbox.scratch import DataFilesTooLarge, read_data_files
from .settings import CELL_TIMEOUT, KitGrade, preload_for
from .student_language import notebook_language, say
from .submission import read_notebook_strictly


def check_notebook(path: Path, timeout: float = CELL_TIMEOUT, out=print) -> int:
    """Execute ``path`` in a sandbox, print one line per test cell and the total; 0 if all pass.

    Only the tests in the notebook run (a released notebook holds the visible ones; hidden tests
    run when the instructor grades). Written answers (nbgrader's manually graded cells) are listed,
    answered or not, but not counted: the instructor grades them. The notebook file is not changed.
    The lines speak the notebook's language (``grader.student_language``).
    """
    nb, reason = read_notebook_strictly(Path(path))
    if reason:
        out(f"{path}: {reason}")
        return 2
    language = notebook_language(nb)
    meta = json.loads(json.dumps(nb.metadata.get("kitgrade", {})))
    forbidden = meta.get("forbidden_imports", []) if isinstance(meta, dict) else []
    settings = KitGrade(cell_timeout=timeout)
    policy = policy_for(settings, [name for name in forbidden if isinstance(name, str)])
    preload = _preload(nb, Path(path).resolve().parent, settings)
    # ``kitgrade check``'s zygote (if it started one) loads these while this process imports nbgrader
    # (0.7 s; that is why it is imported only here)
    spare_zygotes.load(1, workers.zygote_modules(preload, policy.forbidden_imports))
    from .local_grading import LocalGrader
    from .manual_grades import written_answers

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
        detail = f"  {test.error}" if test.error else ""
        out(f"{_pad(status, status_width)} {test.grade_id:<{width}}  {test.score:g}/{test.max_score:g}{detail}")
    for answer in written:
        state = say({True: "answered", False: "unanswered", None: "graded_by_instructor"}[answer.answered], language)
        out(f"{_pad(say('WRITTEN', language), status_width)} {answer.grade_id:<{width}}  -/{answer.points:g}  {state}")
    for finding in result.findings:
        out(say("note", language, text=finding))
    by_hand = say("by_hand", language, points=f"{sum(w.points for w in written):g}") if written else ""
    out(say("total", language, score=f"{result.score:g}", max_score=f"{result.max_score:g}", by_hand=by_hand))
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


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))
