"""The student's process's own ``/proc``, ``/dev`` and ``/tmp``, and the capabilities it gives up.

Inside bubblewrap (``private_tmp_and_proc``, ``private_dev``, ``drop_capabilities``): PID 1 of its
own PID namespace, it mounts a ``/proc`` that shows only its namespace, a tmpfs at ``/tmp`` with a
size and file-count quota (when the kit is installed under ``/tmp``, with the kit's read-only
folders bound inside it) and a ``/dev`` of its own with a writable ``/dev/shm``, then drops every
capability before student code runs. Nothing of these is shared with the next submission.

Without bubblewrap (``map_tmp``; ``kitgrade check``, ``--unsafe-no-sandbox``): students write
scratch files where they would on their own machine (``fig.savefig('/tmp/a.png')``); in a mount
namespace of its own, the process sees its scratch folder at ``/tmp``, and nobody else sees its
files. When Python or the kit is installed under ``/tmp`` (a clone tried out there), the entries
of ``/tmp`` that hold what it imports are bound into the scratch folder read-only first, so they
are still found there. Needs root or unprivileged user namespaces; without them ``/tmp`` stays
outside the writable folders and a write there is refused with a clear message.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_BIND, _MS_REC, _MS_PRIVATE = 4096, 16384, 1 << 18

try:
    _LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - not Linux
    _LIBC = None


def _mount(source, target, flags) -> bool:
    return _LIBC.mount(source, target, None, ctypes.c_ulong(flags), None) == 0


def installed_under_tmp() -> str | None:
    """Where Python or the kit's packages live under ``/tmp``, if they do."""
    ipython = sys.modules.get("IPython")
    places = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.abspath(__file__)),
              os.path.dirname(getattr(ipython, "__file__", None) or "/")]
    for place in places:
        real = os.path.realpath(place)
        if real == "/tmp" or real.startswith("/tmp/"):
            return real
    return None


def map_tmp(scratch: str, read_only_from_tmp=()) -> bool:
    """Make ``/tmp`` show ``scratch`` for this process only; True if it worked. ``read_only_from_tmp``:
    the entries of the real ``/tmp`` that hold something of the allow-list (a kit or Python under
    ``/tmp``), bound into it read-only first."""
    if _LIBC is None or not os.path.isdir("/tmp"):
        return False
    uid, gid = os.getuid(), os.getgid()
    if _LIBC.unshare(_CLONE_NEWNS) != 0:
        if _LIBC.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
            return False
        try:  # keep our own ids inside the new user namespace
            with open("/proc/self/setgroups", "w") as handle:
                handle.write("deny")
            with open("/proc/self/uid_map", "w") as handle:
                handle.write(f"{uid} {uid} 1")
            with open("/proc/self/gid_map", "w") as handle:
                handle.write(f"{gid} {gid} 1")
        except OSError:
            return False
    if not _mount(b"none", b"/", _MS_REC | _MS_PRIVATE):
        return False
    if read_only_from_tmp:
        try:
            _bind_read_only(list(read_only_from_tmp), scratch)
        except (SetupFailed, OSError):
            return False
    return _mount(os.fsencode(scratch), b"/tmp", _MS_BIND | _MS_REC)


def _bind_read_only(sources: list[str], folder: str) -> None:
    """Bind each of ``sources`` (entries of ``/tmp``) read-only into ``folder``, under its own name."""
    for source in sources:
        target = os.path.join(folder, os.path.basename(source))
        if os.path.isdir(source):
            os.mkdir(target, 0o755)
        else:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
        if not _mount(os.fsencode(source), os.fsencode(target), _MS_BIND | _MS_REC):
            raise SetupFailed(ctypes.get_errno(), f"cannot bind {source} into the notebook's /tmp")
        if not _mount(None, os.fsencode(target), _MS_BIND | _MS_REMOUNT | _MS_RDONLY):
            raise SetupFailed(ctypes.get_errno(), f"cannot make {source} read-only in the notebook's /tmp")


_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_MOVE = 1, 2, 4, 8, 32, 8192
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME = 1024, 2048, 1 << 21
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


class SetupFailed(OSError):
    """The student's process could not make its own /proc and /tmp (a fault of the grader)."""


def private_tmp_and_proc(size_mb: int, files: int, scratch: str = "/tmp") -> str:
    """Inside the sandbox, for PID 1 of a new PID namespace: a ``/tmp`` of its own, a tmpfs of at most
    ``size_mb`` MiB and ``files`` files (a full one fails the write, not the run), mounted at
    ``scratch`` first (``bubblewrap.SANDBOX_TMP`` when the kit lives under ``/tmp``, see ``_tmp_with_the_kit``), and
    a ``/proc`` that shows this namespace only. Returns ``/tmp``."""
    if _LIBC.unshare(_CLONE_NEWNS) != 0:
        raise SetupFailed(ctypes.get_errno(), "cannot make a mount namespace for the notebook")
    if not _mount(b"none", b"/", _MS_REC | _MS_PRIVATE):
        raise SetupFailed(ctypes.get_errno(), "cannot make the notebook's mounts private")
    options = f"size={int(size_mb)}m,nr_inodes={int(files)},mode=0700".encode()
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    if _LIBC.mount(b"tmpfs", os.fsencode(scratch), b"tmpfs", ctypes.c_ulong(flags), options) != 0:
        raise SetupFailed(ctypes.get_errno(), f"cannot mount the notebook's {scratch}")
    if scratch != "/tmp":
        scratch = _tmp_with_the_kit(scratch)
    if _LIBC.mount(b"proc", b"/proc", b"proc", ctypes.c_ulong(flags), None) != 0:
        raise SetupFailed(ctypes.get_errno(), "cannot mount the notebook's /proc")
    return scratch


