"""``collect``: submissions into ``submitted/``, from nbgrader's exchange or from LMS downloads.

From LMS downloads (a folder or a zip) collect works in three steps, and writes only in the last:

1. **Read** every file as a file: no symbolic link, hard link, device, pipe or unsafe zip entry
   is followed or read (each is listed as left out); sizes are bounded.
2. **Plan**: each file's name is parsed (``lms_names``) and mapped to a student, through the
   roster when one is given, else through the strict pattern ``STUDENT_ID``; a name is never a
   path. Files that match no LMS naming are listed and left out. Two origins for one student
   (``sec1/jdoe`` and ``sec2/jdoe``; ``cmallory/calice`` beside ``calice``; ids that differ only
   in case, spaces or accents, here or against ``submitted/``) are conflicts: that student's
   files are all left out, their earlier submission stays as it was, and the command exits 1.
3. **Write** through nbgrader's ``zip_collect`` (``ZipCollectApp``), given the plan as its
   collector plugin: ``submitted/<student>/<assignment>/`` and ``timestamp.txt`` as nbgrader makes
   them. If the machine fails meanwhile (the disk fills up), every student's folder is checked
   against the plan: a student whose files did not all arrive whole is not collected and nothing
   of theirs is left in ``submitted/`` (a truncated notebook would be graded as the student's).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from traitlets import Dict
from nbgrader.plugins.zipcollect import FileNameCollectorPlugin

from .course import KIT_DIR, Course, ensure_nbgrader_tools_on_path
from .errors import EnvironmentFault, UsageError
from .faults import describe
from .lms_names import STUDENT_ID, DownloadName, examples, parse_flat, parse_folder
from .roster import RosterStudent, name_key, read_roster, record_in_gradebook, save_roster

#: The largest file read from a download (a notebook is far smaller; a zip bomb is not read).
MAX_FILE_BYTES = 100 * 1024 * 1024
#: What operating systems add to folders and zips; skipped without a word.
NOISE = ("__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini")


def collect_from_exchange(course: Course, assignment: str, log_level: str = "ERROR") -> list[str]:
    """``nbgrader collect``: the newest submission of each student, with its timestamp."""
    ensure_nbgrader_tools_on_path()
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.exchange.default import Exchange

    api = NbGraderAPI(coursedir=course.coursedir(), config=course.config())
    api.log.setLevel(log_level)
    before = {s: _listing(course.path("submitted", s, assignment)) for s in course.students_with("submitted", assignment)}
    result = api.collect(assignment)
    if not result.get("success"):
        log = result.get("log") or result.get("error") or ""
        lines = [line for line in log.splitlines() if line.strip()]
        reason = lines[-1][:300] if lines else "no reason given"
        fault = _machine_fault(log, course.path("submitted"))
        inbound = Path(Exchange(config=course.config()).root) / course.course_id / "inbound"
        removed, missing = _remove_incomplete_copies(course, assignment, before, inbound)
        if removed or fault:  # what arrived whole is kept
            cut = f"an incomplete copy removed: {', '.join(removed)}; " if removed else ""
            raise EnvironmentFault(f"not collected, because {fault or f'nbgrader collect failed ({reason})'}: "
                                   f"{', '.join(missing)} ({cut}the exchange keeps their submissions); what arrived "
                                   "whole is kept; collect again once this is put right", status=1)
        raise UsageError(f"nbgrader collect failed: {fault or reason}")
    # what the exchange refused or warned about (a submission not owned by the student it names)
    for line in (result.get("log") or "").splitlines():
        if line.startswith(("[ERROR]", "[WARNING]")):
            print(f"collect: {line}", file=sys.stderr)
    return course.students_with("submitted", assignment)


def _machine_fault(log: str, where: Path) -> str | None:
    """A fault of the machine named in nbgrader's log (it reports a failed copy only as text)."""
    for error in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO):
        if os.strerror(error) in log:
            return describe(OSError(error, os.strerror(error)), where)
    return None


def _listing(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes); empty if there is no such folder."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()} \
        if folder.is_dir() else {}


def _inbound_copies(inbound: Path, student: str, assignment: str) -> list[dict[str, bytes]]:
    """The student's submissions in the exchange: in ``inbound/``, and in ``received/`` where the hub's
    clerk (``grader.hub_exchange``) moves them."""
    return [_listing(p) for folder in (inbound, inbound.parent / "received")
            for p in folder.glob(f"{student}+{assignment}+*") if p.is_dir() and not p.is_symlink()]


