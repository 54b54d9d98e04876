"""What is in the exchange, read without trusting it: entry names, owners, times and files."""
from __future__ import annotations

import datetime
import os
import pwd
import stat

from ..download_files import read_as_file

RECEIVED = "received"
#: nbgrader's own timestamp format (``parse_utc`` reads it back)
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"
#: a submission holds a few notebooks; more entries than this is not one
MAX_ENTRIES = 500
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_TOTAL_BYTES = 200 * 1024 * 1024
#: what the grader keeps of one student's submissions to a course (the copies are the grader's, so the
#: student's disk quota no longer bounds them): beyond it a submission stays in inbound/, reported
KEPT_PER_STUDENT_MIB = 1024
#: the student's own files that are never taken as the submission's (the time is the clerk's)
STUDENT_CLOCK = "timestamp.txt"
#: in the clerk's copy: what of the submission it left out, and why (collect reports it)
SET_ASIDE = ".set-aside.tsv"


def parse_name(name: str) -> tuple[str, str] | None:
    """(student, assignment) of an exchange entry ``student+assignment+time+random``, or None."""
    if not name.isprintable() or name.startswith("."):
        return None
    parts = name.rsplit("+", 3)
    if len(parts) != 4 or not all(parts):
        return None
    return parts[0], parts[1]


def account_of(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def refusal(folder: str, name: str) -> str | None:
    """Why the entry ``name`` of ``folder`` is not a submission to take in, or None."""
    named = parse_name(name)
    if named is None:
        return "not named student+assignment+time+random"
    try:
        info = os.lstat(os.path.join(folder, name))
    except OSError as error:
        return f"unreadable ({error.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link, not a submission folder; not followed"
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder (a file, pipe or device); not read"
    owner = account_of(info.st_uid)
    if owner != named[0]:
        return f"it claims to be {named[0]}'s submission but is owned by {owner}"
    return None


def last_change(path: str, itself: bool = True) -> datetime.datetime:
    """When the kernel last changed anything in the folder (its largest ctime): no user can set it back.
    ``itself=False`` leaves out the folder's own ctime (which moving the folder changes)."""
    newest, count, stack = os.lstat(path).st_ctime_ns if itself else 0, 0, [path]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                count += 1
                if count > MAX_ENTRIES:
                    raise ValueError(f"more than {MAX_ENTRIES} files")
                info = entry.stat(follow_symlinks=False)
                newest = max(newest, info.st_ctime_ns)
                if stat.S_ISDIR(info.st_mode):
                    stack.append(entry.path)
    return datetime.datetime.fromtimestamp(newest / 1e9, datetime.timezone.utc).replace(tzinfo=None)


def read_submission(root: str):
    """(relative path, reason it is not read or None, bytes) of every entry under ``root``.

    A hard link is not read. The clerk and collect read as the course's grader account, which can
    read what students cannot: a student who links a file of the grader's into their own folder
    (``source/ps1/ps1.ipynb``, the solutions, under the submission's notebook name) would have it
    copied, graded and returned in their feedback. The kernel's ``fs.protected_hardlinks`` (on by
    default) lets a user link only a file they own or may read and write, which leaves them
    nothing to gain; where it is off (a container may inherit a host's setting), any file on the
    same file system whose folder they can enter is theirs to link. An honest submission is a
    fresh copy (nbgrader's submit copies): its files have one link each."""
    count = 0
    for folder, folders, files in os.walk(root):
        for name in sorted(folders + files):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            count += 1
            if count > MAX_ENTRIES:
                yield relative, f"more than {MAX_ENTRIES} files in the submission; the rest not read", None
                folders[:] = []
                return
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode):
                continue
            if relative in (STUDENT_CLOCK, SET_ASIDE):
                continue  # the student's clock (the arrival time is written instead); the clerk's note
            if not name.isprintable():
                yield relative, "an odd file name; not read", None
            else:  # a link, pipe, hard link (also one made meanwhile) or huge file is not read, with why
                data, why = read_as_file(path, MAX_FILE_BYTES)
                yield relative, why, data
        folders[:] = [f for f in folders if not os.path.islink(os.path.join(folder, f))]


def bytes_under(folder: str) -> int:
    """The size of the regular files under ``folder`` (links not followed)."""
    total = 0
    for top, _, names in os.walk(folder):
        for name in names:
            try:
                info = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            total += info.st_size if stat.S_ISREG(info.st_mode) else 0
    return total


def copy_submission(source: str, target: str, limit: int = MAX_TOTAL_BYTES) -> list[tuple[str, str]]:
    """The submission's regular files (never through a link, within limits) into the new folder ``target``
    (the caller's own, mode 700); returns what was left out and why."""
    os.makedirs(target, mode=0o700)
    total, left_out = 0, []
    for relative, reason, data in read_submission(source):
        if reason is None and total + len(data) > limit:
            reason = f"over the {limit >> 20} MiB a submission may hold; not read"
        if reason is not None:
            left_out.append((relative, reason))
            continue
        total += len(data)
        path = os.path.join(target, relative)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    return left_out
