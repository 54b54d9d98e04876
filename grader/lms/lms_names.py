"""The names LMSs give to downloaded submissions, and what each says about who submitted.

Only the part of a name the LMS writes says who submitted: it comes first, and the student's own
file name comes after it, so each name is parsed from its start and the *first* place where the
LMS's pattern fits is the LMS's (a student can upload a file named like a classmate's download).
All files of one download come from one LMS: the LMS whose pattern most files fit is the
download's, and each file is read with that pattern alone.

- **Canvas** (Assignment > Download Submissions), one file per attachment:
  ``<lastnamefirstname>_<user id>_<attachment id>_<file>``, with ``LATE_`` before the user id for
  a late submission: ``doejane_12345_67890_autograd_basics.ipynb``. Canvas writes the name in lower
  case, of letters, digits, ``_`` and ``-``, and turns any ``_<digits>_`` in it into ``-<digits>-``:
  the first ``_<digits>_<digits>_`` is its own. The user id is Canvas's own (the ``ID`` column of
  Canvas's gradebook) and says who the student is; a student may be able to change the name. The
  attachment id grows with every upload: a larger one is a later attempt.
- **Moodle** (View all submissions > Download all submissions), a folder per participant by
  default since Moodle 3.1: ``<Full Name>_<participant id>_assignsubmission_file_/<file>``; with
  folders switched off, ``<Full Name>_<participant id>_assignsubmission_file_<file>``. Moodle
  turns ``_`` in the full name into a space. The participant id belongs to that one assignment, so
  a student is known by the full name: through the roster when one is given.
- **Blackboard** (Grade Centre > Assignment File Download):
  ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>``, plus a
  ``..._attempt_<date>.txt`` of submission details per attempt (read for nothing; not reported).
  The time is the attempt's: a later one replaces an earlier.
- **Folders**: ``<student>/<file>``, or ``<section>/<student>/<file>`` when no top folder holds a notebook.

Nothing here is a path: a name is parsed into the LMS's fields; whether those name a student is
decided against the roster, or the strict pattern ``STUDENT_ID`` (a name that does not fit it is
mapped to one that does, ``mapped_id``, and the mapping is listed).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

#: A student id the kit accepts from a download without a roster (nbgrader uses it as a folder name).
STUDENT_ID = re.compile(r"^(?!\.+$)[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")

CANVAS = re.compile(r"^(?P<name>[A-Za-z0-9_-]*?)_(?:(?P<late>LATE)_)?(?P<user>\d+)_(?P<attachment>\d+)_(?P<file>.+)$")
MOODLE_FILE = re.compile(r"^(?P<name>[^_/]+)_(?P<user>\d+)_assignsubmission_file_(?P<file>.+)$")
MOODLE_FOLDER = re.compile(r"^(?P<name>[^_/]+)_(?P<user>\d+)_+assignsubmission_file_?$")
BLACKBOARD = re.compile(r"^(?P<assignment>.+?)_(?P<name>[^_/]+)_attempt_"
                        r"(?P<stamp>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+)|\.txt)$")
#: The LMSs whose downloads are flat files, in the order a tie between them is settled.
FLAT_LMS = ("blackboard", "moodle", "canvas")


@dataclass
class DownloadName:
    """What one downloaded file's name says."""

    lms: str                 # "canvas", "moodle", "blackboard" or "folder"
    name: str                # the LMS's name of the student (Canvas's lastnamefirstname, Moodle's full name, a login)
    file: str                # the file's own name, as the student uploaded it
    lms_user_id: str = ""    # Canvas's user id, Moodle's participant id
    timestamp: str = ""      # when it was submitted, where the name says (Blackboard)
    attempt: int | None = None  # which upload, where the name says (Canvas's attachment id)
    late: bool = False       # Canvas marked it late
    metadata: bool = False   # a file the LMS adds about a submission (Blackboard's .txt), not a submission

    @property
    def origin(self) -> str:
        """Who the LMS says submitted it; two origins for one student are a conflict."""
        if self.lms_user_id:
            return f"{self.lms} {'participant' if self.lms == 'moodle' else 'user'} {self.lms_user_id}"
        return f"{self.lms} {self.name!r}"


def nfc(text: str) -> str:
    """One spelling of a name however the zip or file system stored it (a Mac writes NFD)."""
    return unicodedata.normalize("NFC", text)


def mapped_id(name: str) -> str:
    """A student id that fits ``STUDENT_ID``, made from an LMS name that does not: accents dropped,
    lower case, anything else between words an underscore (``José`` -> ``jose``, ``Jane Doe`` ->
    ``jane_doe``); empty if the name has no letter or digit to make one from."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    plain = re.sub(r"[^a-z0-9._@-]+", "_", plain.encode("ascii", "ignore").decode().lower())
    return plain.strip("._@-")[:64].rstrip("._@-")


def flat_lms(names: list[str]) -> str | None:
    """The LMS whose pattern most of these file names fit (None: none fits any)."""
    counts = {lms: sum(1 for name in names if _parse_flat_as(nfc(name), lms)) for lms in FLAT_LMS}
    best = max(FLAT_LMS, key=lambda lms: counts[lms])
    return best if counts[best] else None


def parse_flat(name: str, lms: str | None = None) -> DownloadName | None:
    """A file at the top of a download, read as ``lms`` names its files (by default: the first LMS
    whose pattern fits)."""
    name = nfc(name)
    for candidate in (lms,) if lms else FLAT_LMS:
        if parsed := _parse_flat_as(name, candidate):
            return parsed
    return None


def _parse_flat_as(name: str, lms: str) -> DownloadName | None:
    if lms == "blackboard" and (match := BLACKBOARD.match(name)):
        stamp = match["stamp"]
        timestamp = f"{stamp[:10]} {stamp[11:13]}:{stamp[14:16]}:{stamp[17:19]}"
        if match["file"] is None:
            return DownloadName("blackboard", match["name"], name, timestamp=timestamp, metadata=True)
        return DownloadName("blackboard", match["name"], match["file"], timestamp=timestamp)
    if lms == "moodle" and (match := MOODLE_FILE.match(name)):
        return DownloadName("moodle", match["name"], match["file"], lms_user_id=match["user"])
    if lms == "canvas" and (match := CANVAS.match(name)):
        return DownloadName("canvas", match["name"], match["file"], lms_user_id=match["user"],
                            attempt=int(match["attachment"]), late=bool(match["late"]))
    return None


def parse_folder(folder: str, file: str) -> DownloadName:
    """A file in a folder: a Moodle participant's folder, or a folder named after the student."""
    folder, file = nfc(folder), nfc(file)
    if match := MOODLE_FOLDER.match(folder):
        return DownloadName("moodle", match["name"], file, lms_user_id=match["user"])
    return DownloadName("folder", folder, file)


def examples(notebook: str, assignment: str) -> str:
    """The accepted names, spelled with a real notebook of the assignment."""
    return (f"doejane_12345_67890_{notebook} (Canvas), 'Jane Doe_4321_assignsubmission_file/{notebook}' "
            f"(Moodle, with --roster), {assignment}_jdoe_attempt_2026-01-15-10-00-00_{notebook} (Blackboard), "
            f"or jdoe/{notebook} (a folder per student)")
