"""kitgrade: the instructor command line of the autograd kit, a thin layer over nbgrader.

Each step (``init``, ``release``, ``collect``, ``autograde``, ``feedback``, ``export``,
``summary``, ``check``) drives nbgrader's own converters, preprocessors and gradebook; the kit adds
a sandboxed, parallel executor and the checks that make a grade trustworthy (see
``docs/threat-model.md``). Where things live:

==================  =====================================================================
the command line    ``cli.py`` (arguments, exit statuses), ``errors.py`` (what a user can
                    get wrong: one line, exit 2), ``progress.py``, ``student_text.py``
                    (student text shown as data: terminal, HTML, spreadsheet cells)
the course          ``course.py`` (the folder, read once per command), ``course_config.py``
                    (its ``nbgrader_config.py``, checked), ``settings.py`` (``c.KitGrade``),
                    ``roster.py``
one file per step   ``course_init.py``, ``release.py``, ``collect.py`` (+ ``download_files.py``,
                    ``download_plan.py``, ``lms_names.py``, ``collect_ledger.py``,
                    ``hub_exchange.py``), ``autograde.py`` (+ ``submission.py``,
                    ``report.py``, ``cluster.py``), ``feedback.py``, ``export.py``,
                    ``summary.py``, ``check.py`` (+ ``local_grading.py``)
nbgrader's chains   ``notebook_chains.py`` (sanitizing and autograding as the kit runs them),
                    ``preprocessors.py`` (the kit's own preprocessors in those chains)
the test cells      ``checks.py`` (``student()``, ``check()``, ``check_close()``)
the sandbox         ``sandbox/`` (one defence per file; its map is in ``sandbox/__init__.py``)
==================  =====================================================================
"""
