"""The zygote: a clean, pre-warmed interpreter that forks one student's process per notebook.

Started by the supervisor as a new program inside bubblewrap (``bubblewrap.py``: the allow-list of
files, an empty environment, no network; ``python -I -S``, so neither the current folder nor
``PYTHONPATH`` is on its ``sys.path``), it leaves the instructor's session keyring (``keyrings.py``),
imports the common modules once, prepares the IPython shell (``shell.Template``), fingerprints what
its submissions share of the sandbox (``shared_state.py``) and then only forks; after each
submission it checks the fingerprint, and a sandbox found changed ends it. It never receives a notebook, a test or an expected
value, so a student's process, a copy of it, finds none of those in its memory, its environment
(``/proc/self/environ``) or its history. The modules an exercise forbids are not loaded in it at
all (a zygote per set of forbidden modules), so they are not in a student's memory either.

The supervisor talks to it over a Unix socket: a request carries the two pipe ends of the new
process and its scratch folder (``SCM_RIGHTS``); the reply names the process and carries a pidfd
(the supervisor signals through it), and later says how it ended (a wait status seen by a
parent: the one thing the supervisor learns of a crash, and nothing the student's process writes).

Inside the sandbox each student's process is PID 1 of a PID namespace of its own, so whatever it
started dies with it; the zygote starts it through a namespace parent (``namespaces.py``) and never
changes namespace itself. Outside the sandbox, the zygote forks the student's process itself, is
a subreaper and kills what is left.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import subprocess
import threading
import time
from contextlib import contextmanager

from . import allow_list, bubblewrap
from .keyrings import leave_the_session_keyring
from .shared_state import SharedState
from .namespaces import (_LIBC, SpawnFailed, _libc_failed, die_with_parent, kill_sandbox, reap_orphans,
                         spawn_here, spawn_in_own_namespace)

_PR_SET_CHILD_SUBREAPER = 36


# ---- the supervisor's side ------------------------------------------------------------------------
class ZygoteFailed(RuntimeError):
    """The zygote could not be started or stopped answering."""


class Zygote:
    """A zygote process, started when made (``with Zygote(preload) as zygote: zygote.spawn(policy)``)."""

    def __init__(self, preload_modules=(), startup_timeout: float = 120.0):
        #: what it loads before it forks (None: not told yet, it waits for ``load``)
        self.preload = None
        #: inside bubblewrap (the walls of ``bubblewrap.py``); else only the kit's own walls
        self.sandboxed = bubblewrap.unavailable_because() is None
        self.pidfds: dict[int, int] = {}
        #: what a notebook changed of the shared sandbox (``shared_state.py``): the zygote has ended
        self.changed = ""
        self.run = None  # the grading run it serves (``workers.zygote_for``)
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # -I -S: neither the current folder, PYTHONPATH nor site-packages' .pth files decide what is
        # imported; sys.path is the allow-list's import folders, set by BOOT. -B: no .pyc is written
        # (-I ignores PYTHONDONTWRITEBYTECODE; a stale one would be a write outside the scratch folder)
        program = [allow_list.interpreter(), "-I", "-S", "-B", "-c", BOOT, json.dumps(allow_list.import_roots()),
                   str(child.fileno()), str(os.getpid()), "1" if self.sandboxed else "0"]
        if self.sandboxed:
            program, env = bubblewrap.command(program), {}
        else:
            env = {k: v for k, v in bubblewrap.ENVIRONMENT.items() if k not in ("HOME", "TMPDIR", "MPLCONFIGDIR")}
        self.process = subprocess.Popen(
            program, pass_fds=[child.fileno()], env=env, cwd="/", stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        child.close()
        self.socket = parent
        self.buffer = b""
        try:  # the allow-list, first: the zygote's student processes wall themselves in with it
            _send(parent, {"allow_list": list(allow_list.readable_paths())})
        except OSError:  # the zygote is gone already: ``_receive`` says why
            pass
        self.startup_timeout, self.is_ready = startup_timeout, False
        self.ready_by = time.monotonic() + startup_timeout
        if preload_modules is not None:
            self.load(preload_modules)

    def load(self, modules) -> None:
        """Tell it what to load (once): it starts up meanwhile, and is ready when these are loaded."""
        self.preload = list(modules)
        self.ready_by = time.monotonic() + self.startup_timeout  # (from now: it may have waited long for this)
        try:
            _send(self.socket, {"preload": self.preload})
        except OSError:
            pass

    def wait_ready(self) -> None:
        """Wait until it has loaded its modules (at its first fork: its worker prepares a notebook meanwhile)."""
        if self.is_ready:
            return
        ready, _ = self._receive(max(0.01, self.ready_by - time.monotonic()))
        if ready.get("ready") is not True:
            raise ZygoteFailed(f"the grading interpreter did not start: {ready}")
        self.is_ready = True

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def alive(self) -> bool:
        return self.process.poll() is None

    def spawn(self, policy_message: dict) -> tuple[int, int, int]:
        """Fork a student's process; return ``(pid, fd to write commands, fd to read replies)``.

        The pid is the zygote's name for it (inside the sandbox's PID namespace): signal it with
        ``signal``, never ``os.kill``."""
        self.wait_ready()
        commands_read, commands_write = os.pipe()
        replies_read, replies_write = os.pipe()
        given = [commands_read, replies_write]
        try:  # the scratch folder travels as an open folder: the process copies its files into its own /tmp
            given.append(os.open(policy_message["scratch_dir"], os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
            socket.send_fds(self.socket, [(json.dumps({"spawn": policy_message}) + "\n").encode()], given)
        except OSError as error:
            for fd in (*given, commands_write, replies_read):
                os.close(fd)
            raise ZygoteFailed(f"the grading interpreter is gone ({error})") from None
        for fd in given:
            os.close(fd)
        reply, fds = self._receive(30.0)
        if "pid" not in reply or len(fds) != 1:
            for fd in (*fds, commands_write, replies_read):
                os.close(fd)
            why = reply.get("error") if isinstance(reply.get("error"), str) else json.dumps(reply)[:300]
            raise ZygoteFailed(f"the grading interpreter could not start the notebook's process: {why}")
        pid = int(reply["pid"])
        self.pidfds[pid] = fds[0]
        return pid, commands_write, replies_read

    def signal(self, pid: int, number: int) -> None:
        """Send a signal to the student's process ``pid`` (by its pidfd: PID namespaces do not matter)."""
        pidfd = self.pidfds.get(pid)
        if pidfd is not None:
            try:
                signal.pidfd_send_signal(pidfd, number)
            except (ProcessLookupError, PermissionError, OSError):
                pass

    def wait(self, pid: int, timeout: float = 30.0) -> tuple[int, str]:
        """How the student's process ``pid`` ended (after it ended or was killed): its wait status,
        as a parent saw it, and what went wrong if it could not set itself up (empty if nothing did).
        The student's process can write neither: it has no way to either before its code runs."""
        reply, _ = self._receive(timeout)
        pidfd = self.pidfds.pop(pid, None)
        if pidfd is not None:
            os.close(pidfd)
        if reply.get("exited") != pid:
            raise ZygoteFailed(f"unexpected reply from the grading interpreter: {reply}")
        self.changed = str(reply.get("changed") or "")
        return int(reply["status"]), str(reply.get("fault", ""))

    def _receive(self, timeout: float) -> tuple[dict, list[int]]:
        deadline = time.monotonic() + timeout
        fds: list[int] = []
        while b"\n" not in self.buffer:
            self.socket.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk, more, _, _ = socket.recv_fds(self.socket, 1 << 16, 1)
            except OSError:  # including a timeout
                chunk, more = b"", []
            fds.extend(more)
            if not chunk:
                for fd in fds:
                    os.close(fd)
                error = b""
                try:  # a zygote that closed its socket is ending: its last words say why
                    self.process.wait(2.0)
                except subprocess.TimeoutExpired:
                    pass
                if not self.alive() and self.process.stderr is not None:
                    error = self.process.stderr.read()[-2000:]
                raise ZygoteFailed("the grading interpreter stopped answering"
                                   + (f": {error.decode(errors='replace')}" if error else ""))
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line), fds

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            if self.alive():  # (even as it starts: ``namespaces.kill_sandbox``)
                kill_sandbox(self.process.pid)
                self.process.wait()
            if self.process.stderr is not None:
                self.process.stderr.close()


