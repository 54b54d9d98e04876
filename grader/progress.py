"""A one-line progress bar on stderr (no dependency)."""

import sys
import time


class ProgressBar:
    """``[#####.....] 5/10 executing, 2.1 s``, redrawn in place."""

    def __init__(self, total: int, label: str, enabled: bool = True, width: int = 30):
        self.total, self.label, self.enabled, self.width = total, label, enabled and total > 0, width
        self.done, self.start = 0, time.monotonic()
        self._draw()

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        self._draw()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def _draw(self) -> None:
        if not self.enabled:
            return
        filled = int(self.width * self.done / self.total)
        elapsed = time.monotonic() - self.start
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {self.label}, {elapsed:.1f} s")
        sys.stderr.flush()
