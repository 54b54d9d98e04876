"""Each student's own copy of the lessons, and putting one lesson back as it was.

The hub copies the course (``notebooks/en`` and ``notebooks/zh``) into ``~/lessons`` when a
student's server starts for the first time (``give_lessons``, the spawner's pre-spawn hook);
after that the copy is the student's and is never overwritten. In the server's terminal:

    reset-lesson en/03_nonscalar_outputs      # that lesson as it was; yours kept as ...ipynb.mine
    reset-lesson --list                        # the lessons there are
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

FOLDER = "lessons"
LANGUAGES = ("en", "zh")


def give_lessons(originals: Path, home: Path, uid: int, gid: int) -> bool:
    """Copy the lessons into ``home/lessons`` (owned by the student) unless it is there; True if copied."""
    target = home / FOLDER
    if target.exists():
        return False
    partial = home / (FOLDER + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    for language in LANGUAGES:
        shutil.copytree(originals / language, partial / language,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for path in [partial, *partial.rglob("*")]:
        os.chown(path, uid, gid)
    partial.rename(target)
    return True


def reset_lesson(originals: Path, home: Path, name: str) -> Path:
    """Put ``<language>/<lesson>`` back as it was; the student's version is kept beside it as ``.mine``."""
    relative = Path(name if name.endswith(".ipynb") else name + ".ipynb")
    original = originals / relative
    if relative.is_absolute() or ".." in relative.parts or len(relative.parts) != 2 or not original.is_file():
        raise ValueError(f"no lesson {name!r}; the lessons are:\n  " + "\n  ".join(available(originals)))
    mine = home / FOLDER / relative
    mine.parent.mkdir(parents=True, exist_ok=True)
    if mine.exists():
        mine.replace(mine.with_name(mine.name + ".mine"))
    shutil.copyfile(original, mine)
    return mine


def available(originals: Path) -> list[str]:
    return [f"{language}/{p.stem}" for language in LANGUAGES for p in sorted((originals / language).glob("*.ipynb"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reset-lesson", description="put one lesson back as it was")
    parser.add_argument("lesson", nargs="?", help="for example en/03_nonscalar_outputs")
    parser.add_argument("--list", action="store_true", help="list the lessons")
    parser.add_argument("--originals", default=os.environ.get("KIT_LESSONS", ""), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    originals = Path(args.originals)
    if not args.originals or not originals.is_dir():
        print("reset-lesson: the original lessons are not found (KIT_LESSONS is not set)", file=sys.stderr)
        return 2
    if args.list or not args.lesson:
        print("\n".join(available(originals)))
        return 0
    try:
        mine = reset_lesson(originals, Path.home(), args.lesson)
    except ValueError as error:
        print(f"reset-lesson: {error}", file=sys.stderr)
        return 2
    print(f"{mine}: back to the original" + (f" (yours: {mine.name}.mine)" if mine.with_name(mine.name + ".mine").exists() else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
