"""Shared test set-up: where the kit's root and the shared reference material are, and the suite's
groups, named as the code's (``pytest -m engine``, ``course``, ``grader``, ``hub``)."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"

#: Each test module's group, by the parts of its name (the first group that matches): the engine
#: (``autograd_core/`` and what runs on it), the course (lessons, exercises, the lab and its
#: browser), the grader (``grader/``, ``kitgrade``) and the hub (JupyterHub, deployment).
GROUPS = {
    "hub": ("test_hub", "test_deploy"),
    "grader": ("test_suite_groups", "test_grader_", "test_kitgrade", "test_collect", "test_existing_nbgrader", "test_release",
               "test_summary", "test_written_answers", "test_extras", "test_student_text", "test_fairness",
               "test_threat_model", "test_read_as_a_file"),
    "course": ("test_notebooks", "test_exercise", "test_lab", "test_browser", "test_chinese_figures",
               "test_graph_explorer", "test_lesson", "test_packaging"),
    "engine": ("test_engine_", "_vs_torch", "test_float32_rounding", "test_numpy_argument_names", "test_printing",
               "test_utils_data", "test_tutorials", "test_parity"),
}
#: ``make test-quick``: the inner loop's tests (under five minutes on two cores): the engine's
#: without PyTorch's tutorials run whole, and the grader's that grade no class.
QUICK = ("test_engine_", "_vs_torch", "test_float32_rounding", "test_numpy_argument_names", "test_printing",
         "test_utils_data", "test_grader_layers", "test_suite_groups", "test_grader_values", "test_student_text", "test_collect_downloads",
         "test_read_as_a_file", "test_grader_speed")


def group_of(module: str) -> str | None:
    """The group of the test module named ``module`` (``test_engine_ops``), or None if none matches."""
    return next((group for group, parts in GROUPS.items() if any(part in module for part in parts)), None)


def pytest_ignore_collect(collection_path, config):
    """With ``-m quick`` the other modules are not even imported (they may need the hub's packages)."""
    if config.getoption("markexpr", "") == "quick" and collection_path.suffix == ".py" \
            and collection_path.name.startswith("test_"):
        return not any(part in collection_path.stem for part in QUICK)
    return None


#: The modules that make system accounts, serve a hub on the machine, close the checkout to other
#: accounts or plant canaries in /root, /home and /srv. With ``make test``'s two workers
#: (pytest-xdist, ``-n 2``) they run one after another in one worker, first (they are the longest
#: part); every other module runs whole in one worker, so that a module-scoped fixture (a graded
#: class, a hub) is made once.
ONE_AT_A_TIME = ("test_hub", "test_deploy", "test_grader_walls", "test_grader_environment_faults")
ONE_AT_A_TIME_GROUP = "accounts-and-hubs"
#: ``make test`` runs these by themselves, before the others (marked ``alone``): the hub's load test,
#: whose figures must be the hub's alone, and the grader's fault tests, which fail on any grading
#: process of this checkout's Python left on the machine, so a test grading beside them fails them.
ALONE = ("test_hub_load", "test_grader_faults", "test_grader_environment_faults", "test_grader_bad_day")


def xdist_group_of(module: str) -> str:
    """The unit of work the two workers share out that the test module named ``module`` is in."""
    return ONE_AT_A_TIME_GROUP if any(part in module for part in ONE_AT_A_TIME) else module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduling by scope, the scope being ``xdist_group_of`` the test's module (its
    ``--dist loadgroup`` reads marks through node ids that pytest 9.2 no longer lets it change)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group_of(Path(nodeid.split("::", 1)[0]).stem)

    return ByGroup(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.path.stem
        group = group_of(module)
        if group:
            item.add_marker(group)
        if any(part in module for part in QUICK):
            item.add_marker("quick")
        if module in ALONE:
            item.add_marker("alone")
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker of `-n 2`: the longest unit of work first
        items.sort(key=lambda item: xdist_group_of(item.path.stem) != ONE_AT_A_TIME_GROUP)  # stable: order kept


@pytest.fixture(params=[True, False], ids=["speed-on", "speed-off"])
def speed_both_ways(request):
    """Run a test with the engine's shortcuts on and again with them off (autograd_core/_speed.py):
    the shortcuts must not change a result. Use it as ``pytestmark = pytest.mark.usefixtures(...)``."""
    from autograd_core import _speed

    before = _speed.enabled
    _speed.enabled = request.param
    yield request.param
    _speed.enabled = before
