"""What a grading worker must share with the instructor's machine: the kit and nbgrader.

The kit's version is its release number and a digest of ``grader/``'s code (two checkouts of one
release still differ); the ledger fingerprints them too, so a new kit grades again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def kit_versions() -> dict[str, str]:
    """``{"autograd-kit": "<version>+<digest>", "nbgrader": "<version>"}`` of this machine."""
    from importlib import metadata

    import nbgrader

    try:
        kit = metadata.version("autograd-kit")
    except metadata.PackageNotFoundError:
        kit = "unknown"
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent  # grader/, all of it
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return {"autograd-kit": f"{kit}+{digest.hexdigest()[:10]}", "nbgrader": nbgrader.__version__}


def describe_versions(versions: dict[str, str]) -> str:
    """``autograd-kit 0.1.0+abc, nbgrader 0.9.5``."""
    return ", ".join(f"{name} {version}" for name, version in sorted(versions.items()))
