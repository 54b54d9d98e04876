"""A dask worker preload for the kill loop: the worker process dies at a named moment of a run.

Loaded by every worker (``dask worker --preload PATH``, or ``distributed.worker.preload`` in dask's
configuration for a ``LocalCluster``). It reads ``$KITGRADE_KILL_PLAN``, a JSON file the test
rewrites before each run: ``{"phase": ..., "occurrence": k, "dir": ...}``. Each time any worker
passes a phase, it claims the next number of that phase with a file created exclusively in
``dir`` (so the count is shared by every worker); the worker that claims number ``k`` of the
planned phase writes ``dir/killed`` (the phase and the occurrence) and dies at once, as a machine
that loses power. Every other passage is left alone, so a run has at most one kill, at the planned
moment, whatever the timing. The phases:

* ``start-up``: the worker has registered with the scheduler and not yet run anything;
* ``version check``: the instructor's process asks the worker for its versions (``client.run``);
* ``mid-task``: the student's notebook has run on this worker, its result not yet returned;
* ``result transfer``: the instructor's process asks the worker for a finished task's result;
* ``end``: the instructor's process has had every result (``"results"`` of the plan) and lets go
  of them, as the run ends.
"""

import json
import os
import threading

PHASES = ("start-up", "version check", "mid-task", "result transfer", "end")


def _plan() -> dict:
    try:
        with open(os.environ["KITGRADE_KILL_PLAN"]) as file:
            return json.load(file)
    except (KeyError, OSError, ValueError):
        return {}


def _claim(plan: dict, name: str) -> int:
    """The next number of ``name`` in this run, shared by every worker."""
    number = 1
    while True:
        try:
            os.close(os.open(os.path.join(plan["dir"], f"{name}-{number}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return number
        except FileExistsError:
            number += 1


def passing(phase: str) -> None:
    """This worker is at ``phase``: die here if the plan says this passage is the one."""
    plan = _plan()
    if plan.get("phase") != phase:
        return
    number = _claim(plan, phase)
    if number == plan["occurrence"]:
        with open(os.path.join(plan["dir"], "killed"), "w") as file:
            file.write(json.dumps({"phase": phase, "occurrence": number, "pid": os.getpid()}))
        os._exit(1)


def _patch_versions() -> None:
    import grader.foundations.versions as versions

    real = getattr(versions.kit_versions, "real", versions.kit_versions)  # a preload may run twice

    def kit_versions():
        if not threading.current_thread().name.startswith("Dask-"):  # asked by client.run, not inside a task
            passing("version check")
        return real()

    kit_versions.real = real
    versions.kit_versions = kit_versions


def _patch_task() -> None:
    import grader.sandbox.supervisor as task  # (workers.grade_in_sandbox imports run_notebook at each call)

    real = getattr(task.run_notebook, "real", task.run_notebook)

    def run_notebook(*args, **kwargs):
        report = real(*args, **kwargs)
        passing("mid-task")
        return report

    run_notebook.real = real
    task.run_notebook = run_notebook


def _patch_get_data(worker) -> None:
    real = worker.handlers["get_data"]

    async def get_data(comm, **kwargs):  # dask passes the comm to a handler that names it
        passing("result transfer")
        plan = _plan()
        if plan:
            _claim(plan, "sent")
        return await real(comm, **kwargs)

    worker.handlers["get_data"] = get_data


class _Phases:
    """Start-up (once registered with the scheduler) and the end (a result let go of, once all were sent)."""

    name = "kill-at-phase"

    def setup(self, worker):
        self.worker = worker
        original = worker._register_with_scheduler

        async def register():
            await original()
            passing("start-up")

        worker._register_with_scheduler = register

    def transition(self, key, start, finish, **kwargs):
        if start == "memory" and finish == "released":
            plan = _plan()
            if plan and os.path.exists(os.path.join(plan["dir"], f"sent-{plan['results']}")):
                passing("end")


async def dask_setup(worker):
    _patch_versions()
    _patch_task()
    _patch_get_data(worker)
    plugin = _Phases()
    plugin.setup(worker)
    worker.plugins[plugin.name] = plugin
