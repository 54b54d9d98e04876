"""``python -m grader.cli ...``: the same as the ``kitgrade`` command."""
import sys

from . import main

sys.exit(main())
