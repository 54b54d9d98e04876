"""What root and the course's grader do on the students' paths never follows a student's link.

kithub (deploy/hub/kithub/) sets up one course (``ad101``, ps1 released) with four students (real accounts)
and serves it (no grader service: the clerk, which takes submissions in, is what runs as the grader).
Each student plants links at the paths that root or the grader act on, before the act and during it:

* **at server start** (root, the spawner's pre-spawn hook copies the lessons into the home): bob's
  ``~/lessons.partial`` is a link to alice's home; carol swaps it between a folder and that link the
  whole time her server starts;
* **at submission, in the clerk** (the grader, within a second of the arrival): a sub-folder that is a
  link when handed in; one swapped for a link to a folder of the grader's while the clerk copies it,
  after it moved the folder out of the student's reach (an inotify watcher of the student's own
  notices the clerk's listing and swaps at once);
* **at collect** (the grader, ``kitgrade collect``), beside an entry it cannot read (mode 0700) and a
  sub-folder it cannot open: everyone else collected, each of those reported with its reason;
* **set-up run again** (root): the grader's ``received/`` made a link, a course's folder of the exchange
  made by a student before the course exists;
* **the backup** (root): a folder left in ``inbound/`` whose sub-folder is swapped for a link to a folder
  of root's while the backup reads it.

Each time a bait out of the student's reach (a classmate's home, a folder of the grader's or of root's
holding a canary) must come out untouched: same owner, same mode, same files, and its canary in no copy.
And ``make hub`` refuses to serve a class from a checkout its students could read, with the command
that closes it.

Needs root and ``make hub-env``; without them the tests skip, except in CI (``CI=true``).
"""
from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

from kit_paths import ROOT
from kithub.backup import backup_class
from kithub.courses import harden_exchange, prepare_exchange
from kithub.errors import SetupError
from kithub.spec import CourseSpec
from hub_support import PS1, PS1_NOTEBOOK, SWAPPER, one_course_class, require_hub, run_as, served_class, start_as

pytestmark = pytest.mark.timeout(900)
CANARY = f"canary-{secrets.token_hex(8)}"
#: the name of a file in every bait folder, and in the student's own folder that is swapped for a link to it
BAITED = "zz_" + PS1_NOTEBOOK


def no_grader_service(spec) -> None:
    """The clerk stays; the grader service (a JupyterLab, slow to start) is left out (docs/deploy.md: site settings)."""
    site = spec.root / "jupyterhub_config.d"
    site.mkdir(mode=0o700)
    (site / "90-no-grader-service.py").write_text(
        'c.JupyterHub.services = [s for s in c.JupyterHub.services if not s["name"].startswith("ad101") '
        'or s["name"].endswith("-clerk")]\n')


@pytest.fixture(scope="module")
def hub():
    require_hub("the hub's walls test")
    spec = one_course_class("kit-walls-", ["alice", "bob", "carol", "dave"])
    with served_class(spec, before_start=no_grader_service) as served:
        served.scripts = served.root / "scripts"  # what the students run: readable by all
        served.scripts.mkdir(mode=0o755)
        (served.scripts / "swapper.py").write_text(SWAPPER)
        (served.scripts / "swapper.py").chmod(0o644)
        yield served


def name(hub, who: str) -> str:
    return hub.names[who]


def home(hub, who: str) -> Path:
    return Path(pwd.getpwnam(name(hub, who)).pw_dir)


#: the names of the student's folder ``b`` that is swapped for a link (three hundred files, to give the
#: student's watcher time, then the one a reader would copy): a bait folder holds them too, as a folder of
#: the grader's that a student knows (``source/ps1/``) holds the names of the files they were given
FILLER = [f"a{i:03d}.bin" for i in range(1, 301)]


def bait(folder: Path, owner: str) -> Path:
    """A folder of ``owner``'s (mode 700) holding a canary under the name the student's files use, beside
    files of the other names the student's folder ``b`` lists."""
    folder.mkdir(mode=0o700)
    (folder / BAITED).write_text(json.dumps({"cells": [], "canary": CANARY}))
    for name in FILLER:
        (folder / name).write_bytes(b"")
    for path in [folder, *folder.iterdir()]:
        shutil.chown(path, owner, owner)
    return folder


