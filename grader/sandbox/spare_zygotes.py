"""Zygotes the ``kitgrade autograde`` command starts first thing, for the workers it forks later.

A local run's start-up, in the order it happens (``docs/grading.md#speed``):

1. The command starts one zygote per worker it may need, first thing (``start``): each starts up
   (bubblewrap, an interpreter, IPython) while the command imports nbgrader and the rest, on the
   core the command leaves free. Once the command has read the course, it keeps as many as the
   run needs and tells them what to load (``load``: the students' modules).
2. When the run starts its workers, the command forks them from itself
   (``executors.LocalExecutor``): they have everything the command imported (a forkserver would
   import it all again, a second of CPU that a two-core machine has to take from grading).
3. Each worker adopts one of the zygotes (``adopt``) and lets go of the others; the command lets go
   of all of them (``let_go``). A zygote ends when the last process holding its socket lets go: its
   worker, normally, as the run ends; every process, if the workers are never forked.

A zygote is still the command's child: the command reaps it (``reap``), and its worker sees it
through ``workers.NotOurChild``. Used only by the command: a library caller (a test run, a notebook) gets
its workers from the forkserver, which nothing of the caller leaks into.
"""

from __future__ import annotations

import os
import subprocess
import time

_SPARES: dict = {"zygotes": [], "claims": None, "reap": []}


def start(count: int) -> None:
    """Start ``count`` zygotes, which wait for ``load`` to say what to load."""
    from .zygote import Zygote

    if count >= 1 and not _SPARES["reap"]:
        _SPARES["zygotes"] = [Zygote(None) for _ in range(count)]
        _SPARES["reap"] = [zygote.process for zygote in _SPARES["zygotes"]]


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


def adopt():
    """In a worker just forked from the command: a zygote no other worker has, or None (all taken)."""
    zygotes, claims = _SPARES["zygotes"], _SPARES["claims"]
    _SPARES.update(zygotes=[], claims=None, reap=[])
    if claims is None:
        return None
    try:
        os.set_blocking(claims, False)
        index = os.read(claims, 1)
    except BlockingIOError:
        index = b""
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


def reap(timeout: float = 5.0) -> None:
    """In the command, as the run ends (its workers gone): wait for the zygotes, killing any left."""
    let_go()
    processes, _SPARES["reap"] = _SPARES["reap"], []
    deadline = time.monotonic() + timeout
    for process in processes:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _close_ends(zygote) -> None:
    zygote.socket.close()
    if zygote.process.stderr is not None:
        zygote.process.stderr.close()
