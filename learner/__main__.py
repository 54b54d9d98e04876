"""``python -m learner ...``: the same as the ``autograd-kit`` command."""
import sys

from .cli import main

sys.exit(main())
