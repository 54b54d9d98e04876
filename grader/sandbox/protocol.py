"""The protocol between the supervisor (trusted) and the student's process (untrusted).

Two pipes, one JSON object per line. The supervisor drives: it sends one command and waits for
the one reply that answers it; nothing the student's process sends unasked is believed.

Commands (supervisor -> student's process)::

    {"run": i, "source": "...", "test": false}   run cell i (test: a plain nbgrader test cell)
    {"probe": i, "code": "..."}                  evaluate code for a trusted test, reply its value
    {"exit": true}                               finish

Replies (student's process -> supervisor)::

    {"ready": true, "landlock": bool}                     set up (whether Landlock could be applied)
    {"ran": i, "outputs": [...], "execution_count": n, "error": bool, "notes": [...]}
    {"probed": i, "value": <plain_values.encode>}         (what a probe prints is not kept)
    {"probed": i, "error": {"ename", "evalue", "traceback"}}

The supervisor reads with a deadline checked on every read (a process that keeps writing cannot
hold it), caps every line and the total it accepts per notebook, and treats a malformed or
unexpected line as the end of that process.
"""

from __future__ import annotations

import re

import json
import os
import select
import time


#: Exit code of a process of the sandbox that could not set itself up, before any student code ran
#: (the zygote reports why on its own socket; see ``zygote.py``).
SETUP_FAULT = 70
#: Exit code of a namespace parent that killed its student's process for holding too many threads
#: (``namespaces._watch_threads``; a student's own ``os._exit(71)`` only misleads its own report).
TOO_MANY_THREADS = 71

#: How deeply JSON from a student (a message, an output, a notebook) may nest. nbformat and nbgrader
#: walk notebooks recursively: a notebook nested a thousand levels deep stops them with a RecursionError.
MAX_JSON_DEPTH = 64


def nesting_depth(data, limit: int = MAX_JSON_DEPTH) -> int:
    """How deeply lists and dicts nest in ``data`` (counted without recursion), stopping past ``limit``."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def send(fd: int, message: dict) -> None:
    """Write one message (used on both sides)."""
    data = (json.dumps(message, default=str) + "\n").encode()
    while data:
        written = os.write(fd, data)
        data = data[written:]


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed, expected message."""


class TimedOut(Exception):
    """The deadline passed before a reply came."""


class Closed(Exception):
    """The student's process closed its end (it exited or died)."""


class Reader:
    """Reads replies from the student's process, within a total byte budget."""

    def __init__(self, fd: int, total_limit: int, line_limit: int):
        self.fd, self.total_limit, self.line_limit = fd, total_limit, line_limit
        self.buffer = b""
        self.received = 0

    def next(self, deadline: float) -> dict:
        """The next message; ``TimedOut`` at ``deadline`` (a monotonic time), ``Closed`` at the end."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > self.line_limit:
                raise ProtocolError(f"a message over {self.line_limit} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimedOut()
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                raise TimedOut()
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise Closed()
            self.received += len(chunk)
            if self.received > self.total_limit:
                raise ProtocolError(f"more than {self.total_limit} bytes of messages")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            raise ProtocolError("a line that is not JSON") from None
        if not isinstance(message, dict):
            raise ProtocolError("a message that is not an object")
        return message


#: A UTF-16 surrogate on its own: JSON's ``"\ud800"`` and Python's ``'\ud800'`` make one, UTF-8
#: cannot write it (nbformat, nbgrader's database, a page and a CSV all fail on it).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def as_unicode(data):
    """``data`` (JSON's dicts, lists and strings) with every lone surrogate in a string or a key
    replaced by U+FFFD, and how many were; walked without recursion. A notebook's text and its
    outputs are the student's to choose, and UTF-8 is what every part of grading writes."""
    count = 0

    def fixed(text):
        nonlocal count
        if isinstance(text, str) and _LONE_SURROGATE.search(text):
            new, n = _LONE_SURROGATE.subn("\ufffd", text)
            count += n
            return new
        return text

    root = [data]
    stack = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        item = holder[key]
        if isinstance(item, str):
            holder[key] = fixed(item)
        elif isinstance(item, dict):
            for name in list(item):
                new_name = fixed(name)
                if new_name is not name:
                    item[new_name] = item.pop(name)
                stack.append((item, new_name))
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
    return root[0], count
