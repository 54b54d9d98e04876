"""What a user of the recipe can get wrong, said in one line; a command that must succeed; a folder made
with the mode it needs, whatever root's umask."""
from __future__ import annotations

import subprocess
from pathlib import Path

#: the umask of every command the recipe runs as an account, and of the hub (and so of the servers and
#: services it starts): what the class is tested with, not root's own (a hardened machine's 077 would
#: make the exchange's releases and the class's files unreadable to the accounts that need them)
UMASK = 0o022


class SetupError(Exception):
    """Something about the machine or the request that the user can fix (printed without a traceback)."""


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SetupError(f"`{' '.join(map(str, command))}` failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result


def made_folder(path: Path, mode: int) -> Path:
    """``path`` made if missing, and any missing folder above it (mode 755: the accounts of the class
    reach through them), then given ``mode``, so that a folder an earlier run made under another
    umask is mended when set-up runs again. ``mkdir``'s own mode is cut by the umask; ``chmod`` is not."""
    for missing in reversed([p for p in path.parents if not p.exists()]):
        missing.mkdir(exist_ok=True)
        missing.chmod(0o755)
    path.mkdir(exist_ok=True)
    path.chmod(mode)
    return path
