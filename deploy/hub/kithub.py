"""A class on one JupyterHub: accounts, courses, the nbgrader exchange, and the hub itself.

    sudo python deploy/hub/kithub.py demo                 # what `make hub` runs: set up, start, print logins
    sudo python deploy/hub/kithub.py setup --state DIR    # only set up (accounts, courses, releases)
    sudo python deploy/hub/kithub.py start --state DIR    # start the hub of a set-up class (foreground)
    sudo python deploy/hub/kithub.py teardown --state DIR # remove the accounts and DIR

A class is described by ``class.json`` in its state folder (``ClassSpec`` below). Every person
is a real system account (JupyterHub's ``LocalProcessSpawner`` starts each user's server as that
account); every course has its own grader account, which owns the course directory (``source/``,
``gradebook.db``, hidden tests) in its home and runs the course's grader service. The exchange is
nbgrader's, shared by all courses (``path_includes_course``); who belongs to which course is
JupyterHub's groups ``nbgrader-<course>`` (students) and ``formgrade-<course>`` (graders),
read by nbgrader's ``JupyterHubAuthPlugin``. ``jupyterhub_config.py`` beside this file turns the
description into JupyterHub's configuration. Run as root: it creates accounts.
"""
from __future__ import annotations

import argparse
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CLASS_FILE = "class.json"
ACCOUNTS_FILE = "accounts.txt"  # the accounts this class created, removed by teardown
DEFAULT_STATE = Path("/srv/autograd-kit-hub")
DEFAULT_ASSIGNMENTS = ["ps1_autograd_basics", "ps2_build_your_own"]
CHP = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
# nbgrader's lab extensions a student does not use (they are the grader's tools)
STUDENT_DISABLED_EXTENSIONS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                               "@jupyter/nbgrader:course-list"]


class SetupError(Exception):
    """Something about the machine or the request that the user can fix (printed without a traceback)."""


@dataclass
class CourseSpec:
    course_id: str
    grader: str                      # system account of the grader service; owns the course directory
    port: int                        # the grader service's port on 127.0.0.1
    instructors: list[str] = field(default_factory=list)
    students: list[str] = field(default_factory=list)
    assignments: list[str] = field(default_factory=lambda: list(DEFAULT_ASSIGNMENTS))

    def directory(self, spec: "ClassSpec") -> Path:
        return spec.home(self.grader) / self.course_id


@dataclass
class ClassSpec:
    state: str                       # everything of this class lives here (homes, exchange, hub database)
    courses: list[CourseSpec]
    passwords: dict[str, str]        # login name -> password (the demo's PAM logins)
    hub_port: int = 8000             # the proxy: what people open
    hub_api_port: int = 8081
    proxy_api_port: int = 8001
    python: str = os.path.normpath(os.path.abspath(sys.executable))  # the environment the hub, the servers and kitgrade run in
    lessons: str = str(ROOT / "notebooks")

    # ---- layout ------------------------------------------------------
    @property
    def root(self) -> Path:
        return Path(self.state)

    def home(self, account: str) -> Path:
        return self.root / "home" / account

    @property
    def exchange(self) -> Path:
        return self.root / "exchange"

    @property
    def bin(self) -> Path:
        return Path(self.python).parent

    def jupyter_config(self, role: str) -> Path:
        """The extra Jupyter config folder of user servers (``student``) or grader services (``grader``)."""
        return self.root / "jupyter" / role

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.hub_port}"

    # ---- who -----------------------------------------------------------
    def people(self) -> list[str]:
        """Everyone who logs in (instructors and students of every course)."""
        return sorted({p for c in self.courses for p in [*c.instructors, *c.students]})

    def accounts(self) -> list[str]:
        return sorted({*self.people(), *(c.grader for c in self.courses)})

    def graders(self) -> list[str]:
        return [c.grader for c in self.courses]

    def course(self, course_id: str) -> CourseSpec:
        return next(c for c in self.courses if c.course_id == course_id)

    # ---- file ----------------------------------------------------------
    def save(self) -> Path:
        path = self.root / CLASS_FILE
        path.write_text(json.dumps(asdict(self), indent=2))
        path.chmod(0o600)  # passwords
        return path

    @classmethod
    def load(cls, state: Path | str) -> "ClassSpec":
        path = Path(state) / CLASS_FILE
        if not path.exists():
            raise SetupError(f"{state} holds no class ({CLASS_FILE} missing); run `kithub.py setup --state {state}` first")
        data = json.loads(path.read_text())
        data["courses"] = [CourseSpec(**c) for c in data["courses"]]
        return cls(**data)


