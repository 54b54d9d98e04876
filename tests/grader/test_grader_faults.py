"""Runs that are stopped or go wrong: never a silent wrong grade, never a process left behind.

Real runs of the ``kitgrade`` command (a subprocess, as an instructor starts it) on the sample
exercise, stopped with real signals; a submission the grader cannot read; a rerun for one student.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from course_snapshots import copy_course
from grader.cli import main as kitgrade

KIT = str(Path(__file__).resolve().parents[2])  # the zygote's sys.path names this checkout

FIXTURES = Path(__file__).resolve().parent / "grader_fixtures"
ASSIGNMENT = "sample_ex"
KITGRADE = [sys.executable, "-m", "grader.cli"]


def _solution(release, source, extra=""):
    nb = nbformat.from_dict(json.loads(json.dumps(release)))
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id] + ("\n" + extra if grade_id == "square" else "")
    return nb


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The sample course, made and released once for the module (each test grades a copy)."""
    tmp_path = tmp_path_factory.mktemp("template")
    root = tmp_path / "course"
    exercises = tmp_path / "exercises"
    shutil.copytree(FIXTURES / "exercises" / ASSIGNMENT, exercises / ASSIGNMENT)
    assert kitgrade(["init", str(root), "--course-id", "f101", "--exercises", str(exercises)]) == 0
    with open(root / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 2\n")
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
    return root


@pytest.fixture()
def course(template, tmp_path):
    return copy_course(template, tmp_path / "course")


def _hand_in(course, students, extra=""):
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for student in students:
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(_solution(release, source, extra), folder / f"{ASSIGNMENT}.ipynb")


def _grading_processes() -> set[int]:
    """Processes of this Python running the grader's machinery (workers, zygotes, their helpers)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cmdline.startswith(sys.executable) and ("grader.sandbox.zygote" in cmdline or "multiprocessing" in cmdline
                                                   or "grader.cli" in cmdline):
            found.add(int(entry))
        elif "grader.sandbox.zygote" in cmdline and KIT in cmdline:  # bwrap and the zygote inside it
            found.add(int(entry))
    return found


def _wait_until_gone(before: set[int], seconds: float) -> list[str]:
    """The grading processes still there after ``seconds`` (none, once they have all exited)."""
    deadline = time.monotonic() + seconds
    while True:
        left = _grading_processes() - before
        if not left or time.monotonic() > deadline:
            return [_describe(pid) for pid in sorted(left)]
        time.sleep(0.2)


def _describe(pid: int) -> str:
    try:
        status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]
        return f"{pid} (parent {status.get('PPid')}, {status.get('State')}): {cmdline}"
    except OSError:
        return f"{pid} (gone)"


def _start(course, tmp):
    """``kitgrade autograde`` as an instructor starts it, with its own temporary folder to inspect."""
    return subprocess.Popen([*KITGRADE, "autograde", ASSIGNMENT, "--course", str(course), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "TMPDIR": str(tmp)}, preexec_fn=_interruptible)


def _interruptible():
    """Ctrl-C as from a terminal: a test run started in the background (``pytest ... &``) would pass
    on its ignored SIGINT, which the command keeps, as every program started so does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_workers(process, before, count=2, seconds=120.0):
    """Wait until ``count`` of the run's zygotes have each forked a student's process (its workers are
    grading: the zygotes themselves start with the command, before it has read the course)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if len(_busy_zygotes(_grading_processes() - before)) >= count:
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    raise AssertionError("the run never started grading")


def _parent(pid: int) -> int:
    return int(next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("PPid:")).split()[1])


def _outside_bubblewrap(pid: int) -> int:
    """The process that started the bubblewrap ``pid`` runs in (bwrap forks itself once inside)."""
    pid = _parent(pid)
    while Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"bwrap"):
        pid = _parent(pid)
    return pid


def _busy_zygotes(pids) -> set[int]:
    """The zygotes among ``pids`` with a student's process (a zygote's fork shares its command line;
    inside the sandbox, through a namespace parent; bwrap, the zygote's parent, names it too)."""
    seen = {}
    for pid in pids:
        try:
            seen[pid] = _parent(pid), Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, StopIteration):
            continue

    def python_zygote(pid):
        return pid in seen and b"grader.sandbox.zygote" in b" ".join(seen[pid][1]) and not seen[pid][1][0].endswith(b"bwrap")

    busy = set()
    for pid, (ppid, _) in seen.items():
        if python_zygote(pid) and python_zygote(ppid):  # forked by a zygote (or by its namespace parent)
            while python_zygote(seen[ppid][0]):
                ppid = seen[ppid][0]
            busy.add(ppid)
    return busy


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_run_says_what_it_graded_and_leaves_nothing_running(course, how, tmp_path):
    # each notebook sleeps longer than any machine takes to see the workers start: the run is stopped
    # while it grades (with 8 s, a loaded machine once finished grading before the signal came)
    _hand_in(course, [f"s{i}" for i in range(4)], extra="import time\ntime.sleep(120)")
    before = _grading_processes()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    process = _start(course, tmp)
    _wait_for_workers(process, before)
    time.sleep(1.0)
    process.send_signal(how)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, (out, err)
    assert "stopped;" in err and "graded" in err and "left; run again to continue" in err, err
    assert "Traceback" not in err and "Traceback" not in out, err
    left = _wait_until_gone(before, 10)
    assert not left, "\n".join(left)
    assert list(tmp.iterdir()) == [], "temporary files left behind"
    # a rerun grades everyone (the same answers, without the sleep)
    shutil.rmtree(course / "submitted")
    _hand_in(course, [f"s{i}" for i in range(4)])
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 0
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: r["score"] for s, r in report.items()} == {f"s{i}": 7 for i in range(4)}


