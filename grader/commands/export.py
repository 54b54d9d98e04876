"""``export``: nbgrader's own CSV, plus a file Canvas's gradebook imports.

The Canvas file has the columns of Canvas's gradebook export, which its import reads back
(Grades > Import): ``Student, ID, SIS User ID, SIS Login ID, Section``, then one column per
assignment, named as the assignment (Canvas creates an assignment for a name it does not know;
a name followed by ``(<Canvas assignment id>)`` updates that assignment), and a ``Points
Possible`` row. Canvas matches a row by ``ID`` (its user id), else ``SIS User ID`` or ``SIS Login
ID``: these come from the roster (``--roster``, e.g. Canvas's own export) and from the user ids in
the Canvas download names ``collect`` read. A score is the number nbgrader's CSV gives: the
gradebook's score minus the late penalty (0 for a student with no submission). Only assignments
with at least one submission are exported, so an assignment not yet collected gives nobody a 0
(nbgrader's CSV lists it with empty scores, and the command says so);
for the same reason a student whose submission is in ``submitted/`` but not graded (yet, or because
of a fault of the machine) has an empty cell in the Canvas file, and the command says so. A grade
whose submission is gone from ``submitted/`` is exported as the gradebook holds it, and said.
An exercise given in two languages is two assignments (the Chinese one named ``<name>_zh``, as
the kit names its own): a student who submitted one of the two has an empty cell for the other in
both files, not a 0 for the language they did not take (``other_language``).

A score whose written answers still wait for a manual grade (``grader.notebook.manual_grades``) is not
final: nbgrader counts those answers as 0. ``export`` then writes nothing and lists the students
(``AwaitingManualGrades``), unless told to export anyway (``allow_manual_pending``), when it writes
both files and lists them as a warning. Both files are written whole or not at all.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins.export import CsvExportPlugin, ExportPlugin

from ..course import Course
from ..foundations.errors import EnvironmentFault, UsageError
from ..foundations.faults import describe
from ..notebook.manual_grades import awaiting_by_student, points
from ..autograde.report import NO_LONGER_SUBMITTED, no_longer_submitted
from ..lms.roster import RosterStudent, read_roster, record_in_gradebook, save_roster, saved_roster
from ..foundations.student_text import for_spreadsheet

CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def nbgrader_score(gradebook: Gradebook, assignment: str, student: str) -> float:
    """The score nbgrader's CSV export gives (``CsvExportPlugin``): raw score minus late penalty, at least 0."""
    try:
        submission = gradebook.find_submission(assignment, student)
    except MissingEntry:
        return 0.0
    return max(0.0, submission.score - submission.late_submission_penalty)


def other_language(assignment: str, names) -> str | None:
    """The same exercise in the other language, if ``names`` holds it: ``ps1`` and ``ps1_zh``."""
    twin = assignment[:-3] if assignment.endswith("_zh") else assignment + "_zh"
    return twin if twin != assignment and twin in names else None


def took_the_other_language(gradebook: Gradebook, assignment: str, student: str, names) -> bool:
    """Whether ``student`` submitted ``assignment``'s twin in the other language, and not ``assignment`` itself."""
    twin = other_language(assignment, names)
    return twin is not None and not _submitted(gradebook, assignment, student) and _submitted(gradebook, twin, student)


def _submitted(gradebook: Gradebook, assignment: str, student: str) -> bool:
    try:
        gradebook.find_submission(assignment, student)
    except MissingEntry:
        return False
    return True


