"""What the sandbox costs: starting a worker's zygote, and each submission's process, with and
without bubblewrap, measured in this run.

    .venv/bin/python benchmarks/bench_sandbox.py [--submissions 20] [--repeats 3]

* start-up: ``Zygote(preload)`` until it is ready (once per worker and set of forbidden modules;
  inside bubblewrap: the allow-list, the namespaces, then the imports);
* per submission: fork the student's process, set up its walls (inside bubblewrap: its PID
  namespace, /proc and /tmp with quotas, capabilities dropped; Landlock and seccomp), run one
  trivial cell, end it and learn how it ended.

A sandbox per submission would pay the start-up for every notebook; the kit pays it once per
worker and the per-submission cost for every notebook (docs/threat-model.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from grader.sandbox import bubblewrap  # noqa: E402
from grader.sandbox.policy import policy_for  # noqa: E402
from grader.sandbox.supervisor import run_notebook  # noqa: E402
from grader.sandbox.zygote import Zygote  # noqa: E402
from grader.foundations.settings import KitGrade  # noqa: E402


def measure(sandboxed: bool, submissions: int, repeats: int) -> tuple[float, float]:
    """(median seconds to start a zygote, median seconds per submission)."""
    if not sandboxed:
        bubblewrap.unavailable_because = lambda: "switched off for the comparison"
    settings = KitGrade()
    policy = policy_for(settings)
    starts, per_submission = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        with Zygote(settings.preload_modules) as zygote:
            zygote.wait_ready()  # (a zygote starts up in the background, and is waited for at its first fork)
            starts.append(time.perf_counter() - started)
            assert zygote.sandboxed == sandboxed
            started = time.perf_counter()
            for _ in range(submissions):
                nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1 + 1")])
                with tempfile.TemporaryDirectory() as scratch:
                    report = run_notebook(zygote, nb, policy.for_scratch(scratch))
                assert not report.findings, report.findings
            per_submission.append((time.perf_counter() - started) / submissions)
    return statistics.median(starts), statistics.median(per_submission)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    why = bubblewrap.unavailable_because()
    if why:
        print(f"bubblewrap cannot run here: {why}")
        return 1
    inside = measure(True, args.submissions, args.repeats)
    outside = measure(False, args.submissions, args.repeats)
    print(f"{'':<28}{'start-up (per worker)':>24}{'per submission':>18}")
    for name, (start, each) in (("inside bubblewrap", inside), ("kit's walls only", outside)):
        print(f"{name:<28}{start * 1000:>21.0f} ms{each * 1000:>15.1f} ms")
    print(f"{'bubblewrap adds':<28}{(inside[0] - outside[0]) * 1000:>21.0f} ms{(inside[1] - outside[1]) * 1000:>15.1f} ms")
    print(f"a sandbox per submission would cost about {inside[0] + inside[1]:.2f} s a notebook instead of "
          f"{inside[1] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
