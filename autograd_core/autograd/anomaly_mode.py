"""``torch.autograd.detect_anomaly`` and ``set_detect_anomaly``: debugging a backward pass.

While anomaly detection is on, every node recorded keeps the forward call that made it
(``function.forward_trace``); when a node's backward fails, a warning names the node and shows
that call (``backward.reporting_anomalies``), and with ``check_nan`` a backward that returns nan
fails. The error for a saved tensor changed in place then points to that warning. As in PyTorch
it slows everything down: for debugging only.

    with torch.autograd.detect_anomaly():
        loss = model(x).sum()
        loss.backward()       # UserWarning: Error detected in ...Backward0. Traceback of forward call ...
"""
from __future__ import annotations

import warnings

from .. import _speed
from ..grad_mode import _State


def is_anomaly_enabled():
    return _State.anomaly


def is_anomaly_check_nan_enabled():
    return _State.anomaly_check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    _State.anomaly, _State.anomaly_check_nan = bool(enabled), bool(check_nan)
    _speed.record_traces(_State.anomaly)


class detect_anomaly:
    """Anomaly detection inside a ``with`` block."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.previous = (_State.anomaly, _State.anomaly_check_nan)
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.previous)
        return False


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` turns anomaly detection on from now on; used as a context manager,
    it is back as it was at the end of the block."""

    def __init__(self, mode, check_nan=True):
        self.previous = (_State.anomaly, _State.anomaly_check_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.previous)
        return False
