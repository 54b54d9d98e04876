"""Faults of the machine, not of a student or the instructor: a full disk, a folder kitgrade may not
write, a gradebook another process has locked or that is damaged.

Each becomes one sentence that names the place and says what to do. A command checks what it will
write before it writes anything (``require_writable``, ``require_gradebook``): a fault found then is
an ``EnvironmentFault`` (one line, exit status 2, nothing changed). A fault that strikes halfway
through (the disk fills up) is described by ``describe`` where it happens: the student it struck is
"not graded, because ...", never scored, and the next run grades them.
"""

from __future__ import annotations

import errno
import getpass
import logging
import os
import pwd
import sqlite3
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .errors import EnvironmentFault

#: How long a command waits for another process to release the gradebook before it gives up.
GRADEBOOK_WAIT_SECONDS = 5.0

FULL = (errno.ENOSPC, errno.EDQUOT)
FORBIDDEN = (errno.EACCES, errno.EPERM)
SQLITE_HEADER = b"SQLite format 3\0"


def _place(error: OSError, where) -> str:
    # a copy names its source first and its destination second: the destination is what filled up
    place = getattr(error, "filename2", None) or error.filename or where
    return f" ({place})" if place else ""


def error_text(error: BaseException, limit: int = 300) -> str:
    """An error of a submission's grading in one short line: its type and message, never its
    arguments (a ``UnicodeError``'s hold the whole text it failed on: a notebook with its hidden
    tests put back), text that is not Unicode escaped."""
    text = f"{type(error).__name__}: {error}"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def describe(error: BaseException, where: str | os.PathLike | None = None,
             gradebook: str | os.PathLike | None = None) -> str | None:
    """One sentence for a fault of the machine, else None.

    It names the file the error names, else ``where`` (for an error of the gradebook's database,
    ``gradebook``)."""
    if isinstance(error, OSError) and error.errno is not None:
        place = _place(error, where)
        if error.errno in FULL:
            return f"the disk is full{place}"
        if error.errno == errno.EROFS:
            return f"the file system is read-only{place}"
        if error.errno in FORBIDDEN:
            return f"permission denied{place}"
        if error.errno == errno.EIO:
            return f"the disk failed to read or write (input/output error){place}"
        return None
    database = _sqlite_error(error)
    if database is not None:
        return gradebook_problem(database, gradebook)
    return None


def _sqlite_error(error: BaseException) -> sqlite3.Error | None:
    """The sqlite error behind ``error`` (SQLAlchemy wraps it as ``.orig``), if there is one."""
    for candidate in (error, getattr(error, "orig", None)):
        if isinstance(candidate, sqlite3.Error):
            return candidate
    return None


def gradebook_problem(error: sqlite3.Error, path=None) -> str:
    """What an sqlite error says about the gradebook at ``path``."""
    text, book = str(error), f"the gradebook {path}" if path else "the gradebook"
    if "locked" in text or "busy" in text:
        return f"{book} is locked by another process"
    if "disk is full" in text:
        return f"the disk is full ({book})"
    if "readonly" in text or "read-only" in text:
        return f"{book} cannot be written ({text})"
    if isinstance(error, sqlite3.OperationalError) and "malformed" not in text and "not a database" not in text:
        return f"{book} cannot be used ({text})"
    return f"{book} is damaged ({text})"


class _LoggedErrors(logging.Filter):
    """Keeps the exception of each error record; drops the record itself when the machine failed
    (kitgrade says that in its own words, once, instead of nbgrader's traceback)."""

    def __init__(self):
        super().__init__()
        self.errors: list[BaseException] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        error = sys.exc_info()[1]  # nbgrader logs from inside its ``except`` block
        if error is None and record.exc_info:
            error = record.exc_info[1]
        if error is None:
            return True
        if all(error is not seen for seen in self.errors):
            self.errors.append(error)
        return describe(error) is None


@contextmanager
def logged_errors(log: logging.Logger):
    """The exceptions an nbgrader converter caught and logged while in this block (a list, filled as they come).

    nbgrader reports a notebook it failed to convert only in its log (and removes its output); the
    exception says whether the machine failed (``describe``) or something else did. Neither the log
    nor nbgrader's gradebook (which logs database errors to tornado's application log) shows a fault
    of the machine: the caller reports it.
    """
    keeper = _LoggedErrors()
    logs = (log, logging.getLogger("tornado.application"))
    for each in logs:
        each.addFilter(keeper)
    try:
        yield keeper.errors
    finally:
        for each in logs:
            each.removeFilter(keeper)


