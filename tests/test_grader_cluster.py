"""Grading on a dask cluster: a scheduler and two workers started as an instructor would, with TLS.

``dask scheduler`` and ``dask worker`` run as separate processes on localhost, with certificates
made for the test (``Security.temporary()``). A mixed batch is graded both locally and on the
cluster, with one worker killed mid-run; a submission that crashes every worker it lands on; an
unreachable scheduler, one with no workers, and a worker with another version of the kit.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from distributed.security import Security
from nbgrader.api import Gradebook

from grader.cli import main as kitgrade
from grader_fixtures import cases

FIXTURES = Path(__file__).resolve().parent / "grader_fixtures"
ASSIGNMENT = "sample_ex"
BIN = Path(sys.executable).parent
KITGRADE = [sys.executable, "-m", "grader.cli"]
#: A worker plugin, loaded with ``dask worker --preload``: the worker process dies as it starts a
#: task of the student ``crashes`` (as a notebook that brings down its whole machine would).
CRASHING_WORKER = """
import os
from distributed.diagnostics.plugin import WorkerPlugin

class Crash(WorkerPlugin):
    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and "-crashes-" in str(key):
            os._exit(1)

async def dask_setup(worker):
    await worker.plugin_add(Crash(), name="crash-on-purpose")
"""
#: A worker with another nbgrader (as it reports its version).
OTHER_VERSION = """
import nbgrader
nbgrader.__version__ = "0.8.0"
"""
#: A worker that dies while the instructor's process checks its versions (the first one to be asked).
DIES_IN_VERSION_CHECK = """
import os
import grader.versions as versions

real = getattr(versions.kit_versions, "real", versions.kit_versions)  # a preload may be run twice

