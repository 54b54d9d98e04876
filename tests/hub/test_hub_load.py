"""Thirty students on one hub at once: response times and memory, for the estimate in docs/deploy.md.

A class of one course (ps1 released) and 30 students with real system accounts is set up as
``make hub`` sets one up (accounts created here and removed afterwards) and served on 127.0.0.1.
All 30 then, at the same moment, each from a thread of its own and as HTTP clients only
(tests/hub/hub_client.py: the login form, the hub's REST API, their server's Jupyter REST API and
kernel websocket, nbgrader's assignment handlers): log in, start their server, open lesson 1 and
run its first code cells in a kernel, fetch ps1, save it, and submit it. The instructor collects,
autogrades and releases the feedback (``kitgrade``, as the course's grader account); then all 30
fetch their feedback at once and open it.

Every request is timed; the hub's and the proxy's memory, the students' servers' and kernels'
memory (PSS over every process of each account) and the machine's available memory are sampled
each second. ``artifacts/hub/load.json`` and ``load.txt`` hold the figures (percentiles per kind
of request, peaks); docs/deploy.md derives the estimate for 300 students from them. The test
asserts that every student did every step and got their feedback; it asserts no time (the
figures are measurements, not limits), only the bounds that stop a hung run.
"""
from __future__ import annotations

import json
import os
import pwd
import shutil
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kit_paths import ROOT
from hub_client import Student
from hub_support import PS1, PS1_NOTEBOOK, memory_of, one_course_class, require_hub, run_as, served_class

ARTIFACTS = ROOT / "artifacts" / "hub"
LESSON = "lessons/en/01_recording_history.ipynb"
STUDENTS = 30
LESSON_CELLS = 4  # the lesson's first code cells: the engine imported, a graph recorded (bounded kernel work)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def crowd():
    require_hub("the hub's load test")
    spec = one_course_class("kit-load-", [f"s{n:02d}" for n in range(STUDENTS)])
    log = spec.root.parent / f"{spec.root.name}.log"
    try:
        with served_class(spec, log_path=log) as served:
            served.hub_log = log
            yield served
    finally:
        if log.exists():  # the hub's log of the run, root's alone
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            shutil.move(log, ARTIFACTS / "load-jupyterhub.log")
            (ARTIFACTS / "load-jupyterhub.log").chmod(0o600)


class Sampler(threading.Thread):
    """Memory each second: the hub and its proxy (root's processes of the hub's session), the
    students' accounts (PSS, shared pages divided among their users), the machine's available memory."""

    def __init__(self, spec):
        super().__init__(daemon=True)
        self.spec, self.samples, self.stopping = spec, [], threading.Event()
        self.uids = [pwd.getpwnam(s).pw_uid for s in spec.course("ad101").students]

    def hub_memory(self) -> float:
        session = os.getsid(self.spec.server.process.pid)
        total = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.getsid(int(entry.name)) != session and b"configurable-http-proxy" not in (entry / "cmdline").read_bytes():
                    continue
                if entry.stat().st_uid != 0:
                    continue
                rollup = (entry / "smaps_rollup").read_text().splitlines()[1:]
                total += int(dict(line.split(":", 1) for line in rollup)["Pss"].split()[0])
            except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError, KeyError):
                continue
        return total / 1024

    def run(self):
        while not self.stopping.is_set():
            started = time.monotonic()
            students = [memory_of(uid) for uid in self.uids]
            available = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                             if line.startswith("MemAvailable:")) / 1024
            self.samples.append({"t": time.time(), "hub_and_proxy_pss_mib": self.hub_memory(),
                                 "students_pss_mib": sum(s["pss_mib"] for s in students),
                                 "students_rss_mib": sum(s["rss_mib"] for s in students),
                                 "student_processes": sum(len(s["processes"]) for s in students),
                                 "available_mib": available})
            self.stopping.wait(max(0.0, 1.0 - (time.monotonic() - started)))


def percentiles(values: list[float]) -> dict:
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    return {"n": len(ordered), "median_s": round(statistics.median(ordered), 3), "p90_s": round(at(0.9), 3),
            "p95_s": round(at(0.95), 3), "max_s": round(ordered[-1], 3)}


def one_student_works(student: Student, lesson_cells: list[str]) -> dict:
    """What one student does in the first wave: every step, in order, each timed."""
    steps = {}
    started = time.monotonic()
    student.log_in()
    student.get_token()
    steps["logged_in_s"] = time.monotonic() - started
    steps["server_ready_s"] = student.start_server()
    student.contents(LESSON)
    replies = student.run_cells(LESSON, lesson_cells, timeout=360)  # 30 kernels on 2 cores: one may wait minutes
    assert [r["status"] for r in replies] == ["ok"] * len(lesson_cells), replies
    student.nbgrader("fetch", "ad101", PS1)
    path = f"ad101/{PS1}/{PS1_NOTEBOOK}"
    model = student.contents(path)
    student.save(path, {"type": "notebook", "format": "json", "content": model["content"]})
    student.nbgrader("submit", "ad101", PS1)
    steps["done_s"] = time.monotonic() - started
    return steps


