"""The student's side: nbgrader's submit, whole and private (the students' servers run it)."""
from __future__ import annotations

import os
import secrets
import shutil
import tempfile

from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.exchange.default.submit import ExchangeSubmit

from .entries import STUDENT_CLOCK


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
