"""JupyterLab on the course, as ``make lab`` starts it, and the check that it is ready.

    python scripts/lab.py --check         # what `make lab` runs first (target lab-check)
    python scripts/lab.py                 # start it on the course (notebooks/) without make
    python scripts/lab.py exercises       # another folder
    python scripts/lab.py -- --port 9999  # anything after -- goes to ``jupyter lab`` as is

The check: the lab extensions the course needs are installed and enabled (ipywidgets'
widget manager for the graph explorer and lesson 5's control; nbgrader's Validate button,
assignment list and formgrader) and so are nbgrader's server extensions; if not, it says
how to fix it and fails. JupyterLab prints the URL (with its token) to open, and opens a
browser where there is one; as root (a container) it needs ``--allow-root``.

``tests/test_browser.py`` starts its server with ``lab_command`` below: the same
``jupyter lab <folder>`` of this environment, with the test's port, token and settings.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = []
    if "--" in argv:
        at = argv.index("--")
        argv, passthrough = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", default=str(ROOT / "notebooks"), help="what to serve (default: the course)")
    parser.add_argument("--no-browser", action="store_true", help="only print the URL")
    parser.add_argument("--check", action="store_true", help="only check the extensions the course needs")
    args = parser.parse_args(argv)

    problems = extension_problems()
    if problems:
        print("JupyterLab is not ready for the course:", *("  - " + p for p in problems), sep="\n", file=sys.stderr)
        return 1
    if args.check:
        print("JupyterLab extensions for the course: ipywidgets, nbgrader (lab and server) enabled")
        return 0
    command = lab_command(args.folder, open_browser=not args.no_browser, extra=passthrough)
    print("Starting JupyterLab on", Path(args.folder).resolve(), "(Ctrl-C to stop); open the URL it prints below.",
          flush=True)
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
