"""Taking submissions in: out of ``inbound/`` into the grader's own copy in ``received/``, at their arrival
time; and the clerk, a JupyterHub service per course, as its grader account, that does it as they come."""
from __future__ import annotations

import argparse
import datetime
import os
import secrets
import shutil
import stat
import sys
import time

from .entries import (KEPT_PER_STUDENT_MIB, MAX_TOTAL_BYTES, RECEIVED, SET_ASIDE, STUDENT_CLOCK, TIME_FORMAT,
                      account_of, bytes_under, copy_submission, last_change, open_folder, parse_name, refusal,
                      why_not_opened)


def take_in(course_path: str, log=None, kept_mib: int = KEPT_PER_STUDENT_MIB) -> dict[str, str]:
    """Take every submission of ``<course>/inbound/`` into ``<course>/received/``, named by its arrival
    time, while the grader keeps at most ``kept_mib`` MiB of each student's. Returns what was left in
    ``inbound/`` and why (name -> reason): whatever goes wrong with one entry (its mode, a link, a
    folder that changes meanwhile) sets that entry aside, and the others are taken in."""
    inbound, received = os.path.join(course_path, "inbound"), os.path.join(course_path, RECEIVED)
    os.makedirs(received, mode=0o700, exist_ok=True)
    left = {}
    for name in sorted(os.listdir(inbound)):
        if name.startswith(".submitting-"):
            continue  # PrivateSubmit still writing
        try:
            reason = refusal(inbound, name)
            if reason is None:
                reason = _take(inbound, received, name, log, kept_mib)
        except FileNotFoundError:
            continue  # gone meanwhile
        except (OSError, ValueError) as error:
            reason = _why(error)
        if reason is not None:
            left[name] = reason
    return left


def _why(error: Exception) -> str:
    """Why an entry could not be taken in, in words (never the words of a fault of the machine: what a
    student's folder does is theirs)."""
    if isinstance(error, OSError):
        return f"cannot be taken in: {why_not_opened(error)}"
    return f"cannot be taken in: {error}"


def _over_budget(received: str, student: str, coming: int, kept_mib: int) -> str | None:
    """Why the grader keeps no more of this student's submissions, or None."""
    kept = sum(bytes_under(os.path.join(received, entry)) for entry in os.listdir(received)
               if parse_name(entry) is not None and parse_name(entry)[0] == student)
    if kept + min(coming, MAX_TOTAL_BYTES) > kept_mib * 2**20:
        return (f"not taken in: {student}'s submissions kept already hold {kept / 2**20:.0f} MiB, and this one "
                f"would pass the {kept_mib} MiB kept of one student (the clerk's --kept-mib)")
    return None


def _take(inbound: str, received: str, name: str, log, kept_mib: int) -> str | None:
    """One student's folder: moved out of their reach, copied into a folder of the grader's, removed.

    The student still owns the folder they made, and a process of theirs that holds it open (its
    working directory, an open file) could change it after the move: the copy is what is graded, and
    its time is the latest change seen in the folder once the copy is whole. What is in the folder is
    read from the folder as it was opened, one name at a time, never along a path through it: a
    sub-folder the student swaps for a link, before the move or during the copy, is not followed."""
    student, assignment = parse_name(name)
    folder = open_folder(os.path.join(inbound, name))
    try:
        arrived = last_change(folder)  # (at most MAX_ENTRIES files: walked first)
        over = _over_budget(received, student, bytes_under(folder), kept_mib)
    finally:
        os.close(folder)
    if over is not None:
        return over
    token = secrets.token_urlsafe(6)
    held = os.path.join(received, f".taking-{token}")
    copy = os.path.join(received, f".copying-{token}")
    os.rename(os.path.join(inbound, name), held)
    try:
        # what moved is whatever had the name then: the folder looked at above, or what replaced it
        try:
            moved = open_folder(held)
        except OSError as error:
            return f"replaced while it was taken in: {why_not_opened(error)}"
        try:
            owner = os.fstat(moved).st_uid
            if account_of(owner) != student:
                return f"replaced while it was taken in by a folder of {account_of(owner)}; not read"
            left_out = copy_submission(moved, copy)
            try:
                arrived = max(arrived, last_change(moved, itself=False))  # (the move changed the folder's own)
            except ValueError:  # files added since: the time is now
                arrived = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        finally:
            os.close(moved)
        _write_private(os.path.join(copy, STUDENT_CLOCK), arrived.strftime(TIME_FORMAT))  # nbgrader's: the clerk's time
        if left_out:
            _write_private(os.path.join(copy, SET_ASIDE), "".join(f"{relative}\t{reason}\n" for relative, reason in left_out))
        os.rename(copy, os.path.join(received, f"{student}+{assignment}+{arrived.strftime(TIME_FORMAT)}+{token}"))
    finally:
        _remove(copy)
        _remove(held)  # the student's folder (its group, the grader's, may write), or what replaced it
    if log is not None:
        log(f"took in {student}'s {assignment}, arrived {arrived.strftime(TIME_FORMAT)}")
    return None


def _remove(path: str) -> None:
    """``path`` (in the grader's own ``received/``) removed, whatever it is: a folder by ``shutil.rmtree``,
    which removes a tree from descriptors and never follows a link in it; a link or file unlinked."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


def _write_private(path: str, text: str) -> None:
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "w") as handle:
        handle.write(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.hub_exchange",
                                     description="take submissions in from the exchange as they arrive")
    parser.add_argument("--exchange", required=True, help="the exchange's root (c.Exchange.root)")
    parser.add_argument("--course", required=True, help="the course id")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between looks (default 1)")
    parser.add_argument("--kept-mib", type=int, default=KEPT_PER_STUDENT_MIB,
                        help=f"MiB of each student's submissions the grader keeps (default {KEPT_PER_STUDENT_MIB})")
    args = parser.parse_args(argv)
    course_path = os.path.join(args.exchange, args.course)
    try:
        _take_in_until_stopped(args, course_path)
    except KeyboardInterrupt:  # the hub stops its services with SIGINT: a stop, not a failure
        print(f"clerk {args.course}: stopped", flush=True)
    return 0


def _take_in_until_stopped(args, course_path: str) -> None:
    reported: set[str] = set()
    while True:
        try:
            if os.path.isdir(os.path.join(course_path, "inbound")):
                left = take_in(course_path, log=lambda line: print(f"clerk {args.course}: {line}", flush=True),
                               kept_mib=args.kept_mib)
                for name in sorted(set(left) - reported):  # each once: it stays until collect reports it
                    print(f"clerk {args.course}: left in inbound/ {name!r}: {left[name]}", flush=True)
                reported = set(left)
        except OSError as error:
            print(f"clerk {args.course}: {error}", file=sys.stderr, flush=True)
        time.sleep(args.interval)
