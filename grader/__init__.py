"""kitgrade: the instructor command line of the autograd kit, a thin layer over nbgrader.

Each step (``init``, ``release``, ``collect``, ``autograde``, ``feedback``,
``export``, ``check``) drives nbgrader's own converters, preprocessors and
gradebook; the kit adds a sandboxed, parallel executor and the checks that make
a grade trustworthy (see ``docs/threat-model.md``).
"""