def demo_class(state: Path, **ports) -> ClassSpec:
    """The demo: one course ``ad101`` (ps1 and ps2), an instructor and three students."""
    people = ["instructor", "alice", "bob", "carol"]
    course = CourseSpec("ad101", grader="grader-ad101", port=ports.pop("service_port", 9101),
                        instructors=["instructor"], students=people[1:])
    return ClassSpec(state=str(state), courses=[course], passwords={p: new_password() for p in people}, **ports)


def new_password() -> str:
    return secrets.token_urlsafe(12)


# ---- accounts ------------------------------------------------------------------------------------

def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SetupError(f"`{' '.join(map(str, command))}` failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result


def account_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def create_accounts(spec: ClassSpec) -> None:
    """One system account per person and per grader, home in the class's state folder (mode 700)."""
    record = spec.root / ACCOUNTS_FILE
    ours = set(record.read_text().split()) if record.exists() else set()
    clashes = [a for a in spec.accounts() if account_exists(a) and a not in ours]
    if clashes:
        raise SetupError(f"account(s) {', '.join(clashes)} already exist on this machine and are not this class's; "
                         "choose other names or remove them")
    (spec.root / "home").mkdir(exist_ok=True)
    for account in spec.accounts():
        if account in ours:
            continue
        _run(["useradd", "--create-home", "--home-dir", str(spec.home(account)), "--shell", "/bin/bash",
              "--user-group", account])
        ours.add(account)
        record.write_text("\n".join(sorted(ours)) + "\n")
        spec.home(account).chmod(0o700)
        if account in spec.passwords:
            _run(["chpasswd"], input=f"{account}:{spec.passwords[account]}\n")


def remove_accounts(state: Path) -> list[str]:
    record = state / ACCOUNTS_FILE
    removed = []
    for account in (record.read_text().split() if record.exists() else []):
        if account_exists(account):
            end_processes_of(account)
            subprocess.run(["userdel", account], capture_output=True)
            subprocess.run(["groupdel", account], capture_output=True)  # where userdel left the group
            removed.append(account)
    return removed


def end_processes_of(account: str, wait: float = 10.0) -> list[int]:
    """Ends what is left running as ``account`` (a kernel of a server that did not stop), by pid."""
    uid = pwd.getpwnam(account).pw_uid
    ended = processes_of(uid)
    for pid in ended:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + wait
    while processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return ended


def processes_of(uid: int) -> list[int]:
    """The live processes of ``uid`` (not zombies, which only wait for their parent)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid and (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    pids.append(int(entry.name))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return pids


def as_account(account: str, spec: ClassSpec) -> dict:
    """subprocess arguments that run a command as ``account``, in its home, with the class's Python on PATH."""
    info = pwd.getpwnam(account)
    env = {"HOME": info.pw_dir, "USER": account, "LOGNAME": account, "LANG": "C.UTF-8",
           "PATH": f"{spec.bin}:{spec.root / 'bin'}:/usr/local/bin:/usr/bin:/bin", "KIT_LESSONS": spec.lessons,
           "JUPYTER_CONFIG_PATH": str(spec.jupyter_config("grader" if account in spec.graders() else "student"))}
    return {"user": info.pw_uid, "group": info.pw_gid, "extra_groups": [], "env": env, "cwd": info.pw_dir}


# ---- configuration files -------------------------------------------------------------------------

NBGRADER_CONFIG = '''\
# nbgrader on the hub, for the {role} of this class (kithub.py writes it).
c = get_config()
c.Exchange.root = {exchange!r}
c.Exchange.path_includes_course = True        # one exchange, a folder per course
{extra}'''

STUDENT_EXCHANGE = '''\
# A student's courses are their hub groups nbgrader-<course> (read with their server's token).
from nbgrader.auth import JupyterHubAuthPlugin
c.Authenticator.plugin_class = JupyterHubAuthPlugin
# Submissions readable by the course's grader group only (not by other students).
c.ExchangeFactory.submit = "grader.hub_exchange.PrivateSubmit"
'''

SERVER_CONFIG = '''\
c = get_config()
# No language servers here: the extension only slows every server's start.
c.ServerApp.jpserver_extensions = {"jupyter_lsp": False}
'''

GRADER_SERVER_CONFIG = SERVER_CONFIG + '''\
# JupyterLab's formgrader tab is a frame of the same server; JupyterHub 4.1+ forbids frames by default.
c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
'''

COURSE_HUB_SETTINGS = '''
# On the hub (kithub.py): the shared exchange has a folder per course, and a submission whose
# files are not owned by the student it names is refused at collection.
c.Exchange.path_includes_course = True
c.ExchangeFactory.collect = "grader.hub_exchange.OwnerCheckedCollect"
'''


def write_jupyter_config(spec: ClassSpec) -> None:
    for role in ("student", "grader"):
        folder = spec.jupyter_config(role)
        (folder / "labconfig").mkdir(parents=True, exist_ok=True)
        extra = STUDENT_EXCHANGE if role == "student" else ""
        whose = "students' servers" if role == "student" else "grader services (each serves one course)"
        (folder / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(role=whose, exchange=str(spec.exchange),
                                                                          extra=extra))
        disabled = {name: True for name in STUDENT_DISABLED_EXTENSIONS} if role == "student" else {}
        (folder / "labconfig" / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}, indent=1))
        (folder / "jupyter_server_config.py").write_text(GRADER_SERVER_CONFIG if role == "grader" else SERVER_CONFIG)
    for path in [spec.root / "jupyter", *spec.root.joinpath("jupyter").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def write_commands(spec: ClassSpec) -> None:
    """Commands on the PATH of every user server: ``reset-lesson``."""
    folder = spec.root / "bin"
    folder.mkdir(exist_ok=True)
    script = folder / "reset-lesson"
    script.write_text(f"#!/bin/sh\nexec {spec.python} {HERE / 'lessons.py'} \"$@\"\n")
    folder.chmod(0o755)
    script.chmod(0o755)


# ---- setup -----------------------------------------------------------------------------------------

def setup(spec: ClassSpec, log=print) -> ClassSpec:
    """Accounts, the exchange, each course (``kitgrade init`` and ``release`` as its grader account)."""
    if os.geteuid() != 0:
        raise SetupError("setting up a class creates system accounts: run it as root (sudo)")
    if not CHP.exists():
        raise SetupError(f"configurable-http-proxy is not installed ({CHP} missing): run `make hub-proxy`")
    if spec.root.is_dir() and any(spec.root.iterdir()) and not (spec.root / CLASS_FILE).exists():
        raise SetupError(f"{spec.root} is not empty and holds no class; give --state a new folder")
    spec.root.mkdir(parents=True, exist_ok=True)
    spec.root.chmod(0o755)  # the servers run as the students: they need to reach their homes and the exchange
    _check_reachable(spec)
    spec.save()
    create_accounts(spec)
    spec.exchange.mkdir(exist_ok=True)
    spec.exchange.chmod(0o777)  # nbgrader's exchange root: world-writable; its release insists on exactly 777
    write_jupyter_config(spec)
    write_commands(spec)
    releases = []
    for course in spec.courses:
        directory = course.directory(spec)
        run = as_account(course.grader, spec)
        if not (directory / "nbgrader_config.py").exists():
            log(f"{course.course_id}: kitgrade init in {directory}")
            _run([str(spec.bin / "kitgrade"), "init", str(directory), "--course-id", course.course_id,
                  "--exchange", str(spec.exchange)], **run)
            with open(directory / "nbgrader_config.py", "a") as config:
                config.write(COURSE_HUB_SETTINGS)
        log(f"{course.course_id}: kitgrade release {' '.join(course.assignments)} (each proven before it goes out)")
        command = [str(spec.bin / "kitgrade"), "release", *course.assignments]
        releases.append((command, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                                   **{**run, "cwd": str(directory)})))
    failed = []
    for command, process in releases:  # the courses' releases run side by side, each as its grader
        output, _ = process.communicate()
        if process.returncode != 0:
            failed.append(f"`{' '.join(command)}` failed ({process.returncode}):\n{output}")
    if failed:
        raise SetupError("\n".join(failed))
    return spec


