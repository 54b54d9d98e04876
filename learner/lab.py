"""JupyterLab on a learner's workspace (``autograd-kit lab``), and the ``jupyter lab`` command line it runs.

The lab is this Python's own JupyterLab, started with:

* the kit's settings on its command line (``lab_command``): no news fetched, no update check;
* for a learner, the kit's Jupyter configuration first on ``JUPYTER_CONFIG_PATH``
  (``learner_environment``; the files are in ``jupyter_config/``): JupyterLab's defaults say no
  to news and updates, so no "get notified about official Jupyter news?" box covers the
  notebooks (``labconfig/default_setting_overrides.json``), and nbgrader's instructor tools
  (the *Create Assignment* sidebar, the *Formgrader*, their server extensions and the *Nbgrader*
  menu that opens them) and its class tools (the *Assignments* and *Courses* panels, which need a
  class's exchange, served by a hub) are switched off for this server only; nbgrader's *Validate*
  button stays. A setting the
  learner made in their own Jupyter configuration (``~/.jupyter``) still wins. This Python's
  ``bin`` folder comes first on ``PATH``, so a terminal in the lab finds ``kitgrade check`` and
  ``autograd-kit reset``.

Before it starts, ``extension_problems`` checks that ipywidgets' lab extension (the graph
explorer's buttons, lesson 5's slider) is installed and enabled, and says how to fix it if not;
``font_note`` says once when matplotlib finds no font with Chinese glyphs. JupyterLab prints the
URL (with its token) and opens a browser where there is one; as root (a container) it needs
``--allow-root``, which is added.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LEARNER_CONFIG = Path(__file__).resolve().parent / "jupyter_config"

#: Per server, on the command line: no news fetched, no update check (the prompt asking about them:
#: ``jupyter_config/labconfig/default_setting_overrides.json``).
LAB_SETTINGS = ["--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]

#: The lab extensions a learner's lab needs.
LAB_EXTENSIONS = {
    "@jupyter-widgets/jupyterlab-manager": "ipywidgets (the graph explorer's Step/Reset buttons, lesson 5's slider)",
}
#: nbgrader's parts a learner's lab switches off (``jupyter_config/``): an instructor's, and a class's.
INSTRUCTOR_TOOLS = ["@jupyter/nbgrader:create-assignment", "@jupyter/nbgrader:formgrader",
                    "@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:menu"]


def setting_defaults() -> dict:
    """The defaults of JupyterLab's settings in a learner's lab (no news prompt, no update check)."""
    return json.loads((LEARNER_CONFIG / "labconfig" / "default_setting_overrides.json").read_text(encoding="utf-8"))


def lab_command(root_dir: Path | str, *, port: int | None = None, token: str | None = None,
                open_browser: bool = True, ip: str | None = None, settings_dir: Path | str | None = None,
                workspaces_dir: Path | str | None = None, extra: list[str] | None = None) -> list[str]:
    """The ``jupyter lab`` command line serving ``root_dir`` with this Python's Jupyter."""
    command = [sys.executable, "-m", "jupyterlab", str(Path(root_dir).resolve()), *LAB_SETTINGS]
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


def learner_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """``environ`` (this process's by default) for a learner's lab: the kit's Jupyter configuration
    first on ``JUPYTER_CONFIG_PATH``, this Python's ``bin`` first on ``PATH``."""
    env = dict(os.environ if environ is None else environ)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(p for p in [str(LEARNER_CONFIG), env.get("JUPYTER_CONFIG_PATH", "")] if p)
    env["PATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.abspath(sys.executable)), env.get("PATH", "")] if p)
    return env


def extension_problems() -> list[str]:
    """What is missing or disabled among the lab extensions the course needs (empty when all is well)."""
    try:
        from jupyter_core.paths import jupyter_path
        from jupyterlab_server.config import get_federated_extensions, get_page_config
    except ImportError:
        return ["JupyterLab is not installed in this Python: pip install 'autograd-kit[lab]'"]
    paths = jupyter_path("labextensions")
    installed = get_federated_extensions(paths)
    disabled = get_page_config(paths).get("disabledExtensions", [])
    disabled = disabled if isinstance(disabled, list) else [k for k, off in disabled.items() if off]
    problems = []
    for name, what in LAB_EXTENSIONS.items():
        if name not in installed:
            problems.append(f"lab extension {name} is not installed: {what}; pip install ipywidgets")
        else:
            problems += [f"lab extension {entry} is disabled: jupyter labextension enable {entry}"
                         for entry in disabled if entry == name or entry.startswith(name + ":")]
    return problems


def font_note() -> str | None:
    """A note when matplotlib finds no font with Chinese glyphs (the Chinese figures would show boxes)."""
    try:
        from graph_explorer.fonts import find_chinese_font
    except ImportError:
        return None
    if find_chinese_font() is not None:
        return None
    return ("no font with Chinese glyphs: the Chinese lessons' figures will show empty boxes (install one: "
            "fonts-wqy-microhei on Debian/Ubuntu, or Noto Sans CJK SC)")


def start(folder: Path, *, open_browser: bool = True, extra: list[str] | None = None) -> int:
    """Run a learner's JupyterLab on ``folder`` until it stops; its exit status."""
    command = lab_command(folder, open_browser=open_browser, extra=extra)
    print(f"Starting JupyterLab on {Path(folder).resolve()} (Ctrl-C to stop); open the URL it prints below.", flush=True)
    try:
        return subprocess.call(command, cwd=folder, env=learner_environment())
    except KeyboardInterrupt:
        return 0
