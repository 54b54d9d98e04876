"""Each course's material and folders: its exercises in its grader's home, its folder of the exchange."""
from __future__ import annotations

import os
import pwd
import stat
import subprocess
from pathlib import Path

from grader.hub_exchange.entries import account_of, open_folder, why_not_opened

from .accounts import as_account
from .errors import SetupError, run
from .spec import ClassSpec, CourseSpec


def give_exercises(spec: ClassSpec, course: CourseSpec) -> Path:
    """The course's exercises (solutions, hidden tests) in its grader's home, the grader's alone: root reads
    them and a process of the grader's own account writes them (``tar``), so that nothing the grader's
    account made in its home (a link) takes root's writing anywhere; what is there already is kept."""
    target = spec.home(course.grader) / "exercises"
    grader = as_account(course.grader, spec)
    run(["mkdir", "-p", "-m", "700", str(target)], **grader)
    packed = subprocess.Popen(["tar", "-C", str(spec.exercises), "-cf", "-", *course.assignments],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        run(["tar", "-C", str(target), "--skip-old-files", "--no-same-owner", "-xf", "-"], stdin=packed.stdout, **grader)
    finally:
        packed.stdout.close()
        _, error = packed.communicate()
    if packed.returncode != 0:
        raise SetupError(f"the exercises of {course.course_id} could not be read from {spec.exercises}: {error.decode().strip()}")
    run(["chmod", "700", str(target)], **grader)
    return target


def _course_folder(spec: ClassSpec, course: CourseSpec) -> int:
    """The course's folder of the exchange, opened as itself (a link there is refused, not followed), after
    checking it is its grader's: a student could make a folder of that name before the course is
    released (the exchange's root is writable by all), and then hold every submission to it."""
    exchange = open_folder(str(spec.exchange))  # (root's, in the state folder)
    try:
        folder = open_folder(course.course_id, dir_fd=exchange)
    except OSError as error:
        raise SetupError(f"{spec.exchange / course.course_id} is {why_not_opened(error, exchange)}: not the course's "
                         f"folder; remove it (rm -r '{spec.exchange / course.course_id}') and run set-up again") from None
    finally:
        os.close(exchange)
    owner = os.fstat(folder).st_uid
    if owner not in (0, pwd.getpwnam(course.grader).pw_uid):
        os.close(folder)
        raise SetupError(f"{spec.exchange / course.course_id} belongs to {account_of(owner)}, not to the course's "
                         f"grader {course.grader}: it was made before the course was released. Remove it "
                         f"(rm -r '{spec.exchange / course.course_id}') and run set-up again")
    return folder


def prepare_exchange(spec: ClassSpec, course: CourseSpec) -> None:
    """The course's folder of the exchange, made by root for its grader before the first release (nbgrader's
    release would take one a student made before it)."""
    try:
        os.mkdir(spec.exchange / course.course_id, 0o755)
    except FileExistsError:
        pass
    folder = _course_folder(spec, course)
    try:
        info = pwd.getpwnam(course.grader)
        os.fchown(folder, info.pw_uid, info.pw_gid)
        os.fchmod(folder, 0o755)
    finally:
        os.close(folder)


def harden_exchange(spec: ClassSpec, course: CourseSpec) -> None:
    """``inbound/`` gets the sticky bit (nobody renames or deletes another's entry); ``received/`` is the
    grader's alone (grader.hub_exchange's clerk moves each submission there as it arrives). Done from
    descriptors: the course's folder is its grader's, and whatever the grader's account put at these
    names is never followed by root."""
    info = pwd.getpwnam(course.grader)
    folder = _course_folder(spec, course)
    try:
        try:
            os.mkdir("received", 0o700, dir_fd=folder)
        except FileExistsError:
            pass
        for name, mode in (("inbound", None), ("received", 0o700)):
            where = spec.exchange / course.course_id / name
            try:
                opened = open_folder(name, dir_fd=folder)
            except OSError as error:
                raise SetupError(f"{where} is {why_not_opened(error, folder)}: remove it and run set-up again") from None
            try:
                if os.fstat(opened).st_uid not in (0, info.pw_uid):
                    raise SetupError(f"{where} belongs to {account_of(os.fstat(opened).st_uid)}, not to {course.grader}")
                if mode is None:
                    os.fchmod(opened, stat.S_IMODE(os.fstat(opened).st_mode) | stat.S_ISVTX)
                else:
                    os.fchown(opened, info.pw_uid, info.pw_gid)
                    os.fchmod(opened, mode)
            finally:
                os.close(opened)
    finally:
        os.close(folder)
