"""Kernel-enforced file-system and network limits for a grading process (Linux Landlock).

Unlike the audit hook, Landlock cannot be switched off from inside the process: once applied,
the process (and anything it starts) may read only the sandbox's allow-list (``bubblewrap.py``:
the interpreter, the system's libraries, the importable distributions, its own ``/proc`` entry),
execute nothing, and write only its scratch folder. It is the second wall behind bubblewrap, and
the only one where bubblewrap cannot run (``kitgrade check`` on a student's machine). The
instructor's course, the exercises and other students' files are simply not there for it. On
Linux ABI 4+ TCP is denied; on ABI 6+ it may not signal processes outside itself.

Unprivileged; on a kernel without Landlock ``restrict_process`` returns False and grading relies
on the audit hook alone (the report of the run says so).
"""

from __future__ import annotations

import ctypes
import os
import sys

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1
_CREATE_RULESET_VERSION = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_DIR_ONLY = sum(1 << i for i in range(3, 13)) | (1 << 13)  # READ_DIR .. MAKE_SYM, REFER
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)  # + TRUNCATE, IOCTL_DEV
READ = READ_FILE | READ_DIR  # never EXECUTE: the process runs no other program


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


try:
    _LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - not Linux
    _LIBC = None


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 if unavailable."""
    if _LIBC is None or not sys.platform.startswith("linux"):
        return 0
    version = _LIBC.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, version)


def _all_fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= 1 << 13  # REFER
    if abi >= 3:
        rights |= 1 << 14  # TRUNCATE
    if abi >= 5:
        rights |= 1 << 15  # IOCTL_DEV
    return rights


def readable_roots(protected: list[str]) -> list[str]:
    """Folders and files a grading process may read: the sandbox's allow-list (``bubblewrap.py``,
    derived from the installed distributions, never from ``sys.path`` or the current folder), with
    the links on the way resolved, and ``/dev``."""
    from .allow_list import readable_paths

    roots = set()
    for path in [*readable_paths(), "/dev"]:
        if os.path.exists(path):
            roots.update(_without_protected(os.path.realpath(path), protected))
    kept: list[str] = []
    for path in sorted(roots):  # a folder inside a kept one needs no rule of its own
        if not kept or not (path == kept[-1] or path.startswith(kept[-1].rstrip(os.sep) + os.sep)):
            kept.append(path)
    return kept


def _without_protected(path: str, protected: list[str]) -> list[str]:
    """``path`` itself, or (if it contains a protected folder) its children that are not protected."""
    if any(path == p or path.startswith(p + os.sep) for p in protected):
        return []
    if not any(p.startswith(path.rstrip(os.sep) + os.sep) for p in protected):
        return [path]
    try:
        children = [os.path.join(path, name) for name in os.listdir(path)]
    except OSError:
        return []
    result = []
    for child in children:
        result.extend(_without_protected(os.path.realpath(child), protected))
    return result


def restrict_process(readable: list[str], writable: list[str]) -> bool:
    """Apply Landlock to this process: read ``readable``, read and write ``writable``, nothing else."""
    abi = abi_version()
    if abi < 1:
        return False
    fs_rights = _all_fs_rights(abi)
    attr = _RulesetAttr(handled_access_fs=fs_rights,
                        handled_access_net=(1 | 2) if abi >= 4 else 0,
                        scoped=(1 | 2) if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _LIBC.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        # of /proc only this process's own entry and the machine's description (not other processes)
        own_proc = [os.path.realpath("/proc/self"), "/proc/cpuinfo", "/proc/meminfo", "/proc/stat"]
        rules = [(path, READ) for path in [*readable, *own_proc]] + [(path, fs_rights & ~EXECUTE) for path in writable]
        rules.append((os.devnull, READ_FILE | WRITE_FILE))
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= _FILE_RIGHTS
                beneath = _PathBeneathAttr(allowed_access=rights & fs_rights, parent_fd=fd)
                if _LIBC.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                                 ctypes.byref(beneath), ctypes.c_uint32(0)) != 0:
                    number = ctypes.get_errno()
                    raise OSError(number, f"Landlock refused the rule for {path} ({os.strerror(number)})")
            finally:
                os.close(fd)
        if _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return _LIBC.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset)
