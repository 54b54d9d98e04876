"""JupyterLab on the course, as ``make lab`` starts it, and the check that it is ready.

    python scripts/lab.py --check         # what `make lab` runs first (target lab-check)
    python scripts/lab.py                 # start it on your copies of the lessons (my-notebooks/)
    python scripts/lab.py --reset 08      # lesson 8 back to its original state (make reset-lesson LESSON=08)
    python scripts/lab.py exercises       # another folder
    python scripts/lab.py -- --port 9999  # anything after -- goes to ``jupyter lab`` as is

Students work on copies: ``my-notebooks/en`` and ``my-notebooks/zh`` are made from
``notebooks/`` the first time (and a lesson added later is copied when the lab next
starts), outside version control. JupyterLab saves what you run into the notebook you
run it in, so the tracked lessons stay clean and your own outputs and edits stay
yours; nothing is ever overwritten except by ``--reset``. When a tracked lesson has
changed since your copy was made, the start says so.

JupyterLab's settings for the course (``LAB_SETTINGS``: no "get notified about official
Jupyter news?" box over the notebooks, no update check) are written into this Python's
JupyterLab as defaults (``overrides.json``) before it starts; your own settings still win.

The check: the lab extensions the course needs are installed and enabled (ipywidgets'
widget manager for the graph explorer and lesson 5's control; nbgrader's Validate button,
assignment list and formgrader) and so are nbgrader's server extensions; if not, it says
how to fix it and fails. JupyterLab prints the URL (with its token) to open, and opens a
browser where there is one; as root (a container) it needs ``--allow-root``.

The Chinese lessons' figures need a font with Chinese glyphs (``make fonts``, which ``make lab``
runs, installs one where it can); when matplotlib finds none, the start says so once.

``tests/test_browser.py`` starts its server with ``lab_command`` below: the same
``jupyter lab <folder>`` of this environment, with the test's port, token and settings.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "notebooks"
WORK = ROOT / "my-notebooks"  # in .gitignore
LANGUAGES = ("en", "zh")
ORIGINS = ".originals.json"  # per copy: a digest of the lesson it was made from

# Defaults for the kit's JupyterLab: the news prompt covers the notebook's outputs.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}

# JupyterLab front-end extensions and Jupyter server extensions the kit relies on.
LAB_EXTENSIONS = {
    "@jupyter-widgets/jupyterlab-manager": "ipywidgets (the graph explorer's Step/Reset buttons, lesson 5's control)",
    "@jupyter/nbgrader": "nbgrader (Validate button, assignment list, formgrader)",
}
SERVER_EXTENSIONS = [
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.validate_assignment",
    "nbgrader.server_extensions.assignment_list",
    "nbgrader.server_extensions.course_list",
]


def lab_command(root_dir: Path | str, *, port: int | None = None, token: str | None = None,
                open_browser: bool = True, ip: str | None = None, settings_dir: Path | str | None = None,
                workspaces_dir: Path | str | None = None, extra: list[str] | None = None) -> list[str]:
    """The ``jupyter lab`` command line serving ``root_dir`` with this Python's Jupyter."""
    command = [sys.executable, "-m", "jupyterlab", str(Path(root_dir).resolve())]
    if not open_browser:
        command.append("--no-browser")
    if port is not None:
        command += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if token is not None:
        command.append(f"--IdentityProvider.token={token}")
    if ip is not None:
        command.append(f"--ServerApp.ip={ip}")
    if settings_dir is not None:
        command.append(f"--LabApp.user_settings_dir={settings_dir}")
    if workspaces_dir is not None:
        command.append(f"--LabApp.workspaces_dir={workspaces_dir}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return command + list(extra or [])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lesson_files(course: Path) -> list[tuple[str, Path]]:
    return [(f"{lang}/{p.name}", p) for lang in LANGUAGES for p in sorted((course / lang).glob("*.ipynb"))]


def prepare_working_copies(course: Path = COURSE, work: Path = WORK) -> list[str]:
    """Copy every lesson not yet in ``work``; returns notes about copies whose lesson has changed since."""
    origins_path = work / ORIGINS
    origins = json.loads(origins_path.read_text()) if origins_path.exists() else {}
    notes = []
    for name, original in _lesson_files(course):
        copy = work / name
        if not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(original, copy)
            origins[name] = _digest(original)
        elif origins.get(name) != _digest(original):
            notes.append(f"{name} has changed in the course since your copy was made; "
                         f"`make reset-lesson LESSON={name.split('/')[1][:2]}` replaces your copy with it")
    work.mkdir(parents=True, exist_ok=True)
    origins_path.write_text(json.dumps(origins, indent=1, sort_keys=True))
    return notes


def reset_lesson(lesson: str, course: Path = COURSE, work: Path = WORK) -> list[Path]:
    """Replace the copies (both languages) of the lesson whose file name starts with ``lesson`` ("8", "08", "08_under...")."""
    if lesson.isdigit():
        lesson = f"{int(lesson):02d}"
    matches = [(name, p) for name, p in _lesson_files(course) if p.stem.startswith(lesson)]
    if not {p.stem for _, p in matches} or len({p.stem for _, p in matches}) > 1:
        found = sorted({p.stem for _, p in matches}) or sorted({p.stem for _, p in _lesson_files(course)})
        raise SystemExit(f"no single lesson matches {lesson!r}; lessons: {', '.join(found)}")
    for name, original in matches:
        (work / name).unlink(missing_ok=True)
    prepare_working_copies(course, work)
    return [work / name for name, _ in matches]


def write_lab_settings(settings_dir: Path | None = None) -> Path:
    """Write ``LAB_SETTINGS`` into JupyterLab's ``overrides.json`` (keeping what else is there)."""
    if settings_dir is None:
        settings_dir = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings"
    path = Path(settings_dir) / "overrides.json"
    current = json.loads(path.read_text()) if path.exists() else {}
    for plugin, values in LAB_SETTINGS.items():
        current.setdefault(plugin, {}).update(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=2) + "\n")
    return path