def test_killing_the_run_stops_its_workers_within_seconds(course, tmp_path):
    _hand_in(course, [f"s{i}" for i in range(4)], extra="import time\ntime.sleep(20)")
    before = _grading_processes()
    process = _start(course, tmp_path)
    try:
        _wait_for_workers(process, before)
        # each worker grades with a zygote the command started for it (``spare_zygotes``): the
        # command is its bubblewrap's parent (a zygote a worker started is the worker's)
        assert {_outside_bubblewrap(z) for z in _busy_zygotes(_grading_processes() - before)} == {process.pid}
    finally:
        process.kill()
    # each worker checks every second that the instructor's process is there (a worker still
    # starting up checks once it is up); nothing of the run outlives it by more than that
    left = _wait_until_gone(before, 30)
    assert not left, "\n".join(left)
    process.communicate(timeout=30)


_STOPPED_WHILE_CLOSING = """
import os, signal, threading
from grader.autograde.executors import LocalExecutor
from grader.foundations.stop_signals import stops_as_keyboard_interrupt

executor = LocalExecutor(2, None, [])
executor.start()  # the workers start their zygotes, which takes seconds
threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()
with stops_as_keyboard_interrupt():
    try:
        executor.close()  # a run that ends (nothing left to grade) waits for its workers...
    except KeyboardInterrupt:  # ...and the instructor stops it then
        print("stopped", flush=True)
"""