def _whole_copy(now: dict[str, bytes], copies: list[dict[str, bytes]]) -> bool:
    """Whether the files ``now`` in a submission folder are one of ``copies``, whole (its notebooks and
    timestamp; the timestamp's text is the exchange's arrival time on the hub, not the student's)."""
    return any(now and all(copy.get(name) == data for name, data in now.items() if name != "timestamp.txt")
               and all(name in now for name in copy if name.endswith(".ipynb") or name == "timestamp.txt")
               for copy in copies)


def _remove_incomplete_copies(course: Course, assignment: str, before: dict[str, dict[str, bytes]],
                              inbound: Path) -> tuple[list[str], list[str]]:
    """After a failed ``nbgrader collect``: remove each submission folder that changed and is not a whole
    copy of one of the student's submissions in the exchange's inbound folder. Returns the students
    whose copy was removed, and every student of the inbound folder not collected whole."""
    removed = []
    for student in course.students_with("submitted", assignment):
        folder = course.path("submitted", student, assignment)
        now = _listing(folder)
        if now == before.get(student):
            continue
        if not _whole_copy(now, _inbound_copies(inbound, student, assignment)):
            shutil.rmtree(folder)
            try:
                folder.parent.rmdir()  # the student's folder, unless it holds other assignments
            except OSError:
                pass
            removed.append(student)
    students = sorted({p.name.split("+", 1)[0] for folder in (inbound, inbound.parent / "received")
                       for p in folder.glob(f"*+{assignment}+*") if p.is_dir() and not p.is_symlink()})
    missing = [s for s in students if not _whole_copy(_listing(course.path("submitted", s, assignment)),
                                                      _inbound_copies(inbound, s, assignment))]
    return removed, missing


# ---- 1. read -------------------------------------------------------------------------------------
@dataclass
class DownloadedFile:
    path: str          # where it is in the download (POSIX, relative)
    data: bytes


def read_download(source: Path) -> tuple[list[DownloadedFile], list[tuple[str, str]]]:
    """Every regular file of a folder or zip, and what was left out (path, reason)."""
    if source.is_dir():
        return _read_folder(source)
    if not source.exists():
        raise UsageError(f"{source}: no such file or folder")
    if not zipfile.is_zipfile(source):
        raise UsageError(f"{source} is neither a folder nor a zip archive; give the zip your LMS made, "
                         "or the folder you unpacked it into")
    return _read_zip(source)


def _read_folder(root: Path) -> tuple[list[DownloadedFile], list[tuple[str, str]]]:
    files, left_out = [], []
    for folder, subfolders, names in os.walk(root, followlinks=False):
        relative_folder = Path(folder).relative_to(root)
        for name in list(subfolders):
            if name in NOISE:
                subfolders.remove(name)
            elif os.path.islink(os.path.join(folder, name)):
                subfolders.remove(name)
                left_out.append(((relative_folder / name).as_posix(), "a symbolic link to a folder; not followed"))
        for name in sorted(names):
            relative = (relative_folder / name).as_posix()
            if name in NOISE or name.startswith("._"):
                continue
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                left_out.append((relative, "a symbolic link; not followed"))
            elif not stat.S_ISREG(info.st_mode):
                left_out.append((relative, "not a regular file (a device, pipe or socket); not read"))
            elif info.st_nlink > 1:
                left_out.append((relative, "a hard link (the same file has another name elsewhere); not read"))
            elif info.st_size > MAX_FILE_BYTES:
                left_out.append((relative, f"larger than {MAX_FILE_BYTES >> 20} MiB; not read"))
            else:
                data = _read_regular_file(path, info)
                if data is None:
                    left_out.append((relative, "changed while it was read; not read"))
                else:
                    files.append(DownloadedFile(relative, data))
    return files, left_out


