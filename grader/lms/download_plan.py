"""``collect --from``, step 2: whose each downloaded file is, decided before anything is written.

Identity comes only from what the LMS wrote (``lms_names``): Canvas's user id, Blackboard's
username, Moodle's full name, the folder the download put the file in; never from the file name a
student chose. Through the roster when one is given, else:

- a name that is a valid student id is that student; one that is not (``José``, ``Jane Doe``) is
  mapped to one (``jose``, ``jane_doe``), and the mapping is listed;
- a Canvas user is known by their user id: the id a Canvas user was collected under before (the
  gradebook keeps it) stays theirs; a name two Canvas users share gives each ``<name>-<user id>``.

A file that could belong to two students is set aside and listed, and never costs a classmate
their own submission: where one origin names the student exactly (the roster's id, a folder named
as the id) and another only resembles them (by case, accents or a mapping), the exact one is
collected and the other set aside. Names that differ only in case are different students, each
collected, and said.

Newest wins: a student's notebook already in ``submitted/`` is replaced by a later attempt (later by
the LMS's time, Blackboard, or upload number, Canvas's attachment id); an older attempt is left out
and said; where neither says which is newer, nothing is guessed: the conflict is listed and the
earlier notebook stays. What each collect took is kept in ``.kitgrade/collected/<assignment>.json``,
marked pending while it is written, so a collect that was killed halfway is resumed by running it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .collect_ledger import CollectLedger
from ..course import Course
from .download_files import DownloadedFile
from .lms_names import MOODLE_FOLDER, STUDENT_ID, DownloadName, flat_lms, mapped_id, nfc, parse_flat, parse_folder
from .roster import RosterStudent, name_key


@dataclass
class Submission:
    student: str
    origin: str
    files: dict[str, bytes] = field(default_factory=dict)     # file name -> content
    sources: list[str] = field(default_factory=list)
    timestamp: str = ""          # the attempt's time, where the LMS wrote one (Blackboard)
    attempt: int | None = None   # the upload's number, where the LMS wrote one (Canvas's attachment id)
    late: bool = False
    roster: RosterStudent | None = None
    lms_user_id: str = ""        # Canvas's user id


@dataclass
class CollectOutcome:
    assignment: str
    collected: dict[str, Submission] = field(default_factory=dict)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)       # roster students with nothing collected
    replaced: list[str] = field(default_factory=list)       # students whose earlier submission was replaced
    mapped: list[str] = field(default_factory=list)         # LMS names taken as another id: "'José' -> jose"
    notes: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)     # not collected because of the machine: why

    @property
    def status(self) -> int:
        return 1 if self.conflicts or self.failed else 0

    def summary(self) -> str:
        from ..foundations.student_text import for_terminal as shown  # names and file names are the students'

        students = sorted(self.collected)
        lines = [f"{self.assignment}: {len(students)} submission(s) into submitted/: {shown(', '.join(students))}"]
        if self.replaced:
            lines.append(f"  replaced the earlier submission of: {shown(', '.join(sorted(self.replaced)))}")
        if self.mapped:
            lines.append(f"  LMS names that are not student ids, collected as: {shown('; '.join(self.mapped))}")
        late = sorted(s for s, sub in self.collected.items() if sub.late)
        if late:
            lines.append(f"  marked LATE by Canvas: {shown(', '.join(late))}")
        lines += [f"  note: {shown(note)}" for note in self.notes]
        if self.conflicts:
            lines.append(f"  {len(self.conflicts)} conflict(s), not collected (resolve them and collect again):")
            lines += [f"    - {shown(c)}" for c in self.conflicts]
        if self.left_out:
            lines.append(f"  {len(self.left_out)} file(s) left out:")
            lines += [f"    - {shown(path)}: {shown(reason)}" for path, reason in self.left_out]
        if self.missing:
            lines.append(f"  in the roster, nothing submitted: {shown(', '.join(self.missing))}")
        if self.failed:
            lines.append(f"  {len(self.failed)} not collected (collect again once this is put right):")
            lines += [f"    - {shown(student)}: {shown(why)}" for student, why in sorted(self.failed.items())]
        return "\n".join(lines)


# ---- where each file is, and what its name says --------------------------------------------------
def _sections(files: list[DownloadedFile]) -> bool:
    """Whether the download is ``<section>/<student>/<file>``: no top folder holds a notebook of its own
    (else a deeper folder is inside a student's folder, and the student named it, not the LMS)."""
    depths = [len(PurePosixPath(f.path).parts) for f in files if f.path.endswith(".ipynb")]
    return bool(depths) and min(depths) >= 3


def _identify(entry: DownloadedFile, sections: bool, lms: str | None) -> DownloadName | str:
    """What the file's place and name say, or why it is left out."""
    parts = PurePosixPath(entry.path).parts
    if len(parts) == 1:
        named = parse_flat(parts[0], lms)
        if named is None and parse_flat(parts[0]) is not None:
            return f"named like another LMS's download than the rest of this one ({lms})"
        return named or "named like no LMS download"
    if len(parts) == 2 and not sections:
        return parse_folder(parts[0], parts[1])
    if len(parts) == 3 and sections and not MOODLE_FOLDER.match(nfc(parts[0])):
        return parse_folder(parts[1], parts[2])
    return (f"inside a sub-folder of {parts[0]!r}; only <student>/<file> is read (and <section>/<student>/<file> "
            "when no top folder holds a notebook)")


@dataclass
class _Claim:
    student: RosterStudent
    exact: bool        # the LMS wrote this very student (the roster's id, a Canvas user id, a folder named as the id)
    how: str = ""      # how an inexact name was matched, for the listing


class _Resolver:
    """LMS names to students: through the roster if there is one, else the strict pattern (or a mapping)."""

    def __init__(self, roster: list[RosterStudent] | None, canvas: dict[str, str], known: dict[str, str]):
        self.roster = roster
        if roster is not None:
            self.by_id = {nfc(s.id): s for s in roster} | {nfc(s.sis_login_id): s for s in roster if s.sis_login_id}
            self.by_fold: dict[str, list[RosterStudent]] = {}
            for key, s in self.by_id.items():
                if s not in self.by_fold.setdefault(key.casefold(), []):
                    self.by_fold[key.casefold()].append(s)
            self.by_lms_id = {s.lms_user_id: s for s in roster if s.lms_user_id}
            self.by_name: dict[str, list[RosterStudent]] = {}
            for s in roster:
                for key in {name_key(s.full_name), name_key(f"{s.last_name}{s.first_name}")} - {""}:
                    self.by_name.setdefault(key, []).append(s)
        else:
            self.canvas = _canvas_ids(canvas, known)

    def claim(self, named: DownloadName) -> _Claim | str:
        if self.roster is None:
            return self._without_roster(named)
        if named.lms == "canvas":
            found = self.by_lms_id.get(named.lms_user_id)
            return _Claim(found, True) if found else (f"Canvas user {named.lms_user_id} ({named.name}) is not in the "
                                                      "roster; add them to it to collect this file")
        if named.lms == "moodle":
            matches = self.by_name.get(name_key(named.name), [])
            if len(matches) == 1:
                return _Claim(matches[0], False)
            return (f"Moodle's full name {named.name!r} " + ("matches several students in the roster; collect this file "
                    "by hand" if matches else "is not in the roster; add them to it to collect this file"))
        if found := self.by_id.get(named.name):
            return _Claim(found, True)
        folded = self.by_fold.get(named.name.casefold(), [])
        if len(folded) == 1:
            return _Claim(folded[0], False, f"{named.name!r} -> {folded[0].id}")
        return f"{named.name!r} is not a student id in the roster; add them to it to collect this file"

    def _without_roster(self, named: DownloadName) -> _Claim | str:
        if named.lms == "canvas":
            student, how = self.canvas[named.lms_user_id]
            return _Claim(RosterStudent(student, lms_user_id=named.lms_user_id), True, how)
        if STUDENT_ID.match(named.name) and named.lms != "moodle":
            return _Claim(RosterStudent(named.name), True)
        student = mapped_id(named.name)
        if not student:
            return f"{named.name!r} has no letter or digit to make a student id of; pass --roster to say who it is"
        return _Claim(RosterStudent(student), False, f"{named.name!r} -> {student}")


def _canvas_ids(names: dict[str, str], known: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Canvas user id -> (student id, how it was made, if not from the name as it is). The id a user
    was collected under before stays theirs; a name that another user has, here or in the gradebook,
    gives ``<name>-<user id>`` (a student may choose their name in Canvas; the user id is Canvas's)."""
    taken = set(known.values())
    wanted: dict[str, list[str]] = {}
    result = {}
    for user, name in sorted(names.items()):
        if user in known:
            result[user] = (known[user], "")
        else:
            wanted.setdefault(name if STUDENT_ID.match(name) else mapped_id(name) or "canvas", []).append(user)
    for base, users in wanted.items():
        for user in users:
            if len(users) == 1 and base not in taken and base != "canvas":
                result[user] = (base, "" if base == names[user] else f"{names[user]!r} -> {base}")
            else:
                result[user] = (f"{base}-{user}", f"Canvas user {user} ({names[user]!r}) -> {base}-{user}, as "
                                + (f"{len(users)} Canvas users are named so" if len(users) > 1 else
                                   f"{base!r} is another Canvas user's id"))
    return result


# ---- the plan ----------------------------------------------------------------------------------------
def plan_collect(course: Course, assignment: str, files: list[DownloadedFile], roster: list[RosterStudent] | None, *,
                 outcome: CollectOutcome, known_canvas_users: dict[str, str]) -> None:
    """Map every downloaded file to a student (or to why not); see the module's docstring."""
    sections = _sections(files)
    lms = flat_lms([f.path for f in files if "/" not in f.path])
    identified = [(entry, _identify(entry, sections, lms)) for entry in files]
    spellings: dict[str, set[str]] = {}
    for _, named in identified:
        if isinstance(named, DownloadName) and named.lms == "canvas":
            spellings.setdefault(named.lms_user_id, set()).add(named.name)
    canvas = {user: min(names) for user, names in spellings.items()}
    outcome.notes += [f"Canvas user {user} appears under {len(names)} names ({', '.join(sorted(names))}): one student, "
                      "known by the user id" for user, names in sorted(spellings.items()) if len(names) > 1]
    resolver = _Resolver(roster, canvas, known_canvas_users)
    by_student: dict[str, list[tuple[DownloadedFile, DownloadName, _Claim]]] = {}
    for entry, named in identified:
        if isinstance(named, str):
            outcome.left_out.append((entry.path, named))
            continue
        if named.metadata:
            continue
        if not named.file.endswith(".ipynb"):
            outcome.left_out.append((entry.path, "not a notebook (.ipynb)"))
            continue
        if "/" in named.file or named.file in (".", "..") or len(named.file) > 200:
            outcome.left_out.append((entry.path, "not a usable file name"))
            continue
        claim = resolver.claim(named)
        if isinstance(claim, str):
            outcome.left_out.append((entry.path, claim))
            continue
        by_student.setdefault(claim.student.id, []).append((entry, named, claim))

    ledger = CollectLedger(course, assignment)
    for student, entries in sorted(by_student.items()):
        entries = _one_origin(student, entries, outcome)
        entries = entries and _newest_files(student, entries, outcome)
        if not entries:
            continue
        submission = Submission(student, _origin(*entries[0][:2]), roster=entries[0][2].student,
                                timestamp=max(n.timestamp for _, n, _ in entries),
                                attempt=max((n.attempt for _, n, _ in entries if n.attempt is not None), default=None),
                                late=any(n.late for _, n, _ in entries),
                                lms_user_id=entries[0][1].lms_user_id if entries[0][1].lms == "canvas" else "")
        for entry, named, _ in entries:
            submission.files[named.file] = entry.data
            submission.sources.append(entry.path)
        verdict = ledger.against_submitted(submission)
        if verdict == "new" or verdict == "same":
            outcome.collected[student] = submission
        elif verdict == "newer":
            outcome.collected[student] = submission
            outcome.replaced.append(student)
        elif verdict.startswith("older"):
            outcome.left_out += [(path, f"{verdict.split(': ', 1)[1]}; the newer one in submitted/ is kept")
                                 for path in submission.sources]
        else:
            outcome.conflicts.append(f"{student}: {verdict}")
        outcome.mapped += sorted({c.how for _, _, c in entries if c.how and student in outcome.collected})
    _say_case_only_differences(course, assignment, outcome)
    if roster is not None:
        outcome.missing = sorted(s.id for s in roster if s.id not in outcome.collected
                                 and not any(c.startswith(f"{s.id}:") for c in outcome.conflicts))


def _one_origin(student: str, entries: list, outcome: CollectOutcome) -> list:
    """The files of the one place the LMS put this student's work; an origin that only resembles the
    student where another names them exactly is set aside, and two of either kind are a conflict."""
    origins = sorted({_origin(entry, named) for entry, named, _ in entries})
    if len(origins) == 1:
        return entries
    exact = sorted({_origin(entry, named) for entry, named, claim in entries if claim.exact})
    if len(exact) == 1:
        for entry, named, claim in entries:
            if not claim.exact:
                outcome.conflicts.append(f"{student}: set aside {entry.path} ({_origin(entry, named)}): it could be "
                                         f"{student}'s, whose own submission ({exact[0]}) is collected; if it is another "
                                         "student's, pass --roster or collect it into their folder by hand")
        return [e for e in entries if e[2].exact]
    outcome.conflicts.append(f"{student}: files from {len(origins)} places map to this student: {'; '.join(origins)}; "
                             "none is collected: keep the right one in the download (or pass --roster) and collect again")
    return []


def _newest_files(student: str, entries: list, outcome: CollectOutcome) -> list:
    """The latest attempt's files (Blackboard's time, Canvas's upload number); two files of one name
    that nothing orders are a conflict."""
    times = sorted({named.timestamp for _, named, _ in entries})
    if len(times) > 1:
        for entry, named, _ in entries:
            if named.timestamp != times[-1]:
                outcome.left_out.append((entry.path, f"an older attempt of {student} (kept {times[-1]})"))
        entries = [e for e in entries if e[1].timestamp == times[-1]]
    kept = []
    for name in sorted({named.file for _, named, _ in entries}):
        same = [e for e in entries if e[1].file == name]
        attempts = [named.attempt for _, named, _ in same]
        if len(same) > 1 and (None in attempts or len(set(attempts)) < len(attempts)):
            outcome.conflicts.append(f"{student}: {len(same)} files named {name} and nothing says which is newer "
                                     f"({'; '.join(e.path for e, _, _ in same)}); keep one and collect again")
            return []
        newest = max(same, key=lambda e: e[1].attempt or 0)
        outcome.left_out += [(e.path, f"an older upload of {student} (kept {newest[0].path})") for e in same if e is not newest]
        kept.append(newest)
    return kept


def _origin(entry: DownloadedFile, named: DownloadName) -> str:
    folder = str(PurePosixPath(entry.path).parent)
    if named.lms == "folder":
        return f"folder {folder}/"
    return named.origin + ("" if folder == "." else f" in {folder}/")


def _say_case_only_differences(course: Course, assignment: str, outcome: CollectOutcome) -> None:
    """Ids that differ only in case or accents are different students (each collected); said, as they
    are often one student written two ways."""
    everyone = set(course.students_with("submitted", assignment)) | set(outcome.collected)
    groups: dict[str, set[str]] = {}
    for student in everyone:
        groups.setdefault(name_key(student), set()).add(student)
    for group in sorted(map(sorted, groups.values())):
        if len(group) > 1 and set(group) & set(outcome.collected):
            outcome.notes.append(f"{', '.join(group)} differ only in case, accents or punctuation: they are collected "
                                 "as different students; if they are one, remove the wrong folder from submitted/")
