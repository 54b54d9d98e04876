"""nbgrader exchange plugins for a class on one JupyterHub with one system account per student.

nbgrader's exchange is a shared folder; its file names say who submitted. Two gaps of the default
exchange matter when students share a machine:

* ``PrivateSubmit``: nbgrader leaves a submission readable by every account (only the folder
  listing of ``inbound/`` is closed). The inbound folder is set-group-id to the course's grader
  group, so a submission readable by its owner and that group is enough for collecting it;
  other students can no longer read it even if they learn its name.
* ``OwnerCheckedCollect``: nbgrader only warns when a submission named ``alice+ps1+...`` is
  owned by another account. Here such a submission is refused (logged as an error) before the
  newest submission of each student is chosen, so a forged file can neither replace nor hide a
  student's own submission.

Enable them in nbgrader's configuration (deploy/hub/kithub.py writes both):

    c.ExchangeFactory.submit = "grader.hub_exchange.PrivateSubmit"          # the students' servers
    c.ExchangeFactory.collect = "grader.hub_exchange.OwnerCheckedCollect"   # the course's nbgrader_config.py
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import tempfile
from itertools import groupby

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.submit import ExchangeSubmit

NOT_OTHERS = ~0o007


class PrivateSubmit(ExchangeSubmit):
    def do_copy(self, src, dest, log=None):
        if os.path.dirname(dest) != self.inbound_path:
            return super().do_copy(src, dest, log)
        # nbgrader's own copy (its size limits and ignore patterns) into a private folder first:
        # copytree copies the folder's mode, which would drop the set-group-id bit that gives
        # every file written into the submission afterwards the grader's group.
        with tempfile.TemporaryDirectory(prefix="nbgrader-submit-") as staging:
            super().do_copy(src, os.path.join(staging, "copy"), log)
            os.mkdir(dest)  # inherits inbound/'s group and its set-group-id bit
            for folder, _, files in os.walk(os.path.join(staging, "copy")):
                target = os.path.join(dest, os.path.relpath(folder, os.path.join(staging, "copy")))
                os.makedirs(target, exist_ok=True)
                for name in files:
                    shutil.copyfile(os.path.join(folder, name), os.path.join(target, name))

    def set_perms(self, dest, fileperms, dirperms):
        super().set_perms(dest, fileperms & NOT_OTHERS, dirperms & NOT_OTHERS)


def owner_of(path: str) -> str:
    try:
        return pwd.getpwuid(os.stat(path).st_uid).pw_name
    except KeyError:
        return "unknown id"


class OwnerCheckedCollect(ExchangeCollect):
    def init_src(self):
        super().init_src()  # the course's inbound folder, its checks, the due date
        pattern = os.path.join(self.inbound_path, "{}+{}+*".format(
            self.coursedir.student_id or "*", self.coursedir.assignment_id))
        records = []
        for path in glob.glob(pattern):
            record = self._path_to_record(path)
            owner = owner_of(path)
            if owner != record["username"]:
                self.log.error("refused %s: it claims to be %s's submission but is owned by %s",
                               os.path.basename(path), record["username"], owner)
                continue
            records.append(record)
        records.sort(key=lambda r: r["username"])
        newest_first = {user: self._sort_by_timestamp(list(group))
                        for user, group in groupby(records, lambda r: r["username"])}
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                duedate = gradebook.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                duedate = None
        self.src_records = []
        for submissions in newest_first.values():
            if duedate is not None and self.before_duedate:
                on_time = [r for r in submissions if r["timestamp"] <= duedate]
                submissions = on_time or submissions
            self.src_records.append(submissions[0])
