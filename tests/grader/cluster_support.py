"""Dask clusters for the grader's tests: processes started as an instructor would (and always
stopped), a course of the sample assignment with the submissions a test names, its grades."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from distributed.security import Security
from nbgrader.api import Gradebook

from grader.cli import main as kitgrade

FIXTURES = Path(__file__).resolve().parent / "grader_fixtures"
ASSIGNMENT = "sample_ex"
BIN = Path(sys.executable).parent


def free_port() -> int:
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
        port = free_port()
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

    def stop_all_and_check(self):
        """Stop every process started, and fail if any of theirs is left."""
        self.stop()
        deadline = time.monotonic() + 10
        while True:  # a killed process may take a moment to be gone
            left = [pid for p in self.processes for pid in session_members(p.pid)]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert not left, f"processes left behind: {left}"


def session_members(sid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def children(pid: int) -> list[int]:
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


_released = {}  # the released course, made once per test process and copied for each test


def _released_course() -> Path:
    if "course" not in _released:
        tmp = Path(tempfile.mkdtemp(prefix="kitgrade-released-"))
        atexit.register(shutil.rmtree, tmp, True)
        root, exercises = tmp / "course", tmp / "exercises"
        shutil.copytree(FIXTURES / "exercises" / ASSIGNMENT, exercises / ASSIGNMENT)
        assert kitgrade(["init", str(root), "--course-id", "c101", "--exercises", str(exercises)]) == 0
        config = root / "nbgrader_config.py"
        config.write_text(config.read_text() + "\nc.KitGrade.workers = 2\nc.KitGrade.cell_timeout = 10\n")
        assert kitgrade(["release", "--course", str(root), "--no-exchange"]) == 0
        _released["course"] = root
    return _released["course"]


def make_course(tmp_path, students: dict, name="course") -> Path:
    """A copy of the released sample course (made by ``kitgrade init`` and ``release``, its paths
    follow the copy) at ``tmp_path / name``, with a submission of each of ``students``."""
    root = tmp_path / name
    shutil.copytree(_released_course(), root, symlinks=True)
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


def untimed(report: dict) -> dict:
    """A report without its wall-clock times (the one thing two runs never share)."""
    return {student: {k: v for k, v in entry.items() if k != "seconds"} for student, entry in report.items()}


def scores(course: Path, students) -> dict:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "c101") as gradebook:
        return {s: gradebook.find_submission(ASSIGNMENT, s).score for s in students}


def wait_for_workers(address, n):
    """Until ``n`` workers have joined the scheduler at ``address`` (a loaded machine starts one in
    over 10 s, the time a run waits for a first worker)."""
    from distributed import Client

    with Client(address, timeout=30) as client:
        client.wait_for_workers(n, timeout=60)
