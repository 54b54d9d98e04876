"""Zygotes the ``kitgrade autograde`` command starts first thing, for the workers it forks later
(``kitgrade check`` starts one the same way, for its one worker: ``local_grading.LocalGrader``).

A local run's start-up, in the order it happens (``docs/grading.md#speed``):

1. The command starts one zygote per worker it may need, first thing (``start``): each starts up
   (bubblewrap, an interpreter, IPython) while the command imports nbgrader and the rest, on the
   core the command leaves free. Once the command has read the course, it keeps as many as the
   run needs and tells them what to load (``load``: the students' modules).
2. When the run starts its workers, the command forks them from itself
   (``executors.LocalExecutor``): they have everything the command imported (a forkserver would
   import it all again, a second of CPU that a two-core machine has to take from grading).
3. Each worker adopts one of the zygotes (``adopt``) and lets go of the others; the command lets go
   of all of them (``let_go``). An idle zygote ends when the last process holding its socket lets
   go: its worker, normally, as the run ends; every process, if the workers are never forked.

A zygote is still the command's child: its worker sees it through ``workers.NotOurChild``, and
only the command can end it with what it runs. bubblewrap ties it to the command, not to the
worker, and a busy zygote does not watch its socket: so whenever a worker dies (its pool breaks,
the run is stopped), the command kills the zygotes at once (``kill``), and it kills and reaps them
as the run ends (``reap``). Used only by the ``kitgrade`` command (``allow``): a library caller (a
test run, a notebook) gets its workers from the forkserver, which nothing of the caller leaks into.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from contextlib import contextmanager

#: At most this many are started (a machine with more cores starts the other workers' zygotes in them).
MOST = 8

_SPARES: dict = {"allowed": False, "zygotes": [], "claims": None, "started": []}


def allow() -> None:
    """Called by the ``kitgrade`` command only: this process may start zygotes and fork its workers."""
    _SPARES["allowed"] = True


def start(count: int) -> None:
    """Start ``count`` zygotes (at most ``MOST``), which wait for ``load`` to say what to load. One
    that cannot be started (no process left to the account, an allow-list that cannot be read) is
    not: its worker starts its own, and says why at its first notebook if it cannot either."""
    from ..foundations.stop_signals import stops_deferred
    from .zygote import Zygote

    if not _SPARES["allowed"] or _SPARES["started"]:
        return
    for _ in range(min(count, MOST)):
        try:
            with stops_deferred():  # a Ctrl-C waits until it is kept: ``kill`` then ends it
                zygote = Zygote(None)
                _SPARES["zygotes"].append(zygote)
                _SPARES["started"].append(zygote.process)
        except Exception:
            break


def load(count: int, modules: list[str]) -> None:
    """Keep ``count`` of the zygotes (the others end), loading ``modules`` (the run's preload without
    its forbidden imports)."""
    if not _SPARES["zygotes"]:
        return
    zygotes, surplus = _SPARES["zygotes"][:count], _SPARES["zygotes"][count:]
    for zygote in surplus:
        _close_ends(zygote)
    for zygote in zygotes:
        zygote.load(modules)
    claims, write = os.pipe()  # one byte per zygote: a worker reads one, and the zygote of that index is its
    os.write(write, bytes(range(len(zygotes))))
    os.close(write)
    _SPARES.update(zygotes=zygotes, claims=claims)


def waiting() -> bool:
    """Whether zygotes were started here and no worker has been forked for them yet."""
    return bool(_SPARES["zygotes"])


def forking_now() -> bool:
    """Whether the workers are to be forked from this process now: its zygotes wait for them, and it
    runs no other Python thread (only such a process can fork safely; before Python 3.10.5 a pool's
    manager thread ran while it forked). Else they come from the forkserver."""
    return waiting() and threading.active_count() == 1 and sys.version_info >= (3, 10, 5)


@contextmanager
def forking():
    """Around the pool's first tasks, which fork its workers: Python 3.12 warns of the threads NumPy's
    OpenBLAS has started, which it makes safe across a fork itself."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        yield


def adopt():
    """In a worker just forked from the command: a zygote no other worker has, or None (all taken)."""
    zygotes, claims = _SPARES["zygotes"], _SPARES["claims"]
    _SPARES.update(allowed=False, zygotes=[], claims=None, started=[])
    index = b""
    if claims is not None:
        try:
            os.set_blocking(claims, False)
            index = os.read(claims, 1)
        except BlockingIOError:
            pass
        finally:
            os.close(claims)
    mine = zygotes[index[0]] if index else None
    for zygote in zygotes:
        if zygote is not mine:
            _close_ends(zygote)
    return mine


def let_go() -> None:
    """In the command: close its ends of the zygotes (its workers, forked already, hold theirs)."""
    zygotes, claims = _SPARES["zygotes"], _SPARES["claims"]
    _SPARES.update(zygotes=[], claims=None)
    for zygote in zygotes:
        _close_ends(zygote)
    if claims is not None:
        os.close(claims)


def kill() -> None:
    """In the command, when a worker died or the run is stopped: end every zygote it started now,
    with the student's process it may be running (bubblewrap takes its sandbox down with it)."""
    from .namespaces import kill_sandbox

    for process in _SPARES["started"]:
        if process.poll() is None:
            kill_sandbox(process.pid)  # (one still starting, too)


def reap() -> None:
    """In the command, as the run ends (its workers gone, the zygotes idle or ending): end and reap them."""
    let_go()
    kill()
    processes, _SPARES["started"] = _SPARES["started"], []
    for process in processes:
        process.wait()


def _close_ends(zygote) -> None:
    zygote.socket.close()
    if zygote.process.stderr is not None:
        zygote.process.stderr.close()
