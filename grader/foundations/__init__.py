"""What every layer of the grader stands on; none of it knows a course, a notebook or a sandbox.

    errors.py        what a user can get wrong (one line, exit 2), and a bug of the kit
    faults.py        faults of the machine (a full disk, a locked gradebook), one sentence each
    settings.py      ``c.KitGrade``: every default of the kit's settings, in one place
    atomic.py        files written whole or not at all
    versions.py      the kit's and nbgrader's versions (a worker must share them)
    progress.py      the progress bar
    student_text.py  student text shown as data: in the terminal, HTML and spreadsheet cells
    speed.py         the grader's speed tricks, in one room (an import skipped, gradebook engines shared)
    stop_signals.py  SIGTERM and a closed terminal stop a command as Ctrl-C does
"""
