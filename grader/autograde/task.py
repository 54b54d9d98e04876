"""One notebook of one submission, graded: the task format, and the one function that runs it.

A task is prepared where the course is (``prepare_task``: nbgrader's sanitizing chain with the
gradebook's copy, and the instructor's cells for the trusted tests) and is then plain bytes and
values that run anywhere: ``execute_prepared`` runs it in the sandbox and returns its findings and
the outputs of every cell. Both executors (``executors.py``: local processes; ``dask_executor.py``:
a dask cluster) call ``execute_prepared``; only the instructor's process writes anything.
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat

from ..foundations.faults import describe, error_text
from ..notebook.notebook_chains import instructor_sources, keep_warnings_harmless, sanitize
from ..notebook.notebook_outputs import gate_notebook
from ..sandbox import workers as grading_workers
from ..sandbox.policy import SandboxPolicy
from ..foundations.speed import shared_gradebook_engines


def prepare_task(task: dict) -> dict:
    """Instructor side of a task: sanitize the staged notebook with the gradebook's copy, gather the
    instructor's sources. Returns a task that needs nothing but itself (bytes and plain values) to
    run anywhere, or, for a notebook nbgrader cannot sanitize, an outcome with ``"not_gradable"``."""
    config = task["config"]
    nb = nbformat.reads(Path(task["path"]).read_text(encoding="utf-8"), as_version=4)
    base = {k: task[k] for k in ("student", "assignment", "notebook")}
    with shared_gradebook_engines():  # the chain opens the gradebook's copy several times
        try:
            nb, findings = sanitize(nb, config, task["db_url"], task["assignment"], task["notebook"],
                                    student=task["student"])
        except Exception as error:  # e.g. nbgrader's metadata validation: no record, so every cell scores 0
            if describe(error):  # the machine's fault (the gradebook's copy cannot be read): not graded at all
                raise
            return {**base, "not_gradable": True, "landlock": True, "tests": {},
                    "findings": [f"not gradable: nbgrader could not sanitize it ({error_text(error)})"]}
        sources = instructor_sources(task["db_url"], task["assignment"], task["notebook"])
    return {**base, "nb": nbformat.writes(nb).encode("utf-8"), "findings": findings, "sources": sources,
            "policy": task["policy"], "data_files": task["data_files"], "scratch_parent": task.get("scratch_parent")}


def execute_prepared(task: dict, *, preload: list[str] | None = None) -> dict:
    """Worker side of a task: run a prepared (sanitized) notebook in the sandbox, in a process forked
    from a zygote that loaded ``preload`` (by default the worker's list, ``workers.init_worker``) and
    serves the task's ``run`` only (a dask worker's; ``workers.grade_in_sandbox``).

    Returns its findings and the execution record (the outputs of every cell); the caller, the
    instructor's process, is the only one to write anything."""
    if task.get("not_gradable"):
        return task
    policy: SandboxPolicy = task["policy"]
    started = time.monotonic()
    nb, report = grading_workers.grade_in_sandbox(
        nbformat.reads(task["nb"].decode("utf-8"), as_version=4), policy, task["data_files"], task["sources"],
        preload=preload, run=task.get("run"), scratch_parent=task.get("scratch_parent"))
    seconds = time.monotonic() - started
    findings = list(task["findings"]) + report.findings + gate_notebook(nb) + keep_warnings_harmless(nb)
    record = {"sources": [cell.source for cell in nb.cells],
              "cells": [{"outputs": cell.get("outputs", []), "execution_count": cell.get("execution_count")}
                        for cell in nb.cells]}
    return {"student": task["student"], "notebook": task["notebook"], "findings": findings,
            "hidden_failures": report.hidden_failures, "landlock": report.landlock, "record": record, "seconds": seconds,
            "tests": {**{t: "trusted" for t in report.trusted_tests}, **{t: "in-process" for t in report.in_process_tests}}}


def execute_submission_notebook(task: dict) -> dict:
    """Local worker task: prepare (with the gradebook's copy) and execute one staged notebook."""
    return execute_prepared(prepare_task(task))


def not_gradable(task: dict, why: str) -> dict:
    """The outcome of a notebook whose grading process died every time it ran: it scores 0, with why."""
    return {"student": task["student"], "notebook": task["notebook"], "landlock": True, "tests": {},
            "findings": [f"not gradable: {why}; scored 0"]}