def _read_regular_file(path: str, expected: os.stat_result) -> bytes | None:
    """The file's bytes, if it is still the regular file that was listed (never through a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (expected.st_dev, expected.st_ino) \
                or info.st_nlink > 1:
            return None
        data = handle.read(MAX_FILE_BYTES + 1)
    return data if len(data) <= MAX_FILE_BYTES else None


def _read_zip(source: Path) -> tuple[list[DownloadedFile], list[tuple[str, str]]]:
    files, left_out = [], []
    try:
        with zipfile.ZipFile(source) as archive:
            for info in archive.infolist():
                name = info.filename
                parts = PurePosixPath(name).parts
                if info.is_dir() or any(part in NOISE or part.startswith("._") for part in parts):
                    continue
                kind = (info.external_attr >> 16) & 0o170000
                if "\\" in name or name.startswith("/") or ".." in parts or "\0" in name or not parts:
                    left_out.append((name, "an unsafe path in the zip; not read"))
                elif kind == stat.S_IFLNK:
                    left_out.append((name, "a symbolic link; not followed"))
                elif kind not in (0, stat.S_IFREG):
                    left_out.append((name, "not a regular file; not read"))
                elif info.file_size > MAX_FILE_BYTES:
                    left_out.append((name, f"larger than {MAX_FILE_BYTES >> 20} MiB; not read"))
                else:
                    with archive.open(info) as handle:
                        data = handle.read(MAX_FILE_BYTES + 1)
                    if len(data) > MAX_FILE_BYTES:
                        left_out.append((name, f"larger than {MAX_FILE_BYTES >> 20} MiB; not read"))
                    else:
                        files.append(DownloadedFile(name, data))
    except (zipfile.BadZipFile, OSError, RuntimeError) as error:  # RuntimeError: an encrypted entry
        raise UsageError(f"{source}: the zip cannot be read ({type(error).__name__}: {error})") from None
    return files, left_out


# ---- 2. plan -------------------------------------------------------------------------------------
@dataclass
class Submission:
    student: str
    origin: str
    files: dict[str, bytes] = field(default_factory=dict)     # file name -> content
    sources: list[str] = field(default_factory=list)
    timestamp: str = ""
    late: bool = False
    roster: RosterStudent | None = None
    lms_user_id: str = ""


@dataclass
class CollectOutcome:
    assignment: str
    collected: dict[str, Submission] = field(default_factory=dict)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)       # roster students with nothing collected
    replaced: list[str] = field(default_factory=list)       # students whose earlier submission was replaced
    failed: dict[str, str] = field(default_factory=dict)     # not collected because of the machine: why

    @property
    def status(self) -> int:
        return 1 if self.conflicts or self.failed else 0

    def summary(self) -> str:
        students = sorted(self.collected)
        lines = [f"{self.assignment}: {len(students)} submission(s) into submitted/: {', '.join(students)}"]
        if self.replaced:
            lines.append(f"  replaced the earlier submission of: {', '.join(sorted(self.replaced))}")
        late = sorted(s for s, sub in self.collected.items() if sub.late)
        if late:
            lines.append(f"  marked LATE by Canvas: {', '.join(late)}")
        if self.conflicts:
            lines.append(f"  {len(self.conflicts)} conflict(s), not collected (resolve them and collect again):")
            lines += [f"    - {c}" for c in self.conflicts]
        if self.left_out:
            lines.append(f"  {len(self.left_out)} file(s) left out:")
            lines += [f"    - {path}: {reason}" for path, reason in self.left_out]
        if self.missing:
            lines.append(f"  in the roster, nothing submitted: {', '.join(self.missing)}")
        if self.failed:
            lines.append(f"  {len(self.failed)} not collected (collect again once this is put right):")
            lines += [f"    - {student}: {why}" for student, why in sorted(self.failed.items())]
        return "\n".join(lines)


def _identify(entry: DownloadedFile, section_folders: set[str]) -> DownloadName | str:
    """What the file's place and name say, or why it is left out."""
    parts = PurePosixPath(entry.path).parts
    if len(parts) == 1:
        return parse_flat(parts[0]) or "named like no LMS download"
    if len(parts) == 2:
        return parse_folder(parts[0], parts[1])
    if len(parts) == 3 and parts[0] in section_folders:
        return parse_folder(parts[1], parts[2])
    return f"inside a sub-folder of {parts[0]!r}; only <student>/<file> and <section>/<student>/<file> are read"


class _Resolver:
    """LMS names to student ids: through the roster if there is one, else the strict pattern."""

    def __init__(self, roster: list[RosterStudent] | None):
        self.roster = roster
        if roster is not None:
            self.by_id = {s.id: s for s in roster}
            self.by_lms_id = {s.lms_user_id: s for s in roster if s.lms_user_id}
            self.by_login = {s.sis_login_id: s for s in roster if s.sis_login_id}
            self.by_name: dict[str, list[RosterStudent]] = {}
            for s in roster:
                for key in {name_key(s.full_name), name_key(f"{s.last_name}{s.first_name}")} - {""}:
                    self.by_name.setdefault(key, []).append(s)

    def student(self, named: DownloadName) -> RosterStudent | str:
        if self.roster is None:
            if named.lms == "moodle":
                return "a Moodle download names students by full name; pass --roster to map names to students"
            if not STUDENT_ID.match(named.name):
                return (f"{named.name!r} is not a student id (letters, digits, . _ @ -); pass --roster to map "
                        "LMS names to students")
            return RosterStudent(named.name, lms_user_id=named.lms_user_id)
        if named.lms == "canvas":
            found = self.by_lms_id.get(named.lms_user_id)
            return found or f"Canvas user {named.lms_user_id} ({named.name}) is not in the roster"
        if named.lms == "moodle":
            matches = self.by_name.get(name_key(named.name), [])
            if len(matches) == 1:
                return matches[0]
            return f"{named.name!r} " + ("matches several students in the roster" if matches else "is not in the roster")
        found = self.by_id.get(named.name) or self.by_login.get(named.name)
        return found or f"{named.name!r} is not a student id in the roster"


