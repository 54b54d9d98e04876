"""Autograde a class: the submissions staged, run in parallel sandboxes, graded by nbgrader.

One run is one ``Run`` object (``run.py``) holding its state; each step is a module named for what
it does:

=========================  ==============================================================
``run.py``                 ``autograde()``, the ``Run`` and its steps in order
``picking.py``             which submissions to grade (the ledger skips what is unchanged)
``staging.py``             each submission checked and staged, a task per notebook
``task.py``                the task format; ``execute_prepared``, the one function that runs a
                           notebook in the sandbox, on whichever worker
``executors.py``           the executor interface, and ``LocalExecutor`` (processes here)
``dask_executor.py``       ``DaskExecutor`` (the workers of a dask scheduler, ``--cluster``)
``recording.py``           nbgrader grades a student; the ledger records it, or it is undone
``gradebook_records.py``   the gradebook as it was, to undo a failed grading
``ledger.py``              what is graded already (``.kitgrade/graded/<assignment>.json``)
``report.py``              ``reports/<assignment>.json`` and ``.csv``, and the terminal's table
``changes.py``             which grades a regrade changed (``--force`` lists them)
``results.py``             ``StudentResult``, ``ReportNotWritten``
``stopping.py``            Ctrl-C, SIGTERM and SIGHUP stop a run cleanly (``Interrupted``)
=========================  ==============================================================

A fault of the machine (the disk fills up, the gradebook is locked halfway) never becomes a grade:
the student it strikes is "not graded, because ...", whatever nbgrader had recorded of them in this
run is undone, and the next run grades them. A student the gradebook holds whose submission is gone
from ``submitted/`` keeps their grade, and every report says so.
"""

from .gradebook_records import GradebookRecords
from .ledger import GRADED, Ledger
from .recording import STAGED, grade_with_nbgrader, score_missing_as_zero
from .results import ReportNotWritten, StudentResult
from .run import Options, Run, autograde
from .stopping import Interrupted
from .task import execute_prepared, prepare_task

__all__ = ["GRADED", "STAGED", "GradebookRecords", "Interrupted", "Ledger", "Options", "ReportNotWritten", "Run",
           "StudentResult", "autograde", "execute_prepared", "grade_with_nbgrader", "prepare_task",
           "score_missing_as_zero"]
