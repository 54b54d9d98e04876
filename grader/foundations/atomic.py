"""Files written whole or not at all: a full disk or a killed run leaves the previous file as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it, renamed over it at the end."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(temporary, "w", newline="", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_json(path: Path, data) -> None:
    write_whole(path, json.dumps(data, indent=1))
