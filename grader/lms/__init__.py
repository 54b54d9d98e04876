"""The course's files from a learning-management system (Canvas, Moodle, Blackboard), and the class list.

    lms_names.py       the file names of Canvas, Moodle and Blackboard downloads
    download_files.py  an LMS download read as files (never followed, never trusted for names)
    download_plan.py   which file of a download is whose: the newest attempt, conflicts set aside
    collect_ledger.py  what a ``collect --from`` has written so far (a killed one resumes)
    roster.py          the class list (Canvas's export, or nbgrader's)

``kitgrade collect --from`` (``grader/commands/collect.py``) and ``kitgrade export`` (``grader/commands/export.py``)
use them; a submitted file is read as ``download_files`` reads one.
"""
