"""The course as installed with the kit: its lessons and its exercises, found with ``importlib.resources``.

    course_files/
      lessons/en/NN_name.ipynb            the lessons in English
      lessons/zh/NN_name.ipynb            the same lessons in Chinese
      exercises/<assignment>/...          the exercises as their instructor writes them: solutions and
                                          hidden tests (``kitgrade init`` stages these; ``_zh`` ends the
                                          name of a Chinese one)
      student/<assignment>/...            each exercise as a student receives it, made by nbgrader's
                                          ``generate_assignment``: no solution, no hidden test
      student/SOURCES.json                the digests of the exercise files ``student/`` was made from

A learner's workspace (``learner``) copies the lessons and ``student/``; ``kitgrade check`` takes an
exercise's hidden tests from ``exercises/``, never from the learner's folder.

In a checkout, ``lessons/en``, ``lessons/zh`` and ``exercises`` are symbolic links to
``notebooks/en``, ``notebooks/zh`` and ``exercises/`` (each file stays where its authors edit it),
and ``student/`` (not tracked) is made from ``exercises/`` the first time it is asked for after
they changed (``student_versions.py``, with nbgrader). Building the sdist or the wheel makes it
first (``build_backend/``), so a built package carries it and never makes it again.

    >>> import course_files
    >>> [p.name for p in course_files.lessons("en")][:1]
    ['01_recording_history.ipynb']
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from grader.student_language import LANGUAGES
from grader.student_language import notebook_language as language_of

__all__ = ["LANGUAGES", "IGNORED", "root", "lessons", "exercises", "student_exercises", "exercise_list",
           "notebook_language"]
STUDENT = "student"
#: files of an exercise folder that are no part of it (an editor's, Python's, macOS's)
IGNORED = (".ipynb_checkpoints", "__pycache__", ".DS_Store")


def root() -> Path:
    """The folder of the installed course (a package installed as files, as pip installs a wheel)."""
    folder = files(__name__)
    if not isinstance(folder, Path):
        raise RuntimeError(f"the kit's course files are inside an archive ({folder}); install the kit as files "
                           "(pip install autograd-kit)")
    return folder


def lesson_folder(language: str) -> Path:
    if language not in LANGUAGES:
        raise ValueError(f"no lessons in {language!r}; the languages are {', '.join(LANGUAGES)}")
    return root() / "lessons" / language


def lessons(language: str) -> list[Path]:
    """The lesson notebooks of ``language``, in their order."""
    return sorted(lesson_folder(language).glob("*.ipynb"))


def exercises() -> Path:
    """The instructor's exercises: one folder per assignment, each with its notebook(s)."""
    return root() / "exercises"


def student_exercises() -> Path:
    """Every exercise as a student receives it (made here first, in a checkout whose exercises changed)."""
    from .student_versions import ensure_student_versions

    return ensure_student_versions(exercises(), root() / STUDENT)


def exercise_folders(folder: Path) -> list[Path]:
    """The assignments of a folder of exercises: each sub-folder holding a notebook (not ``_src`` or hidden ones)."""
    return [p for p in sorted(Path(folder).iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))
            and any(p.glob("*.ipynb"))]


@dataclass(frozen=True)
class Exercise:
    """One assignment of the kit in one language."""

    name: str         # the assignment, as kitgrade and nbgrader name it: ps1_autograd_basics_zh
    language: str     # the language its notebooks speak (their ``kitgrade.language``): zh
    source: Path      # the instructor's folder (solutions, hidden tests)
    student: Path     # the folder a student receives

    @property
    def short_name(self) -> str:
        """The name without its language: ps1_autograd_basics (a learner's folder says the language)."""
        return self.name.removesuffix(f"_{self.language}")


def notebook_language(path: Path) -> str:
    """The language of the notebook file at ``path`` as the grader reads it in a notebook
    (``grader.student_language``: its ``kitgrade.language`` if the kit knows it), English if the
    file cannot be read."""
    try:
        return language_of(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return "en"


def exercise_list() -> list[Exercise]:
    """The kit's exercises, each with its language and its student version."""
    student = student_exercises()
    found = []
    for folder in exercise_folders(exercises()):
        notebooks = sorted(folder.glob("*.ipynb"))
        found.append(Exercise(folder.name, notebook_language(notebooks[0]), folder, student / folder.name))
    return found
