"""The files a student receives beside an assignment's notebooks, as nbgrader's release picks them:
what the sandbox copies into each notebook's scratch folder (``autograde``, the release proof).

nbgrader releases in two steps, and each leaves files out. ``generate_assignment`` copies
``source/<assignment>/`` into ``release/`` without what ``CourseDirectory.ignore`` names
(``nbgrader.utils.find_all_files``, from ``BaseConverter.init_assignment``); ``release_assignment``
copies that into the exchange without what ``ignore`` names, what ``CourseDirectory.include``
does not, and files over ``CourseDirectory.max_file_size`` (``shutil.copytree`` with
``nbgrader.utils.ignore_patterns``, from ``Exchange.do_copy``). The same two functions, with the
course's own settings, pick the files here, folder by folder as ``copytree`` asks. Nothing else of
``source/`` reaches a notebook: not a notebook, not a file the release leaves out, not a link, a
device or anything else that is not a regular file (the kit reads files as files).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..foundations.errors import UsageError


def released_paths(course, assignment: str) -> list[Path]:
    """The data files of ``assignment`` a student receives, relative to ``source/<assignment>/``."""
    from nbgrader.utils import find_all_files, ignore_patterns

    coursedir = course.coursedir(assignment_id=assignment)
    source = course.path("source", assignment)
    # generate_assignment: source/ -> release/ (notebooks are converted, not copied)
    generated = [Path(found).relative_to(source) for found in find_all_files(str(source), coursedir.ignore + ["*.ipynb"])]
    # release_assignment: release/ -> the exchange, one folder at a time; a folder left out goes with all it holds
    ignore = ignore_patterns(exclude=coursedir.ignore, include=coursedir.include, max_file_size=coursedir.max_file_size)
    children: dict[Path, set[str]] = {}
    for path in generated:
        for depth, name in enumerate(path.parts):
            children.setdefault(Path(*path.parts[:depth]), set()).add(name)
    released, folders = [], [Path()]
    while folders:
        folder = folders.pop()
        names = sorted(children.get(folder, ()))
        left_out = set(ignore(str(source / folder), names))
        for name in names:
            if name in left_out:
                continue
            if folder / name in children:
                folders.append(folder / name)
            else:
                released.append(folder / name)
    return sorted(released)


def read_released_files(course, assignment: str, limits) -> dict[str, bytes]:
    """The released data files of ``assignment`` as bytes (what a grading task carries), regular
    files only, read without following a link, within ``limits`` (else the instructor is told)."""
    source = course.path("source", assignment)
    files, size = {}, 0
    for relative in released_paths(course, assignment):
        path = source / relative
        try:
            if not stat.S_ISREG(path.lstat().st_mode):
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # gone, or a link (O_NOFOLLOW): not a file the release copies as it is
            continue
        with os.fdopen(fd, "rb") as handle:
            files[str(relative)] = handle.read()
        size += len(files[str(relative)])
        if len(files) > limits.data_files_limit or size > limits.data_size_limit_mb * 1024 * 1024:
            raise UsageError(f"{source}: the files released beside the notebooks are more than "
                             f"{limits.data_files_limit} files or {limits.data_size_limit_mb} MiB, which each notebook's "
                             "scratch folder would receive; raise c.KitGrade.data_files_limit or data_size_limit_mb, or "
                             "leave files out of the release (c.CourseDirectory.ignore)")
    return files
