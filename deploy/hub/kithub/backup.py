"""What is kept of a class: one archive of it (``python -m kithub backup``), its gradebooks when it is torn
down (``python -m kithub teardown``), and the teardown itself."""
from __future__ import annotations

import datetime
import os
import pwd
import shutil
import sqlite3
import stat
from pathlib import Path

from grader.hub_exchange.entries import entries_under, open_folder

from .accounts import ACCOUNTS_FILE, remove_accounts
from .config_files import HUB_API_ENV
from .errors import SetupError
from .spec import CLASS_FILE, DERIVED_FILE, ClassSpec

#: the class's own files in its state folder, kept whole: the administrator's class file, what set-up
#: derived, the accounts the class made, the hub's API address for the culler (set-up writes it)
STATE_FILES = (CLASS_FILE, DERIVED_FILE, ACCOUNTS_FILE, HUB_API_ENV)
#: the hub's folder (its database, cookie secret, the LTI tool's key and ledger of grades sent, its log)
#: and the site's settings (HTTPS, admins, the culler's token, limits); what a restart makes again is left out
STATE_FOLDERS = ("hub", "jupyterhub_config.d")
LEFT_OUT = ("hub/jupyterhub-proxy.pid",)
#: the hub's database, copied with SQLite's own backup as the gradebooks are
HUB_DATABASE = "hub/jupyterhub.sqlite"
#: nbgrader's log in each grader account's home (``NbGrader.logfile``, kithub/config_files.py): nbgrader's
#: own lines and the grading record's, who graded what (the course directory holds the record itself)
GRADER_FILES = ("nbgrader.log",)


def teardown(state: Path) -> tuple[list[str], Path | None]:
    """Remove the class's accounts (their processes ended) and its state folder; each course's
    gradebook is kept first in ``<state>.backup-<time>/<course>/`` (root's alone). Returns the
    accounts removed and the backup folder (None if there was no gradebook)."""
    if not (state / CLASS_FILE).exists() and not (state / ACCOUNTS_FILE).exists():
        raise SetupError(f"{state} is not a class's folder (no {CLASS_FILE}); nothing removed")
    backup = backup_gradebooks(state)
    if (state / CLASS_FILE).exists():
        ClassSpec.load(state).profile.unlink(missing_ok=True)
    removed = remove_accounts(state)
    shutil.rmtree(state, ignore_errors=True)
    return removed, backup


def backup_gradebooks(state: Path) -> Path | None:
    """A copy of each course's gradebook (SQLite's own backup: whole even while a grader writes)."""
    if not (state / CLASS_FILE).exists():
        return None
    spec = ClassSpec.load(state)
    found = [(c, c.directory(spec) / "gradebook.db") for c in spec.courses if (c.directory(spec) / "gradebook.db").exists()]
    if not found:
        return None
    backup = state.parent / f"{state.name}.backup-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    backup.mkdir(mode=0o700)
    for course, gradebook in found:
        (backup / course.course_id).mkdir(mode=0o700)
        with sqlite3.connect(gradebook) as source, sqlite3.connect(backup / course.course_id / "gradebook.db") as copy:
            source.backup(copy)
    return backup


#: a file above this is left out of a backup, and named (a student can fill inbound/ with junk)
BACKUP_FILE_LIMIT = 200 * 1024 * 1024