def plan_collect(course: Course, assignment: str, files: list[DownloadedFile], roster: list[RosterStudent] | None,
                 outcome: CollectOutcome) -> None:
    """Map every downloaded file to a student (or to why not); conflicts leave the student out."""
    tops = {PurePosixPath(f.path).parts[0] for f in files if len(PurePosixPath(f.path).parts) > 1}
    holders = {PurePosixPath(f.path).parts[0] for f in files if len(PurePosixPath(f.path).parts) == 2}
    section_folders = tops - holders - {t for t in tops if parse_folder(t, "").lms == "moodle"}
    resolver = _Resolver(roster)
    by_student: dict[str, list[tuple[DownloadedFile, DownloadName, RosterStudent]]] = {}
    for entry in files:
        named = _identify(entry, section_folders)
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
        student = resolver.student(named)
        if isinstance(student, str):
            outcome.left_out.append((entry.path, student))
            continue
        by_student.setdefault(student.id, []).append((entry, named, student))

    keys: dict[str, list[str]] = {}
    for student in by_student:
        keys.setdefault(name_key(student), []).append(student)
    existing = {name_key(s): s for s in course.students_with("submitted", assignment)}
    for student, entries in sorted(by_student.items()):
        origins = sorted({_origin(entry, named) for entry, named, _ in entries})
        attempts = sorted({named.timestamp for _, named, _ in entries})
        if len(attempts) > 1 and {named.lms for _, named, _ in entries} == {"blackboard"}:
            latest = attempts[-1]
            for entry, named, _ in entries:
                if named.timestamp != latest:
                    outcome.left_out.append((entry.path, f"an older Blackboard attempt of {student} (kept {latest})"))
            entries = [e for e in entries if e[1].timestamp == latest]
        similar = [s for s in keys[name_key(student)] if s != student]
        if len(origins) > 1:
            outcome.conflicts.append(f"{student}: files from {len(origins)} places map to this student: "
                                     + "; ".join(origins))
            continue
        if similar:
            outcome.conflicts.append(f"{student}: differs from {', '.join(map(repr, similar))} only in case, spaces, "
                                     f"punctuation or accents ({'; '.join(origins)})")
            continue
        earlier = existing.get(name_key(student))
        if earlier is not None and earlier != student:
            outcome.conflicts.append(f"{student}: submitted/ already holds {earlier!r}, which differs only in case, "
                                     f"spaces, punctuation or accents ({'; '.join(origins)})")
            continue
        names = [named.file for _, named, _ in entries]
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            outcome.conflicts.append(f"{student}: {len(names) - len(set(names)) + 1} files named {doubled[0]} "
                                     f"({'; '.join(e.path for e, n, _ in entries if n.file == doubled[0])})")
            continue
        first = entries[0]
        submission = Submission(student, origins[0], roster=first[2], timestamp=first[1].timestamp,
                                late=any(n.late for _, n, _ in entries), lms_user_id=first[1].lms_user_id)
        for entry, named, _ in entries:
            submission.files[named.file] = entry.data
            submission.sources.append(entry.path)
        outcome.collected[student] = submission
        if earlier == student:
            outcome.replaced.append(student)
    if roster is not None:
        outcome.missing = sorted(s.id for s in roster if s.id not in outcome.collected
                                 and not any(c.startswith(f"{s.id}:") for c in outcome.conflicts))


def _origin(entry: DownloadedFile, named: DownloadName) -> str:
    folder = str(PurePosixPath(entry.path).parent)
    return named.origin + ("" if folder == "." else f" in {folder}/")


# ---- 3. write ------------------------------------------------------------------------------------
class PlannedCollector(FileNameCollectorPlugin):
    """nbgrader's collector plugin, answering from the kit's plan instead of a regular expression."""

    plan = Dict(help="Extracted file path -> {student_id, file_id, timestamp}.").tag(config=True)

    def collect(self, submitted_file: str):
        return self.plan.get(submitted_file)


