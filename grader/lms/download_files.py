"""``collect --from``, step 1: every file of an LMS download (a folder or a zip), read as a file.

No symbolic link, hard link, device, pipe or unsafe zip entry is followed or read (each is listed
as left out, with why); sizes are bounded; nothing is written.
"""

from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..foundations.errors import UsageError

#: The largest file read from a download (a notebook is far smaller; a zip bomb is not read).
MAX_FILE_BYTES = 100 * 1024 * 1024
#: What operating systems add to folders and zips; skipped without a word.
NOISE = ("__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini")

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
            data, why = read_as_file(os.path.join(folder, name))
            if why is None:
                files.append(DownloadedFile(relative, data))
            else:
                left_out.append((relative, why))
    return files, left_out


def read_as_file(path: str, limit: int = MAX_FILE_BYTES, dir_fd: int | None = None) -> tuple[bytes | None, str | None]:
    """``(bytes, None)``, or ``(None, why)``: a file read as a file, never through a link (``path`` is
    relative to the folder open as ``dir_fd`` if given: the hub's clerk walks a student's folder so).

    A symbolic link, a device, pipe or socket, a hard link (the same file under another name) and a
    file over ``limit`` bytes are not read. The checks are made again on the opened descriptor: a
    file swapped for another, or linked to a name elsewhere, between the look and the opening is not
    read. A hard link is refused because whoever reads the file (the instructor collecting a
    download, the hub's clerk as the course's grader account) may be able to read what the one who
    made the link cannot (see ``hub_exchange/entries.py``); an honest upload or submission is always
    a fresh copy, one link. Used by LMS downloads, the hub's clerk and staging (``submission.py``)."""
    try:
        info = os.lstat(path, dir_fd=dir_fd)
    except OSError as error:
        return None, f"unreadable ({error.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return None, "a symbolic link; not followed"
    if not stat.S_ISREG(info.st_mode):
        return None, "not a regular file (a device, pipe or socket); not read"
    if info.st_nlink > 1:
        return None, "a hard link (the same file has another name elsewhere); not read"
    if info.st_size > limit:
        return None, f"larger than {limit / 2**20:g} MiB; not read"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as error:
        return None, f"unreadable ({error.strerror})"
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino) \
                or opened.st_nlink > 1:
            return None, "changed while it was read; not read"
        try:
            data = handle.read(limit + 1)
        except OSError as error:  # a failing disk
            return None, f"unreadable ({error.strerror})"
    if len(data) > limit:
        return None, f"larger than {limit / 2**20:g} MiB; not read"
    return data, None


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