def backup_class(state: Path, to: Path, log=print) -> Path:
    """One archive ``<to>/<state name>-<time>.tar.gz`` of the class: its files in the state folder
    (``STATE_FILES``), the hub's folder and the site's settings (``STATE_FOLDERS``), each course
    directory, each grader account's nbgrader log (``GRADER_FILES``) and the exchange, with owners and
    modes, paths from ``/``; the gradebooks and the hub's
    database copied with SQLite's own backup (whole even while a grader or the hub writes). Restore as
    root with ``tar --extract --preserve-permissions --same-owner --file ARCHIVE --directory /``
    (docs/deploy.md)."""
    import tarfile
    import tempfile

    spec = ClassSpec.load(state)
    to.mkdir(mode=0o700, parents=True, exist_ok=True)
    archive = to / f"{state.name}-{datetime.datetime.now().strftime('%Y%m%d-%H%M%S')}.tar.gz"
    databases = {c.directory(spec) / "gradebook.db" for c in spec.courses} | {state / HUB_DATABASE}
    left_out = {state / name for name in LEFT_OUT}

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if info.isfile() and info.size > BACKUP_FILE_LIMIT:
            log(f"backup: left out /{info.name} ({info.size / 2**20:.0f} MiB, above {BACKUP_FILE_LIMIT // 2**20} MiB)")
            return None
        if not (info.isfile() or info.isdir() or info.issym()):
            return None  # a pipe or a device someone planted: nothing of the class
        return info

    fd = os.open(archive, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar, \
            tempfile.TemporaryDirectory() as scratch:
        tar.addfile(_member(state, os.stat(state)))
        for name in STATE_FILES:
            if (state / name).exists():
                tar.add(state / name, arcname=str(state / name).lstrip("/"))
        trees = [*(state / name for name in STATE_FOLDERS), *(c.directory(spec) for c in spec.courses)]
        for tree in trees:
            if tree.is_dir():
                _add_tree(tar, tree, lambda info: None if Path("/" + info.name) in databases | left_out else keep(info))
        for number, database in enumerate(sorted(databases)):
            if database.exists():
                copy = Path(scratch) / f"{number}.db"
                with sqlite3.connect(database) as source, sqlite3.connect(copy) as target:
                    source.backup(target)
                info = tar.gettarinfo(str(database), arcname=str(database).lstrip("/"))
                info.size = copy.stat().st_size
                with open(copy, "rb") as handle:
                    tar.addfile(info, handle)
        for grader in sorted({c.grader for c in spec.courses}):
            for name in GRADER_FILES:
                _add_file(tar, spec.home(grader) / name, keep)
        _add_tree(tar, spec.exchange, keep)
    return archive


def _add_file(tar, path: Path, keep) -> None:
    """The file ``path`` into ``tar`` as ``_add_tree`` adds one (its folder opened as itself, the file never
    through a link: the grader account owns its home); nothing if it is missing or not a regular file."""
    try:
        parent = open_folder(str(path.parent))
    except OSError:
        return
    try:
        info = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        member = _member(path, info)
        if stat.S_ISREG(info.st_mode) and keep(member) is not None:
            _add_regular(tar, member, path.name, parent, info)
    except OSError:
        pass  # missing (nobody graded yet), or gone meanwhile
    finally:
        os.close(parent)


def _add_tree(tar, folder: Path, keep) -> None:
    """Everything under ``folder`` into ``tar``, with owners and modes, read from descriptors one name at a
    time: the exchange holds the students' folders, and the course directory is the grader's, so a
    folder or file swapped for a link while root reads it is not followed (it is left out, or kept as
    the link it is). ``keep(member)`` returns the member or None."""
    import tarfile

    top = open_folder(str(folder))
    try:
        tar.addfile(_member(folder, os.fstat(top)))
        for relative, info, parent, why in entries_under(top, limit=None):
            name = os.path.basename(relative)
            member = _member(folder / relative, info)
            if stat.S_ISLNK(info.st_mode):
                member.type, member.linkname = tarfile.SYMTYPE, os.readlink(name, dir_fd=parent)
            if why is not None or keep(member) is None:
                continue
            if not stat.S_ISREG(info.st_mode):
                tar.addfile(member)
                continue
            _add_regular(tar, member, name, parent, info)
    finally:
        os.close(top)


def _add_regular(tar, member, name: str, parent: int, info: os.stat_result) -> None:
    """The regular file ``name`` of the folder ``parent`` (a descriptor) into ``tar`` as ``member``: opened
    without following a link, and only if it is still the file ``info`` listed; at most the size listed."""
    import tempfile

    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return  # gone, or swapped for a link or a pipe meanwhile
    with os.fdopen(descriptor, "rb") as handle, tempfile.SpooledTemporaryFile(16 * 2**20) as copy:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            return
        left = info.st_size  # at most what it held when listed (a student's file may grow meanwhile)
        while left > 0 and (chunk := handle.read(min(left, 2**20))):
            copy.write(chunk)
            left -= len(chunk)
        member.size = copy.tell()
        copy.seek(0)
        tar.addfile(member, copy)


def _member(path: Path, info: os.stat_result):
    """The tar member of ``path`` (owner, group, mode, time) from what ``lstat`` said of it."""
    import grp
    import tarfile

    member = tarfile.TarInfo(str(path).lstrip("/"))
    member.mode, member.uid, member.gid, member.mtime = stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid, info.st_mtime
    member.type = (tarfile.DIRTYPE if stat.S_ISDIR(info.st_mode) else tarfile.REGTYPE if stat.S_ISREG(info.st_mode)
                   else tarfile.SYMTYPE if stat.S_ISLNK(info.st_mode) else tarfile.FIFOTYPE)
    member.size = info.st_size if stat.S_ISREG(info.st_mode) else 0
    try:
        member.uname = pwd.getpwuid(info.st_uid).pw_name
        member.gname = grp.getgrgid(info.st_gid).gr_name
    except KeyError:
        pass
    return member
