"""A command stopped by the instructor (Ctrl-C, SIGTERM, a closed terminal) stops cleanly: one way, for all."""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager


@contextmanager
def _handled(signals, handler):
    """Within the block, ``handler`` handles ``signals``; yields the handlers it replaced (put back
    afterwards). Left alone: a signal whose handler was not set from Python (it could not be put
    back), and every signal outside the main thread (kitgrade called in-process from another)."""
    previous = {}
    for sig in signals:
        if signal.getsignal(sig) is None:
            continue
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread
            pass
    try:
        yield previous
    finally:
        for sig, replaced in previous.items():
            signal.signal(sig, replaced)


@contextmanager
def stops_as_keyboard_interrupt():
    """Within the block, SIGTERM and SIGHUP (a closed terminal) stop the command as Ctrl-C does: as a
    ``KeyboardInterrupt``, which each command turns into "stopped" and exit status 130."""
    def stop(signum, frame):
        raise KeyboardInterrupt

    with _handled((signal.SIGTERM, signal.SIGHUP), stop):
        yield


@contextmanager
def stops_deferred():
    """Within the block, Ctrl-C, SIGTERM and SIGHUP are noted, not acted on; the first one noted
    stops the command (as its handler would have) as soon as the block ends. For steps that must
    not be cut in half: a worker process half started (asked of the forkserver, not yet known to
    its pool) would start after the command stopped and take the last message meant for a worker
    the pool knows. (Handlers, not a signal mask: a mask is per thread, and the threads NumPy's
    BLAS starts would still take the signal.)"""
    noted: list[int] = []
    previous: dict = {}
    try:
        with _handled((signal.SIGINT, signal.SIGTERM, signal.SIGHUP), lambda signum, frame: noted.append(signum)) \
                as previous:
            yield
    finally:  # the handlers are back: the first signal noted that was not ignored is acted on
        acted_on = [sig for sig in noted if previous[sig] != signal.SIG_IGN]
        if acted_on:
            handler = previous[acted_on[0]]
            if callable(handler):
                handler(acted_on[0], None)  # Ctrl-C's raises KeyboardInterrupt, as does ``stops_as_keyboard_interrupt``'s
            else:  # the default action (for SIGTERM and SIGHUP: the process ends)
                os.kill(os.getpid(), acted_on[0])
