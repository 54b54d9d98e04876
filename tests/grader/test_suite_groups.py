"""The suite's groups: a test module's group is its folder (tests/engine/, course/, grader/, hub/: ``-m engine``,
...), every test module is in one, every group and ``quick`` is a registered marker, and ``make test-quick``
runs the ``quick`` ones. With ``make test``'s two workers, every module that makes system accounts, serves a
hub or plants files outside its own folders runs in the one group that runs one module at a time."""
import importlib.util
import re

from kit_paths import ROOT
from suite_layout import ALONE, GROUPS, ONE_AT_A_TIME_GROUP, RULES, SCHEDULE, TESTS, group_of, is_quick, xdist_group_of

#: what a module does that another module running beside it could meet: accounts made with useradd
#: (which locks /etc/passwd), a hub served, the checkout's mode changed, canaries in /srv or /root
MACHINE_WIDE = re.compile(r'useradd|set_up\.setup|\bHub\(|create_accounts|served_class|Path\("/srv"\)|ROOT\.chmod|"/root"')


def modules_of_the_suite():
    return sorted(TESTS.rglob("test_*.py"))


def test_every_test_module_is_in_a_groups_folder():
    ungrouped = [str(p.relative_to(TESTS)) for p in modules_of_the_suite() if group_of(p) is None]
    assert not ungrouped, f"move these into one of tests/{{{','.join(GROUPS)}}}/: {ungrouped}"
    assert group_of(TESTS / "hub" / "test_new.py") == "hub" and group_of(TESTS / "test_new.py") is None


def test_the_folder_decides_the_marker_of_every_test_collected(request):
    """Each test this run collected carries its folder's marker and no other group's."""
    wrong = [item.nodeid for item in request.session.items
             if {m.name for m in item.iter_markers() if m.name in GROUPS} != {group_of(item.path)}]
    assert request.session.items and not wrong, wrong[:10]


def test_the_groups_are_registered_markers(pytestconfig):
    registered = {m.split(":")[0] for m in pytestconfig.getini("markers")}
    assert set(GROUPS) | {"quick", "slow", "alone"} <= registered, registered


def test_each_folders_schedule_is_read_as_its_conftest_has_it_and_names_modules_there_are():
    """tests/support/suite_layout.py reads the sets without importing the folders' conftest.py: what it reads is what
    importing gives, and every name is a module of that folder."""
    for group in GROUPS:
        spec = importlib.util.spec_from_file_location(f"conftest_of_{group}", TESTS / group / "conftest.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        imported = {rule: getattr(module, rule, None) for rule in RULES}
        assert SCHEDULE[group] == {rule: None if v is None else frozenset(v) for rule, v in imported.items()}, group
        modules = {p.stem for p in (TESTS / group).rglob("test_*.py")}
        named = set().union(*(names or () for names in SCHEDULE[group].values()))
        assert named <= modules, f"tests/{group}/conftest.py names modules that are not there: {named - modules}"


def test_make_test_quick_runs_the_quick_modules():
    quick = {p.stem for p in modules_of_the_suite() if is_quick(p)}
    assert {"test_engine_ops", "test_grader_layers"} <= quick and "test_tutorials" not in quick, quick
    assert not {p.stem for p in modules_of_the_suite() if is_quick(p) and group_of(p) in ("course", "hub")}
    assert re.search(r"^test-quick:.*\n(\t.*\n)*\t.*pytest -m quick", (ROOT / "Makefile").read_text(), re.M)


def test_every_module_that_changes_the_machine_runs_one_at_a_time():
    machine_wide = sorted(p.stem for p in modules_of_the_suite()
                          if p.name != "test_suite_groups.py" and MACHINE_WIDE.search(p.read_text()))
    assert {"test_hub", "test_grader_walls"} <= set(machine_wide), machine_wide  # the pattern still finds them
    alone = [m for m in machine_wide if xdist_group_of(m) != ONE_AT_A_TIME_GROUP]
    assert not alone, f"add these to ONE_AT_A_TIME in their folder's conftest.py: {alone}"
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
    looking = sorted(p.stem for p in modules_of_the_suite()
                     if p.name != "test_suite_groups.py" and "_grading_processes" in p.read_text())
    assert "test_grader_faults" in looking and set(looking) <= set(ALONE), (looking, ALONE)
