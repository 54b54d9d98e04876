"""Autograde the same N simulated submissions with ``kitgrade`` and with plain ``nbgrader autograde``.

    .venv/bin/python benchmarks/bench_grading.py [--n 16] [--repeats 3] [--workers 0] [--dask 1,2]

All run in one invocation on identical copies of one course (the sample assignment of the tests,
or ``--exercises DIR --assignment NAME``): plain nbgrader, kitgrade's local workers, and kitgrade
on a dask cluster of 1 and 2 worker processes (``--cluster``; the cluster is started once, before
the timed runs, as a running cluster would be, and paused while the other commands are timed). Each is a command of its own (``nbgrader
autograde``, ``kitgrade autograde``), as an instructor runs it: the local workers start on every run. The submissions are honest ones (full, partial,
blank answers in rotation). Prints each median wall time, the throughput ratios, dask's cost per
submission (against the local workers, same number of processes), how many cores each kept busy
(the machine's CPU time over the command's wall time: run it on a quiet machine; the most any
number of ``local:N`` workers could gain on this machine follows from ``local:1``'s), and whether
every run gave every student the same score.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "grader"))  # grader_fixtures

import nbformat  # noqa: E402
from nbgrader.api import Gradebook  # noqa: E402

from grader.course import Course  # noqa: E402
from grader.commands.course_init import init_course  # noqa: E402
from grader.commands.release import generate_release  # noqa: E402


def make_submissions(course: Course, assignment: str, n: int) -> list[str]:
    """N students handing in the solution, a partial answer or the blank release, in turn."""
    from grader_fixtures import cases

    source = nbformat.read(course.source_notebooks(assignment)[0], as_version=4)
    release = nbformat.read(course.path("release", assignment, course.source_notebooks(assignment)[0].name), as_version=4)
    builders = [cases.solution, cases.partial, cases.blank] if assignment == "sample_ex" else None
    students = []
    for i in range(n):
        student = f"student{i:03d}"
        folder = course.path("submitted", student, assignment)
        folder.mkdir(parents=True)
        nb = builders[i % 3](source, release) if builders else (source if i % 2 == 0 else release)
        nbformat.write(nb, folder / course.source_notebooks(assignment)[0].name)
        students.append(student)
    return students


def scores(course_root: Path, assignment: str, course_id: str, students: list[str]) -> dict[str, float]:
    with Gradebook(f"sqlite:///{course_root / 'gradebook.db'}", course_id) as gradebook:
        return {s: gradebook.find_submission(assignment, s).score for s in students}


def fresh_copy(template: Path, target: Path) -> Path:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(template, target)
    config = target / "nbgrader_config.py"
    config.write_text(config.read_text().replace("here = os.path.dirname(os.path.abspath(__file__))", f"here = {str(target)!r}"))
    return target


def cpu_seconds() -> float:
    """CPU time this machine has spent so far, every process counted (``/proc/stat``: user, nice,
    system, interrupts; not idle, waiting for disks or stolen by the hypervisor). A command's own
    children are not enough: a sandbox's processes are reaped by no one who counts them (bubblewrap
    killed as a run ends leaves its children to init). Elsewhere: this process and its finished
    children."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
        user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
        return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cores_busy(runs: list[tuple[float, float]]) -> float:
    """How many cores a command kept busy on average: the median of its runs' CPU time / wall time."""
    return statistics.median(cpu / wall for wall, cpu in runs)


def run_plain(course_root: Path, assignment: str) -> tuple[float, float]:
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    start, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run([str(bin_dir / "nbgrader"), "autograde", assignment, "--force"], cwd=course_root, env=env,
                   check=True, capture_output=True)
    return time.perf_counter() - start, cpu_seconds() - cpu


def run_kit(course_root: Path, assignment: str, workers: int, cluster: str | None = None) -> tuple[float, float]:
    """``kitgrade autograde`` as an instructor runs it: a process of its own, which starts its workers
    (or connects to the cluster) on every run, as plain nbgrader starts a kernel per notebook."""
    options = [*(["--workers", str(workers)] if workers else []), *(["--cluster", cluster] if cluster else [])]
    start, cpu = time.perf_counter(), cpu_seconds()
    subprocess.run([sys.executable, "-m", "grader.cli", "autograde", assignment, "--quiet", *options],
                   cwd=course_root, check=True, capture_output=True)
    return time.perf_counter() - start, cpu_seconds() - cpu


CLUSTER = """
import sys
from distributed import LocalCluster
cluster = LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True, host="127.0.0.1",
                       dashboard_address=":0")
print(cluster.scheduler_address, flush=True)
sys.stdin.read()  # until the benchmark closes this pipe
cluster.close()
"""


