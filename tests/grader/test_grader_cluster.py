"""Grading on a dask cluster: a scheduler and two workers started as an instructor would, with TLS.

``dask scheduler`` and ``dask worker`` run as separate processes on localhost, with certificates
made for the test (``Security.temporary()``). A mixed batch is graded both locally and on the
cluster, with one worker killed mid-run; a submission that crashes every worker it lands on; an
unreachable scheduler, a wrong address, TLS on one side only, a local cluster that cannot start, one
with no workers, and a worker with another version of the kit. (A worker killed at every moment of
a run: test_grader_cluster_kills.py.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from cluster_support import ASSIGNMENT, Services, children, free_port, make_course, scores, untimed, wait_for_workers
from grader_fixtures import cases

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
import grader.foundations.versions as versions

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


@pytest.fixture()
def services(tmp_path):
    services = Services(tmp_path)
    yield services
    services.stop_all_and_check()


def _autograde(course, *args, timeout=300, env=None):
    return subprocess.run([*KITGRADE, "autograde", ASSIGNMENT, "--course", str(course), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_the_cluster_grades_as_a_local_run_with_a_worker_killed_midway(services, tmp_path):
    def batch(root):  # the same submissions for two courses (a few name the course's own files)
        every = cases.cases(root)
        students = {s: every[s][0] for s in MIXED}
        students.update({f"slow{i}": (lambda src, rel: cases.solved_then(rel, "import time\ntime.sleep(1)"))
                         for i in range(4)})
        return every, students

    every, students = batch(tmp_path / "course")
    course = make_course(tmp_path, students)
    local = make_course(tmp_path, batch(tmp_path / "local")[1], name="local")
    assert _autograde(local, "--quiet").returncode == 0

    address = services.scheduler()
    nanny = services.worker(address)
    services.worker(address)
    run = subprocess.Popen([*KITGRADE, "autograde", ASSIGNMENT, "--course", str(course), "--quiet", "--cluster", address,
                            *services.tls_args()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # once a worker of the first nanny has a student's process running, kill that worker
    deadline, killed = time.monotonic() + 120, None
    while killed is None and time.monotonic() < deadline and run.poll() is None:
        for worker in children(nanny.pid):
            if any(children(zygote) for zygote in children(worker)):
                os.kill(worker, signal.SIGKILL)
                killed = worker
                break
        time.sleep(0.05)
    out, err = run.communicate(timeout=300)
    assert killed, "no worker was killed while grading"
    assert run.returncode == 0, (out, err)
    assert "Traceback" not in err, err
    assert scores(course, students) == scores(local, students)
    on_cluster = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    locally = json.loads((local / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert untimed(on_cluster) == untimed(json.loads(json.dumps(locally).replace(str(local), str(course))))
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


def test_a_worker_removes_the_scratch_folders_its_machine_left_when_killed_and_its_own(services, tmp_path):
    """A worker killed mid-task leaves its scratch folder (``kitgrade-<pid>-…``) in its temporary
    folder; the next worker's first task on that machine removes it, and a task leaves nothing."""
    course = make_course(tmp_path, {"alice": cases.solution, "bob": cases.blank})
    worker_tmp = tmp_path / "worker-tmp"
    worker_tmp.mkdir()
    services.env["TMPDIR"] = str(worker_tmp)
    left = worker_tmp / f"kitgrade-{ended_pid()}-abcd1234"  # of a process that no longer runs
    left.mkdir()
    (left / "data.csv").write_text("1,2\n")
    running = worker_tmp / f"kitgrade-{os.getpid()}-efgh5678"  # a live process's: kept
    running.mkdir()
    address = services.scheduler()
    services.worker(address)
    run = _autograde(course, "--quiet", "--cluster", address, *services.tls_args())
    assert run.returncode == 0, run
    assert json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())["alice"]["score"] == 7
    assert sorted(p.name for p in worker_tmp.iterdir() if p.name.startswith("kitgrade-")) == [running.name]


def ended_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_submission_that_crashes_every_worker_scores_zero_with_a_reason(services, tmp_path):
    course = make_course(tmp_path, {"crashes": cases.solution, "alice": cases.solution})
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
    course = make_course(tmp_path, {"alice": cases.solution})
    written = sorted(p.relative_to(course) for p in course.rglob("*"))

    def refused(address, *args, env=None):
        run = _autograde(course, "--cluster", address, *args, timeout=120, env=env)
        assert run.returncode == 2, run
        assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr, run.stderr
        assert sorted(p.relative_to(course) for p in course.rglob("*")) == written
        return run.stderr

    assert "cannot reach the dask scheduler" in refused(f"tls://127.0.0.1:{free_port()}", *services.tls_args())
    assert "expected tcp://HOST:PORT" in refused("http://example.org")
    with_tls = services.scheduler()  # TLS on one side only, or a certificate missing: said, with what to give
    assert "match its security" in refused(with_tls.replace("tls://", "tcp://"))
    assert "needs this machine's certificate: give --tls-ca-file" in refused(with_tls)
    missing = [*services.tls_args()[:3], str(tmp_path / "nowhere.pem"), *services.tls_args()[4:]]
    assert f"--tls-cert {tmp_path / 'nowhere.pem'}: no such file" in refused(with_tls, *missing)
    # a local cluster whose workers cannot start
    (tmp_path / "no_start.py").write_text("import os\n\nasync def dask_setup(worker):\n    os._exit(1)\n")
    services.env["DASK_DISTRIBUTED__WORKER__PRELOAD"] = json.dumps([str(tmp_path / "no_start.py")])
    assert "no worker of the local cluster started" in refused("local:1", env=services.env)
    address = services.scheduler(tls=False)
    assert "has no workers" in refused(address)
    (tmp_path / "other_version.py").write_text(OTHER_VERSION)
    services.worker(address, "--preload", str(tmp_path / "other_version.py"), tls=False)
    wait_for_workers(address, 1)
    message = refused(address)
    import nbgrader

    assert "nbgrader 0.8.0" in message and "this machine has autograd-kit 0.1.0+" in message, message
    assert f"nbgrader {nbgrader.__version__}" in message, message


def test_a_worker_that_dies_during_the_version_check_leaves_the_others_to_grade_everything(services, tmp_path):
    course = make_course(tmp_path, {"alice": cases.solution, "bob": cases.solution, "carol": cases.blank})
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
