"""A class on one JupyterHub: accounts, courses, the nbgrader exchange, and the hub itself.

    sudo python deploy/hub/kithub.py demo                 # what `make hub` runs: set up, start, print logins
    sudo python deploy/hub/kithub.py setup --state DIR    # only set up (accounts, courses, releases)
    sudo python deploy/hub/kithub.py start --state DIR    # start the hub of a set-up class (foreground)
    sudo python deploy/hub/kithub.py dates --state DIR    # apply the due dates and extensions of class.json again
    sudo python deploy/hub/kithub.py backup --state DIR --to BACKUPS  # courses, gradebooks, exchange: one archive
    sudo python deploy/hub/kithub.py teardown --state DIR # remove the accounts and DIR (the gradebooks kept aside)

A class is described by ``class.json`` in its state folder (``ClassSpec`` below). Every person
is a real system account (JupyterHub's ``LocalProcessSpawner`` starts each user's server as that
account); every course has its own grader account, which owns the course directory (``source/``,
``gradebook.db``, hidden tests) in its home and runs the course's grader service. The exchange is
nbgrader's, shared by all courses (``path_includes_course``); who belongs to which course is
JupyterHub's groups ``nbgrader-<course>`` (students) and ``formgrade-<course>`` (graders),
read by nbgrader's ``JupyterHubAuthPlugin``. ``jupyterhub_config.py`` beside this file turns the
description into JupyterHub's configuration. Run as root: it creates accounts.

Nothing the servers run or read is in the kit's checkout, which holds the course (solutions and
hidden tests) and must stay private: the Python environment is a copy of the kit (``make hub-env``,
not editable, outside the checkout), the lessons and ``reset-lesson`` are copied into the state
folder, and each course's exercises into its grader's home, where ``kitgrade init`` reads them.
"""
from __future__ import annotations

import argparse
import datetime
import difflib
import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import sqlite3
import ssl
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.hub_exchange.entries import account_of, entries_under, open_folder, why_not_opened

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CLASS_FILE = "class.json"
ACCOUNTS_FILE = "accounts.txt"  # the accounts this class created, removed by teardown
DEFAULT_STATE = Path("/srv/autograd-kit-hub")
DEFAULT_ASSIGNMENTS = ["ps1_autograd_basics", "ps2_build_your_own", "ps3_extending_autograd"]
CHP = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
#: where a login shell reads the system's additions to PATH (a hub terminal is a login shell, and
#: the system's /etc/profile sets PATH anew, dropping the one the spawner gave)
PROFILE_D = Path("/etc/profile.d")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S UTC"
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
    due: dict[str, str] = field(default_factory=dict)       # assignment -> "YYYY-MM-DD HH:MM:SS UTC"
    extensions: dict[str, dict[str, float]] = field(default_factory=dict)  # assignment -> student -> hours
    late_penalty: str = "none"       # nbgrader's LateSubmissionPlugin.penalty_method: "none" or "zero"
    kept_mib_per_student: int = 1024  # what the grader keeps of one student's submissions (the clerk's copies)

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
    lessons: str = str(ROOT / "notebooks")       # the originals, copied into the state folder at set-up
    exercises: str = str(ROOT / "exercises")     # copied into each grader's home at set-up
    logins: dict = field(default_factory=dict)   # university logins (LTI 1.3 or OIDC): deploy/hub/logins.py; none: PAM

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

    @property
    def lessons_copy(self) -> Path:
        """The lessons the servers copy from and ``reset-lesson`` puts back (root's, readable by all)."""
        return self.root / "lessons"

    @property
    def profile(self) -> Path:
        """This class's addition to login shells' PATH (one per state folder: hubs side by side)."""
        return PROFILE_D / f"autograd-kit-hub-{hashlib.sha1(str(self.root).encode()).hexdigest()[:10]}.sh"

    def path(self) -> str:
        return f"{self.bin}:{self.root / 'bin'}:/usr/local/bin:/usr/bin:/bin"

    def runtime(self, account: str) -> Path:
        """The account's own folder for its Jupyter runtime files (``JUPYTER_RUNTIME_DIR``): its kernels'
        sockets are files there, mode 700, not ports on 127.0.0.1 that any account can connect to
        (a classmate would read the kernel's every output on its iopub port). Named by uid: short,
        as a socket's path must be."""
        return self.root / "run" / str(pwd.getpwnam(account).pw_uid)

    def jupyter_config(self, role: str) -> Path:
        """The extra Jupyter config folder of user servers (``student``) or grader services (``grader``)."""
        return self.root / "jupyter" / role

    @property
    def jupyter_data(self) -> Path:
        """The class's Jupyter data folder (``JUPYTER_PATH``, first): its kernel spec."""
        return self.root / "jupyter" / "data"

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
        """The class of ``state``; a mistake in its file is a SetupError naming the file, the place and
        the field (with the name it was probably meant to be), never a traceback."""
        path = Path(state) / CLASS_FILE
        if not path.exists():
            raise SetupError(f"{state} holds no class ({CLASS_FILE} missing); run `kithub.py setup --state {state}` first")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise SetupError(f"{path}: not valid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None
        if not isinstance(data, dict) or not isinstance(data.get("courses"), list):
            raise SetupError(f"{path}: expected an object with a list of \"courses\"")
        _check_fields(path, "the class", data, cls, required={"state", "courses", "passwords"})
        for number, course in enumerate(data["courses"], 1):
            where = f"course {number}" + (f" ({course.get('course_id')})" if isinstance(course, dict) else "")
            if not isinstance(course, dict):
                raise SetupError(f"{path}: {where} is not an object")
            _check_fields(path, where, course, CourseSpec, required={"course_id", "grader", "port"})
        data["courses"] = [CourseSpec(**c) for c in data["courses"]]
        return cls(**data)


def _check_fields(path: Path, where: str, data: dict, kind: type, required: set[str]) -> None:
    known = set(kind.__dataclass_fields__)
    for name in data:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean \"{close[0]}\"?)" if close else f" (known: {', '.join(sorted(known))})"
            raise SetupError(f"{path}: {where}: unknown field \"{name}\"{hint}")
    missing = sorted(required - set(data))
    if missing:
        raise SetupError(f"{path}: {where}: missing {', '.join(missing)}")


def demo_class(state: Path, **ports) -> ClassSpec:
    """The demo: one course ``ad101`` (ps1, ps2 and ps3), an instructor and three students. ps1 was due an
    hour before the set-up and alice and bob have a week's extension: carol's ps1 is late, and late
    work scores zero. ps2 is due in a week."""
    people = ["instructor", "alice", "bob", "carol"]
    now = datetime.datetime.now(datetime.timezone.utc)
    course = CourseSpec("ad101", grader="grader-ad101", port=ports.pop("service_port", 9101),
                        instructors=["instructor"], students=people[1:],
                        due={DEFAULT_ASSIGNMENTS[0]: (now - datetime.timedelta(hours=1)).strftime(TIME_FORMAT),
                             DEFAULT_ASSIGNMENTS[1]: (now + datetime.timedelta(days=7)).strftime(TIME_FORMAT)},
                        extensions={DEFAULT_ASSIGNMENTS[0]: {"alice": 168, "bob": 168}}, late_penalty="zero")
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
           "PATH": spec.path(), "KIT_LESSONS": str(spec.lessons_copy),
           "JUPYTER_CONFIG_PATH": str(spec.jupyter_config("grader" if account in spec.graders() else "student")),
           "JUPYTER_PATH": str(spec.jupyter_data)}
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
# Submissions arrive whole, readable by the course's grader group only (not by other students).
c.ExchangeFactory.submit = "grader.hub_exchange.PrivateSubmit"
# Validate's kernel talks over sockets in the student's own runtime folder, not ports on 127.0.0.1
# (where any account could listen to it); nbgrader names no connection file, so a prefix is given.
import os
if os.environ.get("JUPYTER_RUNTIME_DIR"):
    c.KernelManager.transport = "ipc"
    c.KernelManager.ip = os.path.join(os.environ["JUPYTER_RUNTIME_DIR"], "validate")
