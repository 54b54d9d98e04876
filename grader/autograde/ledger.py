"""What is graded already: ``.kitgrade/graded/<assignment>.json``, one entry per student."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from ..foundations.atomic import write_json
from ..course import KIT_DIR, Course
from ..foundations.versions import kit_versions

GRADED = f"{KIT_DIR}/graded"


class Ledger:
    """What is graded already, one entry per student.

    An entry is written as soon as nbgrader has put the student's grade in the gradebook, and holds
    a fingerprint of everything the grade depends on (the submitted files, the assignment's source
    and due date, the course's settings, the kit's and nbgrader's versions), a digest of the
    submitted files alone (so that export can tell a new submission from a new kit) and the reasons
    of the report. A student whose entry matches, and whose submission the gradebook holds, is not graded again.

    Before nbgrader writes anything of a student, their entry is marked ``unfinished`` (``begin``);
    the mark goes when the grade is recorded, or when what nbgrader wrote was undone. A mark left
    behind (the machine failed and the undo failed too, or the run was killed) says the gradebook
    may hold part of a grading: the next run grades them again, and export does not take it as a grade.
    """

    def __init__(self, course: Course, assignment: str):
        self.course, self.assignment = course, assignment
        self.path = course.path(GRADED, f"{assignment}.json")
        try:
            self.entries = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}
        self._common = None
        self._in_gradebook = None

    def fingerprint(self, student: str) -> str:
        """A digest of everything ``student``'s grade depends on ("" if a submitted file cannot be read)."""
        return self._digests(student)[0]

    def submission_digest(self, student: str) -> str:
        """A digest of ``student``'s submitted files alone ("" if one cannot be read)."""
        return self._digests(student)[1]

    def _digests(self, student: str) -> tuple[str, str]:
        """``(fingerprint, submission digest)``: the submitted files, read once, with and without the rest."""
        if self._common is None:
            common = hashlib.sha256(json.dumps(kit_versions()).encode())
            for path in [self.course.root / "nbgrader_config.py", *self.course.source_notebooks(self.assignment)]:
                common.update(path.name.encode() + b"\0" + (path.read_bytes() if path.exists() else b""))
            common.update(f"due {self._due_date()}".encode())  # a due date set or moved: lateness changes
            self._common = common.hexdigest()
        digest, submission = hashlib.sha256(self._common.encode()), hashlib.sha256()
        folder = self.course.path("submitted", student, self.assignment)
        try:
            for name, pieces in submitted_files(folder):
                for each in (digest, submission):
                    each.update(name + b"\0")
                for piece in pieces():
                    digest.update(piece)
                    submission.update(piece)
                for each in (digest, submission):
                    each.update(b"\0")
        except OSError:  # matches nothing recorded: the run tries it, and says why it cannot grade it
            return "", ""
        return digest.hexdigest(), submission.hexdigest()

    def _due_date(self):
        with warnings.catch_warnings(), Gradebook(self.course.db_url, self.course.course_id) as gradebook:
            warnings.simplefilter("ignore")
            try:
                return gradebook.find_assignment(self.assignment).duedate
            except MissingEntry:
                return None

    def graded(self, student: str) -> list[str] | None:
        """The reasons recorded for ``student`` if graded as the submission is now, else None."""
        entry, fingerprint = self.entries.get(student), self.fingerprint(student)
        if not entry or entry.get("unfinished") or not fingerprint or entry.get("fingerprint") != fingerprint:
            return None
        if self._in_gradebook is None:
            with warnings.catch_warnings(), Gradebook(self.course.db_url, self.course.course_id) as gradebook:
                warnings.simplefilter("ignore")
                try:
                    self._in_gradebook = {s.student.id for s in gradebook.find_assignment(self.assignment).submissions}
                except MissingEntry:
                    self._in_gradebook = set()
        return list(entry.get("reasons", [])) if student in self._in_gradebook else None

    def resubmitted(self, student: str) -> bool:
        """Whether ``student``'s submitted files changed since a run graded them (False if no run
        recorded one; an entry written before the ledger kept the submission's own digest: whether
        anything the grade depends on changed, as it could not tell them apart)."""
        entry = self.entries.get(student)
        if not entry or "fingerprint" not in entry:
            return False
        if "submission" in entry:
            return entry["submission"] != self.submission_digest(student)
        return entry["fingerprint"] != self.fingerprint(student)

    def graded_otherwise(self, student: str) -> bool:
        """Whether ``student``'s grade was given by another kit, nbgrader, course configuration,
        source or due date than this run's, their submission unchanged (an upgrade of the kit, say):
        the next ``autograde`` grades them again."""
        entry = self.entries.get(student)
        return bool(entry) and "submission" in entry and entry.get("fingerprint") != self.fingerprint(student) \
            and not self.resubmitted(student)

    def unfinished(self, student: str) -> bool:
        """Whether a grading of ``student`` stopped halfway and what it wrote may still be in the gradebook."""
        return bool(self.entries.get(student, {}).get("unfinished"))

    def begin(self, student: str) -> None:
        """Marked before nbgrader writes anything of ``student`` (the entry is otherwise kept as it is)."""
        self._set(student, {**self.entries.get(student, {}), "unfinished": True})

    def undone(self, student: str) -> None:
        """What nbgrader wrote of ``student`` was undone: the mark goes; the next run grades them again
        unless what the grade depends on changed since graded (the entry then says whose grade the
        gradebook holds)."""
        entry = {k: v for k, v in self.entries.get(student, {}).items() if k != "unfinished"}
        if "fingerprint" in entry and entry["fingerprint"] != self.fingerprint(student):
            self._set(student, entry)
        else:
            self.forget(student)

    def record(self, student: str, reasons: list[str]) -> None:
        fingerprint, submission = self._digests(student)
        self._set(student, {"fingerprint": fingerprint, "submission": submission, "reasons": list(reasons)})
        if self._in_gradebook is not None:
            self._in_gradebook.add(student)

    def forget(self, student: str) -> None:
        """``student`` is to be graded again (what the gradebook held of them was undone)."""
        if student in self.entries:
            self._write({s: e for s, e in self.entries.items() if s != student})
            del self.entries[student]
        if self._in_gradebook is not None:
            self._in_gradebook.discard(student)

    def _set(self, student: str, entry: dict) -> None:
        self._write({**self.entries, student: entry})
        self.entries[student] = entry

    def _write(self, entries: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.path, entries)  # a run killed (or a disk full) while writing leaves the ledger whole


#: A submitted file up to this size is known by its content; a bigger one (a student's choice: a sparse
#: file of 100 GiB takes no room on the disk) by its size and time of change, never read whole.
CONTENT_READ_UP_TO = 64 * 2**20
#: How deep the walk of a submitted folder goes (a student may nest folders thousands deep).
DEEPEST_FOLDER = 32


def submitted_files(folder: Path):
    """``(name, pieces)`` of each regular file under ``folder``, in the order of their paths: the path
    as bytes (any name a file system holds, UTF-8 or not), and a function giving what the file holds
    in pieces (its content, or its size and time of change past ``CONTENT_READ_UP_TO``). Links are not
    followed; the walk keeps its own stack and stops ``DEEPEST_FOLDER`` levels down (a folder deeper
    still counts by its name)."""
    found, stack = [], [(os.fsencode(folder), b"", 0)]
    while stack:
        where, relative, depth = stack.pop()
        with os.scandir(where) as entries:
            for entry in entries:
                name = relative + b"/" + entry.name if relative else entry.name
                if entry.is_dir(follow_symlinks=False):
                    if depth < DEEPEST_FOLDER:
                        stack.append((entry.path, name, depth + 1))
                    else:
                        found.append((name, lambda: [b"a folder deeper than the walk"]))
                elif entry.is_file(follow_symlinks=False):
                    found.append((name, lambda entry=entry: _pieces(entry)))
    return sorted(found, key=lambda item: item[0].split(b"/"))


def _pieces(entry: os.DirEntry):
    info = entry.stat(follow_symlinks=False)
    if info.st_size > CONTENT_READ_UP_TO:
        yield f"{info.st_size} bytes, changed {info.st_mtime_ns}".encode()
        return
    with open(entry.path, "rb", buffering=0) as file:
        while piece := file.read(1 << 20):
            yield piece
