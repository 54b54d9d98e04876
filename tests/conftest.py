"""Shared test set-up: where the kit's root and the shared reference material are."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(params=[True, False], ids=["speed-on", "speed-off"])
def speed_both_ways(request):
    """Run a test with the engine's shortcuts on and again with them off (autograd_core/_speed.py):
    the shortcuts must not change a result. Use it as ``pytestmark = pytest.mark.usefixtures(...)``."""
    from autograd_core import _speed

    before = _speed.enabled
    _speed.enabled = request.param
    yield request.param
    _speed.enabled = before