class PausedCluster:
    """A dask cluster of ``n`` single-threaded worker processes on this machine, started once, in a
    process group of its own that is paused (SIGSTOP) while the other commands are timed: an idle
    cluster's scheduler, nannies and workers still take some CPU (about 0.3 s of a 4 s local run on
    two cores), which an instructor grading with local workers would not have running."""

    def __init__(self, n: int):
        self.process = subprocess.Popen([sys.executable, "-c", CLUSTER, str(n)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        start_new_session=True)
        self.scheduler_address = self.process.stdout.readline().strip()
        if not self.scheduler_address:
            raise RuntimeError(f"the dask cluster of {n} workers did not start")
        self.pause()

    def pause(self) -> None:
        os.killpg(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.killpg(self.process.pid, signal.SIGCONT)

    def close(self) -> None:
        self.resume()
        self.process.stdin.close()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=16, help="submissions")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0, help="kit workers (0: one per core)")
    parser.add_argument("--exercises", default=str(ROOT / "tests" / "grader" / "grader_fixtures" / "exercises"))
    parser.add_argument("--assignment", default="sample_ex")
    parser.add_argument("--dask", default="1,2", help="worker processes of the dask clusters to time ('' for none)")
    parser.add_argument("--local-clusters", default="1,2",
                        help="N of the --cluster local:N runs to time (a dask cluster the run starts; '' for none)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.dask.split(",") if n.strip()]
    local_sizes = [int(n) for n in args.local_clusters.split(",") if n.strip()]
    workers = args.workers or os.cpu_count() or 1

    load_before = os.getloadavg()[0]  # (a shared machine: the ratios, measured in one run, are what compare)
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        template = Path(tmp, "template")
        course = init_course(template, "bench", Path(args.exercises)).course
        generate_release(course, args.assignment)
        students = make_submissions(course, args.assignment, args.n)
        plain_runs, kit_runs, plain_scores, kit_scores = [], [], None, None
        dask_runs = {n: [] for n in sizes}
        local_cluster_runs = {n: [] for n in local_sizes}
        dask_same = True
        clusters = {n: PausedCluster(n) for n in sizes}
        try:
            for _ in range(args.repeats):
                plain_root = fresh_copy(template, Path(tmp, "plain"))
                plain_runs.append(run_plain(plain_root, args.assignment))
                plain_scores = scores(plain_root, args.assignment, "bench", students)
                kit_root = fresh_copy(template, Path(tmp, "kit"))
                kit_runs.append(run_kit(kit_root, args.assignment, args.workers))
                kit_scores = scores(kit_root, args.assignment, "bench", students)
                for n, cluster in clusters.items():
                    dask_root = fresh_copy(template, Path(tmp, f"dask{n}"))
                    cluster.resume()
                    try:
                        dask_runs[n].append(run_kit(dask_root, args.assignment, 0, cluster.scheduler_address))
                    finally:
                        cluster.pause()
                    dask_same &= scores(dask_root, args.assignment, "bench", students) == plain_scores
                for n in local_sizes:
                    local_root = fresh_copy(template, Path(tmp, f"local{n}"))
                    local_cluster_runs[n].append(run_kit(local_root, args.assignment, 0, f"local:{n}"))
                    dask_same &= scores(local_root, args.assignment, "bench", students) == plain_scores
        finally:
            for cluster in clusters.values():
                cluster.close()
        plain, kit = (statistics.median(t for t, _ in runs) for runs in (plain_runs, kit_runs))
        plain_cpu, kit_cpu = (statistics.median(c for _, c in runs) for runs in (plain_runs, kit_runs))
        print(f"{args.n} submissions of {args.assignment!r}, {args.repeats} repeats, {os.cpu_count()} CPU(s), "
              f"load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
        print(f"plain nbgrader autograde: median {plain:6.2f} s  ({args.n / plain:5.2f} submissions/s), "
              f"CPU {plain_cpu / args.n:.2f} s per submission")
        print(f"kitgrade autograde:       median {kit:6.2f} s  ({args.n / kit:5.2f} submissions/s), "
              f"CPU {kit_cpu / args.n:.2f} s per submission, {cores_busy(kit_runs):.2f} of {os.cpu_count()} cores busy")
        print(f"throughput ratio (kit / plain): {plain / kit:.2f}x")
        for n, runs in dask_runs.items():
            median = statistics.median(t for t, _ in runs)
            print(f"kitgrade on dask, {n} worker process(es): median {median:6.2f} s  ({args.n / median:5.2f} "
                  f"submissions/s), {plain / median:.2f}x plain"
                  + (f"; dask's cost against {workers} local workers: {(median - kit) / args.n * 1000:+.0f} ms "
                     "per submission" if n == workers else ""))
        medians = {n: statistics.median(t for t, _ in runs) for n, runs in local_cluster_runs.items()}
        for n, median in medians.items():
            busy = cores_busy(local_cluster_runs[n])
            print(f"kitgrade --cluster local:{n} (started by the run): median {median:6.2f} s  ({args.n / median:5.2f} "
                  f"submissions/s), {plain / median:.2f}x plain"
                  + (f", {medians[1] / median:.2f}x local:1" if n > 1 and 1 in medians else "")
                  + f"; {busy:.2f} of {os.cpu_count()} cores busy")
        if 1 in medians:
            # More workers do the same grading and start more processes, so they use at least local:1's
            # CPU time; on this machine's cores that takes at least that CPU time / cores.
            bound = (os.cpu_count() or 1) / cores_busy(local_cluster_runs[1])
            print(f"  on this machine no local:N can be more than {bound:.2f}x local:1 (its CPU time spread "
                  f"over all {os.cpu_count()} cores)")
        same = plain_scores == kit_scores and dask_same
        print(f"identical grades: {'yes' if same else 'NO'}")
        if not same:
            for student in students:
                if plain_scores[student] != kit_scores[student]:
                    print(f"  {student}: plain {plain_scores[student]} kit {kit_scores[student]}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
