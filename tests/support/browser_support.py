"""What the browser test needs besides the test itself: Chromium, a JupyterLab server, notebook actions.

* ``find_chromium()``: the Chromium to drive. Playwright's own browser download is not
  possible everywhere, so the system's Chromium (Debian: ``apt-get install chromium``) is
  passed as the executable; ``KIT_CHROMIUM=/path/to/chrome`` picks another one.
* ``JupyterLab``: one server, the ``jupyter lab`` that ``autograd-kit lab`` starts (``learner/lab.py``),
  on a free localhost port with a random token and its own settings, workspaces, config
  and runtime folders, so nothing of the user's Jupyter set-up leaks in or is changed; with
  ``learner=True``, a learner's (nbgrader's instructor tools switched off, as ``autograd-kit lab`` does).
* ``Notebook``: a notebook opened in that JupyterLab in a Playwright page, with the
  actions a student takes (Run All from the Run menu, the toolbar buttons) and what the
  page shows afterwards.
"""
from __future__ import annotations

import base64
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kit_paths import ROOT

#: In CI a missing browser or Playwright fails the test instead of skipping it.
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str, in_ci: str):
    """Skip (on a developer's machine) or fail (in CI, with ``in_ci`` saying what CI must provide)."""
    if IN_CI:
        pytest.fail(f"{reason}; {in_ci}", pytrace=False)
    pytest.skip(reason)


def launch_chromium(in_ci: str):
    """A Playwright Chromium for a module's tests (use from a fixture: ``yield from``)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Playwright is not installed (pip install -e '.[test]')", in_ci)
    executable = find_chromium()
    with sync_playwright() as playwright:
        if executable is None and not os.path.exists(playwright.chromium.executable_path):
            unavailable("no Chromium found (apt-get install chromium, or set KIT_CHROMIUM=/path/to/chrome)", in_ci)
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def artifacts_folder(request, folder: Path, what: str):
    """A fresh folder for a module's screenshots and logs, named at the end of the run (``yield from``)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    yield folder
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture is not None:
        with capture.global_and_fixture_disabled():
            print(f"\n{what} in {folder}")

# Headless Chromium on a closed network: without the background-networking flags it keeps
# trying to reach Google's services and its connections are refused.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
CHROMIUM_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"]


def find_chromium() -> str | None:
    """The Chromium executable to use, or None (then Playwright's own download is tried)."""
    chosen = os.environ.get("KIT_CHROMIUM")
    if chosen:
        return chosen if Path(chosen).exists() or shutil.which(chosen) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]




class JupyterLab:
    """A JupyterLab server serving ``root`` (working directory ``cwd``), for the test's duration."""

    def __init__(self, root: Path, cwd: Path, state: Path, log: Path, learner: bool = False):
        self.root, self.cwd, self.state, self.log_path = Path(root), Path(cwd), Path(state), Path(log)
        self.learner = learner
        self.port = free_port()
        self.token = secrets.token_hex(24)
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 90.0) -> "JupyterLab":
        from learner.lab import lab_command, learner_environment, setting_defaults

        settings = self.state / "settings"  # empty user settings: the kit's defaults apply, as in `make lab`
        settings.mkdir(parents=True, exist_ok=True)
        env = learner_environment() if self.learner else dict(os.environ)
        labconfig = self.state / "config" / "labconfig"  # no news prompt over the notebooks, as in a learner's lab
        labconfig.mkdir(parents=True, exist_ok=True)
        (labconfig / "default_setting_overrides.json").write_text(json.dumps(setting_defaults()))
        env.pop("MPLBACKEND", None)  # the kernel's inline backend, as for a student
        for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")]:
            env[var] = str(self.state / sub)
            (self.state / sub).mkdir(parents=True, exist_ok=True)
        command = lab_command(
            self.root, port=self.port, token=self.token, open_browser=False, ip="127.0.0.1",
            settings_dir=settings, workspaces_dir=self.state / "workspaces")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "w")
        # Its own process group, so stop() also ends the kernels it started.
        self.process = subprocess.Popen(command, cwd=self.cwd, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                status = self.api("status")
                if "started" in status:
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer on {self.url} within {timeout:.0f} s:\n{self.log_tail()}")

    def api(self, path: str, method: str = "GET"):
        request = urllib.request.Request(f"{self.url}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shut_down_kernels(self) -> None:
        """End every session (and its kernel) so the next test starts from a quiet server."""
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", method="DELETE")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        try:  # kernels left behind in the server's process group
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._log.close()
        self.process = None


# --- a notebook in the browser ------------------------------------------------------------------

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
ERROR_MARKERS = ("Traceback (most recent call last)", "Error displaying widget", "Javascript Error")


class Notebook:
    """A notebook opened in its own JupyterLab workspace (so earlier tabs do not come back)."""

    def __init__(self, page, lab: JupyterLab, path: str, workspace: str):
        self.page, self.lab, self.path = page, lab, path
        page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{path}?token={lab.token}")
        self.panel = page.locator(PANEL)
        self.panel.locator(".jp-Cell").first.wait_for(timeout=60_000)
        self.wait_for_kernel_idle()

    def wait_for_kernel_idle(self, timeout: float = 60_000) -> None:
        self.page.wait_for_function(
            """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                       .some(e => /\\|\\s*Idle\\s*$/.test(e.textContent.trim()))""", timeout=timeout)

    def menu(self, menu: str, item: str) -> None:
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(menu)}$")).click()
        self.page.locator(".lm-Menu-item:visible .lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).click()

    def run_all(self, timeout: float = 240_000) -> list[str]:
        """Run > Run All Cells, wait until the kernel has run them; returns the code cells' prompts."""
        self.menu("Run", "Run All Cells")
        # All code cells are queued ([*]) at once; done when none is queued and the first has its number.
        # A cell that raises stops the run: the rest lose their [*] and keep no number.
        self.page.wait_for_function(
            """(sel) => {
                 const prompts = [...document.querySelector(sel).querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
                   .map(e => e.textContent.trim());
                 return prompts.length > 0 && !prompts.some(t => t.includes('*')) && /^\\[\\d+\\]:$/.test(prompts[0]);
               }""", arg=PANEL, timeout=timeout)
        self.wait_for_kernel_idle()
        return self.prompts()

    def prompts(self) -> list[str]:
        return [t.strip() for t in self.panel.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()]

    def errors(self) -> list[str]:
        """Error outputs on the page: tracebacks (error outputs and ones printed to stderr), widgets that failed."""
        texts = self.panel.locator(".jp-OutputArea-output").all_text_contents()
        return [t for t in texts if any(marker in t for marker in ERROR_MARKERS)]

    def output_images(self, mime: str = "image/png"):
        return self.panel.locator(f'.jp-OutputArea-output[data-mime-type="{mime}"] img')

    def screenshot(self, path: Path, full: bool = False) -> Path:
        self.page.screenshot(path=str(path), full_page=full)
        return path


def data_url_png(src: str) -> bytes:
    prefix = "data:image/png;base64,"
    if not src.startswith(prefix):
        raise ValueError(f"not an inline PNG: {src[:60]!r}")
    return base64.b64decode(src[len(prefix):])


def count_colour(png: bytes, colour: str, tolerance: int = 24) -> int:
    """How many pixels of ``png`` are ``colour`` (``#rrggbb``), within ``tolerance`` (sum over channels)."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    target = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels - target).sum(axis=-1) <= tolerance).sum())


def run_quietly(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """A command of the kit (``kitgrade ...``) with this Python; raises with its output if it fails."""
    result = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result
