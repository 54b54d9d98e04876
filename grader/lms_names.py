"""The names LMSs give to downloaded submissions, and what each says about who submitted.

- **Canvas** (Assignment > Download Submissions), one file per attachment:
  ``<lastnamefirstname>_<user id>_<attachment id>_<file>``, with ``LATE_`` before the user id for
  a late submission: ``doejane_12345_67890_autograd_basics.ipynb``. The user id is Canvas's own
  (the ``ID`` column of Canvas's gradebook).
- **Moodle** (View all submissions > Download all submissions), a folder per participant by
  default since Moodle 3.1: ``<Full Name>_<participant id>_assignsubmission_file/<file>``; with
  folders switched off, ``<Full Name>_<participant id>_assignsubmission_file_<file>``. The
  participant id belongs to that one assignment, so a student is known by the full name: Moodle
  downloads need a roster.
- **Blackboard** (Grade Centre > Assignment File Download):
  ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>``, plus a
  ``..._attempt_<date>.txt`` of submission details per attempt (read for nothing; not reported).
- **Folders**: ``<student>/<file>``, or ``<section>/<student>/<file>`` when the top folder holds
  only folders.

Nothing here is a path: a name is parsed into the LMS's fields; whether those name a student is
decided against the roster or the strict pattern ``STUDENT_ID``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A student id the kit accepts from a download without a roster (nbgrader uses it as a folder name).
STUDENT_ID = re.compile(r"^(?!\.+$)[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")

CANVAS = re.compile(r"^(?P<name>[A-Za-z0-9.-]+?)_(?:(?P<late>LATE)_)?(?P<user>\d+)_(?P<attachment>\d+)_(?P<file>.+)$")
MOODLE_FILE = re.compile(r"^(?P<name>[^_/]+)_(?P<user>\d+)_assignsubmission_file_(?P<file>.+)$")
MOODLE_FOLDER = re.compile(r"^(?P<name>[^_/]+)_(?P<user>\d+)_+assignsubmission_file_?$")
BLACKBOARD = re.compile(r"^(?P<assignment>.+)_(?P<name>[^_/]+)_attempt_"
                        r"(?P<stamp>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+)|\.txt)$")


@dataclass
class DownloadName:
    """What one downloaded file's name says."""

    lms: str                 # "canvas", "moodle", "blackboard" or "folder"
    name: str                # the LMS's name of the student (Canvas's lastnamefirstname, Moodle's full name, a login)
    file: str                # the file's own name, as the student uploaded it
    lms_user_id: str = ""    # Canvas's user id
    timestamp: str = ""      # when it was submitted, where the name says (Blackboard)
    late: bool = False       # Canvas marked it late
    metadata: bool = False   # a file the LMS adds about a submission (Blackboard's .txt), not a submission

    @property
    def origin(self) -> str:
        """Who the LMS says submitted it; two origins for one student are a conflict."""
        return f"{self.lms} user {self.lms_user_id}" if self.lms_user_id else f"{self.lms} {self.name!r}"


def parse_flat(name: str) -> DownloadName | None:
    """A file at the top of a download: Canvas, Moodle (no folders) or Blackboard."""
    if match := BLACKBOARD.match(name):
        stamp = match["stamp"]
        timestamp = f"{stamp[:10]} {stamp[11:13]}:{stamp[14:16]}:{stamp[17:19]}"
        if match["file"] is None:
            return DownloadName("blackboard", match["name"], name, timestamp=timestamp, metadata=True)
        return DownloadName("blackboard", match["name"], match["file"], timestamp=timestamp)
    if match := MOODLE_FILE.match(name):
        return DownloadName("moodle", match["name"], match["file"])
    if match := CANVAS.match(name):
        return DownloadName("canvas", match["name"], match["file"], lms_user_id=match["user"], late=bool(match["late"]))
    return None


def parse_folder(folder: str, file: str) -> DownloadName:
    """A file in a folder: a Moodle participant's folder, or a folder named after the student."""
    if match := MOODLE_FOLDER.match(folder):
        return DownloadName("moodle", match["name"], file)
    return DownloadName("folder", folder, file)


def examples(notebook: str, assignment: str) -> str:
    """The accepted names, spelled with a real notebook of the assignment."""
    return (f"doejane_12345_67890_{notebook} (Canvas), 'Jane Doe_4321_assignsubmission_file/{notebook}' "
            f"(Moodle, with --roster), {assignment}_jdoe_attempt_2026-01-15-10-00-00_{notebook} (Blackboard), "
            f"or jdoe/{notebook} (a folder per student)")
