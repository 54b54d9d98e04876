"""Engine benchmark: the kit's engine beside PyTorch, MyGrad, HIPS autograd and hand-written NumPy.

Every workload runs for every engine in the same process, interleaved round by
round (so a noisy neighbour slows all of them alike), and the script prints
medians and ratios against the peers measured in the same rounds. It is not a test:
timings on a shared machine are only meaningful as ratios.

    python benchmarks/bench_engine.py            # all workloads, 7 rounds
    python benchmarks/bench_engine.py --rounds 3 --skip-notebooks

Engines that are not installed are left out of the table (PyTorch: pip install
torch==2.13.0; pip install mygrad autograd).
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import autograd_core  # noqa: E402


def optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


torch = optional("torch")
mygrad = optional("mygrad")
hips = optional("autograd")
hips_np = optional("autograd.numpy")

CHAIN = 2000
DEEP_SIZES = (25_000, 50_000, 100_000, 200_000)
BATCH, IN, HIDDEN, OUT, STEPS = 256, 784, 256, 10, 10


# --- workload 1: a chain of tiny elementwise ops ----------------------------------------------
def chain(make_leaf):
    """The same loop for every engine with PyTorch's API; only making the leaf differs."""
    def run():
        x = make_leaf()
        y = x
        for _ in range(CHAIN):
            y = y * 1.0001 + 0.0001
        y.sum().backward()
        return x.grad
    return run


def chain_torchlike(m):
    return chain(lambda: m.ones(2, 2, requires_grad=True))


def chain_mygrad():
    return chain(lambda: mygrad.tensor(np.ones((2, 2), dtype=np.float32)))


def chain_hips():
    def f(x):
        y = x
        for _ in range(CHAIN):
            y = y * 1.0001 + 0.0001
        return hips_np.sum(y)
    g = hips.grad(f)
    return lambda: g(np.ones((2, 2), dtype=np.float32))


def chain_numpy():
    def run():
        y = np.ones((2, 2), dtype=np.float32)
        for _ in range(CHAIN):
            y = y * np.float32(1.0001) + np.float32(0.0001)
        grad = np.ones((2, 2), dtype=np.float32)
        for _ in range(CHAIN):
            grad = grad * np.float32(1.0001)
        return grad
    return run


# --- workload 2: an MLP training step ------------------------------------------------------------
def mlp_data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    w1 = (rng.standard_normal((IN, HIDDEN)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, OUT)) * 0.05).astype(np.float32)
    return x, w1, w2


def mlp_torchlike(m):
    x, w1, w2 = mlp_data()
    X = m.tensor(x)
    W1 = m.tensor(w1, requires_grad=True)
    W2 = m.tensor(w2, requires_grad=True)

    def run():
        nonlocal W1, W2  # -= rebinds the name (to the same tensor, updated in place)
        for _ in range(STEPS):
            loss = ((X @ W1).relu() @ W2).pow(2).mean()
            loss.backward()
            with m.no_grad():
                W1 -= 0.01 * W1.grad
                W2 -= 0.01 * W2.grad
                W1.grad = None  # as PyTorch's tutorials and optimizer.zero_grad() do
                W2.grad = None
        return loss.item()
    return run


def mlp_mygrad():
    x, w1, w2 = mlp_data()
    W1, W2 = mygrad.tensor(w1), mygrad.tensor(w2)

    def run():
        nonlocal W1, W2
        for _ in range(STEPS):
            h = mygrad.matmul(x, W1)
            loss = (mygrad.matmul(mygrad.maximum(h, 0), W2) ** 2).mean()
            loss.backward()
            W1 = mygrad.tensor(W1.data - 0.01 * W1.grad)
            W2 = mygrad.tensor(W2.data - 0.01 * W2.grad)
        return float(loss)
    return run


def mlp_hips():
    x, w1, w2 = mlp_data()

    def loss(params):
        a, b = params
        return hips_np.mean(hips_np.dot(hips_np.maximum(hips_np.dot(x, a), 0), b) ** 2)
    g = hips.grad(loss)

    def run():
        a, b = w1.copy(), w2.copy()
        for _ in range(STEPS):
            ga, gb = g((a, b))
            a, b = a - 0.01 * ga, b - 0.01 * gb
        return float(loss((a, b)))
    return run


def mlp_numpy():
    x, w1, w2 = mlp_data()

    def run():
        a, b = w1.copy(), w2.copy()
        for _ in range(STEPS):
            h = x @ a
            r = np.maximum(h, 0)
            out = r @ b
            loss = (out ** 2).mean()
            d_out = (2.0 / out.size) * out
            d_b = r.T @ d_out
            d_h = (d_out @ b.T) * (h > 0)
            d_a = x.T @ d_h
            a -= np.float32(0.01) * d_a
            b -= np.float32(0.01) * d_b
        return float(loss)
    return run


# --- workload: LeNet, forward and backward ----------------------------------------------------------
LENET_BATCH = 64


