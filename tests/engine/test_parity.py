"""Every seed example, run with the kit imported as ``torch``, prints what PyTorch 2.13 printed.

The scripts and their recorded outputs live in ``../shared/parity``; object
addresses (``0x...``) differ between runs and are masked.
"""
import re
import subprocess
import sys

import pytest

from kit_paths import ROOT, SHARED

PARITY = SHARED / "parity"
SCRIPTS = sorted(PARITY.glob("s*.py"))


def mask(text):
    return re.sub(r"0x[0-9a-fA-F]+", "0xADDR", text)


def test_the_recorded_examples_are_present():
    assert len(SCRIPTS) >= 9, f"expected the seed scripts in {PARITY}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script_prints_what_pytorch_printed(script, tmp_path, speed_both_ways):
    source = script.read_text()
    assert re.search(r"^import torch$", source, re.M), "the script should import torch"
    patched = re.sub(r"^import torch$", "import autograd_core as torch", source, flags=re.M)
    (tmp_path / script.name).write_text(patched)
    run = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "AUTOGRAD_CORE_SPEED": "1" if speed_both_ways else "0"},
    )
    assert run.returncode == 0, run.stderr
    assert mask(run.stdout) == mask(script.with_suffix(".out").read_text())
