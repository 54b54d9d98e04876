"""``collect``: submissions into ``submitted/``, from nbgrader's exchange or from LMS downloads."""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from .course import Course, ensure_nbgrader_tools_on_path

#: LMS download names (nbgrader matches the whole extracted path): ``<student>_<numbers>_..._<file>.ipynb``
#: as Canvas writes them; ``<student>/<file>`` folders are flattened to that form first.
LMS_FILENAME = re.compile(r"^(?:.*/)?(?P<student_id>[A-Za-z0-9.@-]+)_(?:(?:late|LATE)_)?(?:\d+_)*(?P<file_id>[^/]+)$")


def collect_from_exchange(course: Course, assignment: str, log_level: str = "ERROR") -> list[str]:
    """``nbgrader collect``: the newest submission of each student, with its timestamp."""
    ensure_nbgrader_tools_on_path()
    from nbgrader.apps.api import NbGraderAPI

    api = NbGraderAPI(coursedir=course.coursedir(), config=course.config())
    api.log.setLevel(log_level)
    result = api.collect(assignment)
    if not result.get("success"):
        raise RuntimeError(f"nbgrader collect failed: {result.get('error')}")
    # what the exchange refused or warned about (a submission not owned by the student it names)
    for line in result.get("log", "").splitlines():
        if line.startswith(("[ERROR]", "[WARNING]")):
            print(f"collect: {line}", file=sys.stderr)
    return _students(course, assignment)


def collect_from_downloads(course: Course, assignment: str, source: Path, log_level: str = "ERROR") -> list[str]:
    """``nbgrader zip_collect`` over a folder or zip of LMS downloads.

    Accepted layouts: ``<student>/<file>.ipynb`` folders, or flat ``<student>_<ids>_<file>.ipynb``
    names as LMSs write them; zips may hold either. The downloads themselves are only read.
    """
    ensure_nbgrader_tools_on_path()
    from nbgrader.apps.zipcollectapp import ZipCollectApp

    with tempfile.TemporaryDirectory(prefix="kitgrade-collect-") as tmp:
        flat = Path(tmp, "flat")
        flat.mkdir()
        unpacked = Path(tmp, "unpacked")
        if zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as archive:
                archive.extractall(unpacked)
        else:
            shutil.copytree(source, unpacked)
        for path in sorted(unpacked.rglob("*")):
            if not path.is_file() or "__MACOSX" in path.parts:
                continue
            relative = path.relative_to(unpacked)
            if len(relative.parts) >= 2:  # <student>/<file>
                name = f"{relative.parts[-2]}_{relative.name}"
            else:
                name = relative.name
            shutil.copy(path, flat / name)
        archive_dir = course.path("downloaded", assignment, "archive")
        if archive_dir.parent.exists():
            shutil.rmtree(archive_dir.parent)
        archive_dir.mkdir(parents=True)
        for path in flat.iterdir():
            shutil.copy(path, archive_dir / path.name)

    config = course.config()
    config.FileNameCollectorPlugin.named_regexp = LMS_FILENAME.pattern
    config.ZipCollectApp.force = True
    app = ZipCollectApp(config=config)
    app.log.setLevel(log_level)
    app.coursedir = course.coursedir(assignment_id=assignment)
    app.start()
    return _students(course, assignment)


def _students(course: Course, assignment: str) -> list[str]:
    submitted = course.path("submitted")
    return sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir()) if submitted.exists() else []
