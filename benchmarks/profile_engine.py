"""Where the engine's time goes, per operation: two views that do not depend on machine load.

    python benchmarks/profile_engine.py                 # the tiny-op chain
    python benchmarks/profile_engine.py --workload mlp  # one MLP step (784 -> 256 -> 10)

1. Bytecodes per function: every Python bytecode the engine executes for one
   step of the workload, counted with ``sys.settrace`` opcode events. The count
   is exact and repeatable, so it shows whether a change did less work even on
   a busy machine (it does not weigh NumPy's own time or the garbage collector).
2. cProfile's view of the same workload, sorted by time spent in the function itself.

The timing benchmark beside the peers is ``bench_engine.py``.
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import pstats
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import autograd_core as torch  # noqa: E402

STEPS = 200  # steps of the chain per count (each is 2 ops forward and 2 nodes backward)


def chain(steps=STEPS):
    x = torch.ones(2, 2, requires_grad=True)
    y = x
    for _ in range(steps):
        y = y * 1.0001 + 0.0001
    y.sum().backward()


def mlp_step():
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((256, 784)).astype(np.float32))
    w1 = torch.tensor((rng.standard_normal((784, 256)) * 0.05).astype(np.float32), requires_grad=True)
    w2 = torch.tensor((rng.standard_normal((256, 10)) * 0.05).astype(np.float32), requires_grad=True)

    def step():
        loss = ((x @ w1).relu() @ w2).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            w1.sub_(0.01 * w1.grad)
            w2.sub_(0.01 * w2.grad)
            w1.grad = None  # as bench_engine.py's loop does
            w2.grad = None
    return step


def bytecodes(run):
    """{(file, function): bytecodes executed} for one call of ``run``, engine files only."""
    counts = collections.Counter()
    engine = str(ROOT / "autograd_core")

    def tracer(frame, event, arg):
        if not frame.f_code.co_filename.startswith(engine):
            return None  # not the engine: do not trace inside it
        frame.f_trace_opcodes = True
        if event == "opcode":
            counts[(Path(frame.f_code.co_filename).name, frame.f_code.co_name)] += 1
        return tracer

    run()  # warm-up: imports and first-call work are not the steady state
    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", choices=["chain", "mlp"], default="chain")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    run, per, unit = (chain, STEPS * 2, "op") if args.workload == "chain" else (mlp_step(), 1, "step")

    counts = bytecodes(run)
    total = sum(counts.values())
    print(f"### Bytecodes the engine executes: {total / per:.0f} per {unit}\n")
    print(f"| function | per {unit} | share |\n|---|---|---|")
    for (file, name), n in counts.most_common(args.top):
        print(f"| {file}:{name} | {n / per:.1f} | {n / total:.0%} |")

    print(f"\n### cProfile ({args.workload}, 20 repetitions), by time in the function itself\n")
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(20):
        run()
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