def state_of(folder: Path) -> dict:
    """Owner, mode and contents of everything under ``folder`` (itself included)."""
    found = {}
    for path in [folder, *sorted(folder.rglob("*"))]:
        info = path.lstat()
        found[str(path.relative_to(folder))] = (info.st_uid, info.st_gid, info.st_mode,
                                                path.read_bytes() if path.is_file() and not path.is_symlink() else None)
    return found


def as_student(hub, who: str, shell: str) -> subprocess.CompletedProcess:
    done = run_as(hub, name(hub, who), "/bin/bash", "-c", shell)
    assert done.returncode == 0, (shell, done.stdout, done.stderr)
    return done


def inbound(hub) -> Path:
    return hub.exchange / "ad101" / "inbound"


def received(hub) -> Path:
    return hub.exchange / "ad101" / "received"


def taken_in(hub, who: str, timeout: float = 60) -> list[Path]:
    """The student's submissions in received/, once the clerk (each second) has taken in all it will: nothing
    of theirs in inbound/ but what it set aside (named in the hub's log), and no copy of its under way."""
    deadline, prefix = time.monotonic() + timeout, name(hub, who) + "+"
    while time.monotonic() < deadline:
        waiting = [p for p in inbound(hub).iterdir() if p.name.startswith(prefix) and repr(p.name) not in hub_log(hub)]
        busy = [p for p in received(hub).iterdir() if p.name.startswith((".taking-", ".copying-"))]
        if not waiting and not busy:
            break
        time.sleep(0.5)
    return sorted(p for p in received(hub).iterdir() if p.name.startswith(prefix))


def holds_the_canary(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and CANARY in p.read_text(errors="replace")]


def hub_log(hub) -> str:
    return (hub.root / "hub" / "jupyterhub.log").read_text(errors="replace")


def entry_name(hub, who: str, tag: str) -> str:
    return f"{name(hub, who)}+{PS1}+2026-01-01 00:00:00.000000 UTC+{tag}"


# --- at server start: root gives the lessons -------------------------------------------------------------

def start_server(hub, who: str) -> None:
    from hub_client import Student

    student = Student(hub.url, name(hub, who), hub.passwords[name(hub, who)])
    try:
        student.log_in()
        student.get_token()
        student.start_server()
    finally:
        student.close()


def test_a_link_in_the_home_at_the_first_server_start_takes_root_nowhere(hub):
    """bob's ``~/lessons.partial`` leads to alice's home: his server starts, his lessons are his, her home is hers."""
    classmate = home(hub, "alice")
    before = state_of(classmate)
    as_student(hub, "bob", f"ln -s '{classmate}' ~/lessons.partial")
    start_server(hub, "bob")
    assert state_of(classmate) == before
    lessons = home(hub, "bob") / "lessons"
    assert lessons.is_dir() and not lessons.is_symlink()
    uid = pwd.getpwnam(name(hub, "bob")).pw_uid
    assert all(p.lstat().st_uid == uid for p in [lessons, *lessons.rglob("*")])
    assert (lessons / "en" / "01_recording_history.ipynb").read_bytes() == \
        (ROOT / "notebooks" / "en" / "01_recording_history.ipynb").read_bytes()


def test_a_link_swapped_in_and_out_while_the_server_starts_takes_root_nowhere(hub):
    classmate = home(hub, "alice")
    before = state_of(classmate)
    swapping = start_as(hub, name(hub, "carol"), "/bin/bash", "-c",
                        f"cd ~ && end=$((SECONDS + 60)); while [ $SECONDS -lt $end ]; do "
                        f"rm -rf lessons.partial; mkdir lessons.partial; rm -rf lessons.partial; "
                        f"ln -s '{classmate}' lessons.partial; [ -e lessons ] && break; done; echo DONE")
    try:
        start_server(hub, "carol")
    finally:
        swapping.kill()
        swapping.wait()
    assert state_of(classmate) == before


