"""What is in the exchange, read without trusting it: entry names, owners, times and files."""
from __future__ import annotations

import datetime
import errno
import os
import pwd
import stat

from ..lms.download_files import read_as_file

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


def refusal(folder: str | int, name: str) -> str | None:
    """Why the entry ``name`` of ``folder`` (a path, or the folder open as a descriptor) is not a
    submission to take in, or None."""
    named = parse_name(name)
    if named is None:
        return "not named student+assignment+time+random"
    try:
        info = os.lstat(name, dir_fd=folder) if isinstance(folder, int) else os.lstat(os.path.join(folder, name))
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


def open_folder(name: str, dir_fd: int | None = None) -> int:
    """A folder opened as itself: never through a symbolic link, at any depth (the caller walks on from
    the descriptor, one name at a time). A link raises ``OSError`` (ELOOP), anything else than a folder
    too (ENOTDIR)."""
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)


def why_not_opened(error: OSError, dir_fd: int | None = None) -> str:
    """What a folder that could not be opened as itself (``open_folder``'s error; ``dir_fd`` as it was
    given) is, in words: its owner's doing, not the machine's."""
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        try:  # (the kernel says ENOTDIR for a link opened as a folder without following it)
            link = error.filename is not None and stat.S_ISLNK(os.lstat(error.filename, dir_fd=dir_fd).st_mode)
        except OSError:
            link = error.errno == errno.ELOOP
        return "a symbolic link; not followed" if link else "not a folder (a file, pipe or device); not read"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "its owner has kept the grader out (its mode); not read"
    return f"unreadable ({error.strerror}); not read"


def entries_under(top: int, limit: int | None = MAX_ENTRIES):
    """``(relative path, lstat, folder's descriptor, why not opened)`` of everything under the folder open as
    ``top``, names sorted, each folder before what is in it. Each sub-folder is opened from its parent's
    descriptor without following a link, so a folder swapped for a link after it was listed is not
    entered (``why`` says so, and nothing under it is listed); one that cannot be opened (its mode) is
    listed with why, and the walk goes on. At most ``limit`` entries (None: any number); then ``ValueError``."""
    count, stack = 0, [("", os.dup(top))]
    try:
        while stack:
            prefix, fd = stack.pop()
            try:
                names = sorted(os.listdir(fd))
                below = []
                for name in names:
                    count += 1
                    if limit is not None and count > limit:
                        raise ValueError(f"more than {limit} files")
                    relative = os.path.join(prefix, name)
                    try:
                        info = os.lstat(name, dir_fd=fd)
                    except FileNotFoundError:
                        continue  # removed meanwhile
                    why = None
                    if stat.S_ISDIR(info.st_mode):
                        try:
                            below.append((relative, open_folder(name, dir_fd=fd)))
                        except FileNotFoundError:
                            continue
                        except OSError as error:
                            why = why_not_opened(error, fd)
                    yield relative, info, fd, why
                stack.extend(reversed(below))
            finally:
                os.close(fd)
    finally:
        for _, fd in stack:
            os.close(fd)


def last_change(folder: int | str, itself: bool = True) -> datetime.datetime:
    """When the kernel last changed anything in the folder (its largest ctime): no user can set it back.
    ``folder`` is a path or a descriptor (the clerk's: the folder as it opened it). ``itself=False``
    leaves out the folder's own ctime (which moving the folder changes)."""
    top = folder if isinstance(folder, int) else open_folder(folder)
    try:
        newest = os.fstat(top).st_ctime_ns if itself else 0
        for _, info, _, _ in entries_under(top):
            newest = max(newest, info.st_ctime_ns)
    finally:
        if top is not folder:
            os.close(top)
    return datetime.datetime.fromtimestamp(newest / 1e9, datetime.timezone.utc).replace(tzinfo=None)


def read_submission(root: int | str):
    """(relative path, reason it is not read or None, bytes) of every entry under ``root`` (a path, or the
    folder open as a descriptor), walked from descriptors: no component of any path is followed.

    Only files owned by the folder's own owner are read: a student's files in the student's folder,
    the grader's in the clerk's copy. A hard link is not read either. The clerk and collect read as
    the course's grader account, which can read what students cannot: a student who links a file of
    the grader's into their own folder (``source/ps1/ps1.ipynb``, the solutions, under the
    submission's notebook name) would have it copied, graded and returned in their feedback. The
    kernel's ``fs.protected_hardlinks`` (on by default) lets a user link only a file they own or may
    read and write, which leaves them nothing to gain; where it is off (a container may inherit a
    host's setting), any file on the same file system whose folder they can enter is theirs to
    link, and it is still its owner's, not theirs. An honest submission is a fresh copy (nbgrader's
    submit copies): its files are its owner's, with one link each."""
    top = root if isinstance(root, int) else open_folder(root)
    try:
        owner = os.fstat(top).st_uid
        walk = entries_under(top)
        while True:
            try:
                relative, info, fd, why = next(walk)
            except StopIteration:
                return
            except ValueError as error:
                yield ".", f"{error} in the submission; the rest not read", None
                return
            if stat.S_ISDIR(info.st_mode):
                if why is not None:
                    yield relative, why, None
                continue
            if relative in (STUDENT_CLOCK, SET_ASIDE):
                continue  # the student's clock (the arrival time is written instead); the clerk's note
            name = os.path.basename(relative)
            if not name.isprintable():
                yield relative, "an odd file name; not read", None
            elif stat.S_ISREG(info.st_mode) and info.st_uid != owner:
                yield relative, f"owned by {account_of(info.st_uid)}, not by the submission's owner; not read", None
            else:  # a link, pipe, hard link (also one made meanwhile) or huge file is not read, with why
                data, why = read_as_file(name, MAX_FILE_BYTES, dir_fd=fd)
                yield relative, why, data
    finally:
        if top is not root:
            os.close(top)


def bytes_under(folder: int | str) -> int:
    """The size of the regular files under ``folder`` (a path or a descriptor; links not followed)."""
    top = folder if isinstance(folder, int) else open_folder(folder)
    try:
        return sum(info.st_size for _, info, _, _ in entries_under(top) if stat.S_ISREG(info.st_mode))
    except ValueError:
        return MAX_TOTAL_BYTES  # more files than a submission holds: counted as the most one may
    finally:
        if top is not folder:
            os.close(top)


def copy_submission(source: int | str, target: str, limit: int = MAX_TOTAL_BYTES) -> list[tuple[str, str]]:
    """The submission's regular files (never through a link, within limits) into the new folder ``target``
    (the caller's own, mode 700); ``source`` is a path or the folder open as a descriptor. Returns what
    was left out and why."""
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
