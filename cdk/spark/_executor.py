"""On an executor: one Spark task runs one connector task until its generation ends.

:func:`run_partition` is the function of each generation's ``mapPartitions`` job. Each partition
holds one task number; for it, :func:`run_task` builds the same runner standalone mode runs (the
:class:`~cdk.runtime.Worker`'s task building: converters, SMTs, error handling, Kafka clients)
with the offsets in the offset topic and the statuses written to the status topic, starts it,
and follows the state topics (:class:`~cdk.spark._signals.GenerationWatcher`):

- a newer ``commit-<name>``, a ``STOPPED`` target state, a connector tombstone or an
  ``UNASSIGNED`` connector status ends the generation: the task is stopped gracefully (it
  commits its offsets and reports ``UNASSIGNED``) and the Spark task returns;
- ``PAUSED``/``STARTED`` target states pause and resume the task in place;
- a task that fails (the connector raised) stays ``FAILED`` in the status topic with its trace
  and its Spark task returns without an error, so the job's other tasks keep running.

A retried Spark task (lost executor) reads what it missed first, so it does not restart a
generation that ended meanwhile, and resumes from the committed offsets.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

from cdk.runtime._config_secrets import resolve_variables
from cdk.runtime._sink_runner import WorkerSinkTask
from cdk.runtime._status import ConnectorTaskId, State
from cdk.runtime._worker import REJOIN_TIMEOUT_S, Worker
from cdk.runtime._worker_config import WorkerConfig
from cdk.runtime.isolation._plugins import Plugins
from cdk.runtime.storage._kafka_offset_store import KafkaOffsetBackingStore
from cdk.runtime.storage._status_store import KafkaStatusBackingStore
from cdk.spark._signals import GenerationWatcher
from cdk.spark._spec import TaskSpec

__all__ = ["TaskOutcome", "executor_worker_id", "run_partition", "run_task"]

log = logging.getLogger("cdk.spark.executor")

#: (task number, outcome, detail): outcome ``ended`` (stopped at the generation's end),
#: ``failed`` (the task is FAILED in the status topic; detail is its trace) or ``not-started``
#: (the generation had ended before the task could start).
TaskOutcome = tuple[int, str, str | None]

#: The executor's log lines (as the CLI's, with the process id: several Python workers share
#: one executor log).
_LOG_FORMAT = "[%(asctime)s] %(levelname)s [pid %(process)d] %(name)s: %(message)s"

#: How often the task's thread is checked while no record arrives.
_POLL_S = 0.2
#: How often a sink task checks whether its turn to leave its consumer group came.
_TURN_POLL_S = 0.05


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


def _extend_path(paths: Iterable[str]) -> None:
    for path in paths:
        if path and path not in sys.path and os.path.isdir(path):
            sys.path.append(path)


def _client_config(config: WorkerConfig) -> dict[str, Any]:
    # the worker's admin settings carry bootstrap.servers and the cluster's security settings
    return dict(config.admin_props())


def _configure_logging() -> None:
    """Send the kit's log records to the Python worker's stderr (the executor's log) once."""
    logger = logging.getLogger("cdk")
    if logger.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def run_partition(spec: TaskSpec, numbers: Iterator[int]) -> Iterator[TaskOutcome]:
    """The ``mapPartitions`` function of a generation's job: run each task number given."""
    _configure_logging()
    _extend_path(spec.python_path)
    for number in numbers:
        yield run_task(spec, number)


def run_task(spec: TaskSpec, number: int) -> TaskOutcome:
    """Run task ``number`` of the generation until the generation ends or the task fails."""
    task_id = ConnectorTaskId(spec.connector, number)
    worker_id = executor_worker_id()
    plugins = Plugins([Plugins().load(path) for path in spec.extra_plugins])
    config = WorkerConfig(spec.worker_props, plugins=plugins)
    client = _client_config(config)
    attempt = _attempt()
    log.info(
        "Task %s of generation %d on executor %s (attempt %d)",
        task_id,
        spec.generation,
        worker_id,
        attempt,
    )
    watcher = GenerationWatcher(spec, client)
    try:
        watcher.catch_up()
        if watcher.ended is not None:
            log.info("Task %s not started: %s", task_id, watcher.ended)
            return number, "not-started", watcher.ended
        return _run(spec, task_id, config, plugins, client, worker_id, watcher)
    finally:
        watcher.close()


def _attempt() -> int:
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
        return context.attemptNumber() if context is not None else 0
    except ImportError:  # pragma: no cover - run_task is only called on Spark
        return 0


def _run(
    spec: TaskSpec,
    task_id: ConnectorTaskId,
    config: WorkerConfig,
    plugins: Plugins,
    client: dict[str, Any],
    worker_id: str,
    watcher: GenerationWatcher,
) -> TaskOutcome:
    overrides = {k: v for k, v in client.items() if k != "bootstrap.servers"}
    status = KafkaStatusBackingStore(
        spec.status_topic,
        config.bootstrap_servers,
        overrides,
        partitions=spec.int_prop("status.storage.partitions", 5),
        replication_factor=spec.int_prop("status.storage.replication.factor", 3),
    )
    offsets = KafkaOffsetBackingStore(
        spec.offset_topic,
        config.bootstrap_servers,
        overrides,
        partitions=spec.int_prop("offset.storage.partitions", 25),
        replication_factor=spec.int_prop("offset.storage.replication.factor", 3),
    )
    status.start()
    status.set_generation(spec.connector, spec.generation)
    worker = Worker(config, plugins, offsets, status, worker_id=worker_id)
    try:
        worker.start()
    except BaseException:
        status.stop()
        raise
    try:
        connector_props = resolve_variables(spec.worker_props, spec.connector_config)
        task_props = resolve_variables(spec.worker_props, spec.task_configs[task_id.task])
        worker.start_task(task_id, connector_props, task_props, watcher.target)
        outcome = _follow(spec, task_id, worker, watcher)
    finally:
        worker.stop()  # stops the task if still running (graceful), then the offset store
        status.stop()
    return outcome


def _follow(
    spec: TaskSpec, task_id: ConnectorTaskId, worker: Worker, watcher: GenerationWatcher
) -> TaskOutcome:
    """Follow the state topics until the generation ends or the task's thread does."""
    target = watcher.target
    while True:
        thread = worker.task_thread(task_id)
        if thread is None or not thread.is_alive():
            return _ended_by_itself(task_id, worker)
        if watcher.ended is not None:
            break
        watcher.poll(_POLL_S)
        if watcher.target is not target and watcher.ended is None:
            target = watcher.target
            log.info("Task %s: target state %s", task_id, target.value)
            worker.set_tasks_target_state(spec.connector, target)
    log.info("Stopping task %s: %s", task_id, watcher.ended)
    _await_turn_to_leave(spec, task_id, worker)
    # The driver cancels the job group when the task overruns the graceful timeout; this
    # bound only keeps an orphaned Spark task (driver gone) from waiting forever.
    worker.stop_tasks([task_id], timeout_s=2 * spec.graceful_timeout_ms / 1000.0 + 10.0)
    return task_id.task, "ended", watcher.ended


def _await_turn_to_leave(spec: TaskSpec, task_id: ConnectorTaskId, worker: Worker) -> None:
    """Let a sink task leave its consumer group only after the lower-numbered tasks left.

    On brokers that need it (``sink.tasks.leave.mode``, see
    :meth:`~cdk.runtime.Worker.sink_tasks_leave_sequentially`), the tasks of one sink leave
    their group one at a time, each after the rebalance the previous one caused: a group whose
    members all leave during one rebalance can be left with a leader that is gone (the embedded
    broker keeps it), and the next generation's tasks would never get partitions. Across
    executors the order comes from the status topic: task ``k`` waits until tasks ``0..k-1`` of
    its generation reported their end, then for one finished rebalance of its own consumer per
    task before it, counted from when it read the end of the generation (at most
    :data:`~cdk.runtime._worker.REJOIN_TIMEOUT_S` per task: a rebalance that finished before
    that costs the wait).
    """
    runner = worker.task_runner(task_id)
    if not isinstance(runner, WorkerSinkTask):
        return
    mark = runner.assignments  # before anything else: the tasks before it leave right now
    earlier = [n for n in spec.task_configs if n < task_id.task]
    if not earlier or not worker.sink_tasks_leave_sequentially():
        return
    deadline = time.monotonic() + REJOIN_TIMEOUT_S * (len(earlier) + 1)
    while time.monotonic() < deadline and not all(
        _left(worker, ConnectorTaskId(task_id.connector, n)) for n in earlier
    ):
        time.sleep(_TURN_POLL_S)
    # one rebalance per task that left before it (all were members of the formed group)
    while time.monotonic() < deadline and not runner.rejoined_since(mark + len(earlier) - 1):
        time.sleep(_TURN_POLL_S)
    if time.monotonic() >= deadline:
        log.warning(
            "Task %s leaves its consumer group without seeing tasks %s leave and the group "
            "rebalance first (waited %.0f s)",
            task_id,
            earlier,
            REJOIN_TIMEOUT_S * (len(earlier) + 1),
        )


def _left(worker: Worker, task_id: ConnectorTaskId) -> bool:
    status = worker.status.task(task_id)
    return status is None or status.state in (State.UNASSIGNED, State.FAILED)


def _ended_by_itself(task_id: ConnectorTaskId, worker: Worker) -> TaskOutcome:
    current = worker.status.task(task_id)
    if current is not None and current.state is State.FAILED:
        log.info("Task %s failed; its Spark task ends (the status topic has the trace)", task_id)
        return task_id.task, "failed", current.trace
    return task_id.task, "ended", "the task's thread ended"
