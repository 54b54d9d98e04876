"""nbgrader's collect from its plain exchange (``c.Exchange.root``, no hub), copying only what a student
handed in: their regular files, never through a link.

nbgrader's own collect copies a submission with ``shutil.copytree``, which follows symbolic links: a
student who puts ``autograd_basics.ipynb -> /home/teacher/ad101/source/ps1/autograd_basics.ipynb`` in
their folder of ``inbound/`` (the target need not be theirs to read: the instructor's collect reads it)
has the instructor's solutions collected, graded and returned as theirs; an entry that is itself a
link to a folder of the instructor's has that whole folder collected. Here each submission is read as
the hub's clerk reads one (``hub_exchange.entries.read_submission``, from descriptors): a link, a hard
link, a file of another owner, a device or pipe is left out and named in the log; an entry that is
not a folder of its own is not collected.

An entry named for a student whose account is on this machine but made by another account (nbgrader
only warns "cheating attempt?" and collects the newest: a classmate's blank notebook handed in a minute
later replaced the student's work, graded 0) is set aside, and the student's own newest entry is
collected; so is an entry whose name holds no time nbgrader can read (its collect stopped for the
whole class on one). nbgrader's own rules of a copy still hold: ``max_dir_size`` (its error, which
``collect`` reads to collect the others), ``CourseDirectory.ignore``, ``include``, ``max_file_size``
and ``groupshared``.
"""
from __future__ import annotations

import os
import pwd
import shutil

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns, parse_utc

from ..hub_exchange.entries import STUDENT_CLOCK, TIME_FORMAT, bytes_under, copy_submission, open_folder, why_not_opened

#: the time of an entry whose name holds none that can be read (sorted before every other)
NO_TIME = "1970-01-01 00:00:00.000000 UTC"
#: the configuration that names this collect, for a course whose configuration names none
CLASS_NAME = "grader.commands.exchange_collect.RegularFilesCollect"


class RegularFilesCollect(ExchangeCollect):
    """nbgrader's collect (its records, its choice of each student's newest submission, its gradebook),
    with each submission copied file by file: regular files of the folder's owner only."""

    def _path_to_record(self, path):
        """nbgrader's record of an entry, and why it is set aside (``set_aside``), or None."""
        name = os.path.basename(path)
        try:
            record = super()._path_to_record(path)
        except (ValueError, OverflowError):  # nbgrader's parse_utc raised: its whole collect stopped
            record = {"username": name.rsplit("+", 3)[0], "filename": name, "timestamp": parse_utc(NO_TIME)}
            record["set_aside"] = "its time cannot be read"
        else:
            made_by = handed_in_by_another(path, record["username"])
            record["set_aside"] = None if made_by is None else f"named for {record['username']} but {made_by} made it"
        if record["set_aside"] is not None:
            self.log.error("set aside %r in inbound/: %s; not collected", name, record["set_aside"])
        return record

    def _sort_by_timestamp(self, records):
        """Newest first, every entry set aside after the student's own."""
        return sorted(records, key=lambda r: (r["set_aside"] is None, r["timestamp"]), reverse=True)

    def do_copy(self, src, dest):
        record = next(r for r in self.src_records if r["filename"] == os.path.basename(src))
        if record["set_aside"] is not None:  # the student has no entry that is not (said above)
            _remove_if_empty(os.path.dirname(dest))
            return
        try:
            folder = open_folder(src)
        except OSError as error:
            self.log.error("not collected: %s's submission %r: %s", record["username"], record["filename"],
                           why_not_opened(error))
            _remove_if_empty(os.path.dirname(dest))
            return
        staging = os.path.join(os.path.dirname(dest), f".{os.path.basename(dest)}.collecting")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            size, most = bytes_under(folder), 1000 * self.coursedir.max_dir_size
            if size > most:  # nbgrader's words: collect collects the others when it reads them
                self.log.error("Directory size is too big")
                raise RuntimeError(f"Directory size is too big. Size is {size}, maximum size is {most}")
            for relative, reason in copy_submission(folder, staging):
                self.log.error("set aside in %s's submission: %r: %s", record["username"], relative, reason)
            self._leave_out_what_nbgrader_ignores(staging)
            with open(os.path.join(staging, STUDENT_CLOCK), "w") as handle:
                handle.write(record["timestamp"].strftime(TIME_FORMAT))
            if os.path.isdir(dest):
                shutil.rmtree(dest)
            os.rename(staging, dest)
        finally:
            os.close(folder)
            shutil.rmtree(staging, ignore_errors=True)
            if not os.path.isdir(dest):  # nothing copied (a full disk, a refusal): no empty folder of the student's
                _remove_if_empty(os.path.dirname(dest))

    def _leave_out_what_nbgrader_ignores(self, staging: str) -> None:
        """What nbgrader's copy would not have copied (``ignore``, ``include``, ``max_file_size``) removed
        from the copy; a group-shared course's copy made group-writable as nbgrader makes it."""
        ignored = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                  max_file_size=self.coursedir.max_file_size, log=self.log)
        for directory, folders, files in os.walk(staging):
            for name in ignored(directory, folders + files):
                path = os.path.join(directory, name)
                shutil.rmtree(path) if name in folders else os.unlink(path)
            folders[:] = [f for f in folders if os.path.isdir(os.path.join(directory, f))]
            if self.coursedir.groupshared:
                os.chmod(directory, 0o2770)
                for name in files:
                    if os.path.isfile(os.path.join(directory, name)):
                        os.chmod(os.path.join(directory, name), 0o660)


def _remove_if_empty(folder: str) -> None:
    """nbgrader makes ``submitted/<student>`` before it copies: left empty, it would count as handed in."""
    try:
        os.rmdir(folder)
    except OSError:
        pass


def handed_in_by_another(path: str, student: str) -> str | None:
    """The account that made the exchange entry ``path``, if the student it is named for has an account
    of their own on this machine and it is not that one; else None (on a hub whose servers all run as
    one account, or a course whose student ids are no accounts, the owner says nothing)."""
    try:
        own = pwd.getpwnam(student).pw_uid
        made_by = os.lstat(path).st_uid
    except (KeyError, OSError):
        return None
    if made_by == own:
        return None
    try:
        return pwd.getpwuid(made_by).pw_name
    except KeyError:
        return f"uid {made_by}"


def with_regular_files_collect(config):
    """``config`` (a course's nbgrader configuration, a copy) collecting with ``RegularFilesCollect``,
    unless it names a collect of its own (the hub's ``GuardedCollect``)."""
    if "collect" not in config.get("ExchangeFactory", {}):
        config.ExchangeFactory.collect = CLASS_NAME
    return config
