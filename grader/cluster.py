"""Grading on a dask cluster: now ``grader.autograde.dask_executor`` (this name is kept for old imports)."""

from .autograde.dask_executor import (CONNECT_TIMEOUT, WORKER_TIMEOUT, ClusterError, DaskExecutor, VersionMismatch,
                                      run_on_worker, tls_security)
from .versions import describe_versions as describe
from .versions import kit_versions

__all__ = ["CONNECT_TIMEOUT", "WORKER_TIMEOUT", "ClusterError", "DaskExecutor", "VersionMismatch", "describe",
           "kit_versions", "run_on_worker", "tls_security"]
