"""The notebooks on the workers of a dask scheduler (``kitgrade autograde ASSIGNMENT --cluster ADDRESS``).

The instructor's process does everything that needs the course: it stages and sanitizes each
notebook (with its copy of the gradebook) and gathers the instructor's sources. A task sent to a
worker is plain bytes and values: the sanitized notebook, the instructor's cells, the sandbox
policy and the assignment's data files. The worker runs it with ``task.execute_prepared``, in the
same sandbox as a local run (it is the supervisor; its zygotes are made on first use) and sends
back the findings and the outputs of every cell.

A worker whose kit or nbgrader differs from the instructor's is refused. A worker that dies while
the run starts is left out; one that dies while grading loses nothing: the scheduler sends its
tasks to another worker. A notebook whose worker dies each time it is tried (dask's
``distributed.scheduler.allowed-failures`` plus one) scores 0, with the reason in the report.
"""

from __future__ import annotations

import functools
import logging
import re
import tempfile
import time
import uuid
from pathlib import Path

from .. import temporary
from ..foundations import versions
from ..foundations.faults import describe, error_text
from ..sandbox.zygote import ZygoteFailed
from .task import execute_prepared, not_gradable, prepare_task

#: Seconds to reach the scheduler, and to wait for a first worker.
CONNECT_TIMEOUT = 10.0
WORKER_TIMEOUT = 10.0
#: Seconds a run waits, once every worker is lost, for one to join before it gives up the notebooks left.
LOST_WORKERS_TIMEOUT = 60.0


class ClusterError(Exception):
    """The cluster cannot be used (unreachable, no workers, other versions): nothing was written."""


class VersionMismatch(Exception):
    pass


def tls_security(files):
    """``Security`` from ``[ca_file, cert, key]`` (None: dask's configuration decides)."""
    if not files:
        return None
    from distributed.security import Security

    ca_file, cert, key = files
    for option, path in (("--tls-ca-file", ca_file), ("--tls-cert", cert), ("--tls-key", key)):
        if not Path(path).is_file():
            raise ClusterError(f"{option} {path}: no such file; give the files of the certificate made for this "
                               "machine (docs/grading.md, Grading on many machines)")
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


def run_on_worker(task: dict, preload: list[str], expected: dict[str, str]) -> dict:
    """The task a dask worker runs: check the versions, then grade the prepared notebook."""
    mine = versions.kit_versions()
    if mine != expected:
        raise VersionMismatch(f"a worker with {versions.describe_versions(mine)} refused it (the instructor has "
                              f"{versions.describe_versions(expected)})")
    _remove_left_behind_once()
    return execute_prepared(task, preload=preload)


@functools.cache
def _remove_left_behind_once() -> None:
    """The scratch folders of this machine's workers that were killed mid-task (``kitgrade-<pid>-…``
    of a process that no longer runs, in this worker's temporary folder), removed at its first task."""
    temporary.remove_left_behind(Path(tempfile.gettempdir()))


def _connect(address: str, security):
    """``(client, cluster or None)`` for ``address``; a ``ClusterError`` if it cannot be used."""
    try:
        from dask import config as dask_config
        from distributed import Client, LocalCluster
    except ImportError:
        raise ClusterError("--cluster needs dask.distributed, the kit's cluster extra: pip install "
                           "'autograd-kit[cluster]'") from None
    local = re.fullmatch(r"local:(\d+)", address)
    if local:
        if int(local.group(1)) < 1:
            raise ClusterError(f"--cluster {address}: at least one worker (local:N, N >= 1)")
        # The scheduler first, then the workers: a worker that dies as it starts is left out (the
        # others grade) instead of failing the whole cluster. dask's own logs stay quiet: the run
        # says what happened.
        try:
            cluster = LocalCluster(n_workers=0, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=":0", silence_logs=logging.CRITICAL)
        except (OSError, RuntimeError, TimeoutError) as error:
            raise ClusterError(f"--cluster {address}: the local dask scheduler did not start ({_first_line(error)}); "
                               "check that this machine can open a port on 127.0.0.1") from None
        cluster.scale(int(local.group(1)))
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # dask's task of that worker, "never retrieved"
        try:
            cluster.sync(cluster._correct_state)
        except Exception:  # noqa: S110 - a worker that failed to start; check_workers counts those that did
            pass
        return Client(cluster), cluster
    if not re.fullmatch(r"(tcp|tls)://[^\s/]+:\d+", address):
        raise ClusterError(f"--cluster {address!r}: expected tcp://HOST:PORT, tls://HOST:PORT or local:N")
    if address.startswith("tls://") and security is None and not dask_config.get("distributed.comm.tls.client.cert"):
        raise ClusterError(f"--cluster {address}: a tls:// scheduler needs this machine's certificate: give "
                           "--tls-ca-file, --tls-cert and --tls-key")
    try:
        return Client(address, timeout=CONNECT_TIMEOUT, security=security), None
    except (OSError, TimeoutError, ValueError) as error:
        raise ClusterError(f"cannot reach the dask scheduler at {address} ({_first_line(error)}); check the "
                           "address, that the scheduler runs, and that --tls-* match its security") from None


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


