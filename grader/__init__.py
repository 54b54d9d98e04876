"""kitgrade: the instructor command line of the autograd kit, a thin layer over nbgrader.

Each step (``init``, ``release``, ``collect``, ``autograde``, ``feedback``, ``export``,
``summary``, ``check``) drives nbgrader's own converters, preprocessors and gradebook; the kit adds
a sandboxed, parallel executor and the checks that make a grade trustworthy (see
``docs/threat-model.md``). The package is ``grader`` and its command ``kitgrade``: released
notebooks import ``grader.checks`` and hub configs name ``grader.hub_exchange``, so the package
keeps its name.

The layers, bottom up: a module imports only from its own layer or below, and no import (at the
top of a file or inside a function) closes a circle (``tests/grader/test_grader_layers.py``):

    0 foundations/       errors and faults, settings, files written whole, versions, the progress bar, student
                         text as data, the speed room, stop signals (its map: its ``__init__.py``)
      student_language.py the language a student reads (English, Chinese): test messages, check's lines
      script_tasks.py    a test cell's question whether a script task's variables are defined (or left blank)
      plain_values.py    the only data that crosses back from the student's process: plain values, strictly decoded
    1 course_config.py   a course's ``nbgrader_config.py``, read as nbgrader reads it, checked
      course.py          the course folder: read once per command, the state commands check
      course_lock.py     one ``autograde`` per course at a time
      lms/               an LMS's downloads read as files, whose each is, the class list (its map: its ``__init__.py``)
    2 sandbox/           one student's notebook run so that nothing in it decides its grade
      checks.py          the test cells' library (``student()``, ``check()``), used in the sandbox
      method_checks.py   how an answer was computed (backward calls, gradients, grad_fn), asked in the student's process
      notebook/          one notebook's grading around the sandbox: the submission read, nbgrader's chains and
                         the kit's preprocessors, what outputs may hold, the released files, written answers
    3 autograde/         one grading run, a module per step (its map is in ``autograde/__init__.py``)
      temporary.py       one temporary folder per command, removed even after a kill
    4 commands/          ``init``, ``release`` (and its proof), ``collect``, ``export``, ``summary``, ``check``
                         (its map: its ``__init__.py``)
      hub_exchange/      nbgrader's exchange as the kit's JupyterHub uses it (its map: its ``__init__.py``)
      feedback/          ``kitgrade feedback``: nbgrader's pages, the kit's where one cannot be made (its map: its ``__init__.py``)
    5 cli/               the command line: a module per family of commands, the arguments, exit statuses
      console.py         the ``kitgrade`` console script: the command line, or the extra to install

Alike names: ``commands/check.py`` is the student's command, ``checks.py`` the library their
notebook's test cells call; ``course.py`` is a course as a command reads it, ``course_config.py``
how its ``nbgrader_config.py`` is read and checked, ``commands/course_init.py`` the command that
makes one.
"""