def extension_problems() -> list[str]:
    """What is missing or disabled among the extensions the course needs (empty when all is well)."""
    problems = []
    try:
        from jupyter_core.paths import jupyter_path
        from jupyterlab_server.config import get_federated_extensions, get_page_config
    except ImportError:
        return ["JupyterLab is not installed in this Python (run `make lab`, or pip install -e '.[lab,grade]')"]
    paths = jupyter_path("labextensions")
    installed = get_federated_extensions(paths)
    disabled = get_page_config(paths).get("disabledExtensions", [])
    disabled = disabled if isinstance(disabled, list) else [k for k, off in disabled.items() if off]
    for name, what in LAB_EXTENSIONS.items():
        if name not in installed:
            problems.append(f"lab extension {name} is not installed: {what}")
        else:
            for entry in (d for d in disabled if d == name or d.startswith(name + ":")):
                problems.append(f"lab extension {entry} is disabled: jupyter labextension enable {entry}")
    try:
        from jupyter_server.extension.config import ExtensionConfigManager
        from jupyter_core.paths import jupyter_config_path
    except ImportError:
        return problems + ["jupyter_server is not installed in this Python"]
    manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
    for name in SERVER_EXTENSIONS:
        if not manager.enabled(name):
            problems.append(f"server extension {name} is not enabled: "
                            f"jupyter server extension enable --sys-prefix {name}")
    return problems


def font_note() -> str | None:
    """A note when matplotlib finds no font with Chinese glyphs (the Chinese figures would show boxes)."""
    sys.path.insert(0, str(ROOT))  # graph_explorer, also where the kit is not installed
    try:
        from graph_explorer.fonts import find_chinese_font
    except ImportError:
        return None
    finally:
        sys.path.remove(str(ROOT))
    if find_chinese_font() is not None:
        return None
    return ("no font with Chinese glyphs: the Chinese lessons' figures will show empty boxes "
            "(make fonts installs one on Debian/Ubuntu: fonts-wqy-microhei)")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = []
    if "--" in argv:
        at = argv.index("--")
        argv, passthrough = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", help="what to serve (default: your copies of the lessons, my-notebooks/)")
    parser.add_argument("--no-browser", action="store_true", help="only print the URL")
    parser.add_argument("--check", action="store_true", help="only check the extensions the course needs")
    parser.add_argument("--reset", metavar="LESSON", help="replace your copy of a lesson (08, or 08_under_the_hood) "
                                                          "with the original, in both languages")
    args = parser.parse_args(argv)
    if args.reset:
        for path in reset_lesson(args.reset):
            print("reset:", path.relative_to(ROOT))
        return 0

    problems = extension_problems()
    if problems:
        print("JupyterLab is not ready for the course:", *("  - " + p for p in problems), sep="\n", file=sys.stderr)
        return 1
    if args.check:
        print("JupyterLab extensions for the course: ipywidgets, nbgrader (lab and server) enabled")
        return 0
    note = font_note()
    if note:
        print("note:", note, file=sys.stderr)
    folder = args.folder
    if folder is None:
        folder = WORK
        for note in prepare_working_copies():
            print("note:", note)
        print(f"Your copies of the lessons are in {WORK.relative_to(ROOT)}/ (outside version control); "
              f"`make reset-lesson LESSON=NN` restores one.")
    write_lab_settings()
    command = lab_command(folder, open_browser=not args.no_browser, extra=passthrough)
    print("Starting JupyterLab on", Path(folder).resolve(), "(Ctrl-C to stop); open the URL it prints below.",
          flush=True)
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