class DaskExecutor:
    """A ``distributed.Client`` on the scheduler, checked: reachable, with workers of the same versions."""

    def __init__(self, client, cluster=None, *, config=None, preload=()):
        self.client, self.cluster = client, cluster
        self.config, self.preload = config, list(preload)
        self.versions = versions.kit_versions()
        self.run = uuid.uuid4().hex  # a worker grades this run's notebooks in sandboxes of this run only

    @classmethod
    def connect(cls, address: str, security=None, *, config=None, preload=()) -> "DaskExecutor":
        client, cluster = _connect(address, security)
        executor = cls(client, cluster, config=config, preload=preload)
        try:
            executor.check_workers(address)
        except BaseException:
            executor.close()
            raise
        return executor

    def check_workers(self, address: str) -> None:
        """At least one worker, and every worker that answers has the instructor's versions.

        A worker that dies meanwhile (while starting, or while it answers) is left out: the others
        grade, and each task checks the versions again wherever it lands."""
        deadline = time.monotonic() + WORKER_TIMEOUT
        while True:
            try:
                self.client.wait_for_workers(1, timeout=max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                if self.cluster is not None:
                    raise ClusterError(f"--cluster {address}: no worker of the local cluster started within "
                                       f"{WORKER_TIMEOUT:g} s; grade without --cluster (one process per core), or "
                                       "see why dask's workers fail on this machine") from None
                raise ClusterError(f"the dask scheduler at {address} has no workers (none joined within "
                                   f"{WORKER_TIMEOUT:g} s): start them (dask worker ADDRESS --nthreads 1), or see "
                                   "why they did not start") from None
            try:
                theirs = self.client.run(versions.kit_versions, on_error="return")
            except OSError:  # the scheduler lost the worker it was asking: ask those left
                theirs = {}
            answered = {worker: found for worker, found in theirs.items() if isinstance(found, dict)}
            for worker, found in sorted(answered.items()):
                if found != self.versions:
                    raise ClusterError(f"the worker {worker} has {versions.describe_versions(found)}, this machine "
                                       f"has {versions.describe_versions(self.versions)}: install the same on both")
            if answered:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"the dask scheduler at {address} has no workers that answer (each one "
                                   f"died or did not answer within {WORKER_TIMEOUT:g} s): restart them and run again")
            time.sleep(0.2)

    def start(self, forbidden_imports=()) -> None:
        """The workers are running already (each starts a sandbox for this run at its first notebook of it)."""

    def status(self) -> str:
        processing = self.client.processing()
        busy = sum(1 for keys in processing.values() if keys)
        return f"{busy}/{len(processing)} workers busy"

    def run_tasks(self, tasks: list[dict]):
        """Prepare each task here, grade it on a worker; yield ``(task, outcome)`` as results arrive."""
        futures = {}
        try:
            for task in tasks:
                try:
                    prepared = prepare_task({**task, "config": self.config})
                except Exception as error:  # the machine's fault (the gradebook's copy unreadable): not graded
                    if describe(error) is None:
                        raise
                    yield task, describe(error)
                    continue
                if prepared.get("not_gradable"):
                    yield task, prepared
                    continue
                prepared["scratch_parent"] = None  # the worker's own temporary folder
                prepared["run"] = self.run
                key = f"kitgrade-{task['student']}-{task['notebook']}-{uuid.uuid4().hex[:8]}"
                future = self.client.submit(run_on_worker, prepared, self.preload, self.versions, key=key, pure=False)
                futures[future] = task
            yield from self._as_they_come(futures)
        finally:
            if futures:  # stopped: nothing of this run keeps the workers busy
                self.client.cancel(list(futures))

    def _as_they_come(self, futures: dict):
        """``(task, outcome)`` as each future finishes. A run never waits for ever: once the cluster has
        had no worker for ``LOST_WORKERS_TIMEOUT`` seconds (every worker died and none came back), the
        notebooks left are not graded (the machine's fault), with a sentence that says what to do."""
        from distributed import wait

        without_workers = None
        while futures:
            try:
                finished, _ = wait(list(futures), timeout=1.0, return_when="FIRST_COMPLETED")
            except TimeoutError:
                finished = ()
            for future in finished:
                task = futures.pop(future)
                yield task, self._outcome(task, future)
            if finished:
                without_workers = None
                continue
            if self._has_workers():
                without_workers = None
            elif without_workers is None:
                without_workers = time.monotonic()
            elif time.monotonic() - without_workers > LOST_WORKERS_TIMEOUT:
                self.client.cancel(list(futures))
                for future, task in list(futures.items()):
                    del futures[future]
                    yield task, (f"the dask cluster lost every worker and none joined within "
                                 f"{LOST_WORKERS_TIMEOUT:g} s; start workers (dask worker ADDRESS --nthreads 1)")
                return

    def _has_workers(self) -> bool:
        try:
            return bool(self.client.nthreads())
        except Exception:  # the scheduler does not answer either: no worker to wait for
            return False

    @staticmethod
    def _outcome(task: dict, future):
        from distributed import KilledWorker

        try:
            return future.result()
        except KilledWorker:  # died on every worker it was sent to: the notebook's fault
            return not_gradable(task, "its grading process died each time it ran, on every worker it was sent to")
        except (VersionMismatch, ZygoteFailed) as error:  # their text is the sentence to show
            return str(error)
        except Exception as error:  # a fault of the grader: reported, the class goes on
            return describe(error) or error_text(error)

    def close(self, stopped: bool = False) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()
