"""The grading worker processes: each keeps its zygotes and does not outlive the instructor's process.

``autograde``'s pool and ``LocalGrader`` (the release proof, ``check``) start their workers with
``init_worker``. This module is small on purpose: a worker starts watching the instructor's process
before it imports nbgrader and the rest, so a run killed even while its workers start up leaves
nothing behind for long.
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import signal
import subprocess
import threading
import time

from . import spare_zygotes

_STATE: dict = {"preload": [], "zygotes": {}}

#: What the forkserver of the local workers imports once, before it forks them: the grader's speed
#: tricks first, the command's own module, what a worker runs, and the sandbox's allow-list.
FORKSERVER_PRELOAD = ["grader.foundations.speed", "__main__", "grader.autograde.task", "grader.sandbox.allow_list_read"]


def start_forkserver() -> None:
    """Start the forkserver the local workers are forked from, if it is not running yet; return at once.

    It imports the worker's modules (about a second) while the command goes on with its own start.
    A forkserver already running (in a test run, say) keeps what it has imported.

    It is started with Ctrl-C blocked, as multiprocessing starts its resource tracker: the terminal
    sends Ctrl-C to every process of the command, and one pressed while the forkserver imports would
    print its traceback. Blocked (inherited across exec), it never becomes a KeyboardInterrupt there
    (multiprocessing has the forkserver ignore it afterwards); the forkserver ends when the
    instructor's process does. In this process, a Ctrl-C pressed meanwhile waits until it is
    unblocked, then stops the command; workers unblock it (``init_worker``)."""
    multiprocessing.get_context("forkserver").set_forkserver_preload(FORKSERVER_PRELOAD)
    from multiprocessing import forkserver, resource_tracker

    resource_tracker.ensure_running()  # first: starting it unblocks SIGINT and SIGTERM in this thread
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def init_worker(preload: list[str], instructor: int, forbidden_imports: list[str] | None = None) -> None:
    """Initializer of a grading worker (``ProcessPoolExecutor(initializer=...)``). Given the run's
    ``forbidden_imports``, it starts its zygote at once: the zygote loads its modules while the
    worker prepares its first notebook (a zygote that cannot start says why at that notebook)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the instructor's process decides when to stop
    # blocked since the forkserver started (``start_forkserver``): ignored now, and not blocked for the
    # processes this worker starts (the supervisor interrupts a student's cell with it)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    for number in (signal.SIGTERM, signal.SIGHUP):  # (forked from the command, it has the command's handlers)
        signal.signal(number, signal.SIG_DFL)
    exit_with(instructor)
    _STATE.update(preload=list(preload), zygotes={})
    adopted = spare_zygotes.adopt()  # forked from the command (``spare_zygotes``): the zygote it started for us
    if adopted is not None:
        adopted.process = NotOurChild(adopted.process)
        _STATE["zygotes"][_zygote_key(forbidden_imports or [])] = adopted
    if forbidden_imports is not None:
        try:
            zygote_for(forbidden_imports)
        except Exception:  # tried again for the first notebook, whose grading reports it
            _STATE["zygotes"] = {}


def exit_with(instructor: int) -> None:
    """If the instructor's process dies (even by SIGKILL), exit within a second.

    A worker's parent is the command, or multiprocessing's forkserver, which lives as long as its
    children do: the worker watches the instructor's process itself. A zygote the worker started dies
    with it (``PR_SET_PDEATHSIG``), with the student's process; one it adopted from the command is
    killed by the command when a worker dies (``spare_zygotes.kill``)."""
    def watch():
        while True:
            time.sleep(1.0)
            if not alive(instructor):
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="kitgrade-instructor-watch").start()