def one_student_reads_feedback(student: Student) -> bool:
    student.nbgrader("fetch_feedback", "ad101", PS1)
    folder = student.contents(f"ad101/{PS1}/feedback")["content"]
    [latest] = [item for item in folder if item["type"] == "directory"][-1:]
    html = student.contents(f"{latest['path']}/{PS1_NOTEBOOK.replace('.ipynb', '.html')}")
    return "<html" in html["content"].lower()


def hub_log_excerpt(log: Path, error: Exception, students: list[str], most: int = 80) -> str:
    """The hub's log lines a failure of the wave needs to be understood without the log: its warnings
    and errors, and every line of the student the error names (the log is gone with a CI machine)."""
    name = next((student for student in students if student in str(error)), None)
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError as problem:
        return f"(the hub's log could not be read: {problem})"
    noise = ("extra_template_paths", "websocket_ping_timeout", "is not trusted", "No session ID", "Possible missing notebooks")
    kept = [line for line in lines if (line.startswith(("[W", "[E", "[C", "Traceback")) or (name and name in line))
            and not any(n in line for n in noise)]
    return "\n".join(kept[-most:])


def lesson_code_cells(count: int) -> list[str]:
    cells = json.loads((ROOT / "notebooks" / "en" / "01_recording_history.ipynb").read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"][:count]


def test_thirty_students_log_in_work_submit_and_fetch_feedback_at_once(crowd):
    students = [Student(crowd.url, name, crowd.passwords[name]) for name in crowd.course("ad101").students]
    cells = lesson_code_cells(LESSON_CELLS)
    sampler = Sampler(crowd)
    sampler.start()
    phases = {}
    try:
        started = time.monotonic()
        try:
            with ThreadPoolExecutor(len(students)) as pool:  # all at once
                steps = list(pool.map(lambda s: one_student_works(s, cells), students))
        except Exception as error:
            pytest.fail(f"{error}\n--- the hub's log (warnings, errors, that student's lines):\n"
                        f"{hub_log_excerpt(crowd.hub_log, error, [s.name for s in students])}", pytrace=False)
        phases["students_work_s"] = time.monotonic() - started
        course = crowd.course("ad101")
        for command in (["collect", PS1], ["autograde", PS1], ["feedback", PS1, "--release"]):
            began = time.monotonic()
            result = run_as(crowd, course.grader, str(crowd.bin / "kitgrade"), *command, cwd=str(course.directory(crowd)))
            assert result.returncode == 0, f"kitgrade {' '.join(command)}:\n{result.stdout}\n{result.stderr}"
            phases[f"kitgrade_{command[0]}_s"] = time.monotonic() - began
        began = time.monotonic()
        with ThreadPoolExecutor(len(students)) as pool:
            read = list(pool.map(one_student_reads_feedback, students))
        phases["students_fetch_feedback_s"] = time.monotonic() - began
    finally:
        sampler.stopping.set()
        sampler.join()
        for student in students:
            student.close()
    assert read == [True] * len(students)

    timings: dict[str, list[float]] = {}
    for student in students:
        for what, seconds in student.timings:
            timings.setdefault(what, []).append(seconds)
    samples = sampler.samples
    figures = {
        "students": len(students), "cores": os.cpu_count(), "lesson_cells": len(cells),
        "set_up_s": round(crowd.set_up_seconds, 1), "phases": {k: round(v, 1) for k, v in phases.items()},
        "per_student": {k: percentiles([s[k] for s in steps]) for k in ("logged_in_s", "server_ready_s", "done_s")},
        "requests": {what: percentiles(values) for what, values in sorted(timings.items())},
        "kernel_websockets_reopened": sum(s.reconnects for s in students),
        "memory_peak_mib": {key: round(max(s[key] for s in samples), 1)
                            for key in ("hub_and_proxy_pss_mib", "students_pss_mib", "students_rss_mib")},
        "memory_per_student_peak_pss_mib": round(max(s["students_pss_mib"] for s in samples) / len(students), 1),
        "available_mib_lowest": round(min(s["available_mib"] for s in samples), 1),
        "samples": samples,
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "load.json").write_text(json.dumps(figures, indent=1))
    lines = [f"{len(students)} students at once on {os.cpu_count()} cores (tests/hub/test_hub_load.py); set-up {figures['set_up_s']} s",
             "phases: " + ", ".join(f"{k} {v}" for k, v in figures["phases"].items()), "",
             f"{'request':<20}{'n':>5}{'median s':>10}{'p90 s':>8}{'p95 s':>8}{'max s':>8}"]
    for what, p in figures["requests"].items():
        lines.append(f"{what:<20}{p['n']:>5}{p['median_s']:>10}{p['p90_s']:>8}{p['p95_s']:>8}{p['max_s']:>8}")
    lines += ["", f"kernel websockets the server closed and a student opened again: {figures['kernel_websockets_reopened']}"]
    lines += ["", "per student: " + "; ".join(f"{k} median {v['median_s']} p95 {v['p95_s']} max {v['max_s']}"
                                             for k, v in figures["per_student"].items()),
              "memory peaks (MiB): " + ", ".join(f"{k} {v}" for k, v in figures["memory_peak_mib"].items())
              + f"; per student {figures['memory_per_student_peak_pss_mib']}; lowest available {figures['available_mib_lowest']}"]
    (ARTIFACTS / "load.txt").write_text("\n".join(lines) + "\n")
    assert len(samples) > 10 and figures["memory_peak_mib"]["students_pss_mib"] > 0
