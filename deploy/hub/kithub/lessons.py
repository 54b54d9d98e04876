"""Each student's own copy of the lessons, and putting one lesson back as it was.

The hub copies the course (``notebooks/en`` and ``notebooks/zh``) into ``~/lessons`` when a
student's server starts for the first time (``give_lessons_as``, the spawner's pre-spawn hook);
after that the copy is the student's and is never overwritten. The copy is made by a process of
the student's own account (``python -m kithub.lessons --give``), never by root: the student's home is theirs to
fill with links, and whatever a link there points to, the copy can reach only what the student
could reach anyway. In the server's terminal:

    reset-lesson en/03_nonscalar_outputs      # that lesson as it was; yours kept as ...ipynb.mine
    reset-lesson --list                        # the lessons there are
"""
from __future__ import annotations

import argparse
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

FOLDER = "lessons"
LANGUAGES = ("en", "zh")
#: how long the copy may take before the server starts without it (both languages: a second or two)
GIVE_TIMEOUT = 120


def give_lessons(originals: Path, home: Path) -> bool:
    """Copy the lessons into ``home/lessons`` unless it is there (a link there counts); True if copied.
    Run as the student (``give_lessons_as``): everything it makes is theirs, and it can follow no link
    anywhere they could not go themselves."""
    target = home / FOLDER
    if target.exists() or target.is_symlink():
        return False
    partial = home / (FOLDER + ".partial")
    if partial.is_symlink() or (partial.exists() and not partial.is_dir()):
        partial.unlink()
    else:
        shutil.rmtree(partial, ignore_errors=True)
    for language in LANGUAGES:
        shutil.copytree(originals / language, partial / language,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    partial.rename(target)
    return True


def give_lessons_as(account: str, python: str, originals: Path) -> str | None:
    """``give_lessons`` for ``account``, run as that account (``python -m kithub.lessons --give``, from the
    class's environment, which every account can read). Returns None, or why the lessons were not given
    (the hub logs it and starts the server all the same)."""
    info = pwd.getpwnam(account)
    try:
        result = subprocess.run([python, "-I", "-m", "kithub.lessons", "--give", "--originals", str(originals)],
                                user=info.pw_uid, group=info.pw_gid, extra_groups=[], cwd="/",
                                env={"HOME": info.pw_dir, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=GIVE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"the copy of the lessons into {info.pw_dir}/{FOLDER} took over {GIVE_TIMEOUT} s; stopped"
    if result.returncode != 0:
        return f"the lessons were not copied into {info.pw_dir}/{FOLDER}: {(result.stderr or result.stdout).strip()[-500:]}"
    return None


def reset_lesson(originals: Path, home: Path, name: str) -> Path:
    """Put ``<language>/<lesson>`` back as it was; the student's version is kept beside it as ``.mine``
    (``.mine-2``, ``.mine-3``, ... when an earlier reset kept one already: nothing of theirs is lost)."""
    relative = Path(name if name.endswith(".ipynb") else name + ".ipynb")
    original = originals / relative
    if relative.is_absolute() or ".." in relative.parts or len(relative.parts) != 2 or not original.is_file():
        raise ValueError(f"no lesson {name!r}; the lessons are:\n  " + "\n  ".join(available(originals)))
    mine = home / FOLDER / relative
    mine.parent.mkdir(parents=True, exist_ok=True)
    if mine.exists():
        kept, number = mine.with_name(mine.name + ".mine"), 1
        while kept.exists() or kept.is_symlink():
            number += 1
            kept = mine.with_name(f"{mine.name}.mine-{number}")
        mine.replace(kept)
    shutil.copyfile(original, mine)
    return mine


def available(originals: Path) -> list[str]:
    return [f"{language}/{p.stem}" for language in LANGUAGES for p in sorted((originals / language).glob("*.ipynb"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reset-lesson", description="put one lesson back as it was")
    parser.add_argument("lesson", nargs="?", help="for example en/03_nonscalar_outputs")
    parser.add_argument("--list", action="store_true", help="list the lessons")
    parser.add_argument("--give", action="store_true", help=argparse.SUPPRESS)  # the hub, as the student
    parser.add_argument("--originals", default=os.environ.get("KIT_LESSONS", ""), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    originals = Path(args.originals)
    if not args.originals or not originals.is_dir():
        print("reset-lesson: the original lessons are not found (KIT_LESSONS is not set)", file=sys.stderr)
        return 2
    if args.give:
        try:
            give_lessons(originals, Path.home())
        except OSError as error:
            print(f"{error.strerror}: {error.filename}", file=sys.stderr)
            return 1
        return 0
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
