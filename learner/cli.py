"""The ``autograd-kit`` command line (see the package's docstring); each command is a function here."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from . import workspace

LAB_EXTRA = "pip install 'autograd-kit[lab]'"


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("autograd-kit")
    except metadata.PackageNotFoundError:  # (the folder on sys.path, not installed)
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    from . import __doc__ as usage

    parser = argparse.ArgumentParser(prog="autograd-kit", description=usage.split("\n")[0],
                                     epilog=usage.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"autograd-kit {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    where = f"the folder (default: the workspace you are in, else ./{workspace.DEFAULT_NAME})"

    sub = commands.add_parser("workspace", help="make or update your copy of the course", description=(
        "Make or update your copy of the course: the lessons in English and Chinese and every exercise, blank. "
        "What you changed is never overwritten: a newer version arrives beside it."))
    sub.add_argument("folder", nargs="?", help=where)
    sub.set_defaults(handler=cmd_workspace)

    sub = commands.add_parser("lab", help="your copy of the course in JupyterLab (made or updated first)",
                              description="Make or update your copy of the course, then open JupyterLab on it. "
                                          "Anything after -- goes to `jupyter lab` as it is.")
    sub.add_argument("folder", nargs="?", help=where)
    sub.add_argument("--no-browser", action="store_true", help="only print the URL to open")
    sub.add_argument("--check", action="store_true", help="only check that JupyterLab has what the course needs")
    sub.set_defaults(handler=cmd_lab)

    sub = commands.add_parser("reset", help="a lesson or an exercise as the course has it (yours kept beside it)",
                              description="Put one lesson or exercise, in one language, back as the course has it; "
                                          "your version is kept as <name>.mine.ipynb.")
    sub.add_argument("name", help="en/08, zh/08_under_the_hood, en/ps1, zh/exercises/ps2_build_your_own, ...")
    sub.add_argument("--workspace", dest="folder", help=where)
    sub.set_defaults(handler=cmd_reset)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = []
    if "--" in argv:
        at = argv.index("--")
        argv, passthrough = argv[:at], argv[at + 1:]
    parser = build_parser()
    if not argv and not passthrough:  # a bare `autograd-kit`: what it can do, as `git` and `pip` show
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    args.passthrough = passthrough
    args.folder = Path(args.folder).expanduser() if args.folder else workspace.default_workspace()
    try:
        return args.handler(args)
    except (workspace.WorkspaceError, RuntimeError) as error:
        print(f"autograd-kit {args.command}: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a folder that cannot be written, a full disk: one line
        where = f" ({error.filename})" if error.filename else ""
        print(f"autograd-kit {args.command}: {error.strerror or error}{where}; nothing else was changed",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"autograd-kit {args.command}: stopped", file=sys.stderr)
        return 130


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(path)


def cmd_workspace(args) -> int:
    report(_update(args.folder))
    return 0


def _update(folder: Path) -> workspace.Update:
    """``workspace.update``, saying first when the exercises' student versions are to be made (a checkout's
    first time, or after its exercises changed: nbgrader takes a while)."""
    import course_files
    from course_files import student_versions

    if not student_versions.up_to_date(course_files.exercises(), course_files.root() / course_files.STUDENT):
        print("Making the exercises as a student receives them (nbgrader's generate_assignment), once after they "
              "change...", flush=True)
    return workspace.update(folder)


def report(result: workspace.Update) -> None:
    """What ``update`` did, in a few lines."""
    folder = _shown(result.folder)
    if result.created:
        lessons = [p for p in result.added if p.startswith("en/") and p.count("/") == 1 and p.endswith(".ipynb")]
        exercises = {p.split("/")[2] for p in result.added if f"/{workspace.EXERCISES}/" in p}
        first = min(lessons, default="en/")
        print(f"Your copy of the course is in {folder}/: {len(lessons)} lessons and {len(exercises)} exercises, each "
              f"in en/ and zh/ (exercises in en/exercises/ and zh/exercises/, blank). Start with {first}; check an "
              "exercise with `kitgrade check NOTEBOOK`.")
        return
    for relative in result.added:
        print(f"new: {folder}/{relative}")
    for relative in result.replaced:
        print(f"updated: {folder}/{relative} (a newer version; you had not changed yours)")
    for theirs, beside in result.beside:
        print(f"newer version: {folder}/{beside} is the course's new {Path(theirs).name}; yours, "
              f"{folder}/{theirs}, is as you left it")
    if not (result.added or result.replaced or result.beside):
        print(f"{folder}/: your copy of the course is up to date")


def cmd_reset(args) -> int:
    for relative, kept in workspace.reset(args.folder, args.name):
        print(f"reset: {_shown(args.folder / relative)}" + (f" (yours is kept as {_shown(args.folder / kept)})" if kept else ""))
    return 0


def cmd_lab(args) -> int:
    if importlib.util.find_spec("jupyterlab") is None:
        print(f"autograd-kit lab: JupyterLab is not installed in this Python: {LAB_EXTRA}", file=sys.stderr)
        return 2
    from . import lab

    problems = lab.extension_problems()
    if problems:
        print("JupyterLab is not ready for the course:", *("  - " + p for p in problems), sep="\n", file=sys.stderr)
        return 1
    if args.check:
        print("JupyterLab has what the course needs (ipywidgets' extension enabled)")
        return 0
    report(_update(args.folder))
    note = lab.font_note()
    if note:
        print("note:", note, file=sys.stderr)
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY") and sys.platform.startswith("linux"):
        args.no_browser = True  # no screen to open a browser on: the URL below is what to open
    return lab.start(args.folder, open_browser=not args.no_browser, extra=args.passthrough)
