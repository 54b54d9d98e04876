"""The engine's tests: ``autograd_core/`` and what runs on it, compared with PyTorch (``-m engine``).
``engine_helpers.py`` runs a program on both; ``tutorials/`` holds the real-code suite's pages."""
import pytest

#: Not in ``make test-quick`` (every other module of this folder is): PyTorch's tutorials and the
#: seeds' scripts run whole.
NOT_QUICK = {"test_tutorials", "test_tutorials_long", "test_parity"}


@pytest.fixture(params=[True, False], ids=["speed-on", "speed-off"])
def speed_both_ways(request):
    """Run a test with the engine's shortcuts on and again with them off (autograd_core/_speed.py):
    the shortcuts must not change a result. Use it as ``pytestmark = pytest.mark.usefixtures(...)``."""
    from autograd_core import _speed

    before = _speed.enabled
    _speed.enabled = request.param
    yield request.param
    _speed.enabled = before
