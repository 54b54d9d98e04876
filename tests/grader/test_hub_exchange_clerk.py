"""The hub's clerk (``python -m grader.hub_exchange``) as the hub runs it: a managed service that the hub
stops with SIGINT when it shuts down. A stop is not a failure: no traceback in the hub's log, exit 0."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

from kit_paths import ROOT


def test_the_clerk_stopped_by_the_hub_says_so_and_exits_0(tmp_path):
    (tmp_path / "ad101" / "inbound" / "not an entry").mkdir(parents=True)  # reported at its first look
    clerk = subprocess.Popen([sys.executable, "-m", "grader.hub_exchange", "--exchange", str(tmp_path),
                              "--course", "ad101", "--interval", "0.2"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = clerk.stdout.readline()  # once it has looked: well into its loop
    assert "left in inbound/ 'not an entry'" in first, (first, clerk.communicate(timeout=30))
    time.sleep(0.5)
    clerk.send_signal(signal.SIGINT)
    out, err = clerk.communicate(timeout=30)
    assert clerk.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "clerk ad101: stopped" in out
