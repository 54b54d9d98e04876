"""The class set up (``python -m kithub setup``, what ``make hub`` runs first): the machine checked, then
the accounts, the exchange, the configuration, and each course (``kitgrade init`` and ``release`` as its
grader account). Run again, it leaves what is there and adds what is missing."""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from .accounts import as_account, create_accounts
from .config_files import COURSE_HUB_SETTINGS, write_commands, write_hub_api_address, write_jupyter_config
from .courses import give_exercises, harden_exchange, prepare_exchange
from .dates import apply_dates
from .errors import SetupError, made_folder, run
from .runtime import private_runtime
from .spec import CLASS_FILE, ClassSpec


def setup(spec: ClassSpec, log=print, demo: bool | None = None) -> ClassSpec:
    """Accounts, the exchange, each course (``kitgrade init`` and ``release`` as its grader account).
    The class file is written only where there is none (the administrator's is never changed); what
    set-up derives goes to ``derived.json`` (``demo``: whether ``make hub`` made the class)."""
    if os.geteuid() != 0:
        raise SetupError("setting up a class creates system accounts: run it as root (sudo)")
    if not spec.proxy.exists():
        raise SetupError(f"configurable-http-proxy is not installed ({spec.proxy} missing): run `make hub-env`")
    _check_environment(spec)
    close_installed_exercises(spec)
    _check_socket_paths(spec)
    _check_course_closed(Path(spec.exercises))
    if spec.root.is_dir() and any(spec.root.iterdir()) and not (spec.root / CLASS_FILE).exists():
        raise SetupError(f"{spec.root} is not empty and holds no class; give --state a new folder")
    made_folder(spec.root, 0o755)  # the servers run as the students: they need to reach their homes and the exchange
    _check_reachable(spec)
    if not (spec.root / CLASS_FILE).exists():
        spec.save()
    spec.save_derived(demo)
    create_accounts(spec)
    # nbgrader's exchange root: writable by all (its release insists on rwx for all), and sticky, or a
    # student could rename a course's folder away and put one of their own in its place (its inbound/
    # theirs: every classmate's submission theirs to read)
    made_folder(spec.exchange, 0o1777)
    for account in spec.graders():
        private_runtime(spec, account)
    write_jupyter_config(spec)
    write_commands(spec)
    write_hub_api_address(spec)
    releases = []
    for course in spec.courses:
        directory = course.directory(spec)
        grader = as_account(course.grader, spec)
        prepare_exchange(spec, course)
        if not (directory / "nbgrader_config.py").exists():
            log(f"{course.course_id}: kitgrade init in {directory}")
            run([str(spec.bin / "kitgrade"), "init", str(directory), "--course-id", course.course_id,
                  "--exchange", str(spec.exchange), "--exercises", str(give_exercises(spec, course))], **grader)
            # added by the grader's own account (it owns the file: root writes nothing in its home)
            settings = COURSE_HUB_SETTINGS.format(penalty=course.late_penalty, kept=course.kept_mib_per_student)
            run(["tee", "-a", str(directory / "nbgrader_config.py")], input=settings, **grader)
        log(f"{course.course_id}: kitgrade release {' '.join(course.assignments)} (each proven before it goes out)")
        command = [str(spec.bin / "kitgrade"), "release", *course.assignments]
        releases.append((command, subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                                   **{**grader, "cwd": str(directory)})))
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


def close_installed_exercises(spec: ClassSpec) -> list[Path]:
    """The kit installed in the hub's environment carries the course's exercises as their instructor writes
    them (``course_files/exercises/``: solutions, hidden tests): closed to every account but root's, as
    each set-up finds them (a reinstall opens them again). The graders read their course's exercises from
    their own home (``give_exercises``); a student's ``kitgrade check`` then runs the notebook's own tests."""
    closed = []
    for folder in Path(spec.python).parent.parent.glob("lib/python*/site-packages/course_files/exercises"):
        if folder.is_dir() and not folder.is_symlink():
            os.chmod(folder, 0o700)
            closed.append(folder)
    return closed


#: a socket's path holds at most 107 bytes (``sun_path``); a kernel's longest is its connection file's
#: name and ``-ipc-N`` in the runtime folder
SOCKET_PATH_MAX = 107
LONGEST_SOCKET = "/kernel-00000000-0000-0000-0000-000000000000-ipc-99"


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
