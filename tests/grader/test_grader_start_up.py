"""A local run's start-up (``grader/sandbox/spare_zygotes.py``): the command starts its workers' zygotes
first thing and forks its workers from itself; each worker adopts one zygote, and nothing is left.

Each case runs in a process of its own (the command's situation: one thread, nothing else started).
"""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from grader.sandbox.bubblewrap import unavailable_because
from grader.sandbox.workers import alive

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(unavailable_because() is not None, reason="zygotes run inside bubblewrap here")

COMMAND = textwrap.dedent('''
    import gc, json, os, sys, threading, time
    from traitlets.config import Config
    from grader.autograde.executors import LocalExecutor
    from grader.sandbox import spare_zygotes, workers

    def adopted():
        """In a worker: its parent, the pid of the zygote it grades with, whether the objects it
        has from its parent are out of the collector's reach (``speed.before_forking_workers``)."""
        zygote = workers.zygote_for([])
        zygote.wait_ready()
        time.sleep(0.3)  # (every worker gets some of the tasks)
        return os.getppid(), zygote.process.pid, gc.get_freeze_count() > 0

    def main():
        started, kept = int(sys.argv[1]), int(sys.argv[2])
        if sys.argv[3] == "thread":  # a process that runs another thread cannot fork safely
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
        spare_zygotes.allow()  # as the kitgrade command does
        spare_zygotes.start(started)
        spares = [z.process.pid for z in spare_zygotes._SPARES["zygotes"]]
        spare_zygotes.load(kept, [])
        executor = LocalExecutor(kept, Config(), [])
        executor.start([])
        executor._started()
        seen = [executor.pool.submit(adopted) for _ in range(4 * kept)]
        seen = [future.result() for future in seen]
        print(json.dumps({"me": os.getpid(), "spares": spares, "seen": seen}), flush=True)
        executor.close()
        spare_zygotes.reap()
        print(json.dumps({"left": [pid for pid in spares if workers.alive(pid)]}), flush=True)

    if __name__ == "__main__":
        main()
''')


def run_command(started: int, kept: int, threads: str = "alone") -> tuple[dict, dict]:
    """Run COMMAND as a program (a file: the forkserver's workers find ``adopted`` in it)."""
    with tempfile.TemporaryDirectory() as folder:
        program = Path(folder, "command.py")
        program.write_text(COMMAND)
        done = subprocess.run([sys.executable, str(program), str(started), str(kept), threads], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    import json

    first, second = done.stdout.splitlines()
    return json.loads(first), json.loads(second)


def test_the_workers_are_forked_from_the_command_and_each_adopts_a_zygote_it_started():
    run, end = run_command(2, 2)
    parents = {parent for parent, _, _ in run["seen"]}
    zygotes = {zygote for _, zygote, _ in run["seen"]}
    assert parents == {run["me"]}  # forked from the command, not from a forkserver
    assert zygotes == set(run["spares"])  # each worker grades with one it was given: none started anew
    assert all(frozen for _, _, frozen in run["seen"])
    assert end["left"] == []


def test_zygotes_the_run_does_not_need_end_and_so_do_all_when_the_command_cannot_fork():
    run, end = run_command(3, 1)
    assert {zygote for _, zygote, _ in run["seen"]} < set(run["spares"])
    assert end["left"] == []

    run, end = run_command(2, 2, "thread")  # the workers come from the forkserver and start their own
    assert {parent for parent, _, _ in run["seen"]} != {run["me"]}
    assert not {zygote for _, zygote, _ in run["seen"]} & set(run["spares"])
    assert not any(frozen for _, _, frozen in run["seen"])  # (a forkserver's worker: nothing frozen)
    assert end["left"] == []


def test_a_library_caller_starts_no_zygote_and_so_forks_nothing_of_its_own():
    """Only the ``kitgrade`` command (``grader.cli.command``) may: ``main`` called in-process by a
    test run or a notebook gets its workers from the forkserver, which nothing of the caller leaks into."""
    program = ("from grader.sandbox import spare_zygotes\nspare_zygotes.start(2)\n"
               "print(len(spare_zygotes._SPARES['zygotes']), spare_zygotes.waiting())\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_a_command_killed_as_it_starts_leaves_no_zygote(tmp_path):
    """Killed (SIGKILL) with its zygotes started and loading, before any worker: they end with it."""
    program = textwrap.dedent('''
        import sys, time
        from grader.sandbox import spare_zygotes
        spare_zygotes.allow()
        spare_zygotes.start(2)
        print(" ".join(str(z.process.pid) for z in spare_zygotes._SPARES["zygotes"]), flush=True)
        time.sleep(60)
    ''')
    command = subprocess.Popen([sys.executable, "-c", program], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    spares = [int(pid) for pid in command.stdout.readline().split()]
    assert len(spares) == 2 and all(alive(pid) for pid in spares)
    command.send_signal(signal.SIGKILL)
    command.wait()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in spares) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in spares)


def test_the_kitgrade_command_ends_with_its_objects_out_of_the_collectors_reach():
    """``speed.ending_quickly``: the console script's last step (tear-down walked ~1e6 objects: 0.3 s)."""
    program = ("import gc, sys\nsys.argv = ['kitgrade', 'summary', '--help']\nfrom grader.cli import command\n"
               "try:\n    command()\nexcept SystemExit:\n    pass\nprint(gc.get_freeze_count() > 0)\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "True", done.stderr


def test_a_zygote_ended_as_bubblewrap_starts_leaves_no_sandbox_behind():
    """bwrap's clone waits for bwrap to write its user map before it ties itself to bwrap; bwrap killed
    before that left the clone waiting for ever (bubblewrap issue 633: about one in six of these,
    measured). A zygote is ended with its sandbox, however early (``namespaces.kill_sandbox``)."""
    from grader.sandbox.namespaces import children_of
    from grader.sandbox.zygote import Zygote

    clones = []
    for _ in range(20):
        zygote = Zygote(None)
        deadline = time.monotonic() + 10
        while not (clone := children_of(zygote.process.pid)) and time.monotonic() < deadline:
            pass  # (as soon as bwrap has cloned itself: its clone is still waiting for its map)
        clones += clone
        zygote.close()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in clones) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert clones and not [pid for pid in clones if alive(pid)]
