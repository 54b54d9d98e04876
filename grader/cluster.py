"""Grading on the workers of a dask scheduler (``kitgrade autograde ASSIGNMENT --cluster ADDRESS``).

The instructor's process does everything that needs the course: it stages and sanitizes each
notebook (with its copy of the gradebook) and gathers the instructor's sources. A task sent to a
worker is plain bytes and values: the sanitized notebook, the instructor's cells, the sandbox
policy and the assignment's data files. The worker runs it in the same sandbox as a local run
(it is the supervisor; its zygotes are made on first use) and sends back the findings and the
outputs of every cell. Only the instructor's process writes the records, ``autograded/``, the
gradebook and the reports, as results arrive.

A worker whose kit or nbgrader differs from the instructor's is refused. A worker that dies while
grading loses nothing: the scheduler sends its tasks to another worker. A notebook whose worker
dies each time it is tried (dask's ``distributed.scheduler.allowed-failures`` plus one) scores 0,
with the reason in the report.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from pathlib import Path

#: Seconds to reach the scheduler, and to wait for a first worker.
CONNECT_TIMEOUT = 10.0
WORKER_TIMEOUT = 10.0


class ClusterError(Exception):
    """The cluster cannot be used (unreachable, no workers, other versions): nothing was written."""


def kit_versions() -> dict[str, str]:
    """The versions a worker must share with the instructor: the kit (with a digest of the grader's
    code, so that two checkouts of one release number still differ) and nbgrader."""
    from importlib import metadata

    import nbgrader

    try:
        kit = metadata.version("autograd-kit")
    except metadata.PackageNotFoundError:
        kit = "unknown"
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return {"autograd-kit": f"{kit}+{digest.hexdigest()[:10]}", "nbgrader": nbgrader.__version__}


def describe(versions: dict[str, str]) -> str:
    return ", ".join(f"{name} {version}" for name, version in sorted(versions.items()))


def tls_security(files):
    """``Security`` from ``[ca_file, cert, key]`` (None: dask's configuration decides)."""
    if not files:
        return None
    from distributed.security import Security

    ca_file, cert, key = files
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


class VersionMismatch(Exception):
    pass


def run_on_worker(task: dict, preload: list[str], versions: dict[str, str]) -> dict:
    """The task a dask worker runs: check the versions, then grade the prepared notebook."""
    mine = kit_versions()
    if mine != versions:
        raise VersionMismatch(f"a worker with {describe(mine)} refused it (the instructor has {describe(versions)})")
    from .autograde import execute_prepared
    from .sandbox import workers

    workers.init_lazily(preload)
    return execute_prepared(task)


class DaskExecutor:
    """A ``distributed.Client`` on the scheduler, checked: reachable, with workers of the same versions."""

    def __init__(self, client, cluster=None):
        self.client, self.cluster = client, cluster
        self.versions = kit_versions()

    @classmethod
    def connect(cls, address: str, security=None) -> "DaskExecutor":
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ClusterError("--cluster needs dask.distributed: install the kit's cluster extra "
                               "(pip install -e '.[cluster]' in the kit's checkout)") from None
        local = re.fullmatch(r"local:(\d+)", address)
        cluster = None
        if local:
            if int(local.group(1)) < 1:
                raise ClusterError(f"--cluster {address}: at least one worker (local:N, N >= 1)")
            cluster = LocalCluster(n_workers=int(local.group(1)), threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=":0")
            client = Client(cluster)
        elif re.fullmatch(r"(tcp|tls)://[^\s/]+:\d+", address):
            try:
                client = Client(address, timeout=CONNECT_TIMEOUT, security=security)
            except (OSError, TimeoutError, ValueError) as error:
                raise ClusterError(f"cannot reach the dask scheduler at {address} "
                                   f"({str(error).splitlines()[0] if str(error) else type(error).__name__})") from None
        else:
            raise ClusterError(f"--cluster {address!r}: expected tcp://HOST:PORT, tls://HOST:PORT or local:N")
        executor = cls(client, cluster)
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
        import time

        deadline = time.monotonic() + WORKER_TIMEOUT
        while True:
            try:
                self.client.wait_for_workers(1, timeout=max(0.1, deadline - time.monotonic()))
            except TimeoutError:
                raise ClusterError(f"the dask scheduler at {address} has no workers "
                                   f"(none joined within {WORKER_TIMEOUT:g} s)") from None
            try:
                theirs = self.client.run(kit_versions, on_error="return")
            except OSError:  # the scheduler lost the worker it was asking: ask those left
                theirs = {}
            answered = {worker: versions for worker, versions in theirs.items() if isinstance(versions, dict)}
            for worker, versions in sorted(answered.items()):
                if versions != self.versions:
                    raise ClusterError(f"the worker {worker} has {describe(versions)}, this machine has "
                                       f"{describe(self.versions)}: install the same on both")
            if answered:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"the dask scheduler at {address} has no workers that answer (each one "
                                   f"died or did not answer within {WORKER_TIMEOUT:g} s)")
            time.sleep(0.2)

    def status(self) -> str:
        processing = self.client.processing()
        busy = sum(1 for keys in processing.values() if keys)
        return f"{busy}/{len(processing)} workers busy"

    def run_tasks(self, tasks: list[dict], config, preload: list[str]):
        """Prepare each task here, grade it on a worker; yield ``(task, outcome)`` as results arrive."""
        from distributed import KilledWorker, as_completed

        from .autograde import prepare_task
        from .faults import describe

        futures = {}
        try:
            for task in tasks:
                try:
                    prepared = prepare_task({**task, "config": config})
                except Exception as error:  # the machine's fault (the gradebook's copy unreadable): not graded
                    if describe(error) is None:
                        raise
                    yield task, describe(error)
                    continue
                if prepared.get("not_gradable"):
                    yield task, prepared
                    continue
                prepared["scratch_parent"] = None  # the worker's own temporary folder
                key = f"kitgrade-{task['student']}-{task['notebook']}-{uuid.uuid4().hex[:8]}"
                future = self.client.submit(run_on_worker, prepared, preload, self.versions, key=key, pure=False)
                futures[future] = task
            for future in as_completed(list(futures)):
                task = futures.pop(future)
                try:
                    outcome = future.result()
                except KilledWorker:  # died on every worker it was sent to: the notebook's fault
                    outcome = {"student": task["student"], "notebook": task["notebook"], "landlock": True, "tests": {},
                               "findings": ["not gradable: its grading process died each time it ran, on "
                                            "every worker it was sent to; scored 0"]}
                except VersionMismatch as error:
                    outcome = str(error)
                except Exception as error:  # a fault of the grader: reported, the class goes on
                    outcome = describe(error) or repr(error)
                yield task, outcome
        finally:
            if futures:  # stopped: nothing of this run keeps the workers busy
                self.client.cancel(list(futures))

    def close(self) -> None:
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()
