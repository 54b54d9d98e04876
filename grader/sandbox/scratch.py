"""The scratch folder a notebook runs in: made empty, filled with the assignment's data files, removed.

One copier for ``autograde``, the release proof and ``check``: the same files under the same
limits everywhere, so the proof runs under the conditions it vouches for. Files are read as files:
no symbolic link, device or other special file is followed or copied.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .policy import Limits


class DataFilesTooLarge(ValueError):
    """The assignment's data files are over the limits."""


def data_files(folder: Path, limits: Limits) -> list[Path]:
    """The regular files beside a notebook (not notebooks, not checkpoints), relative to ``folder``."""
    found, size = [], 0
    for directory, subdirs, files in os.walk(folder):  # os.walk does not follow links to folders
        subdirs[:] = sorted(d for d in subdirs if d not in (".ipynb_checkpoints", "__pycache__"))
        for name in sorted(files):
            path = Path(directory, name)
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode) or name.endswith(".ipynb"):
                continue
            found.append(path.relative_to(folder))
            size += info.st_size
            if len(found) > limits.data_files_limit or size > limits.data_size_limit_mb * 1024 * 1024:
                raise DataFilesTooLarge(f"{folder}: more than {limits.data_files_limit} data files or "
                                        f"{limits.data_size_limit_mb} MiB beside the notebook")
    return found


def read_data_files(folder: Path, limits: Limits) -> dict[str, bytes]:
    """The data files as bytes (what a grading task carries), read without following links."""
    result = {}
    for relative in data_files(folder, limits):
        fd = os.open(folder / relative, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            result[str(relative)] = handle.read()
    return result


@contextmanager
def run_folder():
    """A folder for one run's scratch folders, removed when the run ends however it ends."""
    folder = tempfile.mkdtemp(prefix="kitgrade-run-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def scratch_folder(files: dict[str, bytes], parent: str | None = None):
    """A fresh folder holding ``files`` (relative path -> bytes), removed afterwards.

    In ``parent`` (a run's folder, removed with the run), or else (a dask worker's task) in this
    process's temporary folder as ``kitgrade-<pid>-…``: one left by a worker killed mid-task is
    removed by the next task on that machine (``temporary.remove_left_behind``)."""
    if parent and os.path.isdir(parent):
        folder = tempfile.mkdtemp(prefix="kitgrade-", dir=parent)
    else:
        folder = tempfile.mkdtemp(prefix=f"kitgrade-{os.getpid()}-")
    try:
        for relative, content in files.items():
            target = Path(folder, relative)
            if ".." in Path(relative).parts or Path(relative).is_absolute():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def copy_from(folder_fd: int, destination: str) -> None:
    """Copy the files of an open folder into ``destination`` (the student's process, before any
    student code runs, into its own /tmp); links and special files are not followed or copied."""
    for entry in os.scandir(folder_fd):
        target = os.path.join(destination, entry.name)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        if entry.is_dir(follow_symlinks=False):
            inner = os.open(entry.name, flags | os.O_DIRECTORY, dir_fd=folder_fd)
            try:
                os.mkdir(target, 0o700)
                copy_from(inner, target)
            finally:
                os.close(inner)
        elif entry.is_file(follow_symlinks=False):
            source = os.open(entry.name, flags, dir_fd=folder_fd)
            with os.fdopen(source, "rb") as reading, open(target, "wb") as writing:
                shutil.copyfileobj(reading, writing, 1 << 20)