def collect_from_downloads(course: Course, assignment: str, source: Path, roster: Path | None = None,
                           log_level: str = "ERROR") -> CollectOutcome:
    """Collect LMS downloads (a folder or zip) into ``submitted/`` through nbgrader's ``zip_collect``."""
    students = read_roster(roster) if roster is not None else None
    files, left_out = read_download(source)
    outcome = CollectOutcome(assignment, left_out=left_out)
    plan_collect(course, assignment, files, students, outcome)
    if not outcome.collected and not outcome.conflicts:
        notebook = (course.source_notebooks(assignment) or [Path("notebook.ipynb")])[0].name
        found = f"{len(files) + len(left_out)} file(s), none of them" if files or left_out else "nothing, so nothing"
        reasons = sorted({reason for _, reason in outcome.left_out})
        raise UsageError(f"{source} holds {found} a submission of {assignment} ({'; '.join(reasons[:3]) or 'empty'}); "
                         f"expected names like {examples(notebook, assignment)}")
    if outcome.collected:
        _write(course, assignment, outcome, log_level)
    if students is not None:
        save_roster(course.root, students)
        record_in_gradebook(course, students)
    else:
        record_in_gradebook(course, [RosterStudent(s.student, lms_user_id=s.lms_user_id)
                                     for s in outcome.collected.values() if s.lms_user_id])
    return outcome


def _write(course: Course, assignment: str, outcome: CollectOutcome, log_level: str) -> None:
    ensure_nbgrader_tools_on_path()
    from nbgrader.apps.zipcollectapp import ZipCollectApp

    # nbgrader's zip_collect reads from <downloaded>/<assignment>/extracted; the kit's copy of the
    # planned files lives there only while nbgrader collects them
    downloaded = course.path(KIT_DIR, "downloaded")
    extracted = downloaded / assignment / "extracted"
    if extracted.exists():
        shutil.rmtree(extracted)
    before = {s: _listing(course.path("submitted", s, assignment)) for s in outcome.collected}
    try:
        config = course.config()
        config.ZipCollectApp.downloaded_directory = str(downloaded.relative_to(course.root))
        plan = {}
        for index, submission in enumerate(sorted(outcome.collected.values(), key=lambda s: s.student)):
            folder = extracted / str(index)
            folder.mkdir(parents=True)
            for name, data in submission.files.items():
                (folder / name).write_bytes(data)
                plan[str(folder / name)] = {"student_id": submission.student, "file_id": name,
                                            **({"timestamp": submission.timestamp} if submission.timestamp else {})}
        config.PlannedCollector.plan = plan
        config.ZipCollectApp.collector_plugin = PlannedCollector
        config.ZipCollectApp.force = True
        app = ZipCollectApp(config=config)
        app.log.setLevel(log_level)
        app.coursedir = course.coursedir(assignment_id=assignment)
        app.start()
    except Exception as error:
        fault = describe(error, course.path("submitted"))
        if fault is None:
            raise
        _keep_whole_copies(course, assignment, outcome, before, fault)
    finally:
        shutil.rmtree(downloaded / assignment, ignore_errors=True)


def _keep_whole_copies(course: Course, assignment: str, outcome: CollectOutcome,
                       before: dict[str, dict[str, bytes]], fault: str) -> None:
    """After the machine failed while nbgrader wrote ``submitted/``: each planned student whose files all
    arrived whole is collected; anyone else is not, and no part of a copy is left behind."""
    for student, submission in sorted(outcome.collected.items()):
        folder = course.path("submitted", student, assignment)
        now = _listing(folder)
        arrived = {name: now.get(name) for name in submission.files}
        if arrived == submission.files and ("timestamp.txt" in now) == bool(submission.timestamp) \
                and (not submission.timestamp or now["timestamp.txt"].strip()):
            continue
        if now and now != before.get(student):  # nbgrader had started on it: its earlier submission is gone too
            shutil.rmtree(folder)
            try:
                folder.parent.rmdir()  # the student's folder, if nothing else is in it
            except OSError:
                pass
            outcome.failed[student] = (f"not collected, because {fault}; nothing of it is left in submitted/"
                                       + (" (nor its earlier submission, which nbgrader removes first)"
                                          if before.get(student) else ""))
        else:
            outcome.failed[student] = f"not collected, because {fault}" + (
                "; its earlier submission is kept" if before.get(student) else "")
    for student in outcome.failed:
        del outcome.collected[student]
        if student in outcome.replaced:
            outcome.replaced.remove(student)