def lenet_torchlike(m):
    """d2l's LeNet (the 1998 network: padding 2, sigmoid, average pooling) on a batch of 64
    1x28x28 images: one forward, a cross-entropy loss and one backward per run."""
    nn = m.nn
    m.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
                        nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
                        nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(), nn.Linear(120, 84), nn.Sigmoid(),
                        nn.Linear(84, 10))
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((LENET_BATCH, 1, 28, 28)).astype(np.float32))
    y = m.tensor(rng.integers(0, 10, LENET_BATCH))
    loss_fn = nn.CrossEntropyLoss()

    def run():
        for p in net.parameters():
            p.grad = None
        loss = loss_fn(net(x), y)
        loss.backward()
        return loss.item()
    return run


# --- workload: float32 elementwise functions, rounded as PyTorch rounds them ---------------------------
ROUNDED = ("exp", "log", "sin", "cos", "tanh")
ROUNDED_SIZES = ((2, 2), (256, 256))


def rounding_runs(shape):
    """What correct rounding costs per call: the engine's float32 function (computed in float64,
    rounded once) beside NumPy's own float32 kernel (what it computed before), PyTorch, and the
    engine's float64 path (which must not pay for it). Each run calls all five functions 100 times."""
    rng = np.random.default_rng(1)
    a32 = (np.abs(rng.standard_normal(shape)) + 0.5).astype(np.float32)
    a64 = a32.astype(np.float64)
    runs = {}

    def calls(functions, x):
        def run():
            for _ in range(100):
                for f in functions:
                    f(x)
        return run

    for label, module, array in (("autograd_core float32", autograd_core, a32),
                                 ("torch float32", torch, a32),
                                 ("autograd_core float64", autograd_core, a64)):
        if module is not None:
            x = module.from_numpy(array.copy())
            runs[label] = calls([getattr(module, f) for f in ROUNDED], x)
    runs["numpy float32 ufuncs"] = calls([getattr(np, f) for f in ROUNDED], a32)
    runs["numpy float64 ufuncs"] = calls([getattr(np, f) for f in ROUNDED], a64)
    return runs


def engines(workload):
    table = {"autograd_core": None, "torch": None, "mygrad": None, "hips autograd": None, "numpy (by hand)": None}
    if workload == "lenet":
        table["autograd_core"] = lenet_torchlike(autograd_core)
        table["torch"] = torch and lenet_torchlike(torch)
        del table["numpy (by hand)"]
    elif workload == "chain":
        table["autograd_core"] = chain_torchlike(autograd_core)
        table["torch"] = torch and chain_torchlike(torch)
        table["mygrad"] = mygrad and chain_mygrad()
        table["hips autograd"] = hips and chain_hips()
        table["numpy (by hand)"] = chain_numpy()
    else:
        table["autograd_core"] = mlp_torchlike(autograd_core)
        table["torch"] = torch and mlp_torchlike(torch)
        table["mygrad"] = mygrad and mlp_mygrad()
        table["hips autograd"] = hips and mlp_hips()
        table["numpy (by hand)"] = mlp_numpy()
    return {k: v for k, v in table.items() if v}


def interleaved(runs, rounds):
    """Seconds per engine and round; each round runs every engine once, in a shuffled order
    (an engine's BLAS or OpenMP threads can still be busy when the next one starts: the
    shuffle spreads that over all of them instead of always slowing the same neighbour)."""
    times = {name: [] for name in runs}
    for fn in runs.values():
        fn()  # warm-up
    order = random.Random(0)
    for _ in range(rounds):
        for name, fn in order.sample(list(runs.items()), len(runs)):
            gc.collect()
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


# --- workload 3: a deep graph, in a fresh process per engine (peak memory) ------------------------------
DEEP_SCRIPT = """
import gc, os, sys, time
import {module} as m
if sys.argv[2] == "off":
    gc.disable()  # to see what Python's cyclic garbage collector costs on a large live graph

def resident_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

n = int(sys.argv[1])
x = m.ones(2, 2, requires_grad=True)
before = resident_mib()
t = time.perf_counter()
y = x
for _ in range(n // 2):  # two ops per step: n ops in all
    y = y * 1.0001 + 0.0001
graph = resident_mib() - before  # the recorded graph, just before backward
y.sum().backward()
seconds = time.perf_counter() - t
print(seconds, graph)
"""


