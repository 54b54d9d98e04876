"""PyTorch 2.13 (CPU), which the engine and the lessons are compared with, for every test folder."""
from __future__ import annotations

import pytest

from browser_support import IN_CI


def import_torch():
    """PyTorch 2.13 (CPU), which the engine is compared with: ``torch = import_torch()`` where a
    module or a test needs it. Without it the tests skip on a developer's machine but fail in CI
    (``CI=true``, which ``.ci/run`` sets): there a skip would hide a missing dependency."""
    try:
        import torch
    except ImportError as error:
        reason = f"PyTorch is not installed ({error})"
        if IN_CI:
            pytest.fail(f"{reason}; `make setup-test` installs torch==2.13.0", pytrace=False)
        pytest.skip(reason, allow_module_level=True)  # (in a module, at import, as in a test)
    return torch
