"""A one-line progress bar on stderr (no dependency)."""

import sys
import time

from .student_text import for_terminal, unescaped


class ProgressBar:
    """``[#####.....] 5/10 graded, 2.1 s, ETA 2.1 s``, redrawn in place.

    ``status``, if given, is called at each redraw for a few words more (how many workers are busy).
    """

    def __init__(self, total: int, label: str, enabled: bool = True, width: int = 30, status=None):
        self.total, self.label, self.enabled, self.width = total, label, enabled and total > 0, width
        self.status = status
        self.done, self.start = 0, time.monotonic()
        self._draw()

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        self._draw()

    def close(self) -> None:
        if self.enabled:
            unescaped(sys.stderr).write("\n")
            unescaped(sys.stderr).flush()

    def _draw(self) -> None:
        if not self.enabled:
            return
        filled = int(self.width * self.done / self.total)
        elapsed = time.monotonic() - self.start
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {self.label}, {elapsed:.1f} s"
        if 0 < self.done < self.total:
            line += f", ETA {elapsed / self.done * (self.total - self.done):.0f} s"
        if self.status is not None:
            try:
                line += f", {self.status()}"
            except Exception:  # a status that cannot be had now is left out
                pass
        # the bar's own \r and erase-line go to the terminal as they are; nothing else does
        stream = unescaped(sys.stderr)
        stream.write("\r" + for_terminal(line) + "\033[K")
        stream.flush()
