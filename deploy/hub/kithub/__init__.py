"""kithub: a class of the kit on one JupyterHub (accounts, courses, the nbgrader exchange, the hub itself).

    python -m kithub demo                          # what `make hub` runs: set up, start, print logins
    python -m kithub setup|start|dates|backup|teardown --state DIR   # docs/deploy.md

It lives in ``deploy/hub/kithub/`` and is installed with the kit into the hub's environment (``make
hub-env``): the hub, the students' servers and the grader services run it from there, never from the
checkout, which holds the course (solutions and hidden tests). Run as root: it creates accounts.

One module per concern, in layers: a module imports only from its own layer or below, and no import
(at the top of a file or inside a function, or a module named in a string) closes a circle
(``tests/hub/test_deploy_layers.py``):

    0 errors.py          what a user can get wrong, in one line; a command that must succeed
      spec.py            the class specification (class.json): its courses, where everything of the class is
      kernel.py          the class's Python kernel: ipykernel without its debugger
      lessons.py         each student's own copy of the lessons; ``reset-lesson``
      roster.py          who the class file says each person is, in which course, as what
      machine.py         what the machine lacks for a class (``check``), with the command for each
      grading_record.py  who graded or changed what: the grader services' record, their kitgrade
    1 accounts.py        a system account per person and per grader, and what runs as them
      dates.py           due dates and extensions into each course's gradebook (as its grader)
      lti/               the hub as an LTI 1.3 tool: its login, grades and roster to the LMS (map: its __init__.py)
    2 config_files.py    nbgrader's and Jupyter's configuration of servers and services, the kernel spec, the terminals' commands
      courses.py         each course's exercises in its grader's home, its folder of the exchange
      runtime.py         what the hub imports as it runs: ports, runtime folders, the lessons at a first start
      spawner.py         the students' servers: each on a port of its own, up only once it answers as theirs
      logins/            how people log in: a method per module (PAM, LTI 1.3, OpenID Connect), one entry each
    3 set_up.py          the class set up: the machine checked, accounts, configuration, courses
      hub_process.py     JupyterHub started and stopped for a set-up class
      backup.py          a class's archive, its gradebooks kept at teardown, the teardown
      banner.py          what the hub prints: who logs in, the machine's own walls
    4 cli.py             the command line (``python -m kithub``)
      __main__.py        ``python -m kithub``
      jupyterhub_config.py  JupyterHub's configuration of the class (``jupyterhub -f``): spec, runtime, logins only

Nothing is imported here: ``jupyterhub_config.py`` imports the four modules the hub needs and no more.
"""
