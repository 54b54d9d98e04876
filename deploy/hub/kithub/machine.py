"""What a machine lacks for a class, each with the command that puts it right (``python -m kithub
check``, docs/deploy.md step 0): read only, nothing changed. The packages of the guide's step 0,
systemd as PID 1 (its units), user namespaces for the accounts that grade (bubblewrap), and the
guide's walls: ``/proc`` with hidepid (step 8), quotas on the class's file system (step 8), and the
certificate a site's HTTPS names (step 4)."""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

#: A command the guide runs -> the Debian 12 package that has it (``apt-get install -y PACKAGE``).
PACKAGES = {"git": "git", "make": "make", "node": "nodejs", "npm": "npm", "certbot": "certbot",
            "openssl": "openssl", "setquota": "quota", "quotaon": "quota", "runuser": "util-linux"}


@dataclass(frozen=True)
class Lack:
    what: str   # what the machine lacks, and what of the class needs it
    fix: str    # the command (or step of the guide) that puts it right


def mount_options(path: Path, mounts: str = "/proc/mounts") -> set[str]:
    """The options of the mount that holds ``path`` (the longest mount point above it)."""
    best, options = "", set()
    for line in Path(mounts).read_text().splitlines():
        fields = line.split()
        point = fields[1].replace("\\040", " ")
        if (str(path) == point or str(path).startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
            best, options = point, set(fields[3].split(","))
    return options


def processes_hidden(mounts: str = "/proc/mounts") -> bool:
    """Whether /proc shows each account only its own processes (``hidepid=2``/``invisible``)."""
    return any(option.startswith("hidepid=") and option.split("=")[1] in ("2", "invisible")
               for option in mount_options(Path("/proc"), mounts))


def quotas_on(folder: Path, mounts: str = "/proc/mounts") -> bool:
    return bool(mount_options(folder, mounts) & {"usrquota", "usrjquota", "quota", "uquota"})


def what_is_lacking(state: Path, *, proc: Path = Path("/proc"), mounts: str = "/proc/mounts",
                    search_path: str | None = None) -> list[Lack]:
    """Everything of the guide that this machine lacks for a class in ``state`` (none: an empty list)."""
    lacks = []
    missing = sorted({PACKAGES[command] for command in PACKAGES if shutil.which(command, path=search_path) is None})
    if missing:
        lacks.append(Lack(f"packages of the guide's step 0: {', '.join(missing)}",
                          f"apt-get install -y {' '.join(missing)}"))
    try:
        import ensurepip  # noqa: F401 (python3-venv brings it on Debian)
        import venv  # noqa: F401
    except ImportError:
        lacks.append(Lack("Python's venv (the hub's environment, step 1)", "apt-get install -y python3-venv"))
    init = _read(proc / "1" / "comm")
    if init != "systemd":
        lacks.append(Lack(f"systemd as PID 1 (PID 1 is {init or 'unknown'}): the guide's units (steps 6-9) need it",
                          "boot the machine with systemd, or run `python -m kithub start --state DIR` under the "
                          "supervisor the machine has"))
    lacks += _namespaces(proc)
    if not processes_hidden(mounts):
        lacks.append(Lack("/proc shows every account every other's processes and command lines (step 8)",
                          "mount -o remount,hidepid=invisible /proc, and the same option on /proc's line in /etc/fstab"))
    if not quotas_on(state, mounts):
        lacks.append(Lack(f"quotas on the file system of {state} (step 8: a student cannot fill the disk)",
                          "usrquota on its line in /etc/fstab, then mount -o remount, quotacheck -cum and quotaon "
                          "on its mount point"))
    lacks += _certificates(state)
    return lacks


def _namespaces(proc: Path) -> list[Lack]:
    """Unprivileged user namespaces: bubblewrap needs them for the accounts that grade."""
    lacks = []
    if _read(proc / "sys" / "user" / "max_user_namespaces") in ("0", ""):
        lacks.append(Lack("user namespaces (user.max_user_namespaces is 0): the grader's sandbox (bubblewrap) needs them",
                          "sysctl -w user.max_user_namespaces=15000, and the same in /etc/sysctl.d/"))
    if _read(proc / "sys" / "kernel" / "unprivileged_userns_clone") == "0":
        lacks.append(Lack("unprivileged user namespaces (kernel.unprivileged_userns_clone is 0): bubblewrap needs them",
                          "sysctl -w kernel.unprivileged_userns_clone=1, and the same in /etc/sysctl.d/"))
    if _read(proc / "sys" / "kernel" / "apparmor_restrict_unprivileged_userns") == "1":
        lacks.append(Lack("AppArmor restricts unprivileged user namespaces (Ubuntu 24.04): bubblewrap needs a profile",
                          "the profile of the guide's 'Grading on the hub under bubblewrap', then apparmor_parser -r it"))
    return lacks


def _certificates(state: Path) -> list[Lack]:
    """The certificate and key the site's configuration names (step 4), where they are missing."""
    lacks = []
    for config in sorted((state / "jupyterhub_config.d").glob("*.py")):
        for key, value in re.findall(r"^c\.JupyterHub\.(ssl_cert|ssl_key)\s*=\s*['\"]([^'\"]+)['\"]",
                                     config.read_text(errors="replace"), re.M):
            if not os.path.isfile(value):
                lacks.append(Lack(f"the certificate file {value} that {config.name} names ({key}) is missing",
                                  "certbot certonly --standalone -d <the hub's name> (step 4)"))
    return lacks


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""
