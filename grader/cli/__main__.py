"""``python -m grader.cli ...``: the same as the ``kitgrade`` command."""
import sys

from . import command

sys.exit(command())
