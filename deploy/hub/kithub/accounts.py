"""A system account per person and per grader, and what runs as them."""
from __future__ import annotations

import os
import pwd
import signal
import subprocess
import time
from pathlib import Path

from .errors import UMASK, SetupError, made_folder, run
from .spec import ClassSpec

ACCOUNTS_FILE = "accounts.txt"  # the accounts this class created, removed by teardown


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
    made_folder(spec.root / "home", 0o755)  # every account reaches its own home through it
    for account in spec.accounts():
        if account in ours:
            continue
        run(["useradd", "--create-home", "--home-dir", str(spec.home(account)), "--shell", "/bin/bash",
              "--user-group", account])
        ours.add(account)
        record.write_text("\n".join(sorted(ours)) + "\n")
        spec.home(account).chmod(0o700)
        if account in spec.passwords:
            run(["chpasswd"], input=f"{account}:{spec.passwords[account]}\n")


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
    return {"user": info.pw_uid, "group": info.pw_gid, "extra_groups": [], "env": env, "cwd": info.pw_dir,
            "umask": UMASK}
