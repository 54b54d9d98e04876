"""The class specification: ``class.json`` in the class's state folder, its courses, and where everything
of the class is (homes, the exchange, the runtime folders, the Python environment).

A class is described by ``class.json`` in its state folder (``ClassSpec``). Every person is a real
system account (JupyterHub's ``LocalProcessSpawner`` starts each user's server as that account);
every course has its own grader account, which owns the course directory (``source/``,
``gradebook.db``, hidden tests) in its home and runs the course's grader service. The exchange is
nbgrader's, shared by all courses (``path_includes_course``); who belongs to which course is
JupyterHub's groups ``nbgrader-<course>`` (students) and ``formgrade-<course>`` (graders), read by
nbgrader's ``JupyterHubAuthPlugin``.
"""
from __future__ import annotations

import datetime
import difflib
import hashlib
import json
import os
import pwd
import secrets
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import SetupError

CLASS_FILE = "class.json"
#: what set-up worked out that the class file leaves unsaid (the environment, the kit's lessons and
#: exercises), and whether the class is the demo: its own file, since class.json is the administrator's
#: and set-up never writes it once it exists
DERIVED_FILE = "derived.json"
DERIVED = ("python", "lessons", "exercises")
DEFAULT_STATE = Path("/srv/autograd-kit-hub")
DEFAULT_ASSIGNMENTS = ["ps1_autograd_basics", "ps2_build_your_own", "ps3_extending_autograd"]
#: where a login shell reads the system's additions to PATH (a hub terminal is a login shell, and
#: the system's /etc/profile sets PATH anew, dropping the one the spawner gave)
PROFILE_D = Path("/etc/profile.d")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S UTC"


def kit_folder(name: str) -> Path:
    """The kit's ``notebooks`` or ``exercises``: in the checkout that holds this package
    (``deploy/hub/kithub/``), else in the checkout the command runs in (``make hub`` runs the hub's
    installed copy from the checkout), else the course installed with the kit in the hub's environment
    (``course_files``: its lessons, and its exercises, closed to every account but root's at set-up),
    so that ``python -m kithub setup`` runs from any folder; a class file names its own otherwise."""
    for root in (Path(__file__).resolve().parents[3], Path.cwd()):
        if (root / name).is_dir() and (root / "grader").is_dir():
            return root / name
    import course_files

    return course_files.root() / INSTALLED.get(name, name)


#: the checkout's folders of the course -> their names in the installed ``course_files``
INSTALLED = {"notebooks": "lessons", "exercises": "exercises"}


@dataclass
class CourseSpec:
    course_id: str
    grader: str                      # system account of the grader service; owns the course directory
    port: int                        # the grader service's port on 127.0.0.1
    instructors: list[str] = field(default_factory=list)
    # teaching assistants: they grade in the course's grader service as the instructors do, each under
    # their own hub name (the grading record, kithub/grading_record.py), and are not the course's instructor
    assistants: list[str] = field(default_factory=list)
    students: list[str] = field(default_factory=list)
    assignments: list[str] = field(default_factory=lambda: list(DEFAULT_ASSIGNMENTS))
    due: dict[str, str] = field(default_factory=dict)       # assignment -> "YYYY-MM-DD HH:MM:SS UTC"
    extensions: dict[str, dict[str, float]] = field(default_factory=dict)  # assignment -> student -> hours
    late_penalty: str = "none"       # nbgrader's LateSubmissionPlugin.penalty_method: "none" or "zero"
    kept_mib_per_student: int = 1024  # what the grader keeps of one student's submissions (the clerk's copies)

    def directory(self, spec: "ClassSpec") -> Path:
        return spec.home(self.grader) / self.course_id

    def formgraders(self) -> list[str]:
        """Who grades: the hub users of the course's grader group ``formgrade-<course>`` (nbgrader's name),
        who open its grader service: the instructors and the teaching assistants."""
        return [*self.instructors, *(a for a in self.assistants if a not in self.instructors)]


@dataclass
class ClassSpec:
    state: str                       # everything of this class lives here (homes, exchange, hub database)
    courses: list[CourseSpec]
    passwords: dict[str, str]        # login name -> password (the demo's PAM logins)
    hub_port: int = 8000             # the proxy: what people open
    hub_api_port: int = 8081
    proxy_api_port: int = 8001
    python: str = os.path.normpath(os.path.abspath(sys.executable))  # the environment the hub, the servers and kitgrade run in
    lessons: str = field(default_factory=lambda: str(kit_folder("notebooks")))   # the originals, copied into the state folder at set-up
    exercises: str = field(default_factory=lambda: str(kit_folder("exercises")))  # copied into each grader's home at set-up
    logins: dict = field(default_factory=dict)   # university logins (LTI 1.3 or OIDC): kithub/logins/; none: PAM

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
    def proxy(self) -> Path:
        """configurable-http-proxy, in the class's environment (``make hub-env`` puts it there)."""
        return self.bin / "configurable-http-proxy"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.hub_port}"

    # ---- who -----------------------------------------------------------
    def people(self) -> list[str]:
        """Everyone who logs in (instructors, teaching assistants and students of every course)."""
        return sorted({p for c in self.courses for p in [*c.formgraders(), *c.students]})

    def accounts(self) -> list[str]:
        return sorted({*self.people(), *(c.grader for c in self.courses)})

    def graders(self) -> list[str]:
        return [c.grader for c in self.courses]

    def course(self, course_id: str) -> CourseSpec:
        return next(c for c in self.courses if c.course_id == course_id)

    # ---- file ----------------------------------------------------------
    def save(self) -> Path:
        """``class.json`` written whole (the demo's, or a class made in Python): set-up writes it only
        where there is none."""
        path = self.root / CLASS_FILE
        path.write_text(json.dumps(asdict(self), indent=2))
        path.chmod(0o600)  # passwords
        return path

    def save_derived(self, demo: bool | None = None) -> Path:
        """What set-up used that the class file may leave out (``DERIVED``), in ``derived.json``, root's;
        ``demo``: whether ``make hub`` made this class (kept from an earlier set-up when None)."""
        path = self.root / DERIVED_FILE
        before = json.loads(path.read_text()) if path.exists() else {}
        derived = {name: getattr(self, name) for name in DERIVED}
        derived["demo"] = before.get("demo", False) if demo is None else demo
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(derived, indent=2) + "\n")
        partial.chmod(0o600)
        partial.replace(path)
        return path

    def is_demo(self) -> bool:
        path = self.root / DERIVED_FILE
        return path.exists() and json.loads(path.read_text()).get("demo") is True

    @classmethod
    def load(cls, state: Path | str) -> "ClassSpec":
        """The class of ``state``; a mistake in its file is a SetupError naming the file, the place and
        the field (with the name it was probably meant to be), never a traceback."""
        path = Path(state) / CLASS_FILE
        if not path.exists():
            raise SetupError(f"{state} holds no class ({CLASS_FILE} missing); run `python -m kithub setup --state {state}` first")
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
        derived = Path(state) / DERIVED_FILE
        if derived.exists():  # what the class file leaves unsaid, as set-up found it
            try:
                found = json.loads(derived.read_text())
            except json.JSONDecodeError:
                raise SetupError(f"{derived} is damaged: run set-up again (it writes it anew)") from None
            data.update({name: found[name] for name in DERIVED if name not in data and isinstance(found.get(name), str)})
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
