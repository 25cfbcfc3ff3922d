"""The Spark placement: a driver's workers as long-lived Spark tasks on the executors.

:class:`SparkPlacement` implements :class:`~cdk.runtime.TaskPlacement`. It keeps ``W`` worker
jobs running, each a one-partition Spark job whose task runs a
:class:`~cdk.runtime.distributed.ClusterWorker` on an executor until the driver stops
(:func:`cdk.spark._executor.host_worker`). A worker runs as many connector tasks as the leader
assigns it, as threads: the number of connector tasks never depends on the executors' cores.

``spark.cdk.workers`` sets ``W``: ``cores`` (the default) keeps one worker per executor core,
counted again every few seconds so that executors that register late, or come back after a
loss, get workers too; a number keeps that many. A worker job that ends while the driver runs
(Spark's retries exhausted, an executor lost for good) is submitted again after a backoff; while
no executor core is free it waits in Spark's queue, and it runs when capacity returns. Meanwhile
the leader has moved its connector tasks to the workers that are alive, once its heartbeats
stopped (``session.timeout.ms``).

When the driver stops, its workers read its stop in the assignments topic, stop their tasks
gracefully and return, which ends their jobs; :meth:`SparkPlacement.close` waits for that, then
cancels what is left.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from cdk.errors import ConfigException
from cdk.runtime import WorkerSpec
from cdk.spark._session import build_session, total_cores

__all__ = ["SparkPlacement", "WORKERS_CONFIG"]

log = logging.getLogger("cdk.spark.placement")

#: How many workers a driver keeps on Spark: ``cores`` (one per executor core) or a number.
WORKERS_CONFIG = "spark.cdk.workers"
#: How often the executors' cores are counted again (``cores``) and ended jobs resubmitted.
SUPERVISE_S = 2.0
#: The longest wait before a worker job that ended is submitted again.
MAX_BACKOFF_S = 30.0
#: How long a cancelled job may take to end (Spark kills its Python workers).
CANCEL_WAIT_S = 30.0


class SparkPlacement:
    """Hosts a driver's workers as Spark tasks on the session of the worker's ``spark.*`` keys.

    Args:
        worker_props: the distributed worker's properties (Kafka's plus ``spark.*``), or its
            parsed configuration (its originals are used).
        plugins: unused (the :class:`~cdk.runtime.WorkerSpec` names the extra plugins);
            accepted for the placement factory's signature.
        session: an existing SparkSession to use (it is then not stopped by :meth:`close`).

    Raises:
        ConfigException: ``spark.cdk.workers`` is neither ``cores`` nor a positive number.
    """

    def __init__(
        self,
        worker_props: Mapping[str, Any] | Any,
        *,
        plugins: Any = None,
        session: Any = None,
    ) -> None:
        if not isinstance(worker_props, Mapping):
            worker_props = worker_props.originals()
        self._props = dict(worker_props)
        self._fixed = _worker_count(self._props.get(WORKERS_CONFIG, "cores"))
        self._session = session
        self._own_session = session is None
        self._spec: WorkerSpec | None = None
        self._lock = threading.Lock()
        self._jobs: dict[int, threading.Thread] = {}
        self._failures: dict[int, int] = {}
        self._retry_at: dict[int, float] = {}
        self._closing = threading.Event()
        self._supervisor: threading.Thread | None = None
        self._app_id = ""

    @property
    def session(self) -> Any:
        """The SparkSession (``None`` before :meth:`start`)."""
        return self._session

    # -- TaskPlacement ---------------------------------------------------------------------------
    def start(self, spec: WorkerSpec) -> None:
        """Start the SparkSession (or take the one given) and the worker jobs.

        Raises:
            ConnectException: PySpark is missing or Spark cannot start.
        """
        self._spec = spec
        if self._session is None:
            self._session = build_session(self._props)
        sc = self._session.sparkContext
        self._app_id = str(sc.applicationId)
        self._closing.clear()
        self._supervise()
        self._supervisor = threading.Thread(
            target=self._supervise_loop, name="cdk-spark-workers", daemon=True
        )
        self._supervisor.start()
        log.info(
            "Spark placement on %s (application %s): %s worker(s)",
            sc.master,
            self._app_id,
            self.workers(),
        )

    def workers(self) -> int | None:
        """How many workers it keeps now."""
        with self._lock:
            return len(self._jobs) if self._jobs else self._fixed

    def close(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for the workers to end, cancel the rest, stop the session."""
        self._closing.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=30)
            self._supervisor = None
        deadline = time.monotonic() + timeout_s
        with self._lock:
            jobs = dict(self._jobs)
        for thread in jobs.values():
            thread.join(max(deadline - time.monotonic(), 0.0))
        late = [slot for slot, thread in jobs.items() if thread.is_alive()]
        sc = self._session.sparkContext if self._session is not None else None
        if late and sc is not None:
            log.error(
                "Workers %s did not end within %.0f s of their driver's stop; cancelling them",
                late,
                timeout_s,
            )
            for slot in late:
                sc.cancelJobGroup(self._group(slot))
            for slot in late:
                jobs[slot].join(CANCEL_WAIT_S)
        with self._lock:
            self._jobs.clear()
        if self._session is not None and self._own_session:
            self._session.stop()
        self._session = None

    # -- internals -------------------------------------------------------------------------------
    def _group(self, slot: int) -> str:
        return f"cdk-worker-{self._app_id}-{slot}"

    def _wanted(self) -> int:
        if self._fixed is not None:
            return self._fixed
        assert self._session is not None
        return max(total_cores(self._session.sparkContext) or 1, 1)

    def _supervise_loop(self) -> None:
        while not self._closing.wait(SUPERVISE_S):
            try:
                self._supervise()
            except Exception:
                log.exception("Supervising the Spark workers failed")

    def _supervise(self) -> None:
        """Submit the worker jobs that should run and do not (new slots, ended jobs)."""
        wanted = self._wanted()
        now = time.monotonic()
        with self._lock:
            for slot in range(max(wanted, len(self._jobs))):
                if self._closing.is_set():
                    return
                thread = self._jobs.get(slot)
                if thread is not None and thread.is_alive():
                    continue
                if slot >= wanted and thread is None:
                    continue
                if now < self._retry_at.get(slot, 0.0):
                    continue
                self._jobs[slot] = thread = threading.Thread(
                    target=self._run_job, args=(slot,), name=f"cdk-spark-worker-{slot}", daemon=True
                )
                thread.start()

    def _run_job(self, slot: int) -> None:
        assert self._session is not None
        assert self._spec is not None
        sc = self._session.sparkContext
        group = self._group(slot)
        try:
            sc.setJobGroup(group, f"cdk worker {slot} of driver {self._spec.driver}", True)
            job = functools.partial(_host, self._spec, self._app_id)
            outcome = sc.parallelize([slot], 1).mapPartitions(job).collect()
            log.info("Worker %d ended: %s", slot, outcome[0][1] if outcome else "?")
            with self._lock:
                self._failures.pop(slot, None)
        except Exception as exc:  # noqa: BLE001 - Spark's retries are exhausted, or cancelled
            if self._closing.is_set():
                return
            with self._lock:
                failures = self._failures[slot] = self._failures.get(slot, 0) + 1
                backoff = min(2.0**failures, MAX_BACKOFF_S)
                self._retry_at[slot] = time.monotonic() + backoff
            log.error(
                "Worker %d's Spark job failed (%s); submitting it again in %.0f s",
                slot,
                _first_line(exc),
                backoff,
            )


def _host(spec: WorkerSpec, app_id: str, slots: Any) -> Any:
    """Run the partition's worker (on the executor)."""
    from cdk.spark._executor import host_worker

    return [host_worker(spec, app_id, slot) for slot in slots]


def _worker_count(value: Any) -> int | None:
    text = str(value).strip().lower()
    if text in ("", "cores"):
        return None
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise ConfigException(
            WORKERS_CONFIG, value, "Must be 'cores' (one worker per executor core) or a number >= 1"
        )
    return count


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
