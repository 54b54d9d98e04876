"""How the zygote starts one student's process: inside the sandbox, as PID 1 of a PID namespace of
its own, through a namespace parent; outside it, as the zygote's own child.

The namespace parent, forked by the zygote per submission, makes the new namespaces
(``unshare(CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET)``: its processes, its IPC
objects (SysV, POSIX message queues), its host name and its network (sockets, ports, the network's
settings under ``/proc/sys/net``) go with it; the student's process then makes its mount namespace,
``mounts.py``), forks
the student's process into them, hands its pid and a pidfd to the zygote, counts its threads
(``_watch_threads``) until it ends and then ends exactly as it ended (the same signal, or the same
exit code), so the zygote learns the crash from its own child's wait status. The zygote never changes namespace:
going back with ``setns`` needs a capability over the namespace that bwrap, run by an
unprivileged account, does not give (its namespaces are owned by a user namespace outside the
sandbox's own), and the next fork then went into the first submission's dead namespace (ENOMEM).
Every call is checked: one that fails is a ``SpawnFailed`` with its reason, never a fallback.

Ending processes lives here too: a student's process and what it started (``end_process``,
``reap_orphans``), and a zygote's whole sandbox, even as bubblewrap starts (``kill_sandbox``).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import socket

from .protocol import SETUP_FAULT, TOO_MANY_THREADS

#: Threads a notebook may add to those of its sandbox (OpenBLAS starts one per core).
EXTRA_TASKS = 32
#: How often the namespace parent counts the student's threads (seconds).
THREAD_WATCH = 0.02

_PR_SET_PDEATHSIG = 1
_CLONE_NEWPID, _CLONE_NEWIPC, _CLONE_NEWUTS, _CLONE_NEWNET = 0x20000000, 0x08000000, 0x04000000, 0x40000000
#: A namespace of each kind per submission: nothing of these that one notebook changes reaches the next
#: (bwrap's namespaces are the zygote's, shared by every submission it forks; a network namespace costs
#: about 0.7 ms, measured, and its loopback stays down: a notebook has no network)
PER_SUBMISSION = _CLONE_NEWPID | _CLONE_NEWIPC | _CLONE_NEWUTS | _CLONE_NEWNET
try:
    _LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover - not Linux
    _LIBC = None


def die_with_parent() -> bool:
    """Be killed when the process that started this one dies; False where that cannot be asked
    (not Linux)."""
    if _LIBC is None:
        return False
    return _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0


class SpawnFailed(OSError):
    """A student's process could not be started (a fault of the grading machine, never of a student)."""


def _libc_failed(call: str, what: str) -> SpawnFailed:
    number = ctypes.get_errno()
    return SpawnFailed(number, f"{what} ({call}: {os.strerror(number)})")


