"""What every submission of a zygote shares of its sandbox, and the check that none of it changed.

A student's process reaches two kinds of file system: its own (``/tmp``, ``/dev`` with
``/dev/shm``, ``/proc``: made per submission, ``mounts.py``) and the zygote's, which every
submission shares: bwrap's root, the folders it made for the allow-list's binds, the standard
library's hidden ``site-packages``, and the binds themselves. The shared part is read-only
(``bubblewrap.command``), so a chmod, a utime, an extended attribute or a new file there fails.

As a second wall, the zygote takes a fingerprint of the shared part as it starts: every entry of
its own tmpfs mounts (not the binds, whose files are the machine's, read-only), with its type and
mode, owner, group, change time and modification time (a chmod, chown, utime or extended attribute
moves the change time; a file made or removed moves its folder's modification time), and compares
it after each submission's process has ended (``zygote.py``; nothing else runs in the sandbox
between two submissions). A sandbox found changed forks nothing more: the zygote says what changed
and ends, and its worker grades its next notebook in a fresh one (``workers.py``). The walk takes
about a millisecond (35 entries of a venv's sandbox, measured on a loaded machine).
"""

from __future__ import annotations

import os
import re
import stat

#: Entries named at most, when the check finds changes.
NAMED = 5


def _mounts(scratch: str) -> tuple[set[int], set[str]]:
    """The devices of the sandbox's own tmpfs mounts, but the zygote's scratch space (``scratch``, its
    ``HOME``, where its libraries keep caches; each student's process covers it with its own), and
    the mount points of everything else (the binds: not entered, not even looked at)."""
    devices, others = set(), set()
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            fields, _, rest = line.partition(" - ")
            fstype, point = rest.split()[0], _unescaped(fields.split()[4])
            if fstype == "tmpfs" and point != scratch:
                try:
                    devices.add(os.lstat(point).st_dev)
                except OSError:
                    pass
            else:
                others.add(point)
    return devices, others - {"/"}


def _unescaped(point: str) -> str:
    """A mount point as ``mountinfo`` writes it (a space is ``\\040``), as a path."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), point)


def fingerprint(devices: set[int], others: set[str]) -> dict[str, tuple]:
    """``{path: (mode, owner, group, change time, modification time)}`` of every entry on the
    ``devices`` (the sandbox's own tmpfs mounts), walked from ``/`` (the mount points ``others`` are
    not entered)."""
    found, folders = {}, ["/"]
    root = os.lstat("/")
    found["/"] = (root.st_mode, root.st_uid, root.st_gid, root.st_ctime_ns, root.st_mtime_ns)
    while folders:
        folder = folders.pop()
        try:
            names = os.listdir(folder)
        except OSError as error:
            found[folder] = ("unreadable", error.errno)
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path in others:
                continue
            try:
                info = os.lstat(path)
            except OSError as error:
                found[path] = ("gone", error.errno)
                continue
            if info.st_dev not in devices:
                continue
            found[path] = (info.st_mode, info.st_uid, info.st_gid, info.st_ctime_ns, info.st_mtime_ns)
            if stat.S_ISDIR(info.st_mode):
                folders.append(path)
    return found


class SharedState:
    """The fingerprint taken as the zygote became ready, and the comparison with it."""

    def __init__(self, scratch: str):
        self.mounts = _mounts(scratch)  # (the zygote's mounts never change)
        self.baseline = fingerprint(*self.mounts)

    def changes(self) -> str:
        """What changed since the fingerprint was taken, in a few words; empty if nothing did."""
        now = fingerprint(*self.mounts)
        changed = sorted(path for path in self.baseline.keys() | now.keys() if self.baseline.get(path) != now.get(path))
        if not changed:
            return ""
        more = f" and {len(changed) - NAMED} more" if len(changed) > NAMED else ""
        return ", ".join(_describe(path, self.baseline.get(path), now.get(path)) for path in changed[:NAMED]) + more


def _describe(path: str, before, after) -> str:
    if before is None:
        return f"{path} made"
    if after is None or isinstance(after[0], str):
        return f"{path} removed or unreadable"
    if before[0] != after[0]:
        return f"{path} mode {stat.filemode(before[0])} -> {stat.filemode(after[0])}"
    if before[1:3] != after[1:3]:
        return f"{path} owner changed"
    return f"{path} times or extended attributes changed"
