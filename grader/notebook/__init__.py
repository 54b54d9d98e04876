"""One notebook's grading, around the sandbox: what is read, what nbgrader's chains do, what is kept.

    submission.py        one submitted folder read and staged (never followed, never changed)
    notebook_outputs.py  what a notebook's outputs may hold, checked before nbgrader or a page sees them
                         (the rule itself is the sandbox's: ``sandbox/outputs.py``)
    preprocessors.py     the kit's own preprocessors in nbgrader's chains
    notebook_chains.py   nbgrader's sanitizing and autograding chains as the kit runs them
    released_files.py    the files a student receives beside the notebooks (nbgrader's release picks them)
    manual_grades.py     written answers waiting for a person

The notebook runs in ``grader/sandbox/``; a grading run (``grader/autograde/``), the release proof
and ``kitgrade check`` (``grader/commands/local_grading.py``) call these.
"""
