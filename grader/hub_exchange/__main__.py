"""``python -m grader.hub_exchange --exchange ROOT --course ID``: the clerk (see ``clerk.py``)."""
import sys

from .clerk import main

sys.exit(main())
