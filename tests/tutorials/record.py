"""Record what PyTorch prints for each extract: ``python record.py [NAME ...]`` writes extracts/NAME.out.

Run with the pinned PyTorch (``torch==2.13.0``, installed by ``make setup-test``); the tests
check that the recordings still match what PyTorch prints, so a stale one fails.
"""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def sources():
    return tomllib.loads((HERE / "sources.toml").read_text(encoding="utf-8"))


def run(engine, name):
    """What the extract prints with ``engine`` ("engine": the kit; "torch": PyTorch) as torch."""
    options = ["--call-tests"] if sources()[name].get("call_tests") else []
    done = subprocess.run(
        [sys.executable, str(HERE / "run_as_torch.py"), engine, str(HERE / "extracts" / f"{name}.py"), *options],
        capture_output=True, text=True, timeout=300, cwd=HERE / "extracts",
        env={"PYTHONPATH": f"{ROOT}:{HERE}", "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"},
    )
    if done.returncode:
        raise RuntimeError(f"{name} with {engine} exited with {done.returncode}:\n{done.stderr}")
    return done.stdout


if __name__ == "__main__":
    import torch

    assert torch.__version__.startswith("2.13."), f"recordings are made with torch 2.13, not {torch.__version__}"
    for name in sys.argv[1:] or [n for n, entry in sources().items() if "output" not in entry]:
        (HERE / "extracts" / f"{name}.out").write_text(run("torch", name), encoding="utf-8")
        print("recorded", name)