def _check_reachable(spec: ClassSpec) -> None:
    """Every account must be able to reach the Python environment and the lessons (no mode-700 parent)."""
    for path in (Path(spec.python), Path(spec.lessons), CHP, spec.root):
        for parent in [path, *path.parents]:
            if parent.exists() and parent.is_dir() and not parent.stat().st_mode & 0o001:
                raise SetupError(f"{parent} is not searchable by other accounts (mode {parent.stat().st_mode & 0o777:o}); "
                                 f"the students' servers could not reach {path}. Put the kit and --state elsewhere.")


# ---- the hub ----------------------------------------------------------------------------------------

class Hub:
    """``jupyterhub -f deploy/hub/jupyterhub_config.py`` for a set-up class, in its own process group."""

    def __init__(self, spec: ClassSpec, log_path: Path | None = None):
        self.spec = spec
        self.log_path = log_path or spec.root / "jupyterhub.log"
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        return [str(self.spec.bin / "jupyterhub"), "-f", str(HERE / "jupyterhub_config.py")]

    def environment(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
        env["KIT_HUB_STATE"] = str(self.spec.root)
        env["PATH"] = f"{self.spec.bin}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
        return env

    def start(self, timeout: float = 240.0, attempts: int = 4) -> "Hub":
        hub_dir = self.spec.root / "hub"
        hub_dir.mkdir(exist_ok=True)
        hub_dir.chmod(0o700)
        self._log = open(self.log_path, "a")
        deadline = time.monotonic() + timeout
        for attempt in range(1, attempts + 1):
            self._log.write(f"--- kithub: starting JupyterHub (attempt {attempt})\n")
            self._log.flush()
            offset = self.log_path.stat().st_size
            self.process = subprocess.Popen(self.command(), cwd=hub_dir, env=self.environment(), stdout=self._log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True, preexec_fn=_default_signals)
            if self._wait_until_up(deadline):
                return self
            # JupyterHub gives a managed service 10 s to answer, then exits; on a busy machine a
            # grader service's first start can take longer (its imports are then cached): again.
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

    def _wait_until_up(self, deadline: float) -> bool:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.spec.url}/hub/health", timeout=5) as response:
                    if response.status == 200:
                        return True
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.5)
        self.stop()
        raise SetupError(f"JupyterHub did not answer on {self.spec.url} in time:\n{self.log_tail()}")

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


