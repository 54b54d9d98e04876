"""A run stopped by the instructor (Ctrl-C, SIGTERM, a closed terminal) stops cleanly and says so."""

from __future__ import annotations

import signal
from contextlib import contextmanager


class Interrupted(Exception):
    """The run was stopped (Ctrl-C, SIGTERM, SIGHUP); what was graded is kept."""

    def __init__(self, graded: int, left: int):
        super().__init__(f"stopped; {graded} graded, {left} left; run again to continue")
        self.graded, self.left = graded, left


@contextmanager
def stops_as_keyboard_interrupt():
    """SIGTERM and SIGHUP (a closed terminal) stop the run as Ctrl-C does: cleanly."""
    def stop(signum, frame):
        raise KeyboardInterrupt

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, stop)
        except (ValueError, OSError):  # not the main thread: leave the handlers alone
            pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
