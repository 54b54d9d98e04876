"""The hub's tests (``-m hub``): JupyterHub with real accounts, the recipe (deploy/hub/kithub/), its logins
(``lms_platform.py``, a test LMS) and the production guide. ``hub_support.py`` serves a class,
``hub_client.py`` is a student's or an instructor's client of it."""

#: They make system accounts or serve a hub (see tests/conftest.py): every module of this folder.
ONE_AT_A_TIME = {"test_hub", "test_hub_graders", "test_hub_instructor_pages", "test_hub_load", "test_hub_logins",
                 "test_hub_student_terminal", "test_hub_walls", "test_deploy_guide", "test_deploy_layers", "test_deploy_recipe"}
#: By itself, before the others: the load test, whose figures must be the hub's alone.
ALONE = {"test_hub_load"}