def alive(pid: int) -> bool:
    """Whether process ``pid`` is running (a zombie, dead but not yet reaped by its parent, is not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):  # no /proc here: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True


def zygote_for(forbidden_imports, preload=None, run=None):
    """This worker's zygote loading ``preload`` (by default the list ``init_worker`` was given) but
    never a forbidden module, for the grading run ``run`` (None: the worker's only run).

    One per thread and set of forbidden modules: a dask worker may run several tasks at once, each
    in a thread of its own. A task of another assignment's run, with another list of modules,
    replaces that thread's zygote (a long-lived dask worker serving several assignments keeps one
    interpreter per thread, not one per assignment); so does a task of another run: a long-lived
    dask worker never grades a run in a sandbox an earlier run used."""
    from .zygote import Zygote

    key = _zygote_key(forbidden_imports)
    for other, zygote in list(_STATE["zygotes"].items()):
        if other[0] == key[0] and getattr(zygote, "run", None) != run:
            discard(zygote)
    modules = zygote_modules(_STATE["preload"] if preload is None else preload, forbidden_imports)
    zygote = _STATE["zygotes"].get(key)
    if zygote is not None and (not zygote.alive() or zygote.preload != modules):
        discard(zygote)
        zygote = None
    if zygote is None:
        zygote = Zygote(modules)
        zygote.run = run
        _STATE["zygotes"][key] = zygote
    return zygote


def discard(zygote) -> None:
    """End ``zygote`` and forget it: the next notebook of its thread gets a fresh one."""
    zygote.close()
    for key, kept in list(_STATE["zygotes"].items()):
        if kept is zygote:
            del _STATE["zygotes"][key]


def grade_in_sandbox(nb, policy, data_files, sources=None, *, preload=None, run=None, scratch_parent=None):
    """Run a copy of ``nb`` in this worker's sandbox with the assignment's ``data_files``; return the
    copy, its outputs filled in, and its ``ExecutionReport`` (``sources``: the instructor's cells, as
    ``supervisor.run_notebook`` takes them; ``preload`` and ``run``: as ``zygote_for`` takes them).

    A sandbox that fails under a notebook (its zygote gone, a process that could not set itself up
    before any student code ran, the sandbox found changed before it) is the machine's fault, not
    the student's: the worker ends it and grades the notebook again in a fresh one, and the report
    says so; a second failure is raised (``ZygoteFailed``: the notebook is not graded, and the next
    run grades it). A notebook that changed its sandbox (``shared_state.py``) keeps the grade it
    earned, with a finding; the worker ends that sandbox before its next notebook."""
    from .scratch import scratch_folder
    from .supervisor import run_notebook
    from .zygote import ZygoteFailed

    notes = []
    for attempt in (1, 2):
        ran = copy.deepcopy(nb)  # (the notebook as it came, for each attempt)
        zygote = zygote_for(policy.forbidden_imports, preload, run)
        try:
            with scratch_folder(data_files, scratch_parent) as scratch:
                report = run_notebook(zygote, ran, policy.for_scratch(scratch), sources)
        except ZygoteFailed as failure:
            discard(zygote)
            if attempt == 2:
                raise ZygoteFailed(f"{failure}; again in a fresh sandbox") from None
            notes.append(f"graded again in a fresh sandbox, as its first one failed under it ({failure})")
            continue
        if zygote.changed:
            discard(zygote)
            notes.append(f"this notebook changed its sandbox ({zygote.changed}); its worker ended that sandbox, "
                         "and grades its next notebook in a fresh one")
        report.findings[:0] = notes
        return ran, report


def zygote_modules(preload, forbidden_imports) -> list[str]:
    """What a zygote of a run loads: its ``preload`` but never a forbidden module."""
    forbidden = {name.split(".")[0] for name in forbidden_imports}
    return [m for m in preload if m.split(".")[0] not in forbidden]


def _zygote_key(forbidden_imports) -> tuple:
    return threading.get_ident(), tuple(sorted({name.split(".")[0] for name in forbidden_imports}))


def close_zygotes() -> None:
    for zygote in _STATE["zygotes"].values():
        zygote.close()
    _STATE["zygotes"] = {}


class NotOurChild:
    """A worker's view of its adopted zygote, which is the command's child, not the worker's: only
    its parent could wait for it, so it is watched through ``/proc`` (``alive``: a zombie, ended but
    not reaped by the command yet, is not) and signalled by pid."""

    def __init__(self, process: subprocess.Popen):
        self.pid, self.stderr, self.returncode = process.pid, process.stderr, None

    def poll(self):
        if self.returncode is None and not alive(self.pid):
            self.returncode = 0
        return self.returncode

    def wait(self, timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("zygote", timeout)
            time.sleep(0.01)
        return self.returncode

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, number: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, number)
            except ProcessLookupError:
                pass
