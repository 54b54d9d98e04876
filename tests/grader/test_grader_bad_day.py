"""An instructor's bad day and a determined student, against the grader's start-up as it is now:
``kitgrade autograde`` starts its workers' zygotes first thing (they start up while the command
imports nbgrader) and forks its workers from itself; ``kitgrade check`` does the same with its one
worker; and multiprocessing's folder goes where a socket's path fits.

* Ctrl-C (sent by the terminal to every process of the command) and SIGTERM (to the command) as
  the run starts: one line, exit status 130, no process and no temporary file left, and
  the next run grades everyone, even with the gradebook locked by another program for a moment as
  it records (the run's shared gradebook engine waits, as nbgrader's own does). A student's
  ``kitgrade check``, stopped while its zygote starts, says "stopped" too.
* No usable temporary folder (``TMPDIR`` missing or read-only, a ``TMPDIR`` too deep for the
  workers' socket, while /tmp and the other fall-backs are read-only): one line, exit status 2,
  nothing written. The read-only folders are made in a mount namespace of the test's own, so the
  machine's /tmp is never touched.
* ``kitgrade check`` forks its one worker from itself and runs the notebook in the zygote it
  started first (no forkserver); stopped while the notebook runs, it leaves nothing.
* The student's process, forked from the zygote the command starts, holds nothing of the
  command's modules or of the gradebook (its descriptors, its memory map, its modules), has
  Ctrl-C unblocked (a cell is interrupted with it), and sees no Unix socket (a forkserver's).

The faults need root, unshare(1) and mount(8): without them those tests skip, except in CI
(``CI=true``), where they fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from browser_support import unavailable
from course_snapshots import ASSIGNMENT, copy_course, make_course, snapshot
from grader_fixtures.cases import SOLUTIONS, answered
from test_grader_environment_faults import NOTEBOOK, gradebook_locked, hand_in, one_line, scores
from test_grader_faults import _grading_processes, _parent, _wait_until_gone
from test_grader_walls import LIST_DESCRIPTORS

PROBE = LIST_DESCRIPTORS + r"""
import sys
with open("/proc/self/maps") as maps:
    mapped = {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) > 5}
print("MAPPED", sorted(m for m in mapped if any(word in m for word in ("sqlite", "gradebook", ".db", "pymp-"))))
print("MODULES", sorted(m for m in sys.modules if m.split(".")[0] in ("sqlite3", "_sqlite3", "sqlalchemy", "nbgrader",
                                                                    "nbformat", "jsonschema") or m in ("grader.foundations.speed", "grader.autograde")))
with open("/proc/self/status") as status:
    blocked = int(next(line for line in status if line.startswith("SigBlk:")).split()[1], 16)
print("CTRL-C BLOCKED", bool(blocked & (1 << (2 - 1))))  # the supervisor stops a cell with SIGINT
import stat
sockets = []  # the forkserver's socket (in TMPDIR, or /tmp or /dev/shm) would run anything it is sent
for top in ("/tmp", "/var/tmp", "/dev", "/run"):
    for folder, names, files in os.walk(top):
        sockets += [os.path.join(folder, n) for n in names + files
                    if stat.S_ISSOCK(os.lstat(os.path.join(folder, n)).st_mode)]