# --- at submission: the clerk -------------------------------------------------------------------------------

def hand_in(hub, who: str, tag: str, extra: str = "") -> Path:
    """A submission folder made as the student would by hand (a notebook, a sub-folder ``b`` with three
    hundred files and one named as the bait's), then ``extra`` (shell, in the folder), moved in whole."""
    staging = inbound(hub) / f".submitting-{tag}"
    entry = inbound(hub) / entry_name(hub, who, tag)
    as_student(hub, who, f"umask 007 && mkdir '{staging}' && cd '{staging}' && "
                         f"cp ~/ps1.ipynb '{PS1_NOTEBOOK}' && mkdir b && for i in $(seq -w 1 300); do "
                         f"head -c 65536 /dev/urandom > b/a$i.bin; done && echo mine > b/{BAITED} && "
                         f"{extra or 'true'} && mv '{staging}' '{entry}'")
    return entry


@pytest.fixture(scope="module")
def released_copy(hub):
    """ps1 as released, in each student's home (what they hand in)."""
    for who in ("alice", "bob", "carol", "dave"):
        shutil.copyfile(hub.exchange / "ad101" / "outbound" / PS1 / PS1_NOTEBOOK, home(hub, who) / "ps1.ipynb")
        shutil.chown(home(hub, who) / "ps1.ipynb", name(hub, who), name(hub, who))


@pytest.fixture(scope="module")
def grader_bait(hub):
    folder = bait(Path(pwd.getpwnam(hub.courses[0].grader).pw_dir) / "bait", hub.courses[0].grader)
    before = state_of(folder)
    yield folder
    assert state_of(folder) == before


def test_a_sub_folder_that_is_a_link_when_handed_in_is_not_followed(hub, released_copy, grader_bait):
    hand_in(hub, "alice", "linked", extra=f"rm -rf b && ln -s '{grader_bait}' b")
    [copy] = taken_in(hub, "alice")
    assert holds_the_canary(copy) == []
    assert (copy / PS1_NOTEBOOK).exists()
    assert "b\ta symbolic link; not followed" in (copy / ".set-aside.tsv").read_text()


def test_a_sub_folder_swapped_for_a_link_while_the_clerk_copies_it_is_not_followed(hub, released_copy, grader_bait):
    """bob keeps a shell in the folder he hands in; once the clerk has moved it out of inbound/, his watcher
    swaps ``b`` for a link to a folder of the grader's as soon as the clerk lists ``b``, so that the files it
    listed there are read through the link (the clerk copied the grader's canary before)."""
    staging = inbound(hub) / ".submitting-swapped"
    as_student(hub, "bob", f"umask 007 && mkdir '{staging}' && cd '{staging}' && cp ~/ps1.ipynb '{PS1_NOTEBOOK}' && "
                           f"mkdir b && for i in $(seq -w 1 300); do head -c 65536 /dev/urandom > b/a$i.bin; done && "
                           f"echo mine > b/{BAITED}")
    watcher = start_as(hub, name(hub, "bob"), str(hub.python), str(hub.scripts / "swapper.py"), str(staging), "b",
                       str(grader_bait), "after-move", str(inbound(hub) / entry_name(hub, "bob", "swapped")))
    try:
        said, _ = watcher.communicate(timeout=150)
    finally:
        watcher.kill()
    assert "SWAPPED" in said, said  # the swap happened while the clerk copied
    [copy] = taken_in(hub, "bob")
    assert holds_the_canary(copy) == []
    assert (copy / PS1_NOTEBOOK).exists()


# --- one entry against the class: the clerk and collect go on -------------------------------------------------

