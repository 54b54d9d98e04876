"""The grader's tests (``-m grader``): ``grader/`` and ``kitgrade``, with the real nbgrader.
``grader_fixtures/`` holds the sample exercises and submissions, ``course_snapshots.py`` a graded class
made once and copied, ``cluster_support.py`` a class graded on a dask cluster."""

#: ``make test-quick``: the grader's tests that grade no class.
QUICK = {"test_grader_layers", "test_grader_values", "test_grader_speed", "test_student_text",
         "test_collect_downloads", "test_read_as_a_file", "test_suite_groups", "test_hub_exchange_clerk"}
#: They make system accounts or plant canaries in /root, /home and /srv (see tests/conftest.py).
ONE_AT_A_TIME = {"test_grader_walls", "test_grader_environment_faults"}
#: By themselves, before the others: they fail on any grading process of this checkout's Python left on
#: the machine, so a test grading beside them would fail them.
ALONE = {"test_grader_faults", "test_grader_environment_faults", "test_grader_bad_day"}
