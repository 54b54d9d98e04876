"""One ``autograde`` at a time per course: a second run refuses at once, with what to do.

Two runs at once would share the course's working folder (``.kitgrade/``) and its gradebook, and
leave students ungraded ("unable to open database file"). The lock is the kernel's (``flock`` on
the course folder): it goes with the process that holds it, however that process ends, and leaves
no file behind.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager

from .foundations.errors import UsageError


class CourseBusy(UsageError):
    """Another run grades this course now (exit status 2, nothing written)."""


#: The locks this process holds (their descriptors): a process forked from it closes them (``_forked``).
_HELD: set[int] = set()


@contextmanager
def grading_lock(root: os.PathLike):
    """Hold the course's grading lock for the block, or raise ``CourseBusy`` at once."""
    descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY)  # not inherited by the programs the run starts
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CourseBusy(f"another kitgrade autograde is grading the course {root} now (of this or another "
                             "assignment); wait until it ends and run this again (it grades only what is left)") from None
        _HELD.add(descriptor)
        yield
    finally:
        _HELD.discard(descriptor)
        os.close(descriptor)  # releases the lock


def _forked() -> None:
    """In a process forked while a lock was held (the command's local workers): the lock stays the
    command's alone, and goes when the command does, even if its workers outlive it for a moment."""
    for descriptor in _HELD:
        os.close(descriptor)
    _HELD.clear()


os.register_at_fork(after_in_child=_forked)
