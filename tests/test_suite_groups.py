"""The suite's groups: every test module is in one group of the code's (``-m engine``, ``course``,
``grader``, ``hub``), every group and ``quick`` is a registered marker, and ``make test-quick`` runs
the ``quick`` ones."""
import re

from conftest import GROUPS, QUICK, ROOT, group_of


def test_every_test_module_is_in_a_group():
    ungrouped = [p.name for p in sorted((ROOT / "tests").glob("test_*.py")) if group_of(p.stem) is None]
    assert not ungrouped, f"add these to GROUPS in tests/conftest.py: {ungrouped}"


def test_the_groups_are_registered_markers(pytestconfig):
    registered = {m.split(":")[0] for m in pytestconfig.getini("markers")}
    assert set(GROUPS) | {"quick", "slow"} <= registered, registered


def test_quick_modules_exist_and_make_test_quick_runs_them():
    modules = [p.stem for p in (ROOT / "tests").glob("test_*.py")]
    assert all(any(part in m for m in modules) for part in QUICK), QUICK
    assert re.search(r"^test-quick:.*\n(\t.*\n)*\t.*pytest -m quick", (ROOT / "Makefile").read_text(), re.M)