def test_an_entry_the_grader_cannot_read_is_set_aside_and_everyone_else_is_collected(hub, released_copy):
    """alice's entry (first by name) keeps the grader out (mode 0700); carol's holds a sub-folder it cannot
    open (mode 000); dave's is honest. The clerk takes in carol's and dave's; collect collects them and
    names alice's entry in inbound/ with its reason, and what it left out of carol's."""
    closed = inbound(hub) / entry_name(hub, "alice", "closed")
    as_student(hub, "alice", f"mkdir -m 700 '{closed}' && cp ~/ps1.ipynb '{closed}/{PS1_NOTEBOOK}'")
    hand_in(hub, "carol", "shut", extra="mkdir -m 000 shut")
    hand_in(hub, "dave", "honest")
    assert len(taken_in(hub, "carol")) == 1 and len(taken_in(hub, "dave")) == 1
    assert closed.is_dir()  # still there, reported
    course = hub.courses[0]
    collected = run_as(hub, course.grader, str(hub.bin / "kitgrade"), "collect", PS1, cwd=str(course.directory(hub)))
    shown = (collected.stdout + collected.stderr).replace("\n", " ")
    assert collected.returncode == 0, shown
    assert f"set aside {closed.name!r} in inbound/: cannot be taken in: its owner has kept the grader out" in shown, shown
    assert f"set aside in {name(hub, 'carol')}'s submission: 'shut': its owner has kept the grader out" in shown, shown
    assert "permission denied" not in shown.lower(), shown  # (it once blamed submitted/ for alice's entry)
    for who in ("carol", "dave"):
        assert (course.directory(hub) / "submitted" / name(hub, who) / PS1 / PS1_NOTEBOOK).exists(), shown
    assert "clerk ad101: left in inbound/ " + repr(closed.name) in hub_log(hub)


# --- root again: set-up and the backup ----------------------------------------------------------------------------

def test_set_up_again_follows_no_link_the_grader_put_at_received(hub):
    """``received/`` is the grader's; set-up (root) makes it and chowns it to the grader: a link there,
    made by the grader's account, leads root nowhere."""
    target = bait(hub.root / "root-bait", "root")
    before = state_of(target)
    course = hub.courses[0]
    kept = received(hub).with_name("received.kept")
    # at once, in one process of the grader's (its clerk makes received/ again if it finds none)
    swapped = run_as(hub, course.grader, str(hub.python), "-c", "import os, sys; os.rename(sys.argv[1], sys.argv[2]); "
                     "os.symlink(sys.argv[3], sys.argv[1])", str(received(hub)), str(kept), str(target))
    assert swapped.returncode == 0 and received(hub).is_symlink(), swapped.stderr
    try:
        with pytest.raises(SetupError, match="received is a symbolic link; not followed"):
            harden_exchange(hub, course)
        assert state_of(target) == before
    finally:
        put_back = run_as(hub, course.grader, str(hub.python), "-c", "import os, sys; os.unlink(sys.argv[1]); "
                          "os.rename(sys.argv[2], sys.argv[1])", str(received(hub)), str(kept))
        assert put_back.returncode == 0, put_back.stderr


def test_a_courses_folder_a_student_made_before_the_course_is_refused_not_used(hub):
    later = CourseSpec("ad102", grader=hub.courses[0].grader, port=0, students=[name(hub, "bob")])
    as_student(hub, "bob", f"mkdir -m 777 '{hub.exchange / 'ad102'}'")
    try:
        with pytest.raises(SetupError, match=f"belongs to {name(hub, 'bob')}, not to the course's grader"):
            prepare_exchange(hub, later)
        assert (hub.exchange / "ad102").stat().st_uid == pwd.getpwnam(name(hub, "bob")).pw_uid
    finally:
        shutil.rmtree(hub.exchange / "ad102")


