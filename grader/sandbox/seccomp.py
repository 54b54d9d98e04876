"""The kernel refuses the student's process every new process, every program and memory no limit
counts (seccomp).

A filter on system calls, installed by the student's process on itself just before student code
runs (it cannot be removed, and is inherited): ``fork``, ``vfork``, ``clone`` without
``CLONE_THREAD``, ``execve`` and ``execveat`` fail with ``EPERM`` (threads still start: NumPy's
BLAS uses them; ``clone3`` answers ``ENOSYS``, so the C library starts threads with ``clone``),
and so do the calls of ``UNCOUNTED_MEMORY`` (memfds, SysV shared memory and message queues).
Calls made through another architecture's entry (32-bit ``int 0x80``, x32) all fail. This is
what stops a fork bomb and ``/bin/sh`` even where the audit hook is bypassed
(``_posixsubprocess.fork_exec`` has no audit event) and where ``RLIMIT_NPROC`` does not count
(root's processes).

x86-64 and arm64; elsewhere ``install`` returns False and the other walls stand alone.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_CLONE_THREAD = 0x00010000
#: machine -> (audit architecture, {call: number}); ``fork`` and ``vfork`` exist on x86-64 only
_SYSCALLS = {
    "x86_64": (0xC000003E, {"clone": 56, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone3": 435,
                            "shmget": 29, "msgget": 68, "memfd_create": 319, "memfd_secret": 447}),
    "aarch64": (0xC00000B7, {"clone": 220, "execve": 221, "execveat": 281, "clone3": 435,
                             "shmget": 194, "msgget": 186, "memfd_create": 279, "memfd_secret": 447}),
}
#: Memory that no limit counts: a memfd is written without being mapped (outside ``RLIMIT_AS``, the
#: file-size limit per file only) and SysV shared memory and message queues outlive ``shmdt`` and the
#: process; 20 memfds held 1.2 GB under a 1 GiB cap. Files go to the quota'd ``/tmp`` instead.
UNCOUNTED_MEMORY = ("shmget", "msgget", "memfd_create", "memfd_secret")


def _filter(arch: int, calls: dict[str, int], x86: bool) -> list[tuple[int, int, int, int]]:
    deny, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    refused = [calls[name] for name in ("fork", "vfork", "execve", "execveat", *UNCOUNTED_MEMORY) if name in calls]
    program = [(_LD_ABS_W, 0, 0, 4), (_JEQ, 1, 0, arch), (_RET, 0, 0, deny), (_LD_ABS_W, 0, 0, 0)]
    if x86:  # x32 calls share the architecture, with this bit set
        program += [(_JGE, 0, 1, 0x40000000), (_RET, 0, 0, deny)]
    program += [(_JEQ, 0, 1, calls["clone3"]), (_RET, 0, 0, enosys)]
    for number in refused:
        program += [(_JEQ, 0, 1, number), (_RET, 0, 0, deny)]
    program += [(_JEQ, 1, 0, calls["clone"]), (_RET, 0, 0, _RET_ALLOW),
                # clone: a thread (CLONE_THREAD in its flags, the low word of the first argument) or nothing
                (_LD_ABS_W, 0, 0, 16), (_JSET, 0, 1, _CLONE_THREAD), (_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, deny)]
    return program


def supported() -> bool:
    """Whether the filter exists for this machine's architecture."""
    return platform.machine() in _SYSCALLS


def install() -> bool:
    """Refuse this process (and its threads) new processes and programs; True if the filter is on."""
    machine = platform.machine()
    if machine not in _SYSCALLS:
        return False
    arch, calls = _SYSCALLS[machine]
    program = _filter(arch, calls, machine == "x86_64")
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code, len(code))

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    fprog = _Program(len(program), ctypes.cast(buffer, ctypes.c_void_p))
    return libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