def kit_versions():
    try:
        os.close(os.open({marker!r}, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return real()
    os._exit(1)

kit_versions.real = real
versions.kit_versions = kit_versions
"""
MIXED = ["solution", "blank", "partial", "edited_test", "kernel_dies", "malformed_json", "patched_formatter",
         "reads_instructor_files"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Services:
    """Processes started by a test (each in a session of its own), all stopped at the end."""

    def __init__(self, tmp: Path):
        self.tmp, self.processes = tmp, []
        security = Security.temporary()
        self.tls = {"ca": tmp / "ca.pem", "cert": tmp / "cert.pem", "key": tmp / "key.pem"}
        self.tls["ca"].write_text(security.tls_ca_file)
        self.tls["cert"].write_text(security.tls_scheduler_cert)
        self.tls["key"].write_text(security.tls_scheduler_key)
        self.env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1",
                    "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}

    def tls_args(self):
        return ["--tls-ca-file", str(self.tls["ca"]), "--tls-cert", str(self.tls["cert"]), "--tls-key", str(self.tls["key"])]

    def start(self, *args, log="log"):
        out = open(self.tmp / f"{log}-{len(self.processes)}.txt", "w")
        process = subprocess.Popen([str(BIN / "dask"), *args], stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                   start_new_session=True, cwd=self.tmp)
        self.processes.append(process)
        return process

    def scheduler(self, tls=True) -> str:
        port = _free_port()
        protocol = "tls" if tls else "tcp"
        self.start("scheduler", "--host", "127.0.0.1", "--port", str(port), "--protocol", protocol,
                   "--dashboard-address", ":0", "--no-show", *(self.tls_args() if tls else []), log="scheduler")
        address = f"{protocol}://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return address
            time.sleep(0.2)
        raise AssertionError("the scheduler did not start")

    def worker(self, address, *extra, tls=True):
        return self.start("worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--dashboard-address", ":0",
                          *(self.tls_args() if tls else []), *extra, log="worker")

    def stop(self):
        for process in self.processes:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 30
        for process in self.processes:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(process.pid, signal.SIGKILL)  # whatever is left of that session
            except ProcessLookupError:
                pass
            process.wait()


def _session_members(sid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (started from any of its threads)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append(int(entry))
    return found


@pytest.fixture()
def services(tmp_path):
    services = Services(tmp_path)
    yield services
    services.stop()
    deadline = time.monotonic() + 10
    while True:  # a killed process may take a moment to be gone
        left = [pid for p in services.processes for pid in _session_members(p.pid)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, f"processes left behind: {left}"


def _course(tmp_path, students: dict, name="course") -> Path:
    root = tmp_path / name
    exercises = tmp_path / f"{name}-exercises"
    shutil.copytree(FIXTURES / "exercises" / ASSIGNMENT, exercises / ASSIGNMENT)
    assert kitgrade(["init", str(root), "--course-id", "c101", "--exercises", str(exercises)]) == 0
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.KitGrade.workers = 2\nc.KitGrade.cell_timeout = 10\n")
    assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
    release = nbformat.read(root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    source = nbformat.read(root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for student, build in students.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        made = build(source, release)
        if isinstance(made, bytes):
            (folder / f"{ASSIGNMENT}.ipynb").write_bytes(made)
        else:
            nbformat.write(made, folder / f"{ASSIGNMENT}.ipynb")
    return root


def _untimed(report: dict) -> dict:
    """A report without its wall-clock times (the one thing two runs never share)."""
    return {student: {k: v for k, v in entry.items() if k != "seconds"} for student, entry in report.items()}


def _scores(course: Path, students) -> dict:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "c101") as gradebook:
        return {s: gradebook.find_submission(ASSIGNMENT, s).score for s in students}


def _autograde(course, *args, timeout=300):
    return subprocess.run([*KITGRADE, "autograde", ASSIGNMENT, "--course", str(course), *args],
                          capture_output=True, text=True, timeout=timeout)


def test_the_cluster_grades_as_a_local_run_with_a_worker_killed_midway(services, tmp_path):
    def batch(root):  # the same submissions for two courses (a few name the course's own files)
        every = cases.cases(root)
        students = {s: every[s][0] for s in MIXED}
        students.update({f"slow{i}": (lambda src, rel: cases.solved_then(rel, "import time\ntime.sleep(1)"))
                         for i in range(4)})
        return every, students

    every, students = batch(tmp_path / "course")
    course = _course(tmp_path, students)
    local = _course(tmp_path, batch(tmp_path / "local")[1], name="local")
    assert _autograde(local, "--quiet").returncode == 0

    address = services.scheduler()
    nanny = services.worker(address)
    services.worker(address)
    run = subprocess.Popen([*KITGRADE, "autograde", ASSIGNMENT, "--course", str(course), "--quiet", "--cluster", address,
                            *services.tls_args()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # once a worker of the first nanny has a student's process running, kill that worker
    deadline, killed = time.monotonic() + 120, None
    while killed is None and time.monotonic() < deadline and run.poll() is None:
        for worker in _children(nanny.pid):
            if any(_children(zygote) for zygote in _children(worker)):
                os.kill(worker, signal.SIGKILL)
                killed = worker
                break
        time.sleep(0.05)
    out, err = run.communicate(timeout=300)
    assert killed, "no worker was killed while grading"
    assert run.returncode == 0, (out, err)
    assert "Traceback" not in err, err
    assert _scores(course, students) == _scores(local, students)
    on_cluster = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    locally = json.loads((local / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert _untimed(on_cluster) == _untimed(json.loads(json.dumps(locally).replace(str(local), str(course))))
    for report in (f"{ASSIGNMENT}.csv", f"{ASSIGNMENT}-tests.json"):  # byte for byte (the CSV has no timings)
        here, there = (root / "reports" / report for root in (course, local))
        assert here.read_bytes() == there.read_bytes().replace(str(local).encode(), str(course).encode()), report
    for student in MIXED:
        assert on_cluster[student]["score"] == every[student][1], (student, on_cluster[student])
    ledger = json.loads((course / ".kitgrade" / "graded" / f"{ASSIGNMENT}.json").read_text())
    assert sorted(ledger) == sorted(students)

    # graded once: a second run grades nothing again; --force grades all again
    autograded = course / "autograded" / "solution" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    before = autograded.stat().st_mtime_ns
    again = _autograde(course, "--cluster", address, *services.tls_args())
    assert again.returncode == 0 and "0/0" not in again.stderr, again
    assert autograded.stat().st_mtime_ns == before
    assert json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text()) == on_cluster
    forced = _autograde(course, "--quiet", "--force", "--student", "solution", "--cluster", address, *services.tls_args())
    assert forced.returncode == 0, forced
    assert autograded.stat().st_mtime_ns != before


def test_a_submission_that_crashes_every_worker_scores_zero_with_a_reason(services, tmp_path):
    course = _course(tmp_path, {"crashes": cases.solution, "alice": cases.solution})
    (tmp_path / "crash_plugin.py").write_text(CRASHING_WORKER)
    address = services.scheduler()
    for _ in range(2):
        services.worker(address, "--preload", str(tmp_path / "crash_plugin.py"))
    run = _autograde(course, "--quiet", "--cluster", address, *services.tls_args())
    assert run.returncode == 0, run
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert report["alice"]["score"] == 7
    assert report["crashes"]["score"] == 0
    assert any("died each time it ran" in r for r in report["crashes"]["reasons"]), report["crashes"]


def test_a_cluster_that_cannot_grade_is_refused_before_anything_is_written(services, tmp_path):
    course = _course(tmp_path, {"alice": cases.solution})
    written = sorted(p.relative_to(course) for p in course.rglob("*"))

    def refused(address, *args):
        run = _autograde(course, "--cluster", address, *args, timeout=120)
        assert run.returncode == 2, run
        assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr, run.stderr
        assert sorted(p.relative_to(course) for p in course.rglob("*")) == written
        return run.stderr

    assert "cannot reach the dask scheduler" in refused(f"tls://127.0.0.1:{_free_port()}", *services.tls_args())
    assert "expected tcp://HOST:PORT" in refused("http://example.org")
    address = services.scheduler(tls=False)
    assert "has no workers" in refused(address)
    (tmp_path / "other_version.py").write_text(OTHER_VERSION)
    services.worker(address, "--preload", str(tmp_path / "other_version.py"), tls=False)
    message = refused(address)
    import nbgrader

    assert "nbgrader 0.8.0" in message and "this machine has autograd-kit 0.1.0+" in message, message
    assert f"nbgrader {nbgrader.__version__}" in message, message


def test_a_worker_that_dies_during_the_version_check_leaves_the_others_to_grade_everything(services, tmp_path):
    course = _course(tmp_path, {"alice": cases.solution, "bob": cases.solution, "carol": cases.blank})
    marker = tmp_path / "a-worker-died"
    (tmp_path / "dies.py").write_text(DIES_IN_VERSION_CHECK.format(marker=str(marker)))
    address = services.scheduler(tls=False)
    for _ in range(2):
        services.worker(address, "--preload", str(tmp_path / "dies.py"), tls=False)
    run = _autograde(course, "--quiet", "--cluster", address)
    assert marker.exists(), "no worker died during the version check (nothing was tested)"
    assert run.returncode == 0, run
    assert "Traceback" not in run.stderr and "bug in kitgrade" not in run.stderr, run.stderr
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: e["score"] for s, e in report.items()} == {"alice": 7, "bob": 7, "carol": 0}
