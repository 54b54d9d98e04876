"""``python -m kithub``: the recipe's command line (``cli.py``)."""
import sys

from .cli import main

sys.exit(main())
