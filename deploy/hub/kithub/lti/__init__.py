"""The hub as an LTI 1.3 tool of the university's LMS (Canvas, Moodle): its login and what it sends back.

    tool.py      the tool's key, its tokens from the LMS, and what launches told it (root's records)
    login.py     an LTI 1.3 launch logs the roster's person in (a login method of ``logins/``)
    roster.py    the LMS course's roster (Names and Role Provisioning Services)
    grades.py    each student's score to the LMS's column (Assignment and Grade Services)
    service.py   the hub's grade service (root's), which sends for a course's grader, and its client
    __main__.py  ``python -m kithub.lti key|send|roster|serve``
"""