def teardown(state: Path) -> list[str]:
    """Remove the class's accounts (their processes ended) and its state folder."""
    if not (state / CLASS_FILE).exists() and not (state / ACCOUNTS_FILE).exists():
        raise SetupError(f"{state} is not a class's folder (no {CLASS_FILE}); nothing removed")
    removed = remove_accounts(state)
    shutil.rmtree(state, ignore_errors=True)
    return removed


def logins(spec: ClassSpec) -> str:
    lines = [f"JupyterHub: {spec.url}/hub/login   (localhost only; stop with Ctrl-C)", ""]
    for course in spec.courses:
        lines.append(f"course {course.course_id}: assignments {', '.join(course.assignments)} released")
        for person in course.instructors:
            lines.append(f"  instructor  {person:<12} password {spec.passwords[person]}   "
                         f"grader service: {spec.url}/services/{course.course_id}/lab")
        for person in course.students:
            lines.append(f"  student     {person:<12} password {spec.passwords[person]}")
    lines += ["", f"the instructor grades in the grader service's terminal, as {', '.join(c.grader for c in spec.courses)}:",
              "  kitgrade collect ps1_autograd_basics && kitgrade autograde ps1_autograd_basics "
              "&& kitgrade feedback ps1_autograd_basics --release",
              "remove the accounts and files: " + ("make hub-clean" if spec.root == DEFAULT_STATE else
                                                   f"make hub-clean HUB_STATE={spec.root}")]
    return "\n".join(lines)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kithub.py", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["demo", "setup", "start", "teardown"])
    parser.add_argument("--state", default=str(DEFAULT_STATE), help=f"the class's folder (default {DEFAULT_STATE})")
    parser.add_argument("--port", type=int, default=8000, help="the hub's port on 127.0.0.1 (default 8000)")
    args = parser.parse_args(argv)
    state = Path(args.state).resolve()
    try:
        if args.command == "teardown":
            removed = teardown(state)
            print(f"removed {state}" + (f" and the accounts {', '.join(removed)}" if removed else ""))
            return 0
        if args.command in ("demo", "setup"):
            spec = ClassSpec.load(state) if (state / CLASS_FILE).exists() else demo_class(state, hub_port=args.port)
            setup(spec)
            if args.command == "setup":
                print(logins(spec))
                return 0
        spec = ClassSpec.load(state)
        hub = Hub(spec)
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as cleanly as Ctrl-C
        signal.signal(signal.SIGINT, _interrupt)
        hub.start()
        print(logins(spec), flush=True)
        try:
            while hub.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            print("\nstopping the hub and every user server ...")
        finally:
            hub.stop()
        return 0
    except SetupError as error:
        print(f"kithub: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
