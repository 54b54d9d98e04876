"""Where the kit's checkout is (``ROOT``) and the shared reference material beside it (``SHARED``: the
seeds, the parity scripts), for every folder of tests/."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