'''

SERVER_CONFIG = '''\
c = get_config()
# No language servers here: the extension only slows every server's start.
c.ServerApp.jpserver_extensions = {"jupyter_lsp": False}
# Kernels talk over sockets in the account's own runtime folder (JUPYTER_RUNTIME_DIR, mode 700), not
# over ports on 127.0.0.1, where any account could subscribe to a kernel's outputs.
c.KernelManager.transport = "ipc"
'''

STUDENT_SERVER_CONFIG = SERVER_CONFIG + '''\
# The Assignments panel shows a refusal of the exchange as its one clear line, not nbgrader's traceback.
c.ServerApp.jpserver_extensions["grader.hub_exchange.panel"] = True
'''

GRADER_SERVER_CONFIG = SERVER_CONFIG + '''\
# JupyterLab's formgrader tab is a frame of the same server; JupyterHub 4.1+ forbids frames by default.
c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
# What a student wrote stays text in the instructor's browser: notebooks rendered sanitized, and every
# page with a Content-Security-Policy that lets no inline script of theirs run (grader/hub_exchange/pages.py).
c.HTMLExporter.sanitize_html = True
c.ServerApp.jpserver_extensions["grader.hub_exchange.pages"] = True
'''

COURSE_HUB_SETTINGS = '''
# On the hub (kithub.py): the shared exchange has a folder per course; collect takes each
# submission at the time it arrived (the clerk's, not the student's) and sets aside anything
# not owned by the student it names (grader/hub_exchange/).
c.Exchange.path_includes_course = True
c.ExchangeFactory.collect = "grader.hub_exchange.GuardedCollect"
# what late work costs: "none" (marked late only) or "zero" (class.json's late_penalty)
c.LateSubmissionPlugin.penalty_method = {penalty!r}
# what the grader keeps of one student's submissions; beyond it they stay in inbound/, reported
# (class.json's kept_mib_per_student; the course's clerk has the same)
c.GuardedCollect.kept_mib = {kept}
'''


#: The class's Python kernel: ipykernel without its debugger. JupyterLab's debugger panel has ipykernel
#: start debugpy, whose adapter listens on a port of 127.0.0.1 and asks no credential of whoever connects
#: (debugpy/adapter/clients.py): any account of the machine could attach to a student's kernel, or the
#: grader's, and run code as its owner. ipykernel runs without a debugger where debugpy cannot be
#: imported (ipykernel/debugger.py: ``_is_debugpy_available``), and says so in its kernel_info; what
#: JupyterLab reads to offer the panel is the kernel spec's ``metadata.debugger``. As ipykernel_launcher
#: does, the working folder leaves sys.path while ipykernel loads (a student's json.py would shadow it).
KERNEL_WITHOUT_DEBUGGER = ("import sys; sys.path[:] = [p for p in sys.path if p]; sys.modules['debugpy'] = None; "
                           "from ipykernel.kernelapp import launch_new_instance; launch_new_instance()")


def write_kernel_spec(spec: ClassSpec) -> Path:
    """``python3`` for every server and service of the class (``JUPYTER_PATH`` comes before the
    environment's own kernel spec and the account's): the kernel without a debugger, the same name,
    display name and logos as ipykernel's, so notebooks open unchanged."""
    folder = spec.jupyter_data / "kernels" / "python3"
    folder.mkdir(parents=True, exist_ok=True)
    for logo in (Path(spec.python).parent.parent / "share" / "jupyter" / "kernels" / "python3").glob("logo-*"):
        shutil.copyfile(logo, folder / logo.name)
    (folder / "kernel.json").write_text(json.dumps({
        "argv": [spec.python, "-c", KERNEL_WITHOUT_DEBUGGER, "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python", "metadata": {"debugger": False}}, indent=1))
    for path in [spec.root / "jupyter", *spec.root.joinpath("jupyter").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder / "kernel.json"


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
        (folder / "jupyter_server_config.py").write_text(GRADER_SERVER_CONFIG if role == "grader" else STUDENT_SERVER_CONFIG)
    write_kernel_spec(spec)


def write_commands(spec: ClassSpec) -> None:
    """``reset-lesson`` and the lessons it puts back, in the state folder (nothing is read from the
    checkout), and this class's PATH for the login shells of its terminals."""
    folder = spec.root / "bin"
    folder.mkdir(exist_ok=True)
    shutil.copyfile(HERE / "lessons.py", folder / "lessons.py")
    script = folder / "reset-lesson"
    script.write_text(f"#!/bin/sh\nexec {spec.python} {folder / 'lessons.py'} \"$@\"\n")
    if not spec.lessons_copy.exists():
        for language in ("en", "zh"):
            shutil.copytree(Path(spec.lessons) / language, spec.lessons_copy / language,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for path in [folder, *folder.iterdir(), spec.lessons_copy, *spec.lessons_copy.rglob("*")]:
        # a command another part wrote here (lti-grades) stays a command when set-up runs again
        command = path == script or (path.parent == folder and path.stat().st_mode & 0o100)
        path.chmod(0o755 if path.is_dir() or command else 0o644)
    spec.profile.write_text(f"# the autograd kit's hub in {spec.root}: its commands in the terminals of its servers\n"
                            f"if [ \"${{KIT_HUB_STATE:-}}\" = \"{spec.root}\" ]; then\n"
                            f"  PATH=\"{spec.bin}:{spec.root / 'bin'}:$PATH\"; export PATH\nfi\n")
    spec.profile.chmod(0o644)


def give_exercises(spec: ClassSpec, course: CourseSpec) -> Path:
    """The course's exercises (solutions, hidden tests) in its grader's home, the grader's alone: root reads
    them and a process of the grader's own account writes them (``tar``), so that nothing the grader's
    account made in its home (a link) takes root's writing anywhere; what is there already is kept."""
    target = spec.home(course.grader) / "exercises"
    run = as_account(course.grader, spec)
    _run(["mkdir", "-p", "-m", "700", str(target)], **run)
    packed = subprocess.Popen(["tar", "-C", str(spec.exercises), "-cf", "-", *course.assignments],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _run(["tar", "-C", str(target), "--skip-old-files", "--no-same-owner", "-xf", "-"], stdin=packed.stdout, **run)
    finally:
        packed.stdout.close()
        _, error = packed.communicate()
    if packed.returncode != 0:
        raise SetupError(f"the exercises of {course.course_id} could not be read from {spec.exercises}: {error.decode().strip()}")
    _run(["chmod", "700", str(target)], **run)
    return target


def _course_folder(spec: ClassSpec, course: CourseSpec) -> int:
    """The course's folder of the exchange, opened as itself (a link there is refused, not followed), after
    checking it is its grader's: a student could make a folder of that name before the course is
    released (the exchange's root is writable by all), and then hold every submission to it."""
    exchange = open_folder(str(spec.exchange))  # (root's, in the state folder)
    try:
        folder = open_folder(course.course_id, dir_fd=exchange)
    except OSError as error:
        raise SetupError(f"{spec.exchange / course.course_id} is {why_not_opened(error, exchange)}: not the course's "
                         f"folder; remove it (rm -r '{spec.exchange / course.course_id}') and run set-up again") from None
    finally:
        os.close(exchange)
    owner = os.fstat(folder).st_uid
    if owner not in (0, pwd.getpwnam(course.grader).pw_uid):
        os.close(folder)
        raise SetupError(f"{spec.exchange / course.course_id} belongs to {account_of(owner)}, not to the course's "
                         f"grader {course.grader}: it was made before the course was released. Remove it "
                         f"(rm -r '{spec.exchange / course.course_id}') and run set-up again")
    return folder


def prepare_exchange(spec: ClassSpec, course: CourseSpec) -> None:
    """The course's folder of the exchange, made by root for its grader before the first release (nbgrader's
    release would take one a student made before it)."""
    try:
        os.mkdir(spec.exchange / course.course_id, 0o755)
    except FileExistsError:
        pass
    folder = _course_folder(spec, course)
    try:
        info = pwd.getpwnam(course.grader)
        os.fchown(folder, info.pw_uid, info.pw_gid)
        os.fchmod(folder, 0o755)
    finally:
        os.close(folder)


def harden_exchange(spec: ClassSpec, course: CourseSpec) -> None:
    """``inbound/`` gets the sticky bit (nobody renames or deletes another's entry); ``received/`` is the
    grader's alone (grader.hub_exchange's clerk moves each submission there as it arrives). Done from
    descriptors: the course's folder is its grader's, and whatever the grader's account put at these
    names is never followed by root."""
    info = pwd.getpwnam(course.grader)
    folder = _course_folder(spec, course)
    try:
        try:
            os.mkdir("received", 0o700, dir_fd=folder)
        except FileExistsError:
            pass
        for name, mode in (("inbound", None), ("received", 0o700)):
            where = spec.exchange / course.course_id / name
            try:
                opened = open_folder(name, dir_fd=folder)
            except OSError as error:
                raise SetupError(f"{where} is {why_not_opened(error, folder)}: remove it and run set-up again") from None
            try:
                if os.fstat(opened).st_uid not in (0, info.pw_uid):
                    raise SetupError(f"{where} belongs to {account_of(os.fstat(opened).st_uid)}, not to {course.grader}")
                if mode is None:
                    os.fchmod(opened, stat.S_IMODE(os.fstat(opened).st_mode) | stat.S_ISVTX)
                else:
                    os.fchown(opened, info.pw_uid, info.pw_gid)
                    os.fchmod(opened, mode)
            finally:
                os.close(opened)
    finally:
        os.close(folder)


APPLY_DATES = '''
import datetime, json, sys
from nbgrader.api import Gradebook
from nbgrader.utils import parse_utc
course = json.loads(sys.argv[1])
with Gradebook("sqlite:///gradebook.db", course["course_id"]) as gradebook:
    for assignment in course["assignments"]:
        due = course["due"].get(assignment)
        gradebook.update_or_create_assignment(assignment, duedate=parse_utc(due) if due else None)
        for student, hours in course["extensions"].get(assignment, {}).items():
            gradebook.update_or_create_student(student)
            gradebook.update_or_create_submission(assignment, student, extension=datetime.timedelta(hours=hours))