def canvas_rows(gradebook: Gradebook, roster: list[RosterStudent],
                ungraded: dict[str, list[str]] | None = None) -> list[list[str]]:
    """The Canvas import table: header, ``Points Possible``, one row per student.

    ``ungraded`` (assignment -> students) are submitted and not graded: their cells are left empty.
    """
    ungraded = ungraded or {}
    assignments = sorted((a for a in gradebook.assignments if a.submissions),
                         key=lambda a: (a.duedate is None, a.duedate or 0, a.name))
    known = {s.id: s for s in roster}
    rows = [CANVAS_HEADER + [a.name for a in assignments],
            ["Points Possible", "", "", "", ""] + [f"{a.max_score:g}" for a in assignments]]
    students = {s.id: s for s in gradebook.students}
    for student_id in sorted(set(students) | set(known), key=lambda i: (_sort_name(students.get(i), known.get(i)), i)):
        entry, listed = students.get(student_id), known.get(student_id) or RosterStudent(student_id)
        first = listed.first_name or (entry.first_name if entry else "") or ""
        last = listed.last_name or (entry.last_name if entry else "") or ""
        name = f"{last}, {first}" if last and first else (last or first or student_id)
        lms_id = listed.lms_user_id or (entry.lms_user_id if entry else "") or ""
        row = [name, lms_id, listed.sis_user_id, listed.sis_login_id, listed.section]
        names = [a.name for a in assignments]
        row += ["" if student_id in ungraded.get(a.name, ()) or took_the_other_language(gradebook, a.name, student_id, names)
                else f"{nbgrader_score(gradebook, a.name, student_id):g}" for a in assignments]
        rows.append([for_spreadsheet(cell) for cell in row])  # a name like "=HYPERLINK(...)" stays a name
    return rows


def _sort_name(entry, listed) -> str:
    return ((listed.last_name if listed else "") or (entry.last_name if entry else "") or "").casefold()


