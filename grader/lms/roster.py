"""A class roster: who the students are, under the ids nbgrader uses and the ids the LMS uses.

Two CSV layouts are read:

- Canvas's gradebook export (Grades > Export): ``Student, ID, SIS User ID, SIS Login ID, Section, ...``.
  The nbgrader student id is the ``SIS Login ID`` (the university login, which is also the
  JupyterHub user name where there is one), else the ``SIS User ID``; ``ID`` is Canvas's own user
  id, the number in Canvas's download names. Its ``Points Possible`` row is skipped.
- nbgrader's student list (as ``nbgrader db student import`` reads it): ``id`` and any of
  ``first_name, last_name, email, lms_user_id``, plus the kit's optional ``sis_user_id``,
  ``sis_login_id`` and ``section``.

The roster given to ``collect`` or ``export`` is kept in the course (``.kitgrade/roster.json``) and
its names and LMS ids go into nbgrader's gradebook, so the formgrader shows them too.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path

from ..foundations.errors import UsageError

ROSTER_FILE = ".kitgrade/roster.json"
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: What a roster's id may be: nbgrader makes it a folder name, and ``+`` separates its exchange's fields.
ROSTER_ID = re.compile(r"^(?![.-])[\w.@-]{1,64}$")


@dataclass
class RosterStudent:
    id: str
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    lms_user_id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""

    @property
    def full_name(self) -> str:
        return " ".join(filter(None, [self.first_name, self.last_name]))


def name_key(text: str) -> str:
    """A name as compared across spellings: no accents, no case, no spaces, dots, dashes or underscores."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return "".join(c for c in plain.casefold() if c.isalnum())


def read_roster(path: Path) -> list[RosterStudent]:
    """Read a roster CSV (either layout); a file that is neither is a ``UsageError``."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such roster file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise UsageError(f"{path}: not a readable CSV roster ({type(error).__name__}: {error})") from None
    if not rows:
        raise UsageError(f"{path}: the roster is empty")
    header = [h.strip() for h in rows[0]]
    if all(c in header for c in ("Student", "ID", "SIS Login ID")):
        students = _from_canvas(path, header, rows[1:])
    elif "id" in header:
        students = [RosterStudent(**{k: (row[header.index(k)].strip() if header.index(k) < len(row) else "")
                                     for k in RosterStudent.__dataclass_fields__ if k in header})
                    for row in rows[1:] if any(cell.strip() for cell in row)]
    else:
        raise UsageError(f"{path}: not a roster: expected Canvas's gradebook export (columns "
                         f"{', '.join(CANVAS_COLUMNS)}) or nbgrader's student list (column id); found {', '.join(header[:6])}")
    seen: dict[str, str] = {}
    for student in students:
        if not student.id:
            raise UsageError(f"{path}: a student without an id ({student.full_name or student.lms_user_id or '?'})")
        student.id = unicodedata.normalize("NFC", student.id)
        if not ROSTER_ID.match(student.id):
            raise UsageError(f"{path}: {student.id!r} ({student.full_name or '?'}) cannot be a student id: nbgrader makes "
                             "it a folder name; use letters, digits and . _ @ - (not first: . or -)")
        key = name_key(student.id)
        if key in seen:
            raise UsageError(f"{path}: the ids {seen[key]!r} and {student.id!r} differ only in case, accents or "
                             "punctuation; make them distinct")
        seen[key] = student.id
    return students


def _from_canvas(path: Path, header: list[str], rows: list[list[str]]) -> list[RosterStudent]:
    column = {name: header.index(name) for name in CANVAS_COLUMNS if name in header}
    students = []
    for row in rows:
        cell = {name: (row[i].strip() if i < len(row) else "") for name, i in column.items()}
        if not cell.get("Student") or cell["Student"].startswith("Points Possible") or cell["Student"] == "Test Student":
            continue
        last, _, first = cell["Student"].partition(",")
        student_id = cell.get("SIS Login ID") or cell.get("SIS User ID")
        if not student_id:
            raise UsageError(f"{path}: {cell['Student']} has no SIS Login ID or SIS User ID to use as the student id")
        students.append(RosterStudent(student_id, first.strip(), last.strip(), "", cell.get("ID", ""),
                                      cell.get("SIS User ID", ""), cell.get("SIS Login ID", ""), cell.get("Section", "")))
    return students


def save_roster(course_root: Path, students: list[RosterStudent]) -> None:
    path = course_root / ROSTER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(s) for s in students], indent=1, ensure_ascii=False), encoding="utf-8")


def saved_roster(course_root: Path) -> list[RosterStudent]:
    path = course_root / ROSTER_FILE
    return [RosterStudent(**entry) for entry in json.loads(path.read_text(encoding="utf-8"))] if path.is_file() else []


def record_in_gradebook(course, students: list[RosterStudent]) -> None:
    """Names, e-mail and LMS ids of these students in nbgrader's gradebook (created where missing)."""
    import warnings

    from nbgrader.api import Gradebook

    with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gradebook:
        warnings.simplefilter("ignore")
        for student in students:
            fields = {k: v for k, v in (("first_name", student.first_name), ("last_name", student.last_name),
                                        ("email", student.email), ("lms_user_id", student.lms_user_id)) if v}
            gradebook.update_or_create_student(student.id, **fields)
