"""The audit hook: refuses what student code may not do (processes, network, other files), and
remembers each refusal for the report.

It lives in the student's process, so it is a courtesy that explains refusals, not the wall:
Landlock (``landlock.py``) and the resource limits are enforced by the kernel, and the grade is
decided outside this process.
"""

from __future__ import annotations

import os

from .policy import SandboxPolicy

#: Audit events that student code may never trigger while it is graded.
DENIED_EVENTS = {
    "subprocess.Popen": "starting a process", "os.system": "starting a process",
    "os.exec": "starting a process", "os.posix_spawn": "starting a process", "os.spawn": "starting a process",
    "os.fork": "forking", "os.forkpty": "forking", "pty.spawn": "starting a process",
    "os.kill": "signalling a process", "os.killpg": "signalling a process", "signal.pthread_kill": "signalling a process",
    "socket.connect": "network access", "socket.bind": "network access", "socket.getaddrinfo": "network access",
    "socket.sendto": "network access",
    "sys.settrace": "installing a tracer", "sys.setprofile": "installing a profiler",
    "sys.addaudithook": "installing an audit hook", "os.chroot": "changing root",
    "webbrowser.open": "opening a browser",
}
#: Audit events whose first argument is a path that is only read (or listed).
PATH_READ_EVENTS = {"os.listdir", "os.scandir", "glob.glob", "os.chdir", "os.startfile"}
#: Audit events that change the file system at the path(s) in their arguments.
PATH_WRITE_EVENTS = {
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
    "os.truncate", "os.utime", "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr",
    "shutil.rmtree", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move",
    "shutil.chown", "shutil.make_archive", "shutil.unpack_archive",
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class AuditHook:
    """Denies what student code may not do, and remembers each denial."""

    def __init__(self, policy: SandboxPolicy, writable: list[str]):
        self.protected = [os.path.realpath(p) for p in policy.protected_paths]
        self.writable = [os.path.realpath(p) for p in writable]
        self.forbidden = {name.split(".")[0] for name in policy.forbidden_imports}
        self.forbidden_dirs = []
        self.denials: list[str] = []
        self.active = False
        self._busy = False

    def forbidden_package_dirs(self):
        """The folders of forbidden packages (so they cannot be loaded by path either)."""
        import importlib.util

        for name in self.forbidden:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            if spec is not None:
                for location in (spec.submodule_search_locations or [os.path.dirname(spec.origin or "")]):
                    if location:
                        self.forbidden_dirs.append(os.path.realpath(location))

    def __call__(self, event, args):
        if not self.active or self._busy:
            return
        reason = DENIED_EVENTS.get(event)
        if reason is None and event.startswith("ctypes."):
            reason = "raw memory access (ctypes)"
        if reason is None:
            if event == "open":
                reason = self._check_open(args)
            elif event == "import":
                reason = self._check_import(args[0])
            elif event in PATH_READ_EVENTS or event in PATH_WRITE_EVENTS:
                reason = self._check_paths(event, args)
            elif event == "sqlite3.connect" and args:
                reason = self._check_database(args[0])
        if reason is not None:
            message = f"{reason} ({event}{_describe(args)})"
            self.denials.append(message)
            raise PermissionError(f"not allowed while grading: {message}")

    def _inside(self, path, roots):
        return any(path == root or path.startswith(root + os.sep) for root in roots)

    def _resolve(self, path):
        self._busy = True
        try:
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            return os.path.realpath(os.path.join(os.getcwd(), os.fspath(path)))
        finally:
            self._busy = False

    def _check_open(self, args):
        path, mode, flags = (list(args) + [None, None, None])[:3]
        if path is None or isinstance(path, int):
            return None
        resolved = self._resolve(path)
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS)
        if self._inside(resolved, self.protected):
            return ("writing to instructor or other students' files" if writing
                    else "reading instructor or other students' files")
        if resolved.startswith("/proc/") and not resolved.startswith(f"/proc/{os.getpid()}/") \
                and resolved.split("/")[2].isdigit():
            return "reading another process"
        if writing and not self._inside(resolved, self.writable) and resolved != os.devnull:
            return "writing outside the submission's scratch folder"
        if self.forbidden_dirs and self._inside(resolved, self.forbidden_dirs):
            return "loading a module this exercise forbids"
        return None

    def _check_paths(self, event, args):
        for arg in args:
            if isinstance(arg, (str, bytes, os.PathLike)):
                resolved = self._resolve(arg)
                if self._inside(resolved, self.protected):
                    return "touching instructor or other students' files"
                if event in PATH_WRITE_EVENTS and not self._inside(resolved, self.writable):
                    return "changing files outside the submission's scratch folder"
        return None

    def _check_database(self, database):
        """SQLite writes its files (the database, its journal) from C: a database in the notebook's
        own folder, or in memory, is an honest habit; anywhere else it is refused here."""
        path = _database_path(database)
        if path is None or self._inside(self._resolve(path), self.writable):
            return None
        return "opening a database outside the notebook's scratch folder"

    def _check_import(self, name):
        if isinstance(name, str) and name.split(".")[0] in self.forbidden:
            return "importing a module this exercise forbids"
        return None


def _database_path(database):
    """The file ``sqlite3.connect(database)`` opens (a plain path or a ``file:`` URI); None for a
    database in memory (or SQLite's own temporary one, which goes to ``TMPDIR``)."""
    if not isinstance(database, (str, bytes, os.PathLike)):
        return None
    database = os.fsdecode(os.fspath(database))
    if database.startswith("file:"):
        from urllib.parse import parse_qs, unquote, urlsplit

        parts = urlsplit(database)
        if parse_qs(parts.query).get("mode") == ["memory"]:
            return None
        database = unquote(parts.path)
    return None if database in ("", ":memory:") else database


def _describe(args):
    shown = [a for a in args if isinstance(a, (str, bytes, int))][:2]
    return (": " + ", ".join(repr(a)[:120] for a in shown)) if shown else ""
