"""No session of the instructor's in the sandbox: the zygote leaves the session keyring it inherited.

A login through ``pam_keyinit`` gives the instructor's shell a session keyring, and every process
started from it inherits that keyring: ``kitgrade``, its workers, bubblewrap and the zygote (a
user namespace does not change it). As it starts, before it loads anything, the zygote joins a
new, empty, anonymous session keyring of its own (``KEYCTL_JOIN_SESSION_KEYRING``); the student's
processes it forks hold that one. seccomp then refuses them ``add_key``, ``keyctl`` and
``request_key`` (``seccomp.py``), so a notebook can neither read a key nor leave one for the next
submission in the user keyring (which every submission of a sandbox would share: the kernel keeps
one per user and user namespace).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

from .seccomp import numbers, supported

_KEYCTL_JOIN_SESSION_KEYRING = 1


def leave_the_session_keyring() -> bool:
    """Join a new anonymous session keyring; True if done, False where the kit cannot ask (another
    architecture) or the kernel has no keyrings (nothing to leave). Any other failure raises: the
    zygote does not start holding the instructor's keys."""
    if not supported():  # (the machines whose call numbers seccomp.py knows)
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(numbers(platform.machine())["keyctl"], _KEYCTL_JOIN_SESSION_KEYRING, None) >= 0:
        return True
    number = ctypes.get_errno()
    if number == errno.ENOSYS:
        return False
    raise OSError(number, f"cannot leave the instructor's session keyring (keyctl: {os.strerror(number)})")