# ---- the zygote's side ----------------------------------------------------------------------------
def _send(sock, message: dict) -> None:
    sock.sendall((json.dumps(message) + "\n").encode())


@contextmanager
def _ending_if_the_worker_goes(sock_fd: int):
    """While the common modules load (seconds on a busy machine), end as soon as the worker's end of
    the socket closes: a worker stopped while bubblewrap was still starting may leave bwrap without
    its death signal, and nothing else would end this zygote before it is ready. The watch is over
    (its thread joined) before the zygote forks anything."""
    wake_read, wake_write = os.pipe()

    def watch():
        poller = select.poll()
        poller.register(sock_fd, select.POLLRDHUP)
        poller.register(wake_read, select.POLLIN)
        while True:
            events = dict(poller.poll())
            if events.get(wake_read):
                return
            if events.get(sock_fd, 0) & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                os._exit(0)

    watcher = threading.Thread(target=watch, name="kitgrade-worker-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        os.write(wake_write, b"x")
        watcher.join()
        os.close(wake_read)
        os.close(wake_write)


def main(sock_fd: int, parent: int, sandboxed: bool = False) -> None:
    leave_the_session_keyring()  # first: nothing of the instructor's session is held from here on
    sock = socket.socket(fileno=sock_fd)
    with _ending_if_the_worker_goes(sock_fd):
        from .child import Channels, run_child
        from .shell import Template

        given, buffer = _line(sock)
        allow_list.use_allow_list(given["allow_list"])

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor ends us (Ctrl-C reaches it, not us)
        if not die_with_parent() and sandboxed:
            raise _libc_failed("prctl", "cannot tie the grading interpreter to its worker")
        if not sandboxed and os.getppid() != parent:  # the supervisor died before we could ask to die with it
            return  # (inside bubblewrap, --die-with-parent does this, and our parent is bwrap's)
        if not sandboxed and _LIBC is not None:  # inside, each student's process is PID 1 and reaps its own
            _LIBC.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        import IPython.core.interactiveshell  # noqa: F401  (what every notebook needs, while its list may be on its way)

        preload, buffer = _line(sock, buffer)
        template = Template(preload["preload"])
    shared = SharedState(bubblewrap.SANDBOX_TMP) if sandboxed else None
    _send(sock, {"ready": True})
    while True:
        data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        if not data:
            return
        buffer += data
        if b"\n" not in buffer:
            for fd in fds:
                os.close(fd)
            continue
        line, buffer = buffer.split(b"\n", 1)
        request = json.loads(line)
        if "spawn" not in request or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            _send(sock, {"error": "malformed request"})
            continue
        commands, replies, scratch = fds
        fault_read, fault_write = os.pipe()  # what went wrong while the process set itself up, if it did
        fds.append(fault_write)

        def run(*, commands=commands, replies=replies, scratch=scratch, fault=fault_write, unused=fault_read,
                policy=request["spawn"]):
            sock.close()
            os.close(unused)
            run_child(template, policy, Channels(commands, replies, scratch, fault), sandboxed)

        gc.collect()
        gc.freeze()  # objects shared with the child: the collector must not walk (and so copy) them
        try:
            if sandboxed:
                waited, pid, pidfd = spawn_in_own_namespace(sock, run, fault_write, fds)
            else:
                waited, pid, pidfd = spawn_here(run, fault_write)
        except SpawnFailed as error:
            for fd in (*fds, fault_read):
                os.close(fd)
            _send(sock, {"error": error.strerror})
            continue
        for fd in fds:
            os.close(fd)
        socket.send_fds(sock, [(json.dumps({"pid": pid}) + "\n").encode()], [pidfd])
        os.close(pidfd)
        _, status = os.waitpid(waited, 0)  # the namespace parent ends as the student's process did
        if not sandboxed:
            reap_orphans()
        fault, changed = _read_all(fault_read), shared.changes() if shared else ""
        _send(sock, {"exited": pid, "status": status, **({"fault": fault} if fault else {}),
                     **({"changed": changed} if changed else {})})
        if changed:  # this notebook changed the sandbox: its worker grades on in a fresh one
            return


def _line(sock, buffer: bytes = b"") -> tuple[dict, bytes]:
    """The worker's next message (the allow-list, then the modules to load), and what came after it."""
    while b"\n" not in buffer:
        data = sock.recv(1 << 20)
        if not data:
            raise SystemExit(0)  # the worker is gone
        buffer += data
    line, rest = buffer.split(b"\n", 1)
    return json.loads(line), rest


def _read_all(fd: int, limit: int = 4000) -> str:
    """What was written to a pipe whose writers are gone (at most ``limit`` bytes), and close it."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, limit).decode(errors="replace")
    except BlockingIOError:
        return ""
    finally:
        os.close(fd)


#: What the interpreter runs (``python -I -S -c BOOT``): the import folders are the allow-list's.
BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); from grader.sandbox.zygote import main; "
        "main(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == '1')")
