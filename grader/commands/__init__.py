"""The commands of ``kitgrade`` but ``autograde`` (a grading run: ``grader/autograde/``) and ``feedback``
(``grader/feedback/``), each a module the command line (``grader/cli/``) calls.

    course_init.py     ``kitgrade init``: a course folder, the kit's exercises staged
    release.py         ``kitgrade release``: generated, proven, into the exchange
    local_grading.py   one notebook graded on the spot (the release proof and ``check``)
    collect.py         ``kitgrade collect``: from the exchange or LMS downloads (``grader/lms/``)
    exchange_collect.py nbgrader's collect from its plain exchange, a submission's regular files only
    export.py          ``kitgrade export``: nbgrader's CSV and the LMS's
    summary.py         ``kitgrade summary``: what the class got wrong
    summary_page.py    the summary's terminal table and HTML page, its figures embedded
    check.py           ``kitgrade check``: a student runs their notebook's tests (not ``grader/checks.py``,
                       the library the test cells call)
    kit_exercises.py   the kit's own exercise behind a learner's copy: its hidden tests, for ``check``
"""
