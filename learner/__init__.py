"""``autograd-kit``: the learner's command, the course in a folder of one's own and JupyterLab on it.

    autograd-kit workspace [DIR]      make or update DIR (./my-notebooks): the lessons in English and
                                      Chinese, every exercise as a student receives it (blank)
    autograd-kit lab [DIR]            the same, then JupyterLab on it (--no-browser: only the URL)
    autograd-kit reset en/08          lesson 8 in English as the course has it (yours kept beside it)
    autograd-kit reset zh/ps1         the same for an exercise

A learner checks an exercise with ``kitgrade check NOTEBOOK`` (the ``grader``'s command): its
visible tests and the exercise's hidden ones, taken from the installed kit.

    cli.py           the command line: a function per command, what a user can get wrong in one line
    workspace.py     the learner's folder: made, brought up to date without overwriting their work, reset
    lab.py           JupyterLab on it: the kit's settings, nbgrader's instructor tools switched off
    jupyter_config/  the Jupyter configuration of a learner's lab (``lab.learner_environment``)

The course's files come from ``course_files``; nothing here imports the grader or needs more than
the standard library, except ``lab`` (the ``lab`` extra: ``pip install 'autograd-kit[lab]'``).
"""
