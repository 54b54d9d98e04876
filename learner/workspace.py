"""A learner's folder: the lessons in both languages and every exercise as a student receives it.

    my-notebooks/
      README.md                                        where things are, how to check and reset (both languages)
      en/01_recording_history.ipynb ...                the lessons in English
      en/exercises/ps1_autograd_basics/autograd_basics.ipynb ...   the exercises in English, blank
      zh/01_recording_history.ipynb ...                the same in Chinese
      zh/exercises/ps1_autograd_basics/autograd_basics.ipynb ...
      .originals.json                                  the digest of each file as it was copied

Everything is copied from the installed course (``course_files``): the exercises are nbgrader's
student versions (no solution, no hidden test). What the learner changed is never overwritten:
running a notebook in JupyterLab saves it, so a run lesson counts as changed too. When the course
holds a newer version of a file, ``update`` replaces a copy the learner left as it was, and puts
the newer version beside a changed one (``08_under_the_hood.new.ipynb``) and says so. A missing
file is copied again. ``reset`` puts one lesson or exercise back as the course has it, in one
language, and keeps the learner's as ``<name>.mine.ipynb`` (``.mine-2`` after that, ...).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import course_files

RECORD = ".originals.json"  # (the name ``make lab``'s first copies used: their folders stay workspaces)
DEFAULT_NAME = "my-notebooks"
EXERCISES = "exercises"
README = "README.md"


class WorkspaceError(Exception):
    """Something the learner asked for that cannot be done; its text says why and what to do."""


@dataclass
class Update:
    """What ``update`` did: the files it copied, replaced, and put beside the learner's."""

    folder: Path
    created: bool = False
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)      # unchanged by the learner: the newer version
    beside: list[tuple[str, str]] = field(default_factory=list)  # (theirs, the newer version next to it)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_workspace(folder: Path) -> bool:
    return (Path(folder) / RECORD).is_file()


def default_workspace(start: Path | None = None) -> Path:
    """The workspace the learner is in (this folder or one above it), else ``./my-notebooks``."""
    here = Path(start or Path.cwd()).resolve()
    for folder in [here, *list(here.parents)[:3]]:
        if is_workspace(folder):
            return folder
    return here / DEFAULT_NAME


def course_items() -> dict[str, list[tuple[str, Path]]]:
    """Every item of the course a workspace holds: ``{"en/08_under_the_hood": [(relative path, original)], ...}``."""
    items: dict[str, list[tuple[str, Path]]] = {}
    for language in course_files.LANGUAGES:
        for lesson in course_files.lessons(language):
            items[f"{language}/{lesson.stem}"] = [(f"{language}/{lesson.name}", lesson)]
    for exercise in course_files.exercise_list():
        base = f"{exercise.language}/{EXERCISES}/{exercise.short_name}"
        items[base] = [(f"{base}/{path.relative_to(exercise.student).as_posix()}", path)
                       for path in sorted(exercise.student.rglob("*")) if path.is_file()]
    return items


def readme_text() -> str:
    lessons = course_files.lessons("en")
    first = lessons[0].name if lessons else "01_....ipynb"
    return README_TEXT.format(first=first)


README_TEXT = """\
# Your copy of the autograd course · 你的自动微分课程副本

- `en/`: the lessons in English, from `en/{first}` on; `en/exercises/`: the exercises, blank.
- `zh/`：中文课程，从 `zh/{first}` 开始；`zh/exercises/`：练习（空白）。

Everything here is yours: run it, change it, save it. To check an exercise (its visible and
hidden tests; the hidden ones say only how many passed), open a terminal (File > New > Terminal):

    kitgrade check en/exercises/ps1_autograd_basics/autograd_basics.ipynb

To start a lesson or an exercise again (yours is kept as `<name>.mine.ipynb`):

    autograd-kit reset en/08                  # a lesson
    autograd-kit reset zh/ps1                 # an exercise

这里的一切都属于你。检查练习（可见测试和隐藏测试；隐藏测试只报告通过了几项）：在终端中运行
`kitgrade check zh/exercises/ps1_autograd_basics/autograd_basics.ipynb`。重新开始某节课或某个练习：
`autograd-kit reset zh/08`（你的版本保存为 `<名称>.mine.ipynb`）。
"""


