"""Shared test set-up: where the kit's root and the shared reference material are."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
