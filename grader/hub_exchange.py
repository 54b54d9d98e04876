"""nbgrader's filesystem exchange, hardened for a class on one JupyterHub with an account per student.

nbgrader's exchange is a shared folder whose file names say who submitted and when. On a machine
that students share, three things of the default exchange do not hold, and the kit's plugins and
the clerk close them (docs/deploy.md says why this and not ngshare):

* **Classmates.** nbgrader leaves a submission folder mode 0777 and readable by everyone (only the
  listing of ``inbound/`` is closed). ``PrivateSubmit`` writes the submission in a private staging
  folder and moves it into ``inbound/`` whole, readable and writable by its owner and the course's
  grader group only (``inbound/`` is set-group-id to that group and has the sticky bit, so no
  student renames or deletes another's entry).
* **The clock.** nbgrader believes the submission's ``timestamp.txt`` and the time in its folder
  name, both written by the student's own process. The **clerk** (``python -m grader.hub_exchange``,
  a JupyterHub service running as the course's grader account) takes each submission out of
  ``inbound/`` into ``received/`` (the grader's alone) within a second of its arrival and names it
  with the time the kernel last changed anything in it (the largest ``ctime`` of its files, which
  no user can set back); from then on the student cannot touch it. Collect takes in whatever the
  clerk has not, the same way.
* **What a student plants.** Anything in ``inbound/`` that is not a folder owned by the student it
  names (a link, a pipe, a file, an entry in a classmate's name, an odd name) is never taken in:
  ``GuardedCollect`` reports it and collects everyone else. Inside a submission, only regular
  files are read (never through a link), within a size limit; the rest is reported and left out.

Enable them in nbgrader's configuration (deploy/hub/kithub.py writes both):

    c.ExchangeFactory.submit = "grader.hub_exchange.PrivateSubmit"     # the students' servers
    c.ExchangeFactory.collect = "grader.hub_exchange.GuardedCollect"   # the course's nbgrader_config.py
"""
from __future__ import annotations

import argparse
import datetime
import os
import pwd
import secrets
import shutil
import stat
import sys
import tempfile
import time
from itertools import groupby

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import parse_utc

RECEIVED = "received"
#: nbgrader's own timestamp format (``parse_utc`` reads it back)
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"
#: a submission holds a few notebooks; more entries than this is not one
MAX_ENTRIES = 500
MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_TOTAL_BYTES = 200 * 1024 * 1024
#: the student's own files that are never taken as the submission's (the time is the clerk's)
STUDENT_CLOCK = "timestamp.txt"


# ---- the student's side ----------------------------------------------------------------------------

