"""``collect``: submissions into ``submitted/``, from nbgrader's exchange or from LMS downloads.

From LMS downloads (a folder or a zip) collect works in three steps, and writes only in the last:

1. **Read** every file as a file (``download_files``): no symbolic link, hard link, device, pipe
   or unsafe zip entry is followed or read (each is listed as left out); sizes are bounded.
2. **Plan** (``download_plan``): each file's name is parsed (``lms_names``), only in the part the
   LMS wrote, and mapped to a student through the roster when one is given, else through the
   strict pattern ``STUDENT_ID`` (or a listed mapping); a name is never a path. Files that match no
   LMS naming are listed and left out; a file that could be two students' is set aside without
   costing the student it resembles their own submission; a later attempt replaces an earlier one,
   and where nothing says which is later, the earlier stays and the conflict is listed (exit 1).
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
import sys
from pathlib import Path

from traitlets import Dict
from nbgrader.plugins.zipcollect import FileNameCollectorPlugin

from ..course import KIT_DIR, Course, ensure_nbgrader_tools_on_path
from ..hub_exchange.entries import parse_name, read_submission
from .exchange_collect import with_regular_files_collect
from ..foundations.errors import EnvironmentFault, UsageError
from ..foundations.faults import describe
from ..lms.download_files import read_download
from ..lms.collect_ledger import CollectLedger
from ..lms.download_plan import CollectOutcome, plan_collect
from ..lms.lms_names import examples
from ..lms.roster import RosterStudent, read_roster, record_in_gradebook, save_roster


def collect_from_exchange(course: Course, assignment: str, log_level: str = "ERROR") -> list[str]:
    """``nbgrader collect``: the newest submission of each student, with its timestamp."""
    ensure_nbgrader_tools_on_path()
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.exchange.default import Exchange

    api = NbGraderAPI(coursedir=course.coursedir(), config=with_regular_files_collect(course.config()))
    api.log.setLevel(log_level)
    before = {s: _listing(course.path("submitted", s, assignment)) for s in course.students_with("submitted", assignment)}
    result = api.collect(assignment)
    if not result.get("success") and TOO_BIG in (result.get("log") or result.get("error") or ""):
        result = _collect_each_student(course, assignment, log_level)
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


#: What nbgrader's exchange says of a submission over ``CourseDirectory.max_dir_size`` (``do_copy``); its
#: collect then stops, and the students sorted after that one are not collected.
TOO_BIG = "Directory size is too big"


def _collect_each_student(course: Course, assignment: str, log_level: str) -> dict:
    """nbgrader's collect of each student of ``inbound/`` on their own: a submission over nbgrader's
    size limit is left in the exchange and named, the others are collected (a student's folder there
    is theirs to fill)."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.exchange.default import Exchange

    inbound = Path(Exchange(config=course.config()).root) / course.course_id / "inbound"
    students = _students_in([inbound], assignment)
    logs, left = [], []
    for student in students:
        api = NbGraderAPI(coursedir=course.coursedir(student_id=student), config=with_regular_files_collect(course.config()))
        api.log.setLevel(log_level)
        result = api.collect(assignment)
        log = result.get("log") or result.get("error") or ""
        if result.get("success"):
            logs.append(log)
        elif TOO_BIG in log:
            left.append(student)
        else:
            return result
    logs += [f"[WARNING] {student}: the submission is over nbgrader's size limit (max_dir_size); left in the exchange, "
             "not collected" for student in left]
    return {"success": True, "log": "\n".join(logs)}


def _machine_fault(log: str, where: Path) -> str | None:
    """A fault of the machine named in nbgrader's log (it reports a failed copy only as text)."""
    for error in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EIO):
        if os.strerror(error) in log:
            return describe(OSError(error, os.strerror(error)), where)
    return None


def _students_in(folders: list[Path], assignment: str) -> list[str]:
    """The students with a submission of ``assignment`` in ``folders`` (the exchange's entries, named as
    ``parse_name`` reads them: a student's id may hold a "+"; links are not submissions)."""
    return sorted({named[0] for folder in folders for entry in folder.glob(f"*+{assignment}+*")
                   if (named := parse_name(entry.name)) and named[1] == assignment
                   and entry.is_dir() and not entry.is_symlink()})


def _listing(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes); empty if there is no such folder."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()} \
        if folder.is_dir() else {}


def _inbound_copies(inbound: Path, student: str, assignment: str) -> list[dict[str, bytes]]:
    """The student's submissions in the exchange: in ``inbound/``, and in ``received/`` where the hub's
    clerk (``grader.hub_exchange``) moves them; each as collect copies it (its regular files, never
    through a link: ``exchange_collect``)."""
    copies = []
    for folder in (inbound, inbound.parent / "received"):
        for entry in folder.glob(f"{student}+{assignment}+*"):
            try:
                copies.append({name: data for name, why, data in read_submission(str(entry)) if why is None})
            except OSError:  # a link or no folder: nothing collect would copy
                continue
    return copies


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
    students = _students_in([inbound, inbound.parent / "received"], assignment)
    missing = [s for s in students if not _whole_copy(_listing(course.path("submitted", s, assignment)),
                                                      _inbound_copies(inbound, s, assignment))]
    return removed, missing


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
    plan_collect(course, assignment, files, students, outcome=outcome, known_canvas_users=_canvas_users(course))
    if not outcome.collected and not outcome.conflicts:
        taken = [p for p, why in outcome.left_out if "the newer one in submitted/ is kept" in why]
        if not taken:
            notebook = (course.source_notebooks(assignment) or [Path("notebook.ipynb")])[0].name
            found = f"{len(files) + len(left_out)} file(s), none of them" if files or left_out else "nothing, so nothing"
            reasons = sorted({reason for _, reason in outcome.left_out})
            raise UsageError(f"{source} holds {found} a submission of {assignment} ({'; '.join(reasons[:3]) or 'empty'}); "
                             f"expected names like {examples(notebook, assignment)}")
    if outcome.collected:
        ledger = CollectLedger(course, assignment)
        ledger.write(pending=outcome.collected, collected={})  # a collect killed from here on is resumed by the next
        _write(course, assignment, outcome, log_level)
        ledger.write(pending={}, collected=outcome.collected)
        ledger.clear_pending(outcome.failed)
    if students is not None:
        save_roster(course.root, students)
        record_in_gradebook(course, students)
    else:
        record_in_gradebook(course, [RosterStudent(s.student, lms_user_id=s.lms_user_id)
                                     for s in outcome.collected.values() if s.lms_user_id])
    return outcome


def _canvas_users(course: Course) -> dict[str, str]:
    """Canvas user id -> the student id the gradebook holds them under (collected before)."""
    if course.gradebook_path is None or not course.gradebook_path.exists():
        return {}
    import warnings

    from nbgrader.api import Gradebook

    with warnings.catch_warnings(), Gradebook(course.db_url, course.course_id) as gradebook:
        warnings.simplefilter("ignore")
        return {s.lms_user_id: s.id for s in gradebook.students if s.lms_user_id}


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