class SpreadsheetSafeCsvExportPlugin(CsvExportPlugin):
    """nbgrader's CSV (``CsvExportPlugin``: the same columns and values), written by ``csv.writer``, with
    every cell a spreadsheet reads as text: nbgrader joins the fields with commas as they are, so a
    name with a comma shifts the columns and one starting with ``=`` is a formula. An assignment
    nobody has submitted (not collected yet) has empty scores, not a 0 for everyone: the Canvas
    file leaves it out for the same reason."""

    KEYS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email", "raw_score",
            "late_submission_penalty", "score", "max_score"]

    def export(self, gradebook: Gradebook) -> None:
        with open(self.to or "grades.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(self.KEYS)
            names = [a.name for a in gradebook.assignments]
            for assignment in gradebook.assignments:
                anyone = bool(assignment.submissions)
                for student in gradebook.students:
                    try:
                        submission = gradebook.find_submission(assignment.name, student.id)
                        penalty = submission.late_submission_penalty
                        graded = [submission.timestamp, submission.score, penalty, max(0.0, submission.score - penalty)]
                    except MissingEntry:  # nothing submitted: 0, as nbgrader's CSV says, unless nobody has, or
                        # the student took the exercise in its other language
                        empty = not anyone or took_the_other_language(gradebook, assignment.name, student.id, names)
                        graded = ["", "", "", ""] if empty else ["", 0.0, 0.0, 0.0]
                    row = [assignment.name, assignment.duedate, graded[0], student.id, student.last_name,
                           student.first_name, student.email, *graded[1:], assignment.max_score]
                    writer.writerow([for_spreadsheet("" if value is None else value) for value in row])


class CanvasCsvExportPlugin(ExportPlugin):
    """nbgrader export plugin writing the Canvas gradebook import file (``nbgrader export --exporter``)."""

    roster: list[RosterStudent] = []
    ungraded: dict[str, list[str]] = {}

    def export(self, gradebook: Gradebook) -> None:
        with open(self.to or "grades_lms.csv", "w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows(canvas_rows(gradebook, self.roster, self.ungraded))


class AwaitingManualGrades(Exception):
    """Nothing exported: some exported scores still miss the points of answers waiting for a manual grade."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


def stopped_halfway(course: Course, assignment: str, recorded) -> list[str]:
    """The students of ``recorded`` whose grading stopped halfway (the ledger's mark): what the
    gradebook holds of them is not a grade."""
    from ..autograde import Ledger

    ledger = Ledger(course, assignment)
    return sorted(s for s in recorded if ledger.unfinished(s))


def awaiting_lines(course: Course, gradebook: Gradebook) -> list[str]:
    """One line per exported assignment with students whose written answers wait for a manual grade
    (not counting a grading that stopped halfway: nbgrader's first records say everything waits)."""
    lines = []
    for assignment in sorted((a for a in gradebook.assignments if a.submissions), key=lambda a: a.name):
        waiting = awaiting_by_student(gradebook, assignment.name)
        for student in stopped_halfway(course, assignment.name, list(waiting)):
            del waiting[student]
        if waiting:
            total = sum(points(answers) for answers in waiting.values())
            lines.append(f"  {assignment.name}: {len(waiting)} student(s), {total:g} point(s): "
                         + ", ".join(f"{student} ({points(answers):g})" for student, answers in waiting.items()))
    return lines


def export_grades(course: Course, csv_path: Path, lms_path: Path, *, roster: Path | None = None,
                  dry_run: bool = False, allow_manual_pending: bool = False) -> list[str]:
    """Write nbgrader's CSV (``CsvExportPlugin``) and the Canvas CSV; relative paths are in the course.

    With ``dry_run`` nothing is written: the lines say what would change against the last export.
    Scores with written answers still waiting for a manual grade raise ``AwaitingManualGrades``
    before anything is written, unless ``allow_manual_pending`` (then the lines warn of them).
    """
    paths = [p if p.is_absolute() else course.root / p for p in (csv_path, lms_path)]
    for path in paths:
        if path.is_dir() or not path.parent.is_dir():
            raise UsageError(f"{path}: cannot write there ({'a folder' if path.is_dir() else 'no such folder'})")
    students = read_roster(roster) if roster is not None else saved_roster(course.root)
    with Gradebook(course.db_url, course.course_id) as gradebook:
        waiting = awaiting_lines(course, gradebook)
    if waiting and not dry_run and not allow_manual_pending:
        raise AwaitingManualGrades(["not exported: written answers wait for a manual grade, and their points would "
                                    "count as 0 in these scores:", *waiting,
                                    "grade them in nbgrader's formgrader, or export anyway with --allow-manual-pending"])
    note = (["warning: exported without their manual part (written answers not graded yet, counted as 0):",
             *waiting] if waiting and not dry_run else
            ["note: not final: written answers wait for a manual grade (counted as 0); export refuses until they "
             "are graded, or --allow-manual-pending:", *waiting] if waiting else [])
    if roster is not None and not dry_run:
        save_roster(course.root, students)
        record_in_gradebook(course, students)
    with Gradebook(course.db_url, course.course_id) as gradebook:
        ungraded, notes = grading_notes(course, gradebook)
        if dry_run:
            return describe_changes(paths[1], canvas_rows(gradebook, students, ungraded)) + note + notes
        # each file whole or not at all: a truncated CSV imported into an LMS would lose students
        temporaries = [path.with_name(path.name + ".tmp") for path in paths]
        try:
            SpreadsheetSafeCsvExportPlugin(to=str(temporaries[0]), config=course.config()).export(gradebook)
            plugin = CanvasCsvExportPlugin(to=str(temporaries[1]), config=course.config())
            plugin.roster, plugin.ungraded = students, ungraded
            plugin.export(gradebook)
            for temporary, path in zip(temporaries, paths):
                os.replace(temporary, path)
        except OSError as error:
            raise EnvironmentFault(f"nothing was exported, because {describe(error, paths[0].parent) or error}; the "
                                   "files of the last export are as they were") from None
        finally:
            for temporary in temporaries:
                temporary.unlink(missing_ok=True)
        rows = canvas_rows(gradebook, students, ungraded)
        nobody = sorted(a.name for a in gradebook.assignments if not a.submissions)
    lines = [f"wrote {p}" for p in paths] + note + notes
    if nobody:
        lines.append(f"note: nothing submitted yet of {', '.join(nobody)}: empty scores in {paths[0].name}, left out of "
                     f"{paths[1].name}")
    unmatched = [row[0] for row in rows[2:] if not any(row[1:4])]
    if unmatched:
        lines.append(f"note: {len(unmatched)} student(s) without a Canvas ID or SIS id ({', '.join(unmatched[:5])}"
                     f"{', ...' if len(unmatched) > 5 else ''}): Canvas cannot match their rows; pass --roster "
                     "(Canvas's gradebook export) or collect from a Canvas download")
    return lines


def grading_notes(course: Course, gradebook: Gradebook) -> tuple[dict[str, list[str]], list[str]]:
    """Where the exported grades and ``submitted/`` disagree, said: returns the students submitted and
    not graded (assignment -> students) and a note per case."""
    from ..autograde import Ledger

    ungraded, notes = {}, []
    for assignment in sorted(a.name for a in gradebook.assignments):  # with no submission recorded yet, too
        recorded = {s.student.id for s in gradebook.find_assignment(assignment).submissions}
        present = course.students_with("submitted", assignment)
        ledger = Ledger(course, assignment)
        waiting = [s for s in present if s not in recorded]
        if waiting:
            ungraded[assignment] = waiting
            notes.append(f"note: {assignment}: submitted but not graded: {', '.join(waiting)} (empty in the Canvas "
                         f"file; nbgrader's CSV gives 0): run `kitgrade autograde {assignment}`")
        halfway = sorted(s for s in recorded if ledger.unfinished(s))
        if halfway:
            ungraded.setdefault(assignment, []).extend(halfway)
            notes.append(f"note: {assignment}: grading stopped halfway for {', '.join(halfway)} (the machine failed "
                         "or the run was killed; the gradebook may hold part of it: empty in the Canvas file, "
                         f"nbgrader's CSV shows what the gradebook holds): run `kitgrade autograde {assignment}`")
        graded = [s for s in present if s in recorded and not ledger.unfinished(s)]
        again = [s for s in graded if ledger.resubmitted(s)]
        if again:
            notes.append(f"note: {assignment}: submitted again since graded: {', '.join(again)} (exported with the "
                         f"grade of the earlier submission): run `kitgrade autograde {assignment}`")
        otherwise = [s for s in graded if ledger.graded_otherwise(s)]
        if otherwise:
            notes.append(f"note: {assignment}: graded with another version of the kit or nbgrader, or before the "
                         f"course's configuration, source or due date changed: {', '.join(otherwise)} (exported with "
                         f"that grade; their submissions are unchanged): `kitgrade autograde {assignment}` grades "
                         "them again as things are now")
        gone = no_longer_submitted(course, assignment)
        if gone:
            notes.append(f"note: {assignment}: {NO_LONGER_SUBMITTED}: {', '.join(gone)} (exported with the grade the "
                         "gradebook holds)")
    return ungraded, notes


def describe_changes(previous_path: Path, rows: list[list[str]]) -> list[str]:
    """What writing ``rows`` would change in the Canvas file at ``previous_path``."""
    header = rows[0]
    if not previous_path.is_file():
        return [f"dry run: no earlier export at {previous_path}; it would hold {len(rows) - 2} student(s) and "
                f"{len(header) - len(CANVAS_HEADER)} assignment(s): {', '.join(header[len(CANVAS_HEADER):])}"]
    previous = list(csv.reader(io.StringIO(previous_path.read_text(encoding="utf-8"))))
    if not previous or previous[0][:len(CANVAS_HEADER)] != CANVAS_HEADER:
        raise UsageError(f"{previous_path} is not a Canvas export written by kitgrade; nothing to compare with")

    def table(data):
        columns = data[0]
        return {_row_key(row): dict(zip(columns, row)) for row in data[2:]}, columns[len(CANVAS_HEADER):]

    old, old_assignments = table(previous)
    new, new_assignments = table(rows)
    changes = [f"  new assignment column: {a}" for a in new_assignments if a not in old_assignments]
    changes += [f"  assignment column no longer exported: {a}" for a in old_assignments if a not in new_assignments]
    for key, row in new.items():
        if key not in old:
            changes.append(f"  new student: {row['Student']}")
            continue
        for assignment in new_assignments:
            before, after = old[key].get(assignment, ""), row[assignment]
            if before != after:
                changes.append(f"  {row['Student']}, {assignment}: {before or '(none)'} -> {after or '(none)'}")
        for column in CANVAS_HEADER[1:]:
            if old[key].get(column, "") != row[column]:
                changes.append(f"  {row['Student']}: {column} {old[key].get(column) or '(none)'} -> {row[column] or '(none)'}")
    changes += [f"  student no longer exported: {row['Student']}" for key, row in old.items() if key not in new]
    title = f"dry run: {len(changes)} change(s) against {previous_path}" + (" (nothing written)" if changes else
                                                                              "; nothing would change")
    return [title, *changes]


def _row_key(row: list[str]) -> str:
    return row[3] or row[2] or row[1] or row[0]