class PrivateSubmit(ExchangeSubmit):
    """nbgrader's submit, but whole and private: staged beside ``inbound/``, then moved in at once."""

    def copy_files(self):
        self.init_release()
        self.check_filename_diff()
        self.check_size()
        submission_secret = secrets.token_hex(64)
        # a staging folder of the student's own in inbound/ (same file system: the move is atomic);
        # it inherits inbound/'s group (the grader's) and set-group-id bit, and so does all below it
        staging = tempfile.mkdtemp(prefix=".submitting-", dir=self.inbound_path)
        try:
            staged = os.path.join(staging, self.assignment_filename)
            self.do_copy(self.src_path, staged)  # nbgrader's copy: its size limit and ignore patterns
            # copytree gave the copy its source's modes, without set-group-id: the two files nbgrader
            # adds are written in the staging folder (still set-group-id) and moved in, keeping its group
            for name, text in ((STUDENT_CLOCK, self.timestamp), ("submission_secret.txt", submission_secret)):
                with open(os.path.join(staging, name), "w") as handle:
                    handle.write(text)
                os.rename(os.path.join(staging, name), os.path.join(staged, name))
            for folder, folders, files in os.walk(staged):
                os.chmod(folder, 0o770)  # the grader's group moves it into received/ (it needs write)
                for name in files:
                    os.chmod(os.path.join(folder, name), 0o640)
            os.rename(staged, os.path.join(self.inbound_path, self.assignment_filename))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        # the student's own copy, as nbgrader keeps it (the Assignments panel and feedback use it)
        cache_path = os.path.join(self.cache_path, self.assignment_filename.rsplit("+", 1)[0]
                                  if self.add_random_string else self.assignment_filename)
        os.makedirs(self.cache_path, exist_ok=True)
        self.do_copy(self.src_path, cache_path)
        for name, text in ((STUDENT_CLOCK, self.timestamp), ("submission_secret.txt", submission_secret)):
            with open(os.path.join(cache_path, name), "w") as handle:
                handle.write(text)
        # no path in the log: the servers' output goes to the hub's log
        self.log.info("Submitted as: %s %s %s", self.coursedir.course_id, self.coursedir.assignment_id, self.timestamp)


    def check_size(self):
        """nbgrader refuses a folder above ``max_dir_size`` with its size in bytes; this refusal says which
        files make it too big and what to do (the Assignments panel shows the last line)."""
        limit = 1000 * self.coursedir.max_dir_size
        sizes = []
        for folder, _, files in os.walk(self.src_path):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    sizes.append((os.lstat(path).st_size, os.path.relpath(path, self.src_path)))
                except OSError:
                    continue
        total = sum(size for size, _ in sizes)
        if total > limit:
            largest = ", ".join(f"{name} ({size / 2**20:.0f} MiB)" for size, name in sorted(sizes, reverse=True)[:3])
            raise ExchangeError(f"{self.coursedir.assignment_id} was not submitted: its folder holds {total / 2**20:.0f} MiB, "
                                f"more than the {limit / 2**20:.0f} MiB a submission may. The largest: {largest}. Move "
                                "what is not part of your answers out of the folder and submit again.")


# ---- taking submissions in (the clerk, and collect for what the clerk has not) ---------------------

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


def last_change(path: str) -> datetime.datetime:
    """When the kernel last changed anything in the folder (its largest ctime): no user can set it back."""
    newest, count, stack = os.lstat(path).st_ctime_ns, 0, [path]
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


def take_in(course_path: str, log=None) -> dict[str, str]:
    """Move every submission of ``<course>/inbound/`` into ``<course>/received/``, named by its arrival
    time. Returns what was left in ``inbound/`` and why (name -> reason)."""
    inbound, received = os.path.join(course_path, "inbound"), os.path.join(course_path, RECEIVED)
    os.makedirs(received, mode=0o700, exist_ok=True)
    left = {}
    for name in sorted(os.listdir(inbound)):
        if name.startswith(".submitting-"):
            continue  # PrivateSubmit still writing
        reason = refusal(inbound, name)
        if reason is None:
            student, assignment = parse_name(name)
            try:
                arrived = last_change(os.path.join(inbound, name))
                os.rename(os.path.join(inbound, name), os.path.join(
                    received, f"{student}+{assignment}+{arrived.strftime(TIME_FORMAT)}+{secrets.token_urlsafe(6)}"))
                if log is not None:
                    log(f"took in {student}'s {assignment}, arrived {arrived.strftime(TIME_FORMAT)}")
                continue
            except ValueError as error:
                reason = str(error)
            except FileNotFoundError:
                continue  # gone meanwhile
            except OSError as error:  # the folder's modes keep the grader out (not made by the kit's submit)
                reason = f"cannot be taken in ({error.strerror}): its owner has kept the grader's group out"
        left[name] = reason
    return left


# ---- the grader's side -----------------------------------------------------------------------------

