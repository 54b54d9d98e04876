"""One temporary folder per ``kitgrade`` process, so that even a killed run leaves nothing behind.

Everything a command and the processes it starts put in the temporary folder (a run's scratch
folders, dask's own folders) goes into ``kitgrade-<pid>-…`` under the user's temporary folder
(``TMPDIR``); multiprocessing's folder is beside it (or in /tmp, /var/tmp or /dev/shm where ``TMPDIR``
is too deep for its socket's path), named in it. Both are removed when the process
exits; those left by a process that was killed (SIGKILL, a machine that went down) are removed by
the next command that starts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from multiprocessing.util import Finalize, get_temp_dir
from pathlib import Path

from .foundations.errors import OUTER_TMPDIR, UsageError

PREFIX = "kitgrade-"
MULTIPROCESSING_NOTE = "multiprocessing-folder"
#: The longest temporary folder multiprocessing's folder may go in: its forkserver listens on
#: ``<folder>/pymp-XXXXXXXX/listener-XXXXXXXX``, and a socket's path has at most 107 bytes.
SOCKET_FOLDER_ROOM = 107 - len("/pymp-XXXXXXXX/listener-XXXXXXXX")
#: Where multiprocessing's folder goes instead when the temporary folder is too deep, the first writable one
SHORT_FOLDERS = ("/tmp", "/var/tmp", "/dev/shm")
_STATE: dict = {}


def process_folder() -> Path:
    """This process's temporary folder, made (and set as every later temporary file's home) on first use."""
    if "folder" not in _STATE:
        outer = _temporary_folder()
        socket_home = _socket_home(outer)  # refused before anything is made
        remove_left_behind(outer)
        folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=outer))
        _STATE.update(folder=folder, outer=outer)
        # multiprocessing's folder (its forkserver's socket) stays beside it, where a socket's path fits
        # the kernel's limit of 108 bytes; its name is noted, for the next command to remove after a kill
        (folder / MULTIPROCESSING_NOTE).write_text(_multiprocessing_folder(socket_home))
        # removed at exit after multiprocessing has removed its own folder inside it (priority -100)
        Finalize(None, shutil.rmtree, args=(str(folder), True), exitpriority=-101)
    return _STATE["folder"]


def _temporary_folder() -> Path:
    """The user's temporary folder (``TMPDIR``, else the first writable of /tmp, /var/tmp, ... as Python picks it)."""
    try:
        return Path(tempfile.gettempdir())
    except FileNotFoundError:  # Python found none it can write in
        asked, named = os.environ.get("TMPDIR"), ""
        if asked:
            state = ("cannot be written" if os.path.isdir(asked) else "is not a folder" if os.path.exists(asked)
                     else "does not exist")
            named = f"TMPDIR={asked} {state}, and "
        raise UsageError(f"no folder for temporary files: {named}none of /tmp, /var/tmp and the current folder can be "
                         "written; set TMPDIR to a folder you can write") from None


def _socket_home(outer: Path) -> Path:
    """Where multiprocessing's folder goes: ``outer``, or a short folder where ``outer`` is too deep for a socket."""
    if len(os.fsencode(str(outer))) <= SOCKET_FOLDER_ROOM:
        return outer
    for folder in SHORT_FOLDERS:
        if os.access(folder, os.W_OK | os.X_OK):
            return Path(folder)
    raise UsageError(f"the temporary folder {outer} is too deep for the grading workers' socket (a path of "
                     f"{len(os.fsencode(str(outer)))} bytes; at most {SOCKET_FOLDER_ROOM}) and none of "
                     f"{', '.join(SHORT_FOLDERS)} can be written; set TMPDIR to a shorter folder")


def _multiprocessing_folder(home: Path) -> str:
    """multiprocessing's folder, made in ``home``."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(home)
    try:
        return get_temp_dir()  # made once per process (one made before this call is kept)
    finally:
        tempfile.tempdir = saved


@contextmanager
def in_process_folder():
    """For the block, this process's temporary files, and those of the processes it starts, go in
    ``process_folder()`` (afterwards as before: a caller that runs commands in-process keeps its own)."""
    folder = str(process_folder())
    saved = {name: os.environ.get(name) for name in ("TMPDIR", OUTER_TMPDIR)}
    saved_tempdir = tempfile.tempdir
    tempfile.tempdir = os.environ["TMPDIR"] = folder
    os.environ.setdefault(OUTER_TMPDIR, str(_STATE["outer"]))
    try:
        yield folder
    finally:
        tempfile.tempdir = saved_tempdir
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def remove_left_behind(outer: Path) -> list[Path]:
    """Remove the folders of kitgrade processes of this user that no longer run; return them."""
    from .sandbox.workers import alive

    removed = []
    try:
        entries = list(outer.iterdir())
    except OSError:
        return removed
    for entry in entries:
        pid, _, rest = entry.name[len(PREFIX):].partition("-")  # kitgrade-<pid>-<random>, nothing else
        if not (entry.name.startswith(PREFIX) and pid.isdigit() and rest and entry.is_dir() and not entry.is_symlink()):
            continue
        try:
            mine = entry.stat().st_uid == os.geteuid()
        except OSError:
            continue
        if mine and int(pid) != os.getpid() and not alive(int(pid)):
            try:
                theirs = Path((entry / MULTIPROCESSING_NOTE).read_text())
            except OSError:
                theirs = None
            if theirs is not None and str(theirs.parent) in (str(outer), *SHORT_FOLDERS) \
                    and theirs.name.startswith("pymp-"):
                shutil.rmtree(theirs, ignore_errors=True)
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed
