"""The kill loop: a dask worker killed at every moment of a run's life, and every run still grades
every submission once, with the same grades.

Each seed picks a moment of the run (its start-up, the version check, a task midway, a result on
its way back, the end) and which passage of it; ``grader_fixtures/kill_at_phase.py``, loaded by
every worker, kills the worker that reaches that passage (at most one kill per run, whatever the
timing). On a ``dask scheduler`` with ``dask worker`` processes on 127.0.0.1, started once for
the seeds (the start-up seed runs while its workers start); and on ``--cluster local:2``, the
LocalCluster each run starts. A run whose last worker dies ends too, saying so.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from pathlib import Path

import dask
import pytest
from distributed import Client

from cluster_support import ASSIGNMENT, FIXTURES, Services, make_course, wait_for_workers
from grader.cli import main as kitgrade
from grader_fixtures import cases
from grader_fixtures.kill_at_phase import PHASES

pytestmark = pytest.mark.grader
SEEDS = range(1, 9)
STUDENTS = {"alice": (cases.solution, 7), "bob": (cases.blank, 0), "carol": (cases.partial, 4)}
#: How many passages of each phase a run surely makes (3 notebooks on 2 workers).
PASSAGES = {"start-up": 1, "version check": 2, "mid-task": 3, "result transfer": 2, "end": 2}
PRELOAD = str(FIXTURES / "kill_at_phase.py")


def plan_for(seed: int) -> dict:
    """The moment a seed kills at: every phase is some seed's; the passage of it is drawn."""
    phase = PHASES[seed % len(PHASES)]
    return {"phase": phase, "occurrence": random.Random(seed).randint(1, PASSAGES[phase]),
            "results": len(STUDENTS)}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course, released and submitted, never graded: each run grades a copy of it."""
    tmp = tmp_path_factory.mktemp("kills")
    root = make_course(tmp, {student: build for student, (build, _) in STUDENTS.items()})
    return root


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory):
    """Where the workers read the plan (the test rewrites it before each run)."""
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    path.write_text("{}")
    before = os.environ.get("KITGRADE_KILL_PLAN")
    os.environ["KITGRADE_KILL_PLAN"] = str(path)  # inherited by every worker started from here on
    yield path
    if before is None:
        del os.environ["KITGRADE_KILL_PLAN"]
    else:
        os.environ["KITGRADE_KILL_PLAN"] = before


def run_with_kill(seed, course, plan_file, tmp, address, log, during=None):
    """Grade a fresh copy of the course on ``address`` while the seed's kill happens; check everything."""
    plan = plan_for(seed)
    kills = tmp / f"kills-{seed}"
    kills.mkdir()
    root = tmp / f"course-{seed}"
    shutil.copytree(course, root)
    plan_file.write_text(json.dumps({**plan, "dir": str(kills)}))
    if during:
        during()
    status = kitgrade(["autograde", ASSIGNMENT, "--course", str(root), "--quiet", "--cluster", address])
    deadline = time.monotonic() + 60  # the end's kill comes as the run lets go of its results
    while not (kills / "killed").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    plan_file.write_text("{}")
    killed = json.loads((kills / "killed").read_text()) if (kills / "killed").exists() else None
    log.append((seed, plan["phase"], plan["occurrence"], killed and killed["phase"]))
    print(f"seed {seed}: planned {plan['phase']} #{plan['occurrence']}; killed at {killed}")
    assert killed == {"phase": plan["phase"], "occurrence": plan["occurrence"], "pid": killed and killed["pid"]}, \
        f"seed {seed}: the planned kill did not happen"
    assert status == 0, f"seed {seed} ({plan['phase']}): exit status {status}"
    report = json.loads((root / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: e["score"] for s, e in report.items()} == {s: score for s, (_, score) in STUDENTS.items()}, seed
    assert all(not any("not graded" in r for r in e["reasons"]) for e in report.values()), report
    ledger = json.loads((root / ".kitgrade" / "graded" / f"{ASSIGNMENT}.json").read_text())
    assert sorted(ledger) == sorted(STUDENTS), ledger
    return {s: {k: v for k, v in e.items() if k != "seconds"}
            for s, e in json.loads(json.dumps(report).replace(str(root), "COURSE")).items()}


def check_every_phase(log, reports):
    assert {phase for _, phase, _, killed in log if killed == phase} == set(PHASES), log
    first = next(iter(reports.values()))
    for seed, report in reports.items():
        assert report == first, f"seed {seed} graded otherwise than seed {next(iter(reports))}"


def test_local_n_loses_a_worker_at_every_moment_of_a_run(course, plan_file, tmp_path):
    """``--cluster local:2``: each run starts a LocalCluster of its own, so no run waits for a worker an
    earlier run lost (on one LocalCluster shared by the seeds, its nanny did not always bring back within
    60 s a worker killed during the version check). One seed per phase, not all eight: a run that starts
    its cluster takes about a minute on the loaded 2-core machine the suite runs on (all eight seeds
    passed, in 489 s); the eight seeds run on the separate processes below."""
    log, reports = [], {}
    with dask.config.set({"distributed.worker.preload": [PRELOAD]}):
        for seed in SEEDS[:len(PHASES)]:  # seeds 1 to 5: each phase once
            reports[seed] = run_with_kill(seed, course, plan_file, tmp_path, "local:2", log)
    check_every_phase(log, reports)


def test_separate_scheduler_and_worker_processes_lose_a_worker_at_every_moment_of_a_run(course, plan_file,
                                                                                        tmp_path):
    services = Services(tmp_path)
    services.env["KITGRADE_KILL_PLAN"] = str(plan_file)
    services.env.pop("DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES")
    log, reports = [], {}
    try:
        address = services.scheduler(tls=False)
        workers = []

        def start_workers():  # the run begins while they start: the first one dies as it registers
            workers.extend(services.worker(address, "--preload", PRELOAD, tls=False) for _ in range(2))

        for seed in sorted(SEEDS, key=lambda s: plan_for(s)["phase"] != "start-up"):
            if workers:
                for gone in [w for w in workers if w.poll() is not None]:  # a worker that died starting is not restarted
                    workers.remove(gone)
                    workers.append(services.worker(address, "--preload", PRELOAD, tls=False))
                wait_for_workers(address, 2)
            reports[seed] = run_with_kill(seed, course, plan_file, tmp_path, address, log,
                                          during=None if workers else start_workers)
    finally:
        services.stop_all_and_check()
    check_every_phase(log, reports)


def test_a_run_whose_last_worker_dies_ends_and_says_so_and_the_next_run_grades_the_rest(course, plan_file, tmp_path,
                                                                                       monkeypatch):
    """The only worker (no nanny to bring it back) dies midway through its first notebook: the run does
    not wait for ever for a worker; once none has joined for ``LOST_WORKERS_TIMEOUT`` the notebooks
    left are "not graded, because ..." (exit status 1), and a run with a worker back grades them."""
    from grader.autograde import dask_executor

    monkeypatch.setattr(dask_executor, "LOST_WORKERS_TIMEOUT", 2.0)
    services = Services(tmp_path)
    services.env["KITGRADE_KILL_PLAN"] = str(plan_file)
    kills, root = tmp_path / "kills", tmp_path / "course"
    kills.mkdir()
    shutil.copytree(course, root)
    grade = ["autograde", ASSIGNMENT, "--course", str(root), "--quiet", "--cluster"]
    try:
        address = services.scheduler(tls=False)
        services.worker(address, "--preload", PRELOAD, "--no-nanny", tls=False)
        wait_for_workers(address, 1)
        plan_file.write_text(json.dumps({"phase": "mid-task", "occurrence": 1, "dir": str(kills), "results": 3}))
        status = kitgrade([*grade, address])
        plan_file.write_text("{}")
        assert (kills / "killed").exists(), "the planned kill did not happen"
        report = json.loads((root / "reports" / f"{ASSIGNMENT}.json").read_text())
        assert status == 1 and all(any("the dask cluster lost every worker and none joined "
                                       "within 2 s" in r for r in e["reasons"]) for e in report.values()), report
        services.worker(address, tls=False)
        wait_for_workers(address, 1)
        assert kitgrade([*grade, address]) == 0
    finally:
        services.stop_all_and_check()
    report = json.loads((root / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: e["score"] for s, e in report.items()} == {s: score for s, (_, score) in STUDENTS.items()}