'''


def apply_dates(spec: ClassSpec) -> None:
    """Each course's due dates and per-student extensions (class.json) into its gradebook, as nbgrader
    keeps them (the assignment's ``duedate``, the submission's ``extension``): autograde marks late
    work and applies the course's ``late_penalty``."""
    for course in spec.courses:
        _run([str(spec.python), "-c", APPLY_DATES, json.dumps(asdict(course))],
             **{**as_account(course.grader, spec), "cwd": str(course.directory(spec))})


# ---- setup -----------------------------------------------------------------------------------------

def setup(spec: ClassSpec, log=print) -> ClassSpec:
    """Accounts, the exchange, each course (``kitgrade init`` and ``release`` as its grader account)."""
    if os.geteuid() != 0:
        raise SetupError("setting up a class creates system accounts: run it as root (sudo)")
    if not CHP.exists():
        raise SetupError(f"configurable-http-proxy is not installed ({CHP} missing): run `make hub-env`")
    _check_environment(spec)
    _check_socket_paths(spec)
    _check_course_closed(Path(spec.exercises))
    if spec.root.is_dir() and any(spec.root.iterdir()) and not (spec.root / CLASS_FILE).exists():
        raise SetupError(f"{spec.root} is not empty and holds no class; give --state a new folder")
    spec.root.mkdir(parents=True, exist_ok=True)
    spec.root.chmod(0o755)  # the servers run as the students: they need to reach their homes and the exchange
    _check_reachable(spec)
    spec.save()
    create_accounts(spec)
    spec.exchange.mkdir(exist_ok=True)
    # nbgrader's exchange root: writable by all (its release insists on rwx for all), and sticky, or a
    # student could rename a course's folder away and put one of their own in its place (its inbound/
    # theirs: every classmate's submission theirs to read)
    spec.exchange.chmod(0o1777)
    for account in spec.graders():
        private_runtime(spec, account)
    write_jupyter_config(spec)
    write_commands(spec)
    releases = []
    for course in spec.courses:
        directory = course.directory(spec)
        run = as_account(course.grader, spec)
        prepare_exchange(spec, course)
        if not (directory / "nbgrader_config.py").exists():
            log(f"{course.course_id}: kitgrade init in {directory}")
            _run([str(spec.bin / "kitgrade"), "init", str(directory), "--course-id", course.course_id,
                  "--exchange", str(spec.exchange), "--exercises", str(give_exercises(spec, course))], **run)
            # added by the grader's own account (it owns the file: root writes nothing in its home)
            settings = COURSE_HUB_SETTINGS.format(penalty=course.late_penalty, kept=course.kept_mib_per_student)
            _run(["tee", "-a", str(directory / "nbgrader_config.py")], input=settings, **run)
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
    for course in spec.courses:
        harden_exchange(spec, course)
    apply_dates(spec)
    return spec


def _check_environment(spec: ClassSpec) -> None:
    """The servers run the kit from the hub's environment: it must be a copy of the kit, not an editable
    install that reads it from a checkout (which holds the course, so the students would read it too)."""
    for path in Path(spec.python).parent.parent.glob("lib/python*/site-packages/__editable__*autograd_kit*"):
        raise SetupError(f"the hub's environment {Path(spec.python).parent.parent} has the kit installed in "
                         f"editable mode ({path.name}): the students' servers would read the course from the "
                         "checkout. Run `make hub-env` (it installs a copy of the kit)")


#: a socket's path holds at most 107 bytes (``sun_path``); a kernel's longest is its connection file's
#: name and ``-ipc-N`` in the runtime folder
SOCKET_PATH_MAX = 107
LONGEST_SOCKET = "/kernel-00000000-0000-0000-0000-000000000000-ipc-99"


class PortsGiven:
    """A port for each server that is starting or running, no two alike. JupyterHub picks a free
    port for each server when it starts, and two servers started at once could be given the same
    one before either had bound it: the second student's address then led to the first one's server
    (seen with 30 students logging in at once), since the hub takes any answer on the port as the
    server being up."""

    def __init__(self, free_port=None):
        if free_port is None:
            from jupyterhub.utils import random_port as free_port
        self.free_port, self.given = free_port, {}

    def give(self, user: str) -> int:
        taken = {port for name, port in self.given.items() if name != user}
        port = self.free_port()
        while port in taken:
            port = self.free_port()
        self.given[user] = port
        return port

    def take_back(self, user: str) -> None:
        self.given.pop(user, None)


def private_runtime(spec: ClassSpec, account: str) -> Path:
    """The account's runtime folder (``ClassSpec.runtime``), made if missing: its own, mode 700."""
    info = pwd.getpwnam(account)
    (spec.root / "run").mkdir(mode=0o711, exist_ok=True)
    (spec.root / "run").chmod(0o711)  # nobody lists whose folders there are
    folder = spec.runtime(account)
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chown(folder, info.pw_uid, info.pw_gid)
    folder.chmod(0o700)
    return folder


def _check_socket_paths(spec: ClassSpec) -> None:
    longest = len(str(spec.root / "run" / "4294967295")) + len(LONGEST_SOCKET)
    if longest > SOCKET_PATH_MAX:
        raise SetupError(f"the state folder's path ({spec.root}) is too long: the kernels' sockets in "
                         f"{spec.root / 'run'} would need {longest} characters, and a socket's path holds "
                         f"{SOCKET_PATH_MAX}. Give --state a shorter path")


#: beside the exercises, what of a checkout holds the answers too: the tests, which embed them
COURSE_MATERIAL_BESIDE = ("tests",)


def readable_by_others(folder: Path) -> Path | None:
    """A file under ``folder`` that an account other than its owner and group could read (every folder
    on its way searchable by others, the file readable by others), or None. The students' accounts are
    such accounts: each is in its own group alone."""
    if not folder.is_dir() or not all(parent.stat().st_mode & 0o001 for parent in [folder, *folder.parents]):
        return None
    for top, folders, files in os.walk(folder):
        folders[:] = [f for f in folders if os.lstat(os.path.join(top, f)).st_mode & 0o001]
        for name in files:
            info = os.lstat(os.path.join(top, name))
            if stat.S_ISREG(info.st_mode) and info.st_mode & 0o004:
                return Path(top) / name
    return None


def _check_course_closed(exercises: Path) -> None:
    """The course's material (the exercises: solutions and hidden tests; the tests of a checkout beside
    them, which embed them) must be closed to the class's accounts before any of them exists."""
    for folder in (exercises, *(exercises.parent / beside for beside in COURSE_MATERIAL_BESIDE)):
        found = readable_by_others(folder)
        if found is not None:
            raise SetupError(f"{found} (of the course's solutions and hidden tests) can be read by every account of "
                             f"this machine, the class's students too. Close the folder that holds it to them, then "
                             f"run this again:\n  chmod o-rwx {exercises.parent}")


def _check_reachable(spec: ClassSpec) -> None:
    """Every account must be able to reach the Python environment and the state folder (no mode-700 parent)."""
    for path in (Path(spec.python), spec.root):
        for parent in [path, *path.parents]:
            if parent.exists() and parent.is_dir() and not parent.stat().st_mode & 0o001:
                raise SetupError(f"{parent} is not searchable by other accounts (mode {parent.stat().st_mode & 0o777:o}); "
                                 f"the students' servers could not reach {path}. Put the kit and --state elsewhere.")


# ---- the hub ----------------------------------------------------------------------------------------

#: How long the hub waits for a managed service's first answer when it starts it. A grader service is
#: a JupyterLab: a few seconds on a quiet machine, well past 10 s on a busy one.
SERVICE_START_TIMEOUT = 180.0


def wait_for_services_at_start(timeout: float = SERVICE_START_TIMEOUT) -> None:
    """Run in the hub (jupyterhub_config.py): a managed service's start returns once the service answers
    on its URL, has exited, or ``timeout`` has passed.

    JupyterHub gives a managed service 10 s to answer and otherwise exits: in JupyterHub 5.5.4's
    jupyterhub/app.py, ``JupyterHub.start_service`` awaits ``service.start()``, then tries
    ``wait_up(http=True, timeout=1)`` ``tries = 10 if service.managed else 1`` times (lines 3655-3659),
    and ``start`` calls ``self.exit(1)`` when a managed service is not ready (lines 3776-3778). No setting changes it (a configurable
    timeout is jupyterhub/jupyterhub#5138, open). Waiting inside ``Service.start`` leaves JupyterHub's
    own check as it is: it finds the service up at its first try."""
    from jupyterhub.objects import Server
    from jupyterhub.services.service import Service
    from jupyterhub.utils import AnyTimeoutError, make_ssl_context

    if getattr(Service.start, "waits_for_the_first_answer", False):
        return
    start = Service.start

    async def start_and_wait(self):
        await start(self)
        if not self.url:
            return
        app = self.app  # the same TLS as JupyterHub's own check (internal_ssl, if the site turns it on)
        context = make_ssl_context(app.internal_ssl_key, app.internal_ssl_cert, cafile=app.internal_ssl_ca,
                                   purpose=ssl.Purpose.CLIENT_AUTH)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and await self.spawner.poll() is None:
            try:
                await Server.from_orm(self.orm.server).wait_up(http=True, timeout=2, ssl_context=context)
                return
            except AnyTimeoutError:
                continue

    start_and_wait.waits_for_the_first_answer = True
    Service.start = start_and_wait


class Hub:
    """``jupyterhub -f deploy/hub/jupyterhub_config.py`` for a set-up class, in its own process group."""

    def __init__(self, spec: ClassSpec, log_path: Path | None = None):
        self.spec = spec
        self.log_path = log_path or spec.root / "hub" / "jupyterhub.log"
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
        for account in self.spec.graders():  # (a class set up before the runtime folders has none yet)
            private_runtime(self.spec, account)
        write_kernel_spec(self.spec)  # (nor, set up before it, the kernel without a debugger)
        # the servers' output is in it (their nbgrader's too): root's alone
        self._log = os.fdopen(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "a")
        self.log_path.chmod(0o600)
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

    def _wait_until_up(self, deadline: float) -> bool:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            if self._answers():
                return True
            time.sleep(0.5)
        self.stop()
        raise SetupError(f"JupyterHub did not answer on {self.spec.url} in time:\n{self.log_tail()}")

    def _answers(self) -> bool:
        """The hub's health through the proxy, in HTTP or, where the site serves HTTPS (docs/deploy.md),
        in HTTPS: only whether it answers on this machine, so its certificate is not checked here."""
        for scheme, context in (("http", None), ("https", ssl._create_unverified_context())):
            try:
                with urllib.request.urlopen(f"{scheme}://127.0.0.1:{self.spec.hub_port}/hub/health", timeout=5,
                                            context=context) as response:
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


def teardown(state: Path) -> tuple[list[str], Path | None]:
    """Remove the class's accounts (their processes ended) and its state folder; each course's
    gradebook is kept first in ``<state>.backup-<time>/<course>/`` (root's alone). Returns the
    accounts removed and the backup folder (None if there was no gradebook)."""
    if not (state / CLASS_FILE).exists() and not (state / ACCOUNTS_FILE).exists():
        raise SetupError(f"{state} is not a class's folder (no {CLASS_FILE}); nothing removed")
    backup = backup_gradebooks(state)
    if (state / CLASS_FILE).exists():
        ClassSpec.load(state).profile.unlink(missing_ok=True)
    removed = remove_accounts(state)
    shutil.rmtree(state, ignore_errors=True)
    return removed, backup


def backup_gradebooks(state: Path) -> Path | None:
    """A copy of each course's gradebook (SQLite's own backup: whole even while a grader writes)."""
    if not (state / CLASS_FILE).exists():
        return None
    spec = ClassSpec.load(state)
    found = [(c, c.directory(spec) / "gradebook.db") for c in spec.courses if (c.directory(spec) / "gradebook.db").exists()]
    if not found:
        return None
    backup = state.parent / f"{state.name}.backup-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    backup.mkdir(mode=0o700)
    for course, gradebook in found:
        (backup / course.course_id).mkdir(mode=0o700)
        with sqlite3.connect(gradebook) as source, sqlite3.connect(backup / course.course_id / "gradebook.db") as copy:
            source.backup(copy)
    return backup


#: a file above this is left out of a backup, and named (a student can fill inbound/ with junk)
BACKUP_FILE_LIMIT = 200 * 1024 * 1024


def backup_class(state: Path, to: Path, log=print) -> Path:
    """One archive ``<to>/<state name>-<time>.tar.gz`` of the class: ``class.json``, each course
    directory (its gradebook copied with SQLite's own backup: whole even while a grader writes) and
    the exchange, with owners and modes, paths from ``/``. Restore as root with
    ``tar --extract --preserve-permissions --same-owner --file ARCHIVE --directory /`` (docs/deploy.md)."""
    import tarfile
    import tempfile

    spec = ClassSpec.load(state)
    to.mkdir(mode=0o700, parents=True, exist_ok=True)
    archive = to / f"{state.name}-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}.tar.gz"
    gradebooks = {c.directory(spec) / "gradebook.db" for c in spec.courses}

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if info.isfile() and info.size > BACKUP_FILE_LIMIT:
            log(f"backup: left out /{info.name} ({info.size / 2**20:.0f} MiB, above {BACKUP_FILE_LIMIT // 2**20} MiB)")
            return None
        if not (info.isfile() or info.isdir() or info.issym()):
            return None  # a pipe or a device someone planted: nothing of the class
        return info

    fd = os.open(archive, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar, \
            tempfile.TemporaryDirectory() as scratch:
        tar.add(state / CLASS_FILE, arcname=str(state / CLASS_FILE).lstrip("/"))
        for course in spec.courses:
            directory = course.directory(spec)
            _add_tree(tar, directory, lambda info: None if Path("/" + info.name) in gradebooks else keep(info))
            gradebook = directory / "gradebook.db"
            if gradebook.exists():
                copy = Path(scratch) / f"{course.course_id}.db"
                with sqlite3.connect(gradebook) as source, sqlite3.connect(copy) as target:
                    source.backup(target)
                info = tar.gettarinfo(str(gradebook), arcname=str(gradebook).lstrip("/"))
                info.size = copy.stat().st_size
                with open(copy, "rb") as handle:
                    tar.addfile(info, handle)
        _add_tree(tar, spec.exchange, keep)
    return archive


def _add_tree(tar, folder: Path, keep) -> None:
    """Everything under ``folder`` into ``tar``, with owners and modes, read from descriptors one name at a
    time: the exchange holds the students' folders, and the course directory is the grader's, so a
    folder or file swapped for a link while root reads it is not followed (it is left out, or kept as
    the link it is). ``keep(member)`` returns the member or None."""
    import tarfile
    import tempfile

    top = open_folder(str(folder))
    try:
        tar.addfile(_member(folder, os.fstat(top)))
        for relative, info, parent, why in entries_under(top, limit=None):
            name = os.path.basename(relative)
            member = _member(folder / relative, info)
            if stat.S_ISLNK(info.st_mode):
                member.type, member.linkname = tarfile.SYMTYPE, os.readlink(name, dir_fd=parent)
            if why is not None or keep(member) is None:
                continue
            if not stat.S_ISREG(info.st_mode):
                tar.addfile(member)
                continue
            try:
                descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
            except OSError:
                continue  # gone, or swapped for a link or a pipe meanwhile
            with os.fdopen(descriptor, "rb") as handle, tempfile.SpooledTemporaryFile(16 * 2**20) as copy:
                opened = os.fstat(descriptor)
                if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                    continue
                left = info.st_size  # at most what it held when listed (a student's file may grow meanwhile)
                while left > 0 and (chunk := handle.read(min(left, 2**20))):
                    copy.write(chunk)
                    left -= len(chunk)
                member.size = copy.tell()
                copy.seek(0)
                tar.addfile(member, copy)
    finally:
        os.close(top)


def _member(path: Path, info: os.stat_result):
    """The tar member of ``path`` (owner, group, mode, time) from what ``lstat`` said of it."""
    import grp
    import tarfile

    member = tarfile.TarInfo(str(path).lstrip("/"))
    member.mode, member.uid, member.gid, member.mtime = stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid, info.st_mtime
    member.type = (tarfile.DIRTYPE if stat.S_ISDIR(info.st_mode) else tarfile.REGTYPE if stat.S_ISREG(info.st_mode)
                   else tarfile.SYMTYPE if stat.S_ISLNK(info.st_mode) else tarfile.FIFOTYPE)
    member.size = info.st_size if stat.S_ISREG(info.st_mode) else 0
    try:
        member.uname = pwd.getpwuid(info.st_uid).pw_name
        member.gname = grp.getgrgid(info.st_gid).gr_name
    except KeyError:
        pass
    return member


def logins(spec: ClassSpec) -> str:
    lines = [f"JupyterHub: {spec.url}/hub/login   (localhost only; stop with Ctrl-C)", ""]
    method = (spec.logins or {}).get("method", "pam")

    def login(person: str) -> str:  # a class on the university's logins has no password of the hub
        return f"password {spec.passwords.get(person, '(none)')}" if method == "pam" else f"logs in with {method}"

    for course in spec.courses:
        lines.append(f"course {course.course_id}: assignments {', '.join(course.assignments)} released")
        for person in course.instructors:
            lines.append(f"  instructor  {person:<12} {login(person)}   "
                         f"grader service: {spec.url}/services/{course.course_id}/lab")
        for person in course.students:
            lines.append(f"  student     {person:<12} {login(person)}")
    dates = [f"{a} due {d}" for c in spec.courses for a, d in c.due.items()]
    if dates:
        lines += ["", "due: " + "; ".join(dates) + " (class.json: due, extensions, late_penalty; "
                  "`kithub.py dates` applies a change)"]
    lines += ["", f"the instructor grades in the grader service's terminal, as {', '.join(c.grader for c in spec.courses)}:",
              "  kitgrade collect ps1_autograd_basics && kitgrade autograde ps1_autograd_basics "
              "&& kitgrade feedback ps1_autograd_basics --release     # feedback hides the hidden tests",
              "remove the accounts and files: " + ("make hub-clean" if spec.root == DEFAULT_STATE else
                                                   f"make hub-clean HUB_STATE={spec.root}")]
    lines += ["", "the machine's own walls (docs/deploy.md, \"In production\", step 8):", *machine_walls(spec)]
    return "\n".join(lines)


def _mount_options(path: Path, mounts: str = "/proc/mounts") -> set[str]:
    """The options of the mount that holds ``path`` (the longest mount point above it)."""
    best, options = "", set()
    for line in Path(mounts).read_text().splitlines():
        fields = line.split()
        point = fields[1].replace("\\040", " ")
        if (str(path) == point or str(path).startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, options = point, set(fields[3].split(","))
    return options


def machine_walls(spec: ClassSpec, mounts: str = "/proc/mounts") -> list[str]:
    """What of the production guide's hardening this machine and hub have, and what they leave out: the
    hub cannot set the first two (they are the whole machine's), so the demo says which are missing."""
    hidden = any(option.startswith("hidepid=") and option.split("=")[1] in ("2", "invisible")
                 for option in _mount_options(Path("/proc"), mounts))
    quotas = _mount_options(spec.root, mounts) & {"usrquota", "usrjquota", "quota", "uquota"}
    site = spec.root / "jupyterhub_config.d"
    spawner = site.is_dir() and any("spawner_class" in p.read_text(errors="replace") for p in site.glob("*.py"))
    return [("  processes: each account sees its own (/proc mounted with hidepid)" if hidden else
             "  processes: every account sees every other's and their command lines (/proc without hidepid)"),
            ("  disk: a quota per account on the file system of the class" if quotas else
             f"  disk: no quota per account on the file system of {spec.root}: a student can fill it"),
            ("  memory and CPU: as the site's spawner limits them (jupyterhub_config.d)" if spawner else
             "  memory and CPU: no limit per server (LocalProcessSpawner; the guide's systemdspawner sets them)")]


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kithub.py", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["demo", "setup", "start", "dates", "backup", "teardown"])
    parser.add_argument("--state", default=str(DEFAULT_STATE), help=f"the class's folder (default {DEFAULT_STATE})")
    parser.add_argument("--port", type=int, default=8000, help="the hub's port on 127.0.0.1 (default 8000)")
    parser.add_argument("--to", help="backup: the folder the archive goes into (root's, mode 700)")
    args = parser.parse_args(argv)
    state = Path(args.state).resolve()
    try:
        if os.geteuid() != 0:
            raise SetupError("a class on the hub has a system account per person: run this as root (sudo)")
        if args.command == "teardown":
            removed, backup = teardown(state)
            print(f"removed {state}" + (f" and the accounts {', '.join(removed)}" if removed else ""))
            if backup is not None:
                print(f"warning: the class's submissions, grades and feedback are gone; its gradebook(s) are kept "
                      f"in {backup} (restore: copy <course>/gradebook.db back into the course directory)",
                      file=sys.stderr)
            return 0
        if args.command == "backup":
            if not args.to:
                raise SetupError("backup needs --to FOLDER (where the archive goes)")
            print(f"backup: {backup_class(state, Path(args.to).resolve())}")
            return 0
        if args.command == "dates":
            apply_dates(ClassSpec.load(state))
            print(f"due dates and extensions of {state / CLASS_FILE} applied")
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
