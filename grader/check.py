"""``check``: a student runs the tests of one notebook on their own machine and sees every result."""

from __future__ import annotations

import json
from pathlib import Path

from .local_grading import LocalGrader
from .manual_grades import written_answers
from .sandbox.policy import policy_for
from .sandbox.scratch import DataFilesTooLarge, read_data_files
from .settings import CELL_TIMEOUT, KitGrade
from .submission import read_notebook_strictly


def check_notebook(path: Path, timeout: float = CELL_TIMEOUT, out=print) -> int:
    """Execute ``path`` in a sandbox, print one line per test cell and the total; 0 if all pass.

    Only the tests in the notebook run (a released notebook holds the visible ones; hidden tests
    run when the instructor grades). Written answers (nbgrader's manually graded cells) are listed,
    answered or not, but not counted: the instructor grades them. The notebook file is not changed.
    """
    nb, reason = read_notebook_strictly(Path(path))
    if reason:
        out(f"{path}: {reason}")
        return 2
    written = written_answers(nb)
    meta = json.loads(json.dumps(nb.metadata.get("kitgrade", {})))
    forbidden = meta.get("forbidden_imports", []) if isinstance(meta, dict) else []
    settings = KitGrade(cell_timeout=timeout)
    policy = policy_for(settings, [name for name in forbidden if isinstance(name, str)])
    try:
        data_files = read_data_files(Path(path).resolve().parent, policy.limits)
    except DataFilesTooLarge as error:
        out(f"note: {error}; no data files copied")
        data_files = {}
    with LocalGrader() as grader:
        _, result = grader.execute_and_score(nb, policy, data_files)
    if not result.tests:
        out(f"{path}: no autograded tests found" + (f" ({len(written)} written answer(s), graded by your instructor)"
                                                    if written else ""))
        return 2
    width = max(len(name) for name in [t.grade_id for t in result.tests] + [w.grade_id for w in written])
    for test in result.tests:
        status = "PASS" if test.passed else ("PARTIAL" if test.score > 0 else "FAIL")
        detail = f"  {test.error}" if test.error else ""
        out(f"{status:<7} {test.grade_id:<{width}}  {test.score:g}/{test.max_score:g}{detail}")
    for answer in written:
        state = {True: "answered; your instructor grades it",
                 False: "not answered yet: left as released, it scores 0",
                 None: "your instructor grades it"}[answer.answered]
        out(f"{'WRITTEN':<7} {answer.grade_id:<{width}}  -/{answer.points:g}  {state}")
    for finding in result.findings:
        out(f"note: {finding}")
    by_hand = (f"; {sum(w.points for w in written):g} more point(s) for written answers, graded by your instructor"
               if written else "")
    out(f"total: {result.score:g}/{result.max_score:g} (visible tests; hidden tests run when your instructor grades"
        f"{by_hand})")
    return 0 if all(t.passed for t in result.tests) else 1
