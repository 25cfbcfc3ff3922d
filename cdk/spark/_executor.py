"""On an executor: one long-lived Spark task hosts one worker of the cluster.

:func:`host_worker` is what each worker job's task runs: a
:class:`~cdk.runtime.distributed.ClusterWorker` (the runtime's, Spark-free) that runs the
connector tasks the leader assigns it, many at a time as threads, until its driver writes its
stop; then the Spark task returns. Its id names the slot, the Spark application and the executor
(``w<slot>.<app id>@<host>:<executor id>``), so a task's status tells which executor runs it.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Iterable

from cdk.runtime import WorkerSpec
from cdk.runtime._log_context import configure_logging
from cdk.runtime.distributed import ClusterWorker

__all__ = ["executor_worker_id", "host_worker", "worker_id"]

log = logging.getLogger("cdk.spark.executor")

#: The executor's log lines (as the CLI's, with the process id: several Python workers share
#: one executor log).
_LOG_FORMAT = "[%(asctime)s] %(levelname)s [pid %(process)d] %(name)s: %(message)s"


def executor_worker_id() -> str:
    """``<host>:<executor id>`` of the executor this runs on.

    A standalone cluster's executor runs in ``<work dir>/<app id>/<executor id>``; in local mode
    the tasks run in the driver (``<host>:driver``).
    """
    host = socket.gethostname()
    cwd = os.getcwd()
    parent = os.path.basename(os.path.dirname(cwd))
    if parent.startswith("app-"):
        return f"{host}:{os.path.basename(cwd)}"
    return f"{host}:driver"


def worker_id(app_id: str, slot: int) -> str:
    """The id of the worker of ``slot`` of application ``app_id`` on this executor."""
    return f"w{slot}.{app_id}@{executor_worker_id()}"


def _extend_path(paths: Iterable[str]) -> None:
    for path in paths:
        if path and path not in sys.path and os.path.isdir(path):
            sys.path.append(path)


def _configure_logging() -> None:
    """Send every log record to the Python worker's stderr (the executor's log) once.

    In the driver's format (``$CDK_LOG_FORMAT``: ``text`` or ``json``) with the connector
    context (``[name|task-N]``), the connectors' own loggers included.
    """
    configure_logging("INFO", only_if_unset=True)


def host_worker(spec: WorkerSpec, app_id: str, slot: int) -> tuple[int, str]:
    """Run the worker of ``slot`` until its driver stops; ``(slot, why it ended)``."""
    _configure_logging()
    _extend_path(spec.python_path)
    worker = ClusterWorker(spec, worker_id(app_id, slot))
    log.info("Worker %s of driver %s starting (slot %d)", worker.worker_id, spec.driver, slot)
    return slot, worker.run()
