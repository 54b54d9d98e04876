"""A run stopped by the instructor (Ctrl-C, SIGTERM, a closed terminal) stops cleanly and says so
(how SIGTERM and SIGHUP become Ctrl-C: ``grader/foundations/stop_signals.py``)."""

from __future__ import annotations


class Interrupted(Exception):
    """The run was stopped (Ctrl-C, SIGTERM, SIGHUP); what was graded is kept."""

    def __init__(self, graded: int, left: int):
        super().__init__(f"stopped; {graded} graded, {left} left; run again to continue")
        self.graded, self.left = graded, left
