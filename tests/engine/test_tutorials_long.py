"""The real-code suite's long pages (``slow = true`` in ``tutorials/sources.toml``: a training of a minute or
more on the engine), run and compared as ``test_tutorials.py`` runs the others; a module of their own so
that ``make test``'s two workers run them beside the rest, and marked slow (``-m "not slow"`` leaves them out).
"""
import pytest

from engine_helpers import import_torch
from test_tutorials import SLOW_ONES, assert_as_recorded
from tutorials.record import run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def slow_ones_printed_by_engine():
    return run("engine", SLOW_ONES)


@pytest.fixture(scope="module")
def slow_ones_printed_by_torch():
    import_torch()
    return run("torch", SLOW_ONES)


@pytest.mark.parametrize("name", SLOW_ONES)
def test_long_extract_prints_what_pytorch_printed(name, slow_ones_printed_by_engine):
    assert_as_recorded(name, slow_ones_printed_by_engine)


@pytest.mark.parametrize("name", SLOW_ONES)
def test_long_recording_is_what_pytorch_prints_today(name, slow_ones_printed_by_torch):
    assert_as_recorded(name, slow_ones_printed_by_torch)