class GuardedCollect(ExchangeCollect):
    """nbgrader's collect, from ``received/``: each student's newest submission by its arrival time,
    copied file by file; everything else in the exchange reported and set aside."""

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, RECEIVED)  # nbgrader's copy reads from here
        assignment = self.coursedir.assignment_id
        wanted = self.coursedir.student_id or "*"
        try:
            left = take_in(self.course_path)
        except OSError as error:
            self.fail(f"the exchange of {self.coursedir.course_id} cannot be read: {error}")
        for name, reason in left.items():
            named = parse_name(name)
            if named is None or named[1] == assignment:
                self.log.error("set aside %r in inbound/: %s", name, reason)
        records = []
        for name in sorted(os.listdir(self.inbound_path)):
            named = parse_name(name)
            if named is None or named[1] != assignment or wanted not in ("*", named[0]):
                continue
            reason = refusal(self.inbound_path, name)
            if reason is not None:
                self.log.error("set aside %r: %s", name, reason)
                continue
            records.append({"username": named[0], "filename": name,
                            "timestamp": parse_utc(name.rsplit("+", 3)[2])})
        records.sort(key=lambda r: r["username"])
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                self.duedate = gradebook.find_assignment(assignment).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for _, group in groupby(records, lambda r: r["username"]):
            submissions = self._sort_by_timestamp(list(group))
            if self.duedate is not None and self.before_duedate:
                submissions = [r for r in submissions if r["timestamp"] <= self.duedate] or submissions
            self.src_records.append(submissions[0])

    def do_copy(self, src, dest):
        """The submission's regular files (never through a link, within limits) and the arrival time."""
        staging = os.path.join(os.path.dirname(dest), f".{os.path.basename(dest)}.collecting")
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        record = next(r for r in self.src_records if r["filename"] == os.path.basename(src))
        total = 0
        try:
            for relative, reason, data in read_submission(src):
                if reason is None and total + len(data) > MAX_TOTAL_BYTES:
                    reason = f"over the {MAX_TOTAL_BYTES >> 20} MiB a submission may hold; not read"
                if reason is not None:
                    self.log.error("set aside in %s's submission: %r: %s", record["username"], relative, reason)
                    continue
                total += len(data)
                target = os.path.join(staging, relative)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as handle:
                    handle.write(data)
            with open(os.path.join(staging, STUDENT_CLOCK), "w") as handle:
                handle.write(record["timestamp"].strftime(TIME_FORMAT))
            if os.path.isdir(dest):  # nbgrader removes an older copy first; the new one is whole already
                shutil.rmtree(dest)
            os.rename(staging, dest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


OwnerCheckedCollect = GuardedCollect  # the name in course configurations written before


def read_submission(root: str):
    """(relative path, reason it is not read or None, bytes) of every entry under ``root``."""
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
            if relative == STUDENT_CLOCK:
                continue  # the student's clock; the arrival time is written instead
            if not name.isprintable():
                yield relative, "an odd file name; not read", None
            elif stat.S_ISLNK(info.st_mode):
                yield relative, "a symbolic link; not followed", None
            elif not stat.S_ISREG(info.st_mode):
                yield relative, "not a regular file (a pipe, socket or device); not read", None
            elif info.st_nlink > 1:
                yield relative, "a hard link (the same file has another name elsewhere); not read", None
            elif info.st_size > MAX_FILE_BYTES:
                yield relative, f"larger than {MAX_FILE_BYTES >> 20} MiB; not read", None
            else:
                data = _read_regular_file(path, info)
                if data is None:
                    yield relative, "changed while it was read; not read", None
                else:
                    yield relative, None, data
        folders[:] = [f for f in folders if not os.path.islink(os.path.join(folder, f))]


def _read_regular_file(path: str, expected: os.stat_result) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (expected.st_dev, expected.st_ino):
            return None
        data = handle.read(MAX_FILE_BYTES + 1)
    return data if len(data) <= MAX_FILE_BYTES else None


# ---- the clerk: a JupyterHub service per course, as its grader account ---------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.hub_exchange",
                                     description="take submissions in from the exchange as they arrive")
    parser.add_argument("--exchange", required=True, help="the exchange's root (c.Exchange.root)")
    parser.add_argument("--course", required=True, help="the course id")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between looks (default 1)")
    args = parser.parse_args(argv)
    course_path = os.path.join(args.exchange, args.course)
    reported: set[str] = set()
    while True:
        try:
            if os.path.isdir(os.path.join(course_path, "inbound")):
                left = take_in(course_path, log=lambda line: print(f"clerk {args.course}: {line}", flush=True))
                for name in sorted(set(left) - reported):  # each once: it stays until collect reports it
                    print(f"clerk {args.course}: left in inbound/ {name!r}: {left[name]}", flush=True)
                reported = set(left)
        except OSError as error:
            print(f"clerk {args.course}: {error}", file=sys.stderr, flush=True)
        time.sleep(args.interval)


if __name__ == "__main__":
    sys.exit(main())