def update(folder: Path) -> Update:
    """Make ``folder`` a workspace, or bring it up to date (see the module's docstring)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise WorkspaceError(f"{folder} is a file; a workspace is a folder")
    created = not is_workspace(folder)
    if created and folder.is_dir() and any(p.name != ".ipynb_checkpoints" for p in folder.iterdir()):
        raise WorkspaceError(f"{folder} already holds other files; choose a new folder for the course "
                             f"(for example {folder / DEFAULT_NAME})")
    folder.mkdir(parents=True, exist_ok=True)
    record = _read_record(folder)
    result = Update(folder, created=created)
    readme = folder / ".readme.tmp"
    readme.write_text(readme_text(), encoding="utf-8")
    try:
        files = [(README, readme)] + [pair for pairs in course_items().values() for pair in pairs]
        for relative, original in files:
            _bring(folder, relative, original, record, result)
    finally:
        readme.unlink(missing_ok=True)
        _write_record(folder, record)
    return result


def _bring(folder: Path, relative: str, original: Path, record: dict[str, str], result: Update) -> None:
    """One file of the course into the workspace, never over the learner's changes."""
    target, new = folder / relative, _digest(original)
    if not target.exists():
        _copy(original, target)
        record[relative] = new
        result.added.append(relative)
        return
    mine, copied = _digest(target), record.get(relative)
    if mine == new:
        record[relative] = new
    elif mine == copied:  # as it was copied: the learner did not change it
        _copy(original, target)
        record[relative] = new
        result.replaced.append(relative)
    elif copied != new:  # changed by the learner, and the course has another version since
        beside = relative_beside(relative, "new")
        path = folder / beside
        if not path.exists() or _digest(path) == record.get(beside):
            if not path.exists() or _digest(path) != new:
                _copy(original, path)
                result.beside.append((relative, beside))
            record[beside] = new


def relative_beside(relative: str, tag: str, number: int = 1) -> str:
    """``en/08_x.ipynb`` -> ``en/08_x.new.ipynb`` (``.mine-2.ipynb`` for the second one of its kind)."""
    path = Path(relative)
    suffix = f".{tag}" + (f"-{number}" if number > 1 else "")
    return path.with_name(path.stem + suffix + path.suffix).as_posix()


def _copy(original: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    shutil.copyfile(original, partial)
    os.replace(partial, target)


def _read_record(folder: Path) -> dict[str, str]:
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in record.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(record, dict) else {}


def _write_record(folder: Path, record: dict[str, str]) -> None:
    partial = folder / (RECORD + ".partial")
    partial.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(partial, folder / RECORD)


# ---- reset ---------------------------------------------------------------------------------------

def find_item(name: str) -> str:
    """The course item ``name`` means: ``en/08``, ``en/08_under_the_hood(.ipynb)``, ``zh/ps1``,
    ``zh/exercises/ps1_autograd_basics``; exactly one, in one language."""
    items = course_items()
    text = name.strip().strip("/").removesuffix(".ipynb")
    language, _, rest = text.partition("/")
    if language not in course_files.LANGUAGES:
        found = sorted(key for key in items if _matches(key.split("/", 1)[1], text))
        hint = f": {' or '.join(found)}" if found else f" ({', '.join(course_files.LANGUAGES)}), e.g. en/08 or zh/ps1"
        raise WorkspaceError(f"{name!r}: name the language too{hint}")
    found = [key for key in items if key.startswith(language + "/") and _matches(key.split("/", 1)[1], rest)]
    if len(found) != 1:
        choices = found or [key for key in items if key.startswith(language + "/")]
        raise WorkspaceError(f"{'no' if not found else 'more than one'} lesson or exercise {name!r}; "
                             f"{'they' if found else 'the ' + language + ' ones'} are: "
                             + ", ".join(sorted(choices)))
    return found[0]


def _matches(key: str, wanted: str) -> bool:
    """``08_under_the_hood`` is meant by ``8``, ``08``, ``08_under``; ``exercises/ps1_x`` by ``ps1``, ``exercises/ps1``."""
    wanted = wanted.removeprefix(EXERCISES + "/")
    key = key.removeprefix(EXERCISES + "/")
    if wanted.isdigit():
        wanted = f"{int(wanted):02d}"
    return bool(wanted) and key.startswith(wanted)


def reset(folder: Path, name: str) -> list[tuple[str, str | None]]:
    """Put one lesson or exercise back as the course has it; returns ``[(file, the learner's backup or None)]``."""
    folder = Path(folder)
    if not is_workspace(folder):
        raise WorkspaceError(f"{folder} is not a workspace of the course; `autograd-kit workspace {folder}` makes one")
    key = find_item(name)
    record, done = _read_record(folder), []
    try:
        for relative, original in course_items()[key]:
            target, kept = folder / relative, None
            if target.exists() and _digest(target) != _digest(original):
                number = 1
                while (folder / relative_beside(relative, "mine", number)).exists():
                    number += 1
                kept = relative_beside(relative, "mine", number)
                os.replace(target, folder / kept)
            _copy(original, target)
            record[relative] = _digest(original)
            done.append((relative, kept))
            newer = folder / relative_beside(relative, "new")  # what an update put beside it is now the file itself
            if newer.exists() and _digest(newer) == record[relative]:
                newer.unlink()
                record.pop(relative_beside(relative, "new"), None)
    finally:
        _write_record(folder, record)
    return done