def _exit_as(status: int) -> None:
    """End this process exactly as the process whose wait ``status`` this is ended."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number != signal.SIGKILL:
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)  # an unblocked signal to oneself arrives before kill returns
        os.write(2, f"the namespace parent survived signal {number}\n".encode())
        os._exit(SETUP_FAULT)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else SETUP_FAULT)


def _run_student(run, fault_fd: int) -> None:
    """In a freshly forked process: ``run()`` the student's process; never return.

    ``run`` reports its own set-up faults on ``fault_fd`` and closes it before student code runs;
    what escapes it later goes to its stderr (its own ``.c_output``), never to the replies channel."""
    if not die_with_parent():
        try:
            os.write(fault_fd, f"cannot tie the notebook's process to its parent: {os.strerror(ctypes.get_errno())}"
                     .encode())
        finally:
            os._exit(SETUP_FAULT)
    try:
        run()
    except BaseException:
        import traceback

        try:
            os.write(2, traceback.format_exc()[-3000:].encode())
        except OSError:
            pass
    finally:
        os._exit(SETUP_FAULT)


def _namespace_parent(report: socket.socket, run, fault_fd: int, keep_from_student: list[int]) -> None:
    """The namespace parent: a PID namespace for the student's process, whose pid and pidfd go to
    the zygote over ``report``; then wait for it and end as it ended. Never returns."""
    try:
        if not die_with_parent():
            raise _libc_failed("prctl", "cannot tie the namespace parent to the zygote")
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # ending by SIGSEGV as the student did dumps no core
        # SysV semaphores and POSIX message queues left by one notebook were found by the next one on
        # the same worker, when its IPC namespace was bwrap's
        if _LIBC.unshare(PER_SUBMISSION) != 0:
            raise _libc_failed("unshare", "cannot give the notebook's process namespaces of its own")
        pid = os.fork()
        if pid == 0:
            report.close()
            _run_student(run, fault_fd)
        for fd in keep_from_student:  # the student's process holds its pipes alone: it ends, they close
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        socket.send_fds(report, [json.dumps({"pid": pid}).encode()], [pidfd])
        report.close()
        _watch_threads(pid, pidfd, (os.cpu_count() or 1) + EXTRA_TASKS)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
    except BaseException as error:
        try:
            why = error.strerror if isinstance(error, SpawnFailed) else f"{type(error).__name__}: {error}"
            report.send(json.dumps({"error": why}).encode())
        except OSError:
            pass
        os._exit(SETUP_FAULT)
    _exit_as(status)


def _threads(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            return next((int(line.split()[1]) for line in status if line.startswith(b"Threads:")), 0)
    except (OSError, ValueError):
        return 0


def _watch_threads(pid: int, pidfd: int, limit: int) -> None:
    """Until the student's process ends, kill it if it holds more than ``limit`` threads, and end
    with ``TOO_MANY_THREADS``. ``RLIMIT_NPROC`` bounds them when an unprivileged account grades; for
    root's processes the kernel never applies it, and 30,000 threads would take every pid the machine
    has (``kernel.pid_max`` is 32,768 by default). Counted every ``THREAD_WATCH`` seconds: a burst
    between two counts is bounded by how fast threads start (a few hundred)."""
    while not select.select([pidfd], [], [], THREAD_WATCH)[0]:
        if _threads(pid) > limit:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os._exit(TOO_MANY_THREADS)


def spawn_in_own_namespace(sock, run, fault_fd: int, fds: list[int]) -> tuple[int, int, int]:
    """Fork a namespace parent that starts ``run`` as PID 1 of a new PID namespace.

    Returns (the namespace parent's pid, the student's process's pid, its pidfd); raises
    ``SpawnFailed`` with the reason if it could not be started."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        parent = os.fork()
    except OSError as error:
        ours.close()
        theirs.close()
        raise SpawnFailed(error.errno, f"cannot fork the notebook's namespace parent ({error.strerror})") from None
    if parent == 0:
        try:
            ours.close()
            sock.close()
        finally:
            _namespace_parent(theirs, run, fault_fd, fds)
    theirs.close()
    try:
        data, received, _, _ = socket.recv_fds(ours, 1 << 12, 1)
    finally:
        ours.close()
    message = json.loads(data) if data else {}
    if "pid" in message and len(received) == 1:
        return parent, int(message["pid"]), received[0]
    for fd in received:
        os.close(fd)
    os.waitpid(parent, 0)
    raise SpawnFailed(0, message.get("error") or "the notebook's namespace parent ended before it started it")


def spawn_here(run, fault_fd: int) -> tuple[int, int, int]:
    """Fork ``run`` as a child of the zygote (outside the sandbox: no namespace of its own)."""
    try:
        pid = os.fork()
    except OSError as error:
        raise SpawnFailed(error.errno, f"cannot fork the notebook's process ({error.strerror})") from None
    if pid == 0:
        _run_student(run, fault_fd)
    return pid, pid, os.pidfd_open(pid)


def end_process(pid: int) -> None:
    """Kill a student's process and its process group (it may have started others)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                if int(handle.read().rsplit(b")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return found


def reap_orphans() -> None:
    """Kill and reap whatever a finished student's process left behind (re-parented to us)."""
    for _ in range(20):
        orphans = children_of(os.getpid())
        if not orphans:
            return
        for pid in orphans:
            end_process(pid)
        for pid in orphans:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def kill_sandbox(pid: int) -> None:
    """SIGKILL the ``bwrap`` process ``pid`` and the sandbox it runs, at any moment, even as it starts.

    bwrap clones itself; its clone ties itself to it (``--die-with-parent``) only once bwrap has
    written the clone's user and group maps, and waits for them until then. Killed before that, bwrap
    leaves the clone waiting forever (bubblewrap issue 633). So bwrap is stopped first (it clones
    nothing more), its clone is killed (the sandbox's PID 1: whatever runs inside dies with it), and
    then bwrap itself. Also right for a process without bubblewrap (a zygote where it cannot run):
    its children, then itself."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return
    for process in [*children_of(pid), pid]:
        try:
            os.kill(process, signal.SIGKILL)
        except ProcessLookupError:  # (ended meanwhile)
            pass
