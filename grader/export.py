"""``export``: nbgrader's own CSV, plus one file an LMS gradebook imports (Canvas-style CSV)."""

from __future__ import annotations

import csv
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins.export import CsvExportPlugin, ExportPlugin

from .course import Course


class LmsCsvExportPlugin(ExportPlugin):
    """One row per student, one column per assignment (``<assignment> (<max points>)``), total scores.

    The layout Canvas imports (``Student,ID,SIS Login ID,...``); Moodle and Blackboard accept it
    with the ``ID`` column mapped to the user name.
    """

    def export(self, gradebook: Gradebook) -> None:
        assignments = sorted(gradebook.assignments, key=lambda a: (a.duedate is None, a.duedate, a.name))
        with open(self.to or "grades_lms.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["Student", "ID", "SIS Login ID", "Section"]
                            + [f"{a.name} ({a.max_score:g})" for a in assignments])
            writer.writerow(["Points Possible", "", "", ""] + [f"{a.max_score:g}" for a in assignments])
            for student in sorted(gradebook.students, key=lambda s: s.id):
                name = " ".join(filter(None, [student.first_name, student.last_name])) or student.id
                row = [name, student.id, student.lms_user_id or student.id, ""]
                for assignment in assignments:
                    try:
                        row.append(f"{gradebook.find_submission(assignment.name, student.id).score:g}")
                    except MissingEntry:
                        row.append("")
                writer.writerow(row)


def export_grades(course: Course, csv_path: Path, lms_path: Path) -> list[Path]:
    """Write nbgrader's CSV (``CsvExportPlugin``) and the LMS CSV; relative paths are in the course."""
    paths = [p if p.is_absolute() else course.root / p for p in (csv_path, lms_path)]
    with Gradebook(course.db_url, course.course_id) as gradebook:
        for plugin, path in zip((CsvExportPlugin, LmsCsvExportPlugin), paths):
            plugin(to=str(path), config=course.config()).export(gradebook)
    return paths