# ---- checks before a command writes anything --------------------------------------------------------
def _owner(path: Path) -> str:
    try:
        return pwd.getpwuid(path.stat().st_uid).pw_name
    except (KeyError, OSError):
        return "its owner"


def _cannot_write(path: Path, error: OSError, command: str, to_make: Path | None = None) -> EnvironmentFault:
    what = f"cannot create {to_make}" if to_make else f"cannot write in {path}"
    if error.errno == errno.EROFS:
        return EnvironmentFault(f"{what}: the file system is read-only; kitgrade {command} writes there (remount "
                                "it read-write, or copy the course to a writable disk)")
    if error.errno in FORBIDDEN:
        user, owner = getpass.getuser(), _owner(path)
        return EnvironmentFault(f"{what}: permission denied for {user} ({path} belongs to {owner}); run kitgrade "
                                f"{command} as {owner}, or give {user} write access to the course")
    if error.errno in FULL:
        return EnvironmentFault(f"{what}: the disk is full; free some space and run it again")
    return EnvironmentFault(f"{what} ({error.strerror})")


def require_writable(command: str, *places: Path) -> None:
    """Refuse, before anything is written, places the command would write and cannot.

    A folder is tried by creating (and removing) an empty file in it, a folder not made yet in its
    nearest existing parent, a file by opening it for writing without changing it: so a read-only
    file system, a folder of another user and a missing permission are all found, for any user.
    """
    for wanted in map(Path, places):
        place = wanted
        try:
            if place.is_file():
                with open(place, "r+b"):
                    pass
                place = place.parent
            while not place.exists() and place.parent != place:  # made by the command, in this folder
                place = place.parent
            descriptor, probe = tempfile.mkstemp(prefix=".kitgrade-write-check-", dir=place)
            os.close(descriptor)
            os.unlink(probe)
        except OSError as error:
            raise _cannot_write(wanted if wanted.exists() else place, error, command,
                                None if wanted.exists() else wanted) from None


def require_gradebook(path: Path | None, write: bool = True, wait: float = GRADEBOOK_WAIT_SECONDS) -> None:
    """Refuse a gradebook that is damaged, or locked by another process for longer than ``wait`` seconds.

    The file is only read: ``quick_check`` finds a truncated or garbled file (nbgrader would fail on
    it halfway, or, for an empty file, silently start a new gradebook over it); taking the write
    lock (and letting it go at once, ``BEGIN IMMEDIATE`` then ``ROLLBACK``) finds another process
    holding it. A gradebook that does not exist yet is nbgrader's to create.
    """
    if path is None or not path.exists():
        return
    restore = "kitgrade did not change it; restore it from a backup (see docs/grading.md)"
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as error:
        raise EnvironmentFault(f"the gradebook {path} cannot be read ({error.strerror})") from None
    if header != SQLITE_HEADER:
        size = path.stat().st_size
        what = "empty (0 bytes)" if size == 0 else f"not an SQLite database ({size} bytes)"
        raise EnvironmentFault(f"the gradebook {path} is damaged: {what}; {restore}")
    try:
        connection = sqlite3.connect(f"{path.as_uri()}?mode={'rw' if write else 'ro'}", uri=True, timeout=wait,
                                     isolation_level=None)
    except sqlite3.Error as error:
        raise EnvironmentFault(f"{gradebook_problem(error, path)}; {restore}") from None
    try:
        connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        verdict = connection.execute("PRAGMA quick_check").fetchall()
        connection.execute("ROLLBACK")
    except sqlite3.Error as error:
        problem = gradebook_problem(error, path)
        if "locked" in problem:
            raise EnvironmentFault(f"{problem} (waited {wait:g} s): close what holds it (the formgrader saving a "
                                   "grade, an sqlite3 shell, another kitgrade) and run this again") from None
        raise EnvironmentFault(f"{problem}; {restore}") from None
    finally:
        connection.close()
    if verdict != [("ok",)]:
        detail = " ".join(" ".join(str(row[0]) for row in verdict[:2]).split())[:160]
        raise EnvironmentFault(f"the gradebook {path} is damaged ({detail}); {restore}")