def deep_graph(module, n, gc_mode="on"):
    out = subprocess.run([sys.executable, "-c", DEEP_SCRIPT.format(module=module), str(n), gc_mode],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    seconds, mib = out.stdout.split()
    return float(seconds), float(mib)


# --- workload 4: memory across training steps ----------------------------------------------------------
def training_memory_slope(steps=40):
    """Bytes allocated per step after warm-up (about 0 means flat)."""
    run = mlp_torchlike(autograd_core)
    run()
    tracemalloc.start()
    sizes = []
    for _ in range(steps // STEPS * 2):
        run()
        gc.collect()
        sizes.append(tracemalloc.get_traced_memory()[0])
    tracemalloc.stop()
    return (sizes[-1] - sizes[1]) / max(len(sizes) - 2, 1) / STEPS


# --- workload 5: the course, executed end to end ---------------------------------------------------------
COURSE_SCRIPT = """
import sys, time
from pathlib import Path
import nbformat
from nbclient import NotebookClient
total = 0.0
paths = sorted(Path(sys.argv[1]).glob("*.ipynb"))
for path in paths:
    nb = nbformat.read(path, as_version=4)
    t = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    total += time.perf_counter() - t
print(total, len(paths))
"""


def course_wall_time():
    """Every English lesson executed in a kernel, in a fresh process (away from the peers imported here)."""
    out = subprocess.run([sys.executable, "-c", COURSE_SCRIPT, str(ROOT / "notebooks" / "en")],
                         capture_output=True, text=True, cwd=ROOT, check=True, timeout=1800)
    seconds, count = out.stdout.split()
    return float(seconds), int(count)


PEERS = ("torch", "numpy (by hand)")


def table(title, times, unit="ms", scale=1e3, peers=PEERS):
    """Median time per engine, and its ratio to each peer as the median of the per-round
    ratios: engines that ran in the same round met the same machine, so a slow stretch of
    a shared machine cancels out of the ratio."""
    print(f"\n### {title}\n")
    peers = [p for p in peers if p in times]
    print("| engine | median | " + " | ".join(f"/ {p}" for p in peers) + " |")
    print("|---|---|" + "---|" * len(peers))
    summary = {}
    for name, ts in times.items():
        ratios = {p: statistics.median(t / u for t, u in zip(ts, times[p])) for p in peers}
        summary[name] = {"median_seconds": statistics.median(ts), "ratios": ratios}
        print(f"| {name} | {statistics.median(ts) * scale:.1f} {unit} | "
              + " | ".join(f"{ratios[p]:.2f}x" for p in peers) + " |")
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--skip-notebooks", action="store_true")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--only", nargs="+", choices=("chain", "mlp", "lenet", "rounding", "deep", "memory", "notebooks"),
                    help="run only these workloads")
    args = ap.parse_args()
    wanted = set(args.only or ("chain", "mlp", "lenet", "rounding", "deep", "memory", "notebooks"))
    results = {}

    if "chain" in wanted:
        results["chain"] = table(f"Tiny-op overhead: {CHAIN} elementwise ops on a 2x2 tensor, then backward",
                                 interleaved(engines("chain"), args.rounds))
    if "mlp" in wanted:
        results["mlp"] = table(f"MLP: batch {BATCH}, {IN}->{HIDDEN}->{OUT} relu, float32, {STEPS} steps",
                               interleaved(engines("mlp"), args.rounds))
    if "lenet" in wanted:
        results["lenet"] = table(f"LeNet (d2l): forward + backward on a batch of {LENET_BATCH} 1x28x28 images, float32",
                                 interleaved(engines("lenet"), args.rounds), peers=("torch",))
    if "rounding" in wanted:
        for shape in ROUNDED_SIZES:
            key = "rounding " + "x".join(map(str, shape))
            results[key] = table(f"{', '.join(ROUNDED)} on {'x'.join(map(str, shape))}, 100 calls each "
                                 "(float32 rounded as PyTorch rounds it; float64 untouched)",
                                 interleaved(rounding_runs(shape), args.rounds), unit="ms",
                                 peers=("numpy float32 ufuncs", "torch float32", "numpy float64 ufuncs"))
    if not wanted & {"deep", "memory", "notebooks"}:
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))
        return

    print("\n### Deep graph: a chain of n ops, backward (fresh process each, median of 3)\n")
    print("| engine | n | seconds | microseconds per op | graph memory before backward (MiB) |\n|---|---|---|---|---|")
    results["deep"] = {}
    runs = [("autograd_core", "on")] + ([("torch", "on")] if torch else []) + [("autograd_core", "off")]
    for module, gc_mode in runs:
        label = module if gc_mode == "on" else f"{module}, cyclic GC off"
        per_op = []
        for n in DEEP_SIZES:
            s, mib = sorted(deep_graph(module, n, gc_mode) for _ in range(3))[1]
            results["deep"][f"{label} {n}"] = (s, mib)
            per_op.append(s / n)
            print(f"| {label} | {n:,} | {s:.2f} | {s / n * 1e6:.1f} | {mib:.0f} |")
        growth = per_op[-1] / per_op[0]
        results["deep"][f"{label} growth"] = growth
        print(f"| {label} | time per op at {DEEP_SIZES[-1]:,} / at {DEEP_SIZES[0]:,} | {growth:.2f}x (1.00x is linear) | | |")

    slope = training_memory_slope()
    results["memory_slope_bytes_per_step"] = slope
    print(f"\nMemory of the MLP training loop: {slope:+.0f} bytes per step after warm-up (flat is about 0).")

    if not args.skip_notebooks and (ROOT / "notebooks" / "en").exists():
        seconds, count = course_wall_time()
        results["course_seconds"] = seconds
        print(f"\nThe course ({count} English notebooks) executed end to end: {seconds:.1f} s wall time.")

    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
