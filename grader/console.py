"""The ``kitgrade`` console script: ``grader.cli.command``, or one line when an extra of the kit is missing.

``pip install autograd-kit`` is the engine alone; ``kitgrade`` needs the ``grade`` extra (a learner's
``kitgrade check``: the ``lab`` extra). Without it the command line cannot even be read (its modules
import traitlets and nbgrader), so this first step names the extra to install (exit status 2)
instead of a traceback; a module a command imports later is said by ``grader.cli`` the same way.
"""

from __future__ import annotations

import sys

from .foundations.errors import missing_extra


def kitgrade() -> int:
    try:
        from .cli import command
    except ModuleNotFoundError as error:
        words = [word for word in sys.argv[1:] if not word.startswith("-")]
        message = missing_extra(error, words[0] if words else None)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 2
    return command()