def test_a_run_stopped_while_it_waits_for_its_workers_to_end_still_ends_them():
    # Seen as an instructor: a run whose submissions could not be read ended while its workers were
    # still starting; SIGTERM then printed "stopped" and left the command hanging for ever, its
    # workers alive (the pool's shutdown, cut short by the signal, never reached them).
    before = _grading_processes()
    process = subprocess.Popen([sys.executable, "-c", _STOPPED_WHILE_CLOSING], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        for pid in _grading_processes() - before:
            os.kill(pid, signal.SIGKILL)
        raise AssertionError("a run stopped while closing hung") from None
    assert out.strip() == "stopped", (out, err)
    left = _wait_until_gone(before, 10)
    assert not left, "\n".join(left)


def test_a_submission_the_grader_cannot_read_is_not_graded_rather_than_scored_zero(course):
    _hand_in(course, ["alice", "bob"])
    timestamp = course / "submitted" / "bob" / ASSIGNMENT / "timestamp.txt"
    os.symlink("/etc/hostname", timestamp)  # not the student's fault: an unreadable timestamp
    run = subprocess.run([*KITGRADE, "autograde", ASSIGNMENT, "--course", str(course), "--quiet"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert report["alice"]["score"] == 7
    assert report["bob"]["score"] is None
    assert any("not graded, because" in r for r in report["bob"]["reasons"]), report["bob"]
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        with pytest.raises(MissingEntry):
            gradebook.find_submission(ASSIGNMENT, "bob")
    # once the folder is put right, the next run grades bob
    timestamp.unlink()
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet", "--student", "bob"]) == 0
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert report["bob"]["score"] == 7 and report["alice"]["score"] == 7


def test_a_rerun_for_one_student_keeps_the_rest_of_the_report(course):
    _hand_in(course, ["alice", "bob", "carol"])
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 0
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet", "--student", "bob"]) == 0
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert set(report) == {"alice", "bob", "carol"}
    csv_text = (course / "reports" / f"{ASSIGNMENT}.csv").read_text()
    assert all(name in csv_text for name in ("alice", "bob", "carol"))


def test_a_late_penalty_shows_in_the_report_as_in_the_gradebook(course):
    from nbgrader.api import Gradebook

    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.update_or_create_assignment(ASSIGNMENT, duedate="2026-01-15 12:00:00 UTC")
    _hand_in(course, ["early", "late"])
    for student, when in (("early", "2026-01-15 11:00:00.000000 UTC"), ("late", "2026-01-16 09:00:00.000000 UTC")):
        (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").write_text(when)
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 0
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert report["early"]["score"] == 7 and report["early"]["reasons"] == []
    assert report["late"]["score"] == 0
    assert any("late: 7 point(s) deducted" in r and "raw score 7" in r for r in report["late"]["reasons"])
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        late = gradebook.find_submission(ASSIGNMENT, "late")
        assert late.score - late.late_submission_penalty == report["late"]["score"]


def test_a_run_killed_midway_keeps_what_it_graded_and_the_rerun_grades_only_the_rest(course, tmp_path):
    students = [f"s{i}" for i in range(5)]
    _hand_in(course, students, extra="import time\ntime.sleep(2)")
    ledger = course / ".kitgrade" / "graded" / f"{ASSIGNMENT}.json"
    process = _start(course, tmp_path)
    deadline = time.monotonic() + 180

    def finished() -> dict:  # an entry marked "unfinished" is a grading under way (or cut short)
        entries = json.loads(ledger.read_text()) if ledger.exists() else {}
        return {s: e for s, e in entries.items() if not e.get("unfinished")}

    while time.monotonic() < deadline and process.poll() is None and not finished():
        time.sleep(0.05)
    process.kill()  # as a machine that goes down: no clean-up at all
    process.communicate(timeout=30)
    recorded = finished()
    assert 0 < len(recorded) < len(students), recorded
    autograded = {s: course / "autograded" / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb" for s in recorded}
    before = {s: path.stat().st_mtime_ns for s, path in autograded.items()}
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 0
    assert {s: path.stat().st_mtime_ns for s, path in autograded.items()} == before  # not graded again
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: r["score"] for s, r in report.items()} == {s: 7 for s in students}
    assert sorted(json.loads(ledger.read_text())) == students and sorted(finished()) == students


DEFERRED = """
import os, signal
from grader.foundations.stop_signals import stops_as_keyboard_interrupt, stops_deferred

for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    with stops_as_keyboard_interrupt():
        try:
            with stops_deferred():
                os.kill(os.getpid(), sig)
                os.kill(os.getpid(), sig)
                print("finished", sig.name, flush=True)
            print("not stopped", flush=True)
        except KeyboardInterrupt:
            print("stopped after", flush=True)
"""


def test_a_step_that_must_not_be_cut_in_half_ends_then_stops_the_command():
    """``stops_deferred`` (a local grader's worker being started): Ctrl-C, SIGTERM and SIGHUP are
    noted, the step finishes, then the command stops once, as it would have."""
    out = subprocess.run([sys.executable, "-c", DEFERRED], capture_output=True, text=True, timeout=60, cwd=KIT)
    assert out.stdout.split("\n")[:-1] == ["finished SIGINT", "stopped after", "finished SIGTERM", "stopped after",
                                           "finished SIGHUP", "stopped after"], out


def test_a_pool_stopped_soon_kills_a_worker_still_busy_with_a_notebook():
    """A ``check`` or release proof stopped while its worker grades: the worker gets a few seconds,
    then is killed (a shut-down pool forgets its processes: they used to be left running, and the
    command waited for them at exit)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from grader.autograde.executors import stop_soon

    from grader.sandbox.workers import alive

    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    assert pool.submit(pow, 2, 10).result(timeout=120) == 1024  # the worker is up
    worker = next(iter(pool._processes.values())).pid
    busy = pool.submit(time.sleep, 120)
    time.sleep(0.5)  # it has taken the task
    started = time.monotonic()
    stop_soon(pool, seconds=0.5)
    # (its death seen in /proc: in a test process whose earlier tests left a child reaper, the pool's
    # own bookkeeping may never learn of it)
    while alive(worker) and time.monotonic() < started + 10:
        time.sleep(0.05)
    assert not alive(worker) and time.monotonic() - started < 10
    while not busy.done() and time.monotonic() < started + 10:  # the pool's own thread notes the death
        time.sleep(0.05)
