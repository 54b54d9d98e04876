"""The grader's side: nbgrader's collect, from the grader's own copies in ``received/``."""
from __future__ import annotations

import os
import pwd
import shutil
import stat
from itertools import groupby

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import parse_utc
from traitlets import Integer

from .clerk import take_in
from .entries import (KEPT_PER_STUDENT_MIB, MAX_TOTAL_BYTES, RECEIVED, SET_ASIDE, STUDENT_CLOCK, TIME_FORMAT, account_of, parse_name,
                      read_submission)


class GuardedCollect(ExchangeCollect):
    """nbgrader's collect, from ``received/``: each student's newest submission by its arrival time,
    copied file by file; everything else in the exchange reported and set aside."""

    kept_mib = Integer(KEPT_PER_STUDENT_MIB, help="MiB of each student's submissions the grader keeps (as the "
                       "course's clerk: its --kept-mib)").tag(config=True)

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, RECEIVED)  # nbgrader's copy reads from here
        assignment = self.coursedir.assignment_id
        wanted = self.coursedir.student_id or "*"
        try:
            left = take_in(self.course_path, kept_mib=self.kept_mib)
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
            reason = not_taken_in(self.inbound_path, name)
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
            for relative, reason in set_aside_by_the_clerk(src):
                self.log.error("set aside in %s's submission: %r: %s", record["username"], relative, reason)
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


def not_taken_in(received: str, name: str) -> str | None:
    """Why ``received/name`` is no submission the clerk took in (its copy, owned by the grader; or, from
    a clerk before the copies, the student's own folder moved there), or None."""
    info = os.lstat(os.path.join(received, name))
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder; not read"
    if info.st_uid not in (os.geteuid(), _uid_of(parse_name(name)[0])):
        return f"owned by {account_of(info.st_uid)}, neither the grader nor {parse_name(name)[0]}"
    return None


def _uid_of(account: str) -> int | None:
    try:
        return pwd.getpwnam(account).pw_uid
    except KeyError:
        return None


def set_aside_by_the_clerk(folder: str) -> list[tuple[str, str]]:
    """What the clerk left out of its copy, and why (its note in the copy)."""
    try:
        with open(os.path.join(folder, SET_ASIDE), errors="replace") as note:
            return [tuple(line.rstrip("\n").split("\t", 1)) for line in note if "\t" in line]
    except FileNotFoundError:
        return []
