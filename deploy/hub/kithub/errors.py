"""What a user of the recipe can get wrong, said in one line, and a command that must succeed."""
from __future__ import annotations

import subprocess


class SetupError(Exception):
    """Something about the machine or the request that the user can fix (printed without a traceback)."""


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SetupError(f"`{' '.join(map(str, command))}` failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result
