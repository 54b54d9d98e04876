"""JupyterHub started and stopped for a set-up class, in its own process group, with the class's
configuration (``jupyterhub_config.py`` beside this file)."""
from __future__ import annotations

import os
import re
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from .accounts import end_processes_of
from .config_files import write_hub_api_address, write_kernel_spec
from .errors import UMASK, SetupError, made_folder
from .runtime import accounts_named, listening_accounts, private_runtime
from .spec import ClassSpec

#: JupyterHub's configuration of the class (JupyterHub runs it: ``jupyterhub -f``)
CONFIG = Path(__file__).resolve().parent / "jupyterhub_config.py"
#: what JupyterHub logs once it serves: the address and scheme its proxy serves (the site's settings
#: included: HTTPS, the address it listens on)
RUNNING_AT = re.compile(r"JupyterHub is now running at (\S+)")


class Hub:
    """``jupyterhub -f kithub/jupyterhub_config.py`` for a set-up class, in its own process group."""

    def __init__(self, spec: ClassSpec, log_path: Path | None = None):
        self.spec = spec
        self.log_path = log_path or spec.root / "hub" / "jupyterhub.log"
        self.process: subprocess.Popen | None = None
        self.public_url: str | None = None  # what the hub serves, as it says once started

    def command(self) -> list[str]:
        return [str(self.spec.bin / "jupyterhub"), "-f", str(CONFIG)]

    def environment(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
        env["KIT_HUB_STATE"] = str(self.spec.root)
        env["PATH"] = f"{self.spec.bin}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
        return env

    def start(self, timeout: float = 240.0, attempts: int = 4) -> "Hub":
        hub_dir = made_folder(self.spec.root / "hub", 0o700)
        for account in self.spec.graders():  # (a class set up before the runtime folders has none yet)
            private_runtime(self.spec, account)
        write_kernel_spec(self.spec)  # (nor, set up before it, the kernel without a debugger)
        write_hub_api_address(self.spec)  # the culler's address, as class.json says now
        # the servers' output is in it (their nbgrader's too): root's alone
        self._log = os.fdopen(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a")
        self.log_path.chmod(0o600)
        deadline = time.monotonic() + timeout
        for attempt in range(1, attempts + 1):
            self.refuse_ports_held_by_others()
            self._log.write(f"--- kithub: starting JupyterHub (attempt {attempt})\n")
            self._log.flush()
            offset = self.log_path.stat().st_size
            self.process = subprocess.Popen(self.command(), cwd=hub_dir, env=self.environment(), stdout=self._log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True, preexec_fn=_default_signals, umask=UMASK)
            if self._wait_until_up(deadline):
                self.public_url = self._running_at(offset)
                return self
            # JupyterHub gives a managed service 10 s to answer, then exits; the hub's configuration
            # waits longer (wait_for_services_at_start), and a service slower still is started again
            # (its imports are then cached)
            with open(self.log_path, errors="replace") as log:
                log.seek(offset)
                service_too_slow = "Cannot connect to" in log.read()
            for account in self.spec.graders():  # a service JupyterHub left behind when it gave up
                end_processes_of(account)
            self.end_proxy()
            if not service_too_slow:
                break
        raise SetupError(f"JupyterHub exited with {self.process.returncode}; its log ({self.log_path}):\n"
                         + self.log_tail())

    def refuse_ports_held_by_others(self) -> None:
        """Stop before JupyterHub starts while an account other than root listens on a port of the
        class: JupyterHub would take its answers for its proxy's or a grader service's and send it the
        proxy's token, the instructor's requests or the students' (``runtime.listening_accounts``)."""
        ports = {"the hub (hub_port)": self.spec.hub_port, "the hub's API (hub_api_port)": self.spec.hub_api_port,
                 "the proxy's API (proxy_api_port)": self.spec.proxy_api_port,
                 **{f"course {c.course_id}'s grader service": c.port for c in self.spec.courses}}
        held = [f"port {port}, {what}, by {accounts_named(others)}" for what, port in ports.items()
                if (others := listening_accounts(port) - {0})]
        if held:
            raise SetupError("the class's ports must be free before the hub starts; held now: " + "; ".join(held)
                             + " (end those processes, or give the class other ports in class.json)")

    def _wait_until_up(self, deadline: float) -> bool:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            if self._answers():
                return True
            time.sleep(0.5)
        self.stop()
        raise SetupError(f"JupyterHub did not answer on {self.spec.url} in time:\n{self.log_tail()}")

    def _running_at(self, offset: int, wait: float = 30.0) -> str:
        """The address the hub says it serves (its log, from ``offset``), or, if it has not said so yet,
        the one that answered on this machine."""
        deadline = time.monotonic() + wait
        while True:
            with open(self.log_path, errors="replace") as log:
                log.seek(offset)
                said = RUNNING_AT.findall(log.read())
            if said or time.monotonic() > deadline or self.process.poll() is not None:
                break
            time.sleep(0.5)
        return said[-1] if said else f"{self._scheme}://127.0.0.1:{self.spec.hub_port}/"

    def _answers(self) -> bool:
        """The hub's health through the proxy, in HTTP or, where the site serves HTTPS (docs/deploy.md),
        in HTTPS: only whether it answers on this machine, so its certificate is not checked here."""
        for scheme, context in (("http", None), ("https", ssl._create_unverified_context())):
            try:
                with urllib.request.urlopen(f"{scheme}://127.0.0.1:{self.spec.hub_port}/hub/health", timeout=5,
                                            context=context) as response:
                    self._scheme = scheme
                    return response.status == 200
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                continue
        return False

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """SIGTERM: JupyterHub stops every user server and service it started, then the proxy."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # anything left in the hub's own process group
        except (ProcessLookupError, PermissionError):
            pass
        self.end_proxy()
        self._log.close()
        self.process = None

    def end_proxy(self) -> None:
        """The proxy runs in a session of its own; a hub that exits on an error leaves it running."""
        pid_file = self.spec.root / "hub" / "jupyterhub-proxy.pid"
        try:
            pid = int(pid_file.read_text().strip())
            if b"configurable-http-proxy" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):
            pass


def _default_signals() -> None:
    """A hub started from a background job would inherit an ignored SIGINT, and so would its
    servers; JupyterHub stops a server with SIGINT first."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
