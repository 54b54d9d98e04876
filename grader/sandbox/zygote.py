"""The zygote: a clean, pre-warmed interpreter that forks one student's process per notebook.

Started by the supervisor as a new program (``python -m grader.sandbox.zygote``) with an almost
empty environment, it imports the common modules once, prepares the IPython shell
(``shell.Template``) and then only forks. It never receives a notebook, a test or an expected
value, so a student's process, a copy of it, finds none of those in its memory, its environment
(``/proc/self/environ``) or its history. The modules an exercise forbids are not loaded in it at
all (a zygote per set of forbidden modules), so they are not in a student's memory either.

The supervisor talks to it over a Unix socket: a request carries the two pipe ends of the new
process (``SCM_RIGHTS``); the reply names the process, and later how it ended. The zygote is a
subreaper: whatever a student's process started is killed when that process ends.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import signal
import socket
import subprocess
import sys
import time

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36


def die_with_parent() -> None:
    """Be killed when the process that started this one dies (Linux; elsewhere nothing happens)."""
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


# ---- the supervisor's side ------------------------------------------------------------------------
class ZygoteFailed(RuntimeError):
    """The zygote could not be started or stopped answering."""


class Zygote:
    """A running zygote process (``with Zygote(preload) as zygote: child = zygote.spawn(policy)``)."""

    def __init__(self, preload_modules=(), startup_timeout: float = 120.0):
        self.preload = [m for m in preload_modules]
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": os.environ.get("LANG", "C.UTF-8"),
               "PYTHONPATH": package_root, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "grader.sandbox.zygote", str(child.fileno()), json.dumps(self.preload),
             str(os.getpid())],
            pass_fds=[child.fileno()], env=env, cwd="/", stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        child.close()
        self.socket = parent
        self.buffer = b""
        ready = self._receive(startup_timeout)
        if ready.get("ready") is not True:
            raise ZygoteFailed(f"the grading interpreter did not start: {ready}")

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def alive(self) -> bool:
        return self.process.poll() is None

    def spawn(self, policy_message: dict) -> tuple[int, int, int]:
        """Fork a student's process; return ``(pid, fd to write commands, fd to read replies)``."""
        commands_read, commands_write = os.pipe()
        replies_read, replies_write = os.pipe()
        try:
            socket.send_fds(self.socket, [(json.dumps({"spawn": policy_message}) + "\n").encode()],
                            [commands_read, replies_write])
        except OSError as error:
            for fd in (commands_read, commands_write, replies_read, replies_write):
                os.close(fd)
            raise ZygoteFailed(f"the grading interpreter is gone ({error})") from None
        os.close(commands_read)
        os.close(replies_write)
        reply = self._receive(30.0)
        if "pid" not in reply:
            os.close(commands_write)
            os.close(replies_read)
            raise ZygoteFailed(f"the grading interpreter could not fork: {reply}")
        return int(reply["pid"]), commands_write, replies_read

    def wait(self, pid: int, timeout: float = 30.0) -> int:
        """The wait status of the student's process ``pid`` (after it ended or was killed)."""
        reply = self._receive(timeout)
        if reply.get("exited") != pid:
            raise ZygoteFailed(f"unexpected reply from the grading interpreter: {reply}")
        return int(reply["status"])

    def _receive(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            self.socket.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.socket.recv(1 << 16)
            except OSError:  # including a timeout
                chunk = b""
            if not chunk:
                error = b""
                if not self.alive() and self.process.stderr is not None:
                    error = self.process.stderr.read()[-2000:]
                raise ZygoteFailed("the grading interpreter stopped answering"
                                   + (f": {error.decode(errors='replace')}" if error else ""))
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            if self.alive():
                self.process.terminate()
                try:
                    self.process.wait(5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            if self.process.stderr is not None:
                self.process.stderr.close()


def end_process(pid: int) -> None:
    """Kill a student's process and its process group (it may have started others)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# ---- the zygote's side ----------------------------------------------------------------------------
def _send(sock, message: dict) -> None:
    sock.sendall((json.dumps(message) + "\n").encode())


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


def _reap_orphans() -> None:
    """Kill and reap whatever a finished student's process left behind (re-parented to us)."""
    for _ in range(20):
        orphans = _children_of(os.getpid())
        if not orphans:
            return
        for pid in orphans:
            end_process(pid)
        for pid in orphans:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def main(sock_fd: int, preload: list[str], parent: int) -> None:
    from .child import run_child
    from .shell import Template

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor ends us (Ctrl-C reaches it, not us)
    die_with_parent()
    if os.getppid() != parent:  # the supervisor died before we could ask to die with it
        return
    try:
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    sock = socket.socket(fileno=sock_fd)
    template = Template(preload)
    _send(sock, {"ready": True})
    buffer = b""
    while True:
        data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 2)
        if not data:
            return
        buffer += data
        if b"\n" not in buffer:
            for fd in fds:
                os.close(fd)
            continue
        line, buffer = buffer.split(b"\n", 1)
        request = json.loads(line)
        if "spawn" not in request or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            _send(sock, {"error": "malformed request"})
            continue
        commands, replies = fds
        gc.collect()
        gc.freeze()  # objects shared with the child: the collector must not walk (and so copy) them
        pid = os.fork()
        if pid == 0:
            try:
                die_with_parent()
                sock.close()
                run_child(template, request["spawn"], commands, replies)
            except BaseException:  # a fault of the grader itself: say so, do not hide it
                import traceback

                try:
                    os.write(replies, (json.dumps({"crash": traceback.format_exc()[-3000:]}) + "\n").encode())
                except OSError:
                    pass
            finally:
                os._exit(70)
        os.close(commands)
        os.close(replies)
        _send(sock, {"pid": pid})
        _, status = os.waitpid(pid, 0)
        _reap_orphans()
        _send(sock, {"exited": pid, "status": status})


if __name__ == "__main__":
    main(int(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]))