#: The device nodes of a notebook's ``/dev`` (bwrap's ``--dev`` has the same), bound read-only from the
#: sandbox's: written and read as ever, but their modes, times and owners (the machine's own ``/dev/null``,
#: whose owner root is when root grades) cannot be changed.
DEVICE_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEVICE_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
                "stderr": "/proc/self/fd/2"}
#: ``/dev`` (``/dev/shm`` in it) is a tmpfs of its own: a thread pool's POSIX semaphores and whatever a
#: notebook writes there take at most this much memory and this many files.
DEV_SIZE_MB, DEV_FILES = 64, 1024


def private_dev() -> None:
    """Inside the sandbox, in the notebook's own mount namespace: a fresh ``/dev`` (a tmpfs with the
    nodes of ``DEVICE_NODES`` bound read-only, the links of ``DEVICE_LINKS`` and a writable
    ``/dev/shm``), over the zygote's, which every submission of the zygote would otherwise share (its
    modes, times and files). Built at ``/dev/shm`` of the zygote's ``/dev`` and moved to ``/dev``."""
    staging = b"/dev/shm"
    options = f"size={DEV_SIZE_MB}m,nr_inodes={DEV_FILES},mode=0755".encode()
    if _LIBC.mount(b"tmpfs", staging, b"tmpfs", ctypes.c_ulong(_MS_NOSUID | _MS_NOEXEC), options) != 0:
        raise SetupFailed(ctypes.get_errno(), "cannot mount the notebook's /dev")
    for node in DEVICE_NODES:
        source, target = f"/dev/{node}", f"/dev/shm/{node}"
        if not os.path.exists(source):
            continue
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o666))
        if not _mount(os.fsencode(source), os.fsencode(target), _MS_BIND):
            raise SetupFailed(ctypes.get_errno(), f"cannot bind {source} into the notebook's /dev")
        flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _locked_flags(source)
        if not _mount(None, os.fsencode(target), flags):
            raise SetupFailed(ctypes.get_errno(), f"cannot make {source} read-only in the notebook's /dev")
    for name, target in DEVICE_LINKS.items():
        os.symlink(target, f"/dev/shm/{name}")
    os.mkdir("/dev/shm/shm")
    os.chmod("/dev/shm/shm", 0o1777)
    if not _mount(staging, b"/dev", _MS_MOVE):
        raise SetupFailed(ctypes.get_errno(), "cannot move the notebook's /dev into place")


def _locked_flags(path: str) -> int:
    """The flags of the mount ``path`` is on that a remount must keep: a mount made in a more
    privileged namespace has them locked, and dropping one is refused (bwrap keeps them likewise)."""
    found = os.statvfs(path).f_flag
    return sum(flag for flag, bit in ((_MS_NOSUID, os.ST_NOSUID), (_MS_NODEV, os.ST_NODEV), (_MS_NOEXEC, os.ST_NOEXEC),
                                      (_MS_NOATIME, os.ST_NOATIME), (_MS_NODIRATIME, os.ST_NODIRATIME),
                                      (_MS_RELATIME, os.ST_RELATIME)) if found & bit)


def _tmp_with_the_kit(scratch: str) -> str:
    """A kit under ``/tmp``: bwrap's ``/tmp`` holds only the allow-list's read-only binds. They are
    bound again, read-only, into the new ``scratch`` tmpfs, which then moves to ``/tmp``: the notebook
    writes ``/tmp/plot.png`` into its own quota'd space as anywhere else, and still imports its packages.
    The zygote's own scratch space, seen again at ``scratch`` once the tmpfs has moved, is covered by an
    empty read-only one: every submission of the zygote would otherwise share it (its modes, its files)."""
    _bind_read_only([os.path.join("/tmp", name) for name in os.listdir("/tmp")], scratch)
    if not _mount(os.fsencode(scratch), b"/tmp", _MS_MOVE):
        raise SetupFailed(ctypes.get_errno(), "cannot move the notebook's scratch space to /tmp")
    flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    if _LIBC.mount(b"tmpfs", os.fsencode(scratch), b"tmpfs", ctypes.c_ulong(flags), b"size=4k,nr_inodes=1,mode=0555") != 0:
        raise SetupFailed(ctypes.get_errno(), f"cannot cover the zygote's {scratch}")
    return "/tmp"


def drop_capabilities() -> None:
    """Give up every capability (bubblewrap gave the zygote CAP_SYS_ADMIN in the sandbox's user
    namespace to make the mounts above, and CAP_SETPCAP to empty the bounding set here); checked,
    since student code runs next."""
    for capability in range(64):
        if _LIBC.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL and capability > 0:
                break  # past the last capability this kernel knows
            raise SetupFailed(ctypes.get_errno(), f"cannot drop capability {capability} from the bounding set")
    if _LIBC.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        raise SetupFailed(ctypes.get_errno(), "cannot clear the ambient capabilities")
    header, data = _CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if _LIBC.capset(ctypes.byref(header), data) != 0:
        raise SetupFailed(ctypes.get_errno(), "cannot drop the capabilities")
    with open("/proc/self/status") as status:
        held = [line.split()[1] for line in status if line.startswith(("CapEff:", "CapPrm:", "CapAmb:", "CapBnd:"))]
    if any(int(value, 16) for value in held):
        raise SetupFailed(0, f"capabilities still held after dropping them: {held}")
