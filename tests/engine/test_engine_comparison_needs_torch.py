"""The tests that compare the engine with PyTorch fail in CI when PyTorch is missing, and skip only
on a developer's machine (``import_torch`` of tests/support/torch_needed.py): a skip in CI would hide a missing
dependency. PyTorch is hidden from a child pytest by a package of that name that cannot be imported."""
import os
import subprocess
import sys

import pytest

from kit_paths import ROOT

MODULE = "tests/engine/test_engine_bridge_vs_torch.py"  # (a small one; every such module starts the same way)


def pytest_without_torch(tmp_path, ci):
    shadow = tmp_path / "torch"
    shadow.mkdir()
    (shadow / "__init__.py").write_text('raise ImportError("No module named \'torch\' (hidden by the test)")\n')
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path)] + [p for p in [env.get("PYTHONPATH")] if p])
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider", MODULE],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("ci", [True, False], ids=["in CI", "elsewhere"])
def test_a_comparison_with_pytorch_fails_in_ci_and_skips_elsewhere_without_it(tmp_path, ci):
    run = pytest_without_torch(tmp_path, ci)
    printed = run.stdout + run.stderr
    assert "PyTorch is not installed" in printed, printed
    if ci:
        assert run.returncode != 0 and "make setup-test" in printed, printed
    else:
        assert run.returncode in (0, 5) and "1 skipped" in printed, printed  # (5: no test left to run)


def test_every_test_that_needs_pytorch_asks_for_it_through_import_torch():
    skipping = [path.name for path in (ROOT / "tests").rglob("*.py")
                if 'importorskip("torch")' in path.read_text() and path.name != "test_engine_comparison_needs_torch.py"]
    assert not skipping, f"pytest.importorskip('torch') skips in CI too; use torch_needed.import_torch(): {skipping}"
