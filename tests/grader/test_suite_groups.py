"""The suite's groups: every test module is in one group of the code's (``-m engine``, ``course``,
``grader``, ``hub``), every group and ``quick`` is a registered marker, and ``make test-quick`` runs
the ``quick`` ones. With ``make test``'s two workers, every module that makes system accounts, serves
a hub or plants files outside its own folders runs in the one group that runs one module at a time."""
import re

from conftest import ALONE, GROUPS, ONE_AT_A_TIME_GROUP, QUICK, ROOT, group_of, xdist_group_of

#: what a module does that another module running beside it could meet: accounts made with useradd
#: (which locks /etc/passwd), a hub served, the checkout's mode changed, canaries in /srv or /root
MACHINE_WIDE = re.compile(r'useradd|set_up\.setup|\bHub\(|create_accounts|served_class|Path\("/srv"\)|ROOT\.chmod|"/root"')


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


def test_every_module_that_changes_the_machine_runs_one_at_a_time():
    machine_wide = sorted(p.stem for p in (ROOT / "tests").glob("test_*.py")
                          if p.name != "test_suite_groups.py" and MACHINE_WIDE.search(p.read_text()))
    assert {"test_hub", "test_grader_walls"} <= set(machine_wide), machine_wide  # the pattern still finds them
    alone = [m for m in machine_wide if xdist_group_of(m) != ONE_AT_A_TIME_GROUP]
    assert not alone, f"add these to ONE_AT_A_TIME in tests/conftest.py: {alone}"
    assert xdist_group_of("test_engine_ops") == "test_engine_ops"  # the others: a group per module


def test_make_test_runs_the_alone_tests_first_then_two_workers_by_scope():
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^test:.*\n((\t.*\n)*)", makefile, re.M).group(1).splitlines()
    runs = [line.strip() for line in recipe if "pytest" in line]
    assert runs == ["$(BIN)/python -m pytest -m alone",
                    '$(BIN)/python -m pytest -m "not alone" -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder'], runs
    assert re.search(r"^TEST_WORKERS \?= 2$", makefile, re.M)
    assert "test_hub_load" in ALONE  # the load test, by itself
    # a module that looks for grading processes left anywhere on the machine runs by itself
    looking = sorted(p.stem for p in (ROOT / "tests").glob("test_*.py")
                     if p.name != "test_suite_groups.py" and "_grading_processes" in p.read_text())
    assert "test_grader_faults" in looking and set(looking) <= set(ALONE), (looking, ALONE)
