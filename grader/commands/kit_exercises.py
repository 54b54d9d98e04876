"""The kit's own exercise behind a learner's notebook, for ``kitgrade check``: its hidden tests and its policy.

A learner's workspace (``learner``) holds each of the kit's exercises as nbgrader hands it out:
visible tests only. ``find`` says which exercise installed with the kit (``course_files``) a
notebook is a copy of: the same language and the same autograded test cells, compared with the
exercise's student version. ``with_hidden_tests`` then gives each test cell the code the
exercise's source has (its visible checks, then its hidden ones), as nbgrader's
``OverwriteCells`` restores test cells from the gradebook when a class is graded. The hidden code
comes from the installed kit only, never from a file in the learner's folder.

A test cell whose code is not the one handed out (edited, or another course's version of the
exercise) keeps its own code, and then no cell gets hidden tests: the verdict would not be the
exercise's. Only a trusted test (``sandbox/trusted_tests.py``) gets them: it runs in the grader's
process, so its hidden inputs and expected values stay there, and a failed hidden part says only
"k of n hidden checks passed". Where the installed exercises cannot be read (a class's server that
keeps them from its students), there is no kit exercise to find: ``check`` runs the notebook's own
tests only.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..student_language import notebook_language


@dataclass
class KitExercise:
    """The kit's exercise a notebook is a copy of."""

    name: str                 # ps1_autograd_basics_zh
    source: dict              # the exercise's notebook as its instructor wrote it (JSON)
    differing: list[str] = field(default_factory=list)  # test cells whose code is not the one handed out

    @property
    def policy(self) -> dict:
        """The kit's metadata of the exercise's source (its ``forbidden_imports``), not the copy's."""
        meta = self.source.get("metadata", {}).get("kitgrade", {})
        return meta if isinstance(meta, dict) else {}


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def autograded_tests(nb) -> dict[str, str]:
    """``{grade_id: code}`` of a notebook's autograded test cells (nbgrader's ``grade`` and not ``solution``)."""
    tests = {}
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
        if cell.get("cell_type") == "code" and isinstance(meta, dict) and meta.get("grade") and not meta.get("solution"):
            tests[str(meta.get("grade_id"))] = _source(cell)
    return tests


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def find(nb) -> KitExercise | None:
    """The kit's exercise ``nb`` is a copy of, or None (another course's notebook, or no kit exercises here)."""
    mine = autograded_tests(nb)
    if not mine:
        return None
    try:
        import course_files

        exercises = course_files.exercise_list()
    except (ImportError, OSError, RuntimeError):  # a kit installed without its course, or one that cannot be read
        return None
    language = notebook_language(nb)
    for exercise in exercises:
        if exercise.language != language:
            continue
        for handed_out in sorted(exercise.student.glob("*.ipynb")):
            theirs = autograded_tests(_read(handed_out))
            if set(theirs) == set(mine):
                differing = [grade_id for grade_id, code in mine.items() if code.rstrip() != theirs[grade_id].rstrip()]
                return KitExercise(exercise.name, _read(exercise.source / handed_out.name), differing)
    return None


def with_hidden_tests(nb, exercise: KitExercise, trusted) -> object:
    """A copy of ``nb`` whose test cells have the exercise's own code, hidden tests included (see the module's
    docstring); ``trusted(code)`` says whether a test cell's code runs in the grader's process."""
    if exercise.differing:
        return nb
    full = {grade_id: code for grade_id, code in autograded_tests(exercise.source).items() if trusted(code)}
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution") and meta.get("grade_id") in full:
            cell.source = full[meta["grade_id"]]
    return nb
