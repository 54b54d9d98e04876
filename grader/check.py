"""``check``: a student runs the tests of one notebook on their own machine and sees every result."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from .local_grading import LocalGrader
from .manual_grades import written_answers
from .sandbox.policy import policy_for
from .sandbox.scratch import DataFilesTooLarge, read_data_files
from .settings import CELL_TIMEOUT, KitGrade
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
    written = written_answers(nb)
    language = notebook_language(nb)
    meta = json.loads(json.dumps(nb.metadata.get("kitgrade", {})))
    forbidden = meta.get("forbidden_imports", []) if isinstance(meta, dict) else []
    settings = KitGrade(cell_timeout=timeout)
    policy = policy_for(settings, [name for name in forbidden if isinstance(name, str)])
    try:
        data_files = read_data_files(Path(path).resolve().parent, policy.limits)
    except DataFilesTooLarge as error:
        out(say("note", language, text=f"{error}; no data files copied"))
        data_files = {}
    with LocalGrader() as grader:
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


def _width(text: str) -> int:
    """Columns ``text`` takes in a terminal: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))
