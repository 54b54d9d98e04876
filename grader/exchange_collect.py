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
"""
from __future__ import annotations

import os
import shutil

from nbgrader.exchange.default.collect import ExchangeCollect

from .hub_exchange.entries import STUDENT_CLOCK, TIME_FORMAT, copy_submission, open_folder, why_not_opened

#: the configuration that names this collect, for a course whose configuration names none
CLASS_NAME = "grader.exchange_collect.RegularFilesCollect"


class RegularFilesCollect(ExchangeCollect):
    """nbgrader's collect (its records, its choice of each student's newest submission, its gradebook),
    with each submission copied file by file: regular files of the folder's owner only."""

    def do_copy(self, src, dest):
        record = next(r for r in self.src_records if r["filename"] == os.path.basename(src))
        try:
            folder = open_folder(src)
        except OSError as error:
            self.log.error("not collected: %s's submission %r: %s", record["username"], record["filename"],
                           why_not_opened(error))
            return
        staging = os.path.join(os.path.dirname(dest), f".{os.path.basename(dest)}.collecting")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            for relative, reason in copy_submission(folder, staging):
                self.log.error("set aside in %s's submission: %r: %s", record["username"], relative, reason)
            with open(os.path.join(staging, STUDENT_CLOCK), "w") as handle:
                handle.write(record["timestamp"].strftime(TIME_FORMAT))
            if os.path.isdir(dest):
                shutil.rmtree(dest)
            os.rename(staging, dest)
        finally:
            os.close(folder)
            shutil.rmtree(staging, ignore_errors=True)


def with_regular_files_collect(config):
    """``config`` (a course's nbgrader configuration, a copy) collecting with ``RegularFilesCollect``,
    unless it names a collect of its own (the hub's ``GuardedCollect``)."""
    if "collect" not in config.get("ExchangeFactory", {}):
        config.ExchangeFactory.collect = CLASS_NAME
    return config