print("SOCKETS", sockets)
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A released course: two correct submissions and a correct one that looks around its process."""
    course = make_course(tmp_path_factory.mktemp("bad_day") / "course")
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 2\n")
    hand_in(course, ["alice", "bob"])
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    probe = answered(release, **SOLUTIONS)
    probe.cells.insert(1, nbformat.v4.new_code_cell(PROBE))
    folder = course / "submitted" / "probe" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(probe, folder / NOTEBOOK)
    return course


# ---- stopped as it starts ------------------------------------------------------------------------
def _starting_zygote_of(pid: int) -> int | None:
    """A zygote ``kitgrade autograde`` or ``check`` (process ``pid``) started first thing, for its
    workers (``grader/sandbox/spare_zygotes.py``): it starts up while the command imports nbgrader."""
    for entry in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            if f"\nPPid:\t{pid}\n" in status and b"grader.sandbox.zygote" in Path(f"/proc/{entry}/cmdline").read_bytes():
                return int(entry)
        except (OSError, NotADirectoryError):
            continue
    return None


def _stop_as_it_starts(course: Path, tmp: Path, sig: int, whole_group: bool,
                       command=("autograde", ASSIGNMENT, "--quiet"), starting=_starting_zygote_of) -> tuple[int, str]:
    """Start ``kitgrade autograde`` (in a session of its own, as a terminal's foreground job) and send
    ``sig`` as it starts: once ``starting`` finds the process it starts first (its workers' zygotes,
    while it imports nbgrader)."""
    process = subprocess.Popen([sys.executable, "-m", "grader.cli", *command], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp)}, cwd=course,
                               start_new_session=True)
    deadline = time.monotonic() + 60
    while starting(process.pid) is None:
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.005)
    (os.killpg if whole_group else os.kill)(process.pid, sig)
    _, err = process.communicate(timeout=120)
    return shell_status(process.returncode), err


def shell_status(returncode: int) -> int:
    """The exit status a shell shows (``$?``): 128 + the signal that ended a process. Python 3.11 ends
    a process by SIGINT once a Ctrl-C has interrupted code that ``exec()`` made (a dataclass's methods,
    as a module is imported), even when the program handled it and exited with 130 (its flag for "an
    unhandled Ctrl-C" is set there and never cleared): to the instructor's shell, both are 130."""
    return 128 - returncode if returncode < 0 else returncode


@pytest.fixture(scope="module")
def stopped_then_graded(course, tmp_path_factory):
    """Ctrl-C, then SIGTERM, each as the run starts (its zygotes starting, nbgrader being imported); then
    a plain run, the gradebook locked by another program for a moment while it records. What each
    left and said."""
    course = copy_course(course, tmp_path_factory.mktemp("stopped") / "course")
    tmp, before = tmp_path_factory.mktemp("tmp"), _grading_processes()
    seen = {}
    for name, sig, whole_group in (("ctrl-c", signal.SIGINT, True), ("sigterm", signal.SIGTERM, False)):
        status, err = _stop_as_it_starts(course, tmp, sig, whole_group)
        left_running = _wait_until_gone(before, 20)
        seen[name] = status, err, left_running, sorted(p.name for p in tmp.iterdir())
    # the next run, with the gradebook locked by another program for a moment once it records grades
    # (its gradebook engine, shared for the whole run, waits as nbgrader's own would)
    book = course / "gradebook.db"
    written = book.stat().st_mtime_ns
    graded = subprocess.Popen([sys.executable, "-m", "grader.cli", "autograde", ASSIGNMENT, "--quiet", "--course",
                               str(course)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "TMPDIR": str(tmp)})
    while book.stat().st_mtime_ns == written and graded.poll() is None:
        time.sleep(0.01)
    seen["locked while it ran"] = graded.poll() is None
    with gradebook_locked(book, seconds=1.5) as holder:
        holder.wait(timeout=60)
    out, err = graded.communicate(timeout=600)
    seen["graded"] = graded.returncode, out, err
    seen["left after"] = _wait_until_gone(before, 20), sorted(p.name for p in tmp.iterdir())
    return course, seen


@pytest.mark.parametrize("name", ["ctrl-c", "sigterm"])
def test_a_run_stopped_as_it_starts_says_stopped_in_one_line_and_leaves_nothing(stopped_then_graded, name):
    status, err, left_running, left_files = stopped_then_graded[1][name]
    assert (status, err) == (130, "kitgrade autograde: stopped\n")
    assert not left_running
    assert not left_files  # removed by the command itself, not left for the next one


def test_a_students_check_stopped_with_ctrl_c_as_it_starts_says_stopped_in_one_line(course, tmp_path):
    before = _grading_processes()
    notebook = course / "submitted" / "alice" / ASSIGNMENT / NOTEBOOK
    assert _stop_as_it_starts(course, tmp_path, signal.SIGINT, True, ("check", str(notebook))) == (
        130, "kitgrade check: stopped\n")
    assert not _wait_until_gone(before, 20)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("sig, whole_group", [(signal.SIGINT, True), (signal.SIGTERM, False)], ids=["ctrl-c", "sigterm"])
def test_a_students_check_stopped_while_it_runs_the_notebook_says_stopped_and_leaves_nothing(tmp_path, sig, whole_group):
    """Stopped (Ctrl-C to the terminal's whole job, or SIGTERM to the command) while the student's
    process runs (the command's zygote, adopted by the worker it forked, is busy): the command ends
    it with its worker."""
    from test_grader_environment_faults import _slow
    from test_grader_faults import _busy_zygotes

    course = make_course(tmp_path / "course")
    _slow(course, ["carol"], seconds=60)
    before = _grading_processes()
    (tmp_path / "tmp").mkdir()
    status, err = _stop_as_it_starts(course, tmp_path / "tmp", sig, whole_group,
                                     ("check", str(course / "submitted" / "carol" / ASSIGNMENT / NOTEBOOK)),
                                     lambda pid: next(iter(_busy_zygotes(_grading_processes() - before)), None))
    assert (status, err) == (130, "kitgrade check: stopped\n")
    assert not _wait_until_gone(before, 20)
    assert not list((tmp_path / "tmp").iterdir())


def test_a_students_check_forks_its_worker_and_runs_the_notebook_in_the_zygote_it_started_first(tmp_path):
    """``kitgrade check`` starts its zygote first thing too (it loads the notebook's modules while the
    command imports nbgrader): its worker is forked from the command, no forkserver is started, the
    student's process comes from that zygote, and nothing is left when it ends."""
    from test_grader_environment_faults import _slow
    from test_grader_faults import _busy_zygotes, _outside_bubblewrap

    course = make_course(tmp_path / "course")
    _slow(course, ["alice"], seconds=4)
    before = _grading_processes()
    command = subprocess.Popen([sys.executable, "-m", "grader.cli", "check",
                                str(course / "submitted" / "alice" / ASSIGNMENT / NOTEBOOK)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not (busy := _busy_zygotes(_grading_processes() - before)):
            assert command.poll() is None and time.monotonic() < deadline, command.communicate()
            time.sleep(0.05)
        command_line = Path(f"/proc/{command.pid}/cmdline").read_bytes()
        seen = {}  # pid -> (parent, command line) of the grading processes still there
        for pid in _grading_processes() - before:
            try:
                seen[pid] = _parent(pid), Path(f"/proc/{pid}/cmdline").read_bytes()
            except (OSError, StopIteration):
                continue
        workers = [pid for pid, (parent, line) in seen.items() if parent == command.pid and line == command_line]
        forkservers = [pid for pid, (_, line) in seen.items() if b"multiprocessing.forkserver" in line]
        assert [_outside_bubblewrap(zygote) for zygote in busy] == [command.pid]  # the command's zygote
        assert len(workers) == 1 and not forkservers, (workers, forkservers)
        out, err = command.communicate(timeout=120)
    finally:
        if command.poll() is None:
            command.kill()
    assert command.returncode == 0, (out, err)
    assert out.strip().splitlines()[-1].startswith("total: 7/7"), out
    assert not _wait_until_gone(before, 10)

def test_a_run_killed_with_a_too_deep_temporary_folder_leaves_nothing_in_tmp_after_the_next_command(course, tmp_path):
    """multiprocessing's folder went in /tmp (the temporary folder is too deep for a socket): the next
    command removes it too, not only the killed command's folder in the temporary folder."""
    deep = tmp_path / ("d" * (100 - len(str(tmp_path))))
    deep.mkdir()
    before = _grading_processes()
    process = subprocess.Popen([sys.executable, "-m", "grader.cli", "autograde", ASSIGNMENT, "--quiet", "--course",
                                str(course)], env={**os.environ, "TMPDIR": str(deep)}, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _starting_zygote_of(process.pid) is None:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert not _wait_until_gone(before, 20)
    noted = Path(next(deep.glob("kitgrade-*/multiprocessing-folder")).read_text())
    assert noted.parent == Path("/tmp") and noted.is_dir()
    # any command: this one refuses at once (nothing is graded in this course yet)
    after = subprocess.run([sys.executable, "-m", "grader.cli", "summary", ASSIGNMENT, "--course", str(course)],
                           capture_output=True, text=True, env={**os.environ, "TMPDIR": str(deep)})
    assert "run `kitgrade autograde sample_ex` first" in one_line(after.stderr)
    assert not noted.exists()
    assert not list(deep.iterdir())


def test_the_run_after_them_grades_everyone(stopped_then_graded):
    course, seen = stopped_then_graded
    assert seen["locked while it ran"]
    assert seen["graded"][0] == 0, seen["graded"]
    assert scores(course) == {"alice": 7.0, "bob": 7.0, "probe": 7.0}
    assert seen["left after"] == ([], [])


def test_the_students_process_holds_nothing_of_the_forkserver_or_the_gradebook(stopped_then_graded):
    course = stopped_then_graded[0]
    printed = "".join(output.get("text", "") for output in nbformat.read(
        course / "autograded" / "probe" / ASSIGNMENT / NOTEBOOK, as_version=4).cells[1].outputs)
    # stdin, stdout and stderr (its own /tmp/.c_output), its command pipe and its reply pipe: nothing else
    assert "HELD ['/dev/null', '/tmp/.c_output', '/tmp/.c_output', 'pipe:', 'pipe:']" in printed, printed
    assert "MAPPED []" in printed, printed
    assert "MODULES []" in printed, printed
    assert "CTRL-C BLOCKED False" in printed, printed
    assert "SOCKETS []" in printed, printed


# ---- no usable temporary folder -------------------------------------------------------------------
@pytest.fixture(scope="module")
def namespaces():
    """Root, and mount namespaces of our own (a container may forbid them)."""
    if os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("mount")):
        unavailable("read-only folders in a mount namespace need root, unshare(1) and mount(8)",
                    "CI runs the tests as root")
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "mount", "--bind", "/tmp", "/tmp"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        unavailable(f"cannot make a mount namespace here ({probe.stderr.strip()})", "CI must allow unshare(1)")


def _with_read_only(folders, writable, argv, tmpdir: str) -> subprocess.CompletedProcess:
    """``argv`` run in a mount namespace of its own where ``folders`` are read-only (``writable``, under
    one of them, stays writable), from a read-only current folder, with ``TMPDIR`` set to ``tmpdir``."""
    steps = [f'mount --bind "{f}" "{f}" && mount -o remount,bind,ro "{f}"' for f in folders if os.path.isdir(f)]
    steps += [f'mount --bind "{f}" "{f}" && mount -o remount,bind,rw "{f}"' for f in writable]
    env = {k: v for k, v in os.environ.items() if k not in ("TEMP", "TMP")}
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           " && ".join(steps) + ' && cd /tmp && exec "$@"', "sh", *argv],
                          capture_output=True, text=True, timeout=300, env={**env, "TMPDIR": tmpdir})


FALL_BACKS = ["/tmp", "/var/tmp", "/usr/tmp", "/dev/shm"]


@pytest.mark.parametrize("tmpdir, said", [
    ("missing", "does not exist"),
    ("read-only", "cannot be written"),
])
def test_no_temporary_folder_to_write_in_is_one_line_and_exit_status_2(namespaces, course, tmp_path, tmpdir, said):
    (tmp_path / "read-only").mkdir()
    for argv in (["autograde", ASSIGNMENT, "--course", str(course)],
                 ["check", str(course / "submitted" / "alice" / ASSIGNMENT / NOTEBOOK)]):
        before = snapshot(course, tmp_path)
        done = _with_read_only([*FALL_BACKS, str(tmp_path / "read-only")], [], [sys.executable, "-m", "grader.cli", *argv],
                               str(tmp_path / tmpdir))
        assert done.returncode == 2, done
        assert one_line(done.stderr) == (
            f"kitgrade {argv[0]}: no folder for temporary files: TMPDIR={tmp_path / tmpdir} {said}, and none of "
            "/tmp, /var/tmp and the current folder can be written; set TMPDIR to a folder you can write\n")
        assert snapshot(course, tmp_path) == before


def test_a_temporary_folder_too_deep_for_the_workers_socket_with_no_short_one_is_one_line_and_exit_status_2(
        namespaces, course, tmp_path):
    deep = tmp_path / ("d" * (100 - len(str(tmp_path))))
    deep.mkdir()
    before = snapshot(course, tmp_path)
    done = _with_read_only(FALL_BACKS, [str(deep)], [sys.executable, "-m", "grader.cli", "autograde", ASSIGNMENT,
                                                     "--course", str(course)], str(deep))
    assert done.returncode == 2, done
    assert one_line(done.stderr).startswith(
        f"kitgrade autograde: the temporary folder {deep} is too deep for the grading workers' socket (a path of "
        f"{len(str(deep))} bytes; at most 75) and none of /tmp, /var/tmp, /dev/shm can be written; set TMPDIR to a "
        "shorter folder"), done.stderr
    assert snapshot(course, tmp_path) == before


# ---- the gradebook replaced while a run grades ---------------------------------------------------
def test_a_gradebook_replaced_during_a_run_gives_no_one_a_zero_and_the_next_run_grades_them(tmp_path):
    """An instructor copies a backup over gradebook.db while a run grades: a student graded before the copy
    loses that grade (as with plain nbgrader), but is never given a zero for a correct notebook; the next
    run grades them again."""
    from test_grader_environment_faults import _slow, _start, _wait_for_a_grade

    course = make_course(tmp_path / "course")
    hand_in(course, ["alice"])
    _slow(course, ["dan"], seconds=6)
    backup = tmp_path / "gradebook-backup.db"
    shutil.copy(course / "gradebook.db", backup)
    run = _start(course, tmp_path / "tmp")
    _wait_for_a_grade(course, run)
    shutil.copy(backup, course / "gradebook.db")  # as `cp` does: the same file, its bytes replaced
    run.communicate(timeout=300)
    assert 0.0 not in scores(course).values(), scores(course)
    again = subprocess.run([sys.executable, "-m", "grader.cli", "autograde", ASSIGNMENT, "--course", str(course),
                            "--quiet"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again
    assert scores(course) == {"alice": 7.0, "dan": 7.0}, again.stdout
