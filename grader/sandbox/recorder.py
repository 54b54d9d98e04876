"""The recorder: turns what a cell prints and displays into nbformat outputs, within a byte budget.

Runs in the student's process (so the budget here only keeps honest output small: the supervisor
enforces the real limit on what it accepts).
"""

from __future__ import annotations

import io
import json
import sys


class OutputRecorder:
    """Turns what a cell prints and displays into nbformat outputs, within a byte budget."""

    def __init__(self, shell):
        from IPython.core.displayhook import DisplayHook
        from IPython.core.displaypub import DisplayPublisher

        recorder = self

        class RecordingDisplayHook(DisplayHook):
            def write_output_prompt(self):
                pass

            def write_format_data(self, format_dict, md_dict=None):
                recorder.add({"output_type": "execute_result", "data": format_dict,
                              "metadata": md_dict or {}, "execution_count": self.shell.execution_count})

            def finish_displayhook(self):
                self._is_active = False

        class RecordingDisplayPublisher(DisplayPublisher):
            def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
                recorder.add({"output_type": "display_data", "data": data, "metadata": metadata or {}})

            def clear_output(self, wait=False):
                recorder.outputs.clear()

        class RecordingStream(io.TextIOBase):
            def __init__(self, name):
                self.name = name

            def write(self, text):
                if not isinstance(text, str):
                    raise TypeError(f"write() argument must be str, not {type(text).__name__}")
                recorder.add_stream(self.name, text)
                return len(text)

            def writable(self):
                return True

            def isatty(self):
                return False

        self.shell = shell
        self.displayhook = RecordingDisplayHook(shell=shell)
        self.display_pub = RecordingDisplayPublisher(shell=shell)
        self.stdout = RecordingStream("stdout")
        self.stderr = RecordingStream("stderr")
        self.outputs: list[dict] = []
        self.budget = 0
        self.truncated = False

        def show_traceback(etype, evalue, stb):
            # always kept (a failure must show), but never larger than a few screens
            recorder.add({"output_type": "error", "ename": clip(getattr(etype, "__name__", str(etype))),
                          "evalue": clip(str(evalue)), "traceback": [clip(line) for line in list(stb)[-60:]]},
                         force=True)

        self.show_traceback = show_traceback

    def install(self):
        """(Re)connect the shell and ``sys`` to this recorder."""
        shell = self.shell
        shell.displayhook = self.displayhook
        shell.display_trap.hook = self.displayhook
        shell.display_pub = self.display_pub
        shell._showtraceback = self.show_traceback
        sys.displayhook = self.displayhook
        sys.stdout, sys.stderr = self.stdout, self.stderr

    def begin(self):
        self.outputs = []

    def add(self, output, force=False):
        size = len(json.dumps(output, default=str))
        if not force and size > self.budget:
            self.truncated = True
            return
        self.budget = max(0, self.budget - size)
        self.outputs.append(output)

    def add_stream(self, name, text):
        if self.budget <= 0:
            self.truncated = True
            return
        if len(text) > self.budget:
            text, self.truncated = text[: self.budget], True
        self.budget -= len(text)
        if self.outputs and self.outputs[-1].get("output_type") == "stream" and self.outputs[-1]["name"] == name:
            self.outputs[-1]["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})




def clip(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} characters dropped]"