def test_the_backup_follows_no_link_swapped_in_while_it_reads(hub, released_copy):
    """A folder dave leaves in inbound/ (not named as a submission: the clerk leaves it there, the backup
    keeps it); while root's backup lists its sub-folder ``b``, dave swaps ``b`` for a link to a folder of
    root's. The archive holds none of root's canary."""
    target = bait(hub.root / "backup-bait", "root")
    before = state_of(target)
    left = inbound(hub) / "daves-notes"
    as_student(hub, "dave", f"umask 007 && mkdir '{left}' && cd '{left}' && mkdir b && for i in $(seq -w 1 300); do "
                            f"head -c 65536 /dev/urandom > b/a$i.bin; done && echo mine > b/{BAITED}")
    watcher = start_as(hub, name(hub, "dave"), str(hub.python), str(hub.scripts / "swapper.py"), str(left), "b",
                       str(target), "now")
    assert watcher.stdout.readline().strip() == "WATCHING"
    backups = Path(tempfile.mkdtemp(prefix="kit-walls-backup-"))
    try:
        archive = backup_class(hub.root, backups, log=lambda line: None)
        said, _ = watcher.communicate(timeout=30)
        assert "SWAPPED" in said, said
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    assert CANARY.encode() not in tar.extractfile(member).read(), member.name
        assert state_of(target) == before
    finally:
        watcher.kill()
        shutil.rmtree(backups)


# --- the checkout -----------------------------------------------------------------------------------------------

def test_make_hub_refuses_a_checkout_the_class_could_read_and_says_how_to_close_it(hub):
    """The checkout holds the solutions and hidden tests (``exercises/``, the tests): with it open to other
    accounts, ``make hub`` stops before making any account, with the command that closes it."""
    state = Path(tempfile.mkdtemp(prefix="kit-walls-open-"))
    # as Debian leaves a home folder: readable and searchable by all (and the folders above it searchable,
    # as a home's are: a checkout cloned into a private folder is opened up to it for the test's time)
    modes = {folder: folder.stat().st_mode & 0o7777 for folder in [ROOT, *ROOT.parents]}
    ROOT.chmod(modes[ROOT] | 0o005)
    for folder, mode in modes.items():
        if folder != ROOT and not mode & 0o001:
            folder.chmod(mode | 0o001)
    try:
        result = subprocess.run(["make", "-C", str(ROOT), "hub", f"HUB_STATE={state}"], capture_output=True, text=True,
                                timeout=600)
    finally:
        for folder, mode in modes.items():
            folder.chmod(mode)
        shutil.rmtree(state, ignore_errors=True)
    assert result.returncode != 0, result.stdout[-2000:]
    assert "can be read by every account of this machine" in result.stderr, result.stderr[-2000:]
    assert f"chmod o-rwx {ROOT}" in result.stderr, result.stderr[-2000:]
    assert not (state / "accounts.txt").exists()


def test_the_checks_above_can_fail():
    """The helpers see a difference (a canary copied, a mode changed)."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = bait(Path(scratch) / "b", "root")
        before = state_of(folder)
        os.chmod(folder, 0o755)
        assert state_of(folder) != before
        (Path(scratch) / "copy").mkdir()
        shutil.copy(folder / BAITED, Path(scratch) / "copy")
        assert holds_the_canary(Path(scratch) / "copy")


def test_the_hub_does_not_start_while_another_account_listens_on_one_of_the_class_ports(tmp_path):
    # a student keeping a server on the proxy's API port or a grader service's would be answered to by
    # JupyterHub as its own proxy (with the proxy's token) or the instructor's formgrader
    require_hub("the hub's ports")
    from browser_support import free_port
    from kithub.hub_process import Hub
    from kithub.spec import ClassSpec

    ports = [free_port() for _ in range(4)]
    spec = ClassSpec(state=str(tmp_path / "state"), courses=[CourseSpec(course_id="ad101", grader="nobody", port=ports[3])],
                     passwords={}, hub_port=ports[0], hub_api_port=ports[1], proxy_api_port=ports[2])
    (tmp_path / "state").mkdir()
    for port, what in ((ports[2], "the proxy's API"), (ports[3], "course ad101's grader service")):
        squatter = subprocess.Popen(["runuser", "-u", "nobody", "--", "python3", "-c",
                                     f"import socket,time; s=socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); "
                                     "print('listening', flush=True); time.sleep(120)"], stdout=subprocess.PIPE, text=True)
        try:
            assert squatter.stdout.readline().strip() == "listening"
            with pytest.raises(SetupError, match=f"port {port}, {what}.*by nobody"):
                Hub(spec, log_path=tmp_path / "hub.log").start(timeout=5)
        finally:
            squatter.kill()
            squatter.wait()
