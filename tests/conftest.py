"""Shared test set-up: the suite's groups and how ``make test`` schedules them.

A test module's group is its folder, named as the code's parts (``pytest -m engine``, ``course``, ``grader``,
``hub``): ``engine/`` (``autograd_core/`` and what runs on it), ``course/`` (the lessons, the exercises, the
lab and its browser, the distribution that carries them), ``grader/`` (``grader/``, ``kitgrade``) and ``hub/``
(JupyterHub, deployment). ``support/`` holds what several folders use (on ``sys.path``: pyproject's
``pythonpath``); what one folder uses is in that folder.

Each folder's ``conftest.py`` says how its modules are scheduled, as sets of module names:
``QUICK`` (in ``make test-quick``; or ``NOT_QUICK``: every module of the folder but these), ``ONE_AT_A_TIME``
(they make system accounts, serve a hub, close the checkout to other accounts or plant canaries in /root,
/home and /srv: with ``make test``'s two workers they run one after another in one worker, first) and
``ALONE`` (``make test`` runs them by themselves, before the others). tests/support/suite_layout.py reads those
sets as written, without importing the folders' conftest.py: pytest-xdist's controller schedules the work
before any folder is collected, and with ``-m quick`` the other modules are not even imported."""
import os
from pathlib import Path

import pytest

from suite_layout import ALONE, ONE_AT_A_TIME_GROUP, group_of, is_quick, xdist_group_of


def pytest_ignore_collect(collection_path, config):
    """With ``-m quick`` the other modules are not even imported (they may need the hub's packages)."""
    if config.getoption("markexpr", "") == "quick" and collection_path.suffix == ".py" \
            and collection_path.name.startswith("test_"):
        return not is_quick(collection_path)
    return None


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
        group = group_of(item.path)
        if group:
            item.add_marker(group)
        if is_quick(item.path):
            item.add_marker("quick")
        if item.path.stem in ALONE:
            item.add_marker("alone")
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker of `-n 2`: the longest unit of work first
        items.sort(key=lambda item: xdist_group_of(item.path.stem) != ONE_AT_A_TIME_GROUP)  # stable: order kept
