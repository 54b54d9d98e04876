"""Where the notebooks run: one interface, two executors.

An executor is made before the submissions are staged and ``start()``-ed at once: it returns at
once, and its workers start up (an interpreter, nbgrader, the zygote) while this process stages; ``run_tasks(tasks)``
then yields ``(task, outcome)`` as each notebook finishes, in the manner of
``concurrent.futures.as_completed``. The outcome is the worker's result (a dict) or, for a task the
grader could not run, the reason (a str). ``status()`` is a few words for the progress bar (or
None), ``close()`` stops every worker the executor started.

* ``LocalExecutor`` (here): a pool of worker processes on this machine, one per core by default.
* ``DaskExecutor`` (``dask_executor.py``): the workers of a dask scheduler.

Both run each notebook with ``task.execute_prepared``.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from ..foundations.faults import describe, error_text
from ..sandbox import spare_zygotes
from ..sandbox import workers as grading_workers
from ..foundations.speed import before_forking_workers, forget_gradebook_engines
from ..foundations.stop_signals import stops_deferred
from ..sandbox.zygote import ZygoteFailed
from .task import execute_submission_notebook

class LocalExecutor:
    """A pool of worker processes on this machine; each prepares and runs the notebooks it is given.

    A worker that dies takes its pool with it: the unfinished tasks run again in a new pool, and
    those caught in a dead pool twice then run one at a time, so that only a task that kills its
    worker on its own is given up."""

    def __init__(self, workers: int, config, preload: list[str]):
        self.workers, self.config, self.preload = workers, config, list(preload)
        self.pool = self.starting = self.start_failed = None
        self.forbidden_imports: list[str] = []

    def start(self, forbidden_imports=()) -> None:
        """Start every worker and its zygote: this process goes on staging while they start.

        In the ``kitgrade`` command, whose zygotes are started already (``spare_zygotes``), the
        workers are forked from this process, here and now: a fork takes milliseconds, and only a
        process with no other Python thread can fork safely (NumPy's OpenBLAS makes its own
        threads safe across a fork; Python 3.12 warns of them all the same, and before 3.10.5 a
        pool's manager thread ran while it forked). Anywhere else they come from the forkserver,
        started in the background."""
        self.forbidden_imports = list(forbidden_imports)
        if spare_zygotes.forking_now():
            self._fork_workers()
            return
        spare_zygotes.let_go()
        self.starting = threading.Thread(target=self._start_workers, daemon=True, name="kitgrade-start-workers")
        self.starting.start()

    def _fork_workers(self) -> None:
        try:  # (the allow-list is read already: the zygotes were started with it)
            before_forking_workers()
            self.pool = self._new_pool(self.workers, "fork")
            with stops_deferred(), spare_zygotes.forking():  # every worker forked (and known to the pool)
                for _ in range(self.workers):  # before a Ctrl-C counts
                    self.pool.submit(int)
        except Exception as error:  # raised where the run waits for its workers
            self.start_failed = error
        finally:
            spare_zygotes.let_go()

    def _start_workers(self) -> None:
        try:
            # a worker's modules are imported once, in the forkserver every worker is forked from, not once
            # per worker (``kitgrade autograde`` starts it before anything else)
            grading_workers.start_forkserver()
            self.pool = self._new_pool(self.workers)
            for _ in range(self.workers):  # a pool starts a worker per task it is given while none is idle
                self.pool.submit(int)
        except Exception as error:  # raised where the run waits for its workers
            self.start_failed = error

    def _started(self) -> None:
        """Wait until ``start()`` has made the pool (its workers may still be starting)."""
        if self.starting is not None:
            self.starting.join()
            self.starting = None
        if self.start_failed is not None:
            raise self.start_failed

    def _new_pool(self, size: int, method: str = "forkserver") -> ProcessPoolExecutor:
        # Workers come from a fresh forkserver, unless this process is the ``kitgrade`` command:
        # whatever another caller has imported or patched (a test runner, a notebook) must not leak
        # into the graders. A pool made again (a worker died) comes from the forkserver: this
        # process runs threads by then.
        return ProcessPoolExecutor(max_workers=max(1, size), mp_context=multiprocessing.get_context(method),
                                   initializer=_init_worker, initargs=(self.preload, os.getpid(), self.forbidden_imports))

    def status(self) -> None:
        return None

    def run_tasks(self, tasks: list[dict]):
        self._started()
        queue = [(list(tasks), self.workers, 0)]  # (tasks, pool size, times they were caught in a dead pool)
        while queue:
            batch, size, caught = queue.pop(0)
            if self.pool is None:
                grading_workers.start_forkserver()  # (not started yet if the first workers were forked from here)
                self.pool = self._new_pool(min(size, len(batch)))
            broken = yield from self._run_batch(batch)
            if not broken:
                continue
            if len(batch) == 1 and size == 1 and caught >= 2:
                yield broken[0], "its grading process died while grading it, also when it ran alone"
            elif caught == 0:
                queue.append((broken, size, 1))
            else:
                queue.extend(([task], 1, 2) for task in broken)

    def _run_batch(self, batch: list[dict]):
        """Run ``batch`` in the current pool; yield outcomes; return the tasks a dead pool took with it."""
        broken = []
        futures = {self.pool.submit(execute_submission_notebook, {**task, "config": self.config}): task
                   for task in batch}
        for future in as_completed(futures):
            task = futures[future]
            try:
                outcome = future.result()
            except BrokenProcessPool:
                broken.append(task)
                continue
            except Exception as error:  # a fault of the grader: reported, the class goes on
                outcome = describe(error) or (str(error) if isinstance(error, ZygoteFailed) else error_text(error))
            yield task, outcome
        if broken:  # this pool is dead: the next batch gets a new one
            spare_zygotes.kill()  # the zygotes its workers adopted, and what they ran
            self.pool.shutdown(wait=True)
            self.pool = None
        return broken

    def close(self, stopped: bool = False) -> None:
        """Stop every worker: at once if the run was ``stopped``, or is stopped while its workers
        finish (a pool's shutdown cut short by the signal would leave them waiting, and this
        process waiting on them at exit); no worker outlives the run."""
        try:
            self._started()
        except Exception:  # the pool could not start: the run has said so; what did start is stopped below
            pass
        pool, self.pool = self.pool, None
        if pool is None:
            return
        if not stopped:
            try:
                pool.shutdown(wait=True, cancel_futures=True)
                return
            except KeyboardInterrupt:
                stop_at_once(pool)
                raise
        stop_at_once(pool)


def stop_at_once(pool: ProcessPoolExecutor) -> None:
    """Kill a pool's workers, their zygotes and students' processes, then shut it down.

    ``shutdown`` alone can wait for ever on a pool a signal cut short while it was starting (a
    worker that never gets the pool's last message): a killed worker is one it sees end. A zygote
    a worker started dies with it; one the command started for it (``spare_zygotes``) is killed."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()
    spare_zygotes.kill()
    pool.shutdown(wait=True, cancel_futures=True)


def _init_worker(preload: list[str], instructor: int, forbidden_imports: list[str]) -> None:
    """A local worker's initializer: the sandbox's (``workers.init_worker``), after forgetting the
    command's gradebook connections (a worker forked from it has them; only the command uses them)."""
    forget_gradebook_engines()
    grading_workers.init_worker(preload, instructor, forbidden_imports)


def stop_soon(pool: ProcessPoolExecutor, seconds: float = 3.0) -> None:
    """Shut a pool down without new tasks, giving its workers ``seconds`` to end; then kill them.

    A worker still starting ends after it has read what it was sent (killed later, or the whole
    pool killed at once, one might outlive this process and print multiprocessing's traceback)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)  # (it forgets its processes: the list above is kept)
    deadline = time.monotonic() + seconds
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():  # still busy with a notebook: killed, with its zygote and student's process
            process.kill()
            process.join()
    pool.shutdown(wait=True, cancel_futures=True)
