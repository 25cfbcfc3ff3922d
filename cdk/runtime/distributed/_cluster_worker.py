"""A worker of a distributed cluster: runs the connector tasks the leader assigns it.

It is Kafka Connect's worker without the herder: a :class:`~cdk.runtime.Worker` running many
tasks as threads, with the offsets in the offset topic and the statuses in the status topic. It
follows two topics:

- the assignments topic, for what it is to run: each task with the task-config generation and
  restart count to run it at. It starts what it gets, stops what it loses (gracefully: the task
  commits its offsets) and restarts a task whose restart count changed;
- the config topic, for the task configs of each generation and the connectors' target states:
  ``PAUSED``/``STARTED`` pause and resume its tasks in place.

It heartbeats into the assignments topic every ``heartbeat.interval.ms`` and right after it
applied an assignment, listing what it runs, so the leader knows it is alive and when a revoked
task has stopped (the leader hands a task to another worker only then). A task that fails stays
``FAILED`` with its trace, here, while the others go on; a restart brings it back. The worker
ends when its driver writes that it stopped, or when :meth:`ClusterWorker.stop` is called.

The tasks of one sink leave their consumer group in order across workers where the broker needs
it (``sink.tasks.leave.mode``): when a sink's generation ends, task ``k`` leaves only after the
tasks before it reported leaving in the status topic, and after its own consumer saw the
rebalances they caused.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from cdk.runtime._config_secrets import resolve_variables
from cdk.runtime._loggers import Loggers
from cdk.runtime._sink_runner import WorkerSinkTask
from cdk.runtime._status import ConnectorTaskId, State, Status, TargetState
from cdk.runtime._worker import REJOIN_TIMEOUT_S, Worker
from cdk.runtime.distributed._assignments import AssignmentLog, Heartbeat, HeartbeatSender
from cdk.runtime.distributed._assignor import AssignedTask
from cdk.runtime.distributed._config import DistributedConfig
from cdk.runtime.distributed._placement import WorkerSpec
from cdk.runtime.isolation._plugins import Plugins
from cdk.runtime.storage._config_store import ClusterConfigState, KafkaConfigBackingStore
from cdk.runtime.storage._kafka_offset_store import KafkaOffsetBackingStore
from cdk.runtime.storage._status_store import KafkaStatusBackingStore, StatusStoreView

__all__ = ["ClusterWorker"]

log = logging.getLogger("cdk.runtime.distributed.worker")

#: How long one wait for the topics lasts before the worker looks at its tasks again.
_POLL_S = 0.1
#: How often a sink task checks whether its turn to leave its consumer group came.
_TURN_POLL_S = 0.05


class ClusterWorker:
    """Runs the tasks the leader assigns to ``worker_id`` until its driver stops.

    Args:
        spec: the driver's workers' settings.
        worker_id: this worker's id in assignments and statuses (unique in the cluster).
        plugins: the plugin registry (default: the installed ones plus ``spec.extra_plugins``).
    """

    def __init__(self, spec: WorkerSpec, worker_id: str, *, plugins: Plugins | None = None) -> None:
        self.spec = spec
        self.worker_id = worker_id
        if plugins is None:
            plugins = Plugins([Plugins().load(path) for path in spec.extra_plugins])
        self.plugins = plugins
        self.config = DistributedConfig(dict(spec.worker_props), plugins=plugins)
        self._stop = threading.Event()
        self._running: dict[ConnectorTaskId, AssignedTask] = {}
        self._targets: dict[str, TargetState] = {}
        self._version = -1
        self._beat_due = 0.0
        self._reported: tuple[int, frozenset[AssignedTask]] | None = None
        #: tests freeze a worker's heartbeats (as a machine that hangs) with this
        self.heartbeats_paused = threading.Event()
        self.worker: Worker | None = None
        self._view: _WorkerStatusView
        self.started = threading.Event()

    def stop(self) -> None:
        """Ask the worker to stop its tasks and end (from any thread)."""
        self._stop.set()

    @property
    def task_ids(self) -> set[ConnectorTaskId]:
        """The tasks this worker holds now."""
        return set(self._running)

    def _apply_cluster_logger_level(self, namespace: str, level: str) -> None:
        log.info(
            "Worker %s: setting the level of logger %s to %s (scope=cluster)",
            self.worker_id,
            namespace,
            level,
        )
        Loggers().set_level(namespace, level)

    # ------------------------------------------------------------------ the loop
    def run(self) -> str:
        """Run until the driver stops or :meth:`stop` is called; why it ended."""
        config = self.config
        overrides = config.storage_client_overrides()
        bootstrap = config.bootstrap_servers
        config_store = KafkaConfigBackingStore(
            config.config_topic, bootstrap, overrides, create=False
        )
        # cluster-wide log levels written after this worker started apply in its process
        config_store.on_logger_level = self._apply_cluster_logger_level
        assignments = AssignmentLog(config.assignment_topic, bootstrap, overrides, create=False)
        partitions, rf = config.storage_settings("offset")
        offsets = KafkaOffsetBackingStore(
            config.offset_topic,
            bootstrap,
            overrides,
            partitions=partitions,
            replication_factor=rf,
            transactional=config.exactly_once_source_enabled,
        )
        partitions, rf = config.storage_settings("status")
        status = KafkaStatusBackingStore(
            config.status_topic, bootstrap, overrides, partitions=partitions, replication_factor=rf
        )
        heartbeats = HeartbeatSender(config.assignment_topic, config.admin_props())
        started: list[Any] = []
        reason = "stopped"
        try:
            for store in (config_store, assignments, status):
                store.start()
                started.append(store)
            view = self._view = _WorkerStatusView(status, self.worker_id, config_store)
            worker = self.worker = Worker(
                config, self.plugins, offsets, view, worker_id=self.worker_id
            )
            worker.start()
            log.info("Worker %s of driver %s started", self.worker_id, self.spec.driver)
            self.started.set()
            while True:
                if self._stop.is_set():
                    break
                if assignments.driver_stopped(self.spec.driver):
                    reason = f"its driver {self.spec.driver} stopped"
                    break
                assignments.poll(_POLL_S)
                config_store.poll(0)
                self._apply(assignments, config_store, status)
                self._follow_targets(config_store.snapshot())
                self._heartbeat(heartbeats, alive=True)
            log.info("Worker %s stopping: %s", self.worker_id, reason)
            self._stop_tasks(list(self._running), config_store.snapshot(), status, ending=True)
            worker.stop()
            self._running.clear()
            self._heartbeat(heartbeats, alive=False, force=True)
            return reason
        finally:
            heartbeats.close()
            for store in reversed(started):
                try:
                    store.stop()
                except Exception:
                    log.exception("Worker %s: failed to stop %r", self.worker_id, store)
            self.started.clear()

    # ------------------------------------------------------------------ assignments
    def _apply(
        self,
        assignments: AssignmentLog,
        config_store: KafkaConfigBackingStore,
        status: KafkaStatusBackingStore,
    ) -> None:
        record = assignments.assignment
        if record is None:
            return
        wanted = record.tasks_of(self.worker_id)
        snapshot = config_store.snapshot()
        lost = [tid for tid, t in self._running.items() if t not in wanted]
        if lost:
            self._stop_tasks(lost, snapshot, status, ending=False)
        pending = [t for t in sorted(wanted) if self._running.get(t.id) != t]
        if any(snapshot.generations.get(t.connector, -1) < t.generation for t in pending):
            snapshot = config_store.refresh()  # the leader committed them before assigning
        complete = True
        for task in pending:
            if not self._start(task, snapshot, status):
                complete = False
        if complete and record.version != self._version:
            self._version = record.version

    def _start(
        self, task: AssignedTask, snapshot: ClusterConfigState, status: KafkaStatusBackingStore
    ) -> bool:
        """Start ``task`` at its generation; False when its task configs are not read yet."""
        assert self.worker is not None
        if snapshot.generations.get(task.connector) != task.generation:
            log.debug(
                "Task %s: waiting for the task configs of generation %d", task.id, task.generation
            )
            return False
        configs = snapshot.task_configs.get(task.connector, ())
        connector_config = snapshot.connector_configs.get(task.connector)
        if connector_config is None or task.task >= len(configs):
            return False
        target = snapshot.target_state(task.connector) or TargetState.STARTED
        if target is TargetState.STOPPED:
            return False
        status.set_generation(task.connector, task.generation)
        props = self.spec.worker_props
        self.worker.start_task(
            task.id,
            resolve_variables(props, connector_config),
            resolve_variables(props, configs[task.task]),
            target,
        )
        self._running[task.id] = task
        self._targets[task.connector] = target
        self._beat_due = 0.0
        log.info("Worker %s runs task %s", self.worker_id, task)
        return True

    def _follow_targets(self, snapshot: ClusterConfigState) -> None:
        assert self.worker is not None
        for connector in {t.connector for t in self._running.values()}:
            target = snapshot.target_state(connector)
            if target in (
                TargetState.STARTED,
                TargetState.PAUSED,
            ) and target is not self._targets.get(connector):
                log.info(
                    "Worker %s: connector %s target state %s",
                    self.worker_id,
                    connector,
                    target.value,
                )
                self.worker.set_tasks_target_state(connector, target)
                self._targets[connector] = target

    def _stop_tasks(
        self,
        ids: Iterable[ConnectorTaskId],
        snapshot: ClusterConfigState,
        status: KafkaStatusBackingStore,
        *,
        ending: bool,
    ) -> None:
        """Stop tasks gracefully; a sink whose generation ended leaves its group in order."""
        assert self.worker is not None
        ids = sorted(ids, key=lambda t: (t.connector, t.task))
        ordered: list[ConnectorTaskId] = []
        together: list[ConnectorTaskId] = []
        for tid in ids:
            runner = self.worker.task_runner(tid)
            whole = ending or _generation_ended(snapshot, self._running[tid])
            if not whole:
                # it moves to another worker, which reports it: this one says nothing more
                self._view.moving.add(tid)
            if isinstance(runner, WorkerSinkTask) and whole:
                ordered.append(tid)
            else:
                together.append(tid)
        if together:
            self.worker.stop_tasks(together)
        if ordered and self.worker.sink_tasks_leave_sequentially():
            for tid in ordered:
                self._await_turn_to_leave(self._running[tid], status)
                self.worker.stop_tasks([tid])
        elif ordered:
            self.worker.stop_tasks(ordered)
        for tid in ids:
            self._view.moving.discard(tid)
            task = self._running.pop(tid, None)
            if task is not None:
                log.info("Worker %s stopped task %s", self.worker_id, task)
        self._beat_due = 0.0

    def _await_turn_to_leave(self, task: AssignedTask, status: KafkaStatusBackingStore) -> None:
        """Task ``k`` of a sink leaves after tasks ``0..k-1`` of its generation left elsewhere.

        Then it waits for one finished rebalance of its own consumer per task before it (at
        most :data:`~cdk.runtime._worker.REJOIN_TIMEOUT_S` each): a group whose members all
        leave during one rebalance can be left with a departed leader on brokers that keep it
        (the embedded Tansu), and the next generation's tasks would never get partitions.
        """
        assert self.worker is not None
        runner = self.worker.task_runner(task.id)
        if not isinstance(runner, WorkerSinkTask) or task.task == 0:
            return
        mark = runner.assignments
        earlier = [ConnectorTaskId(task.connector, n) for n in range(task.task)]
        deadline = time.monotonic() + REJOIN_TIMEOUT_S * (len(earlier) + 1)

        def left(tid: ConnectorTaskId) -> bool:
            if tid in self._running and self.worker is not None and self.worker.task_runner(tid):
                return False  # on this worker: stopped just before, in order
            current = status.task(tid)
            return current is None or current.state in (State.UNASSIGNED, State.FAILED)

        while time.monotonic() < deadline and not all(left(t) for t in earlier):
            time.sleep(_TURN_POLL_S)
        while time.monotonic() < deadline and not runner.rejoined_since(mark + len(earlier) - 1):
            time.sleep(_TURN_POLL_S)
        if time.monotonic() >= deadline:
            log.warning(
                "Task %s leaves its consumer group without seeing tasks %s leave and the group "
                "rebalance first",
                task.id,
                [t.task for t in earlier],
            )

    # ------------------------------------------------------------------ heartbeats
    def _heartbeat(self, sender: HeartbeatSender, *, alive: bool, force: bool = False) -> None:
        if self.heartbeats_paused.is_set() and not force:
            return
        now = time.monotonic()
        state = (self._version, frozenset(self._running.values()))
        if not force and now < self._beat_due and state == self._reported:
            return
        try:
            sender.send(
                Heartbeat(
                    worker=self.worker_id,
                    driver=self.spec.driver,
                    alive=alive,
                    version=self._version,
                    tasks=state[1] if alive else frozenset(),
                )
            )
        except Exception:
            log.warning("Worker %s could not write its heartbeat", self.worker_id, exc_info=True)
            return
        self._reported = state
        self._beat_due = now + self.config.heartbeat_interval_ms / 1000.0


def _generation_ended(snapshot: ClusterConfigState, task: AssignedTask) -> bool:
    """Whether the connector's generation of ``task`` is over (new configs, stopped, deleted)."""
    if task.connector not in snapshot.connector_configs:
        return True
    if snapshot.target_state(task.connector) is TargetState.STOPPED:
        return True
    return snapshot.generations.get(task.connector, task.generation) != task.generation


class _WorkerStatusView(StatusStoreView):
    """The status store a cluster worker's tasks report through.

    An ``UNASSIGNED`` task status (a task that stops, or is about to start) is written only over
    a status of this worker's, and not at all for a task that moves to another worker (that one
    reports it): the new owner's ``RUNNING`` may land between the check and the write. A task
    the leader removed (fewer tasks, a stopped or deleted connector) must not come back either.
    """

    def __init__(
        self, store: KafkaStatusBackingStore, worker_id: str, configs: KafkaConfigBackingStore
    ) -> None:
        super().__init__(store)
        self._worker_id = worker_id
        self._configs = configs
        #: tasks being stopped because they move to another worker
        self.moving: set[ConnectorTaskId] = set()

    def put_task(self, task_id: ConnectorTaskId, status: Status) -> None:
        """Write a task status (``UNASSIGNED`` only over this worker's own)."""
        if status.state is State.UNASSIGNED:
            if task_id in self.moving:
                return
            if task_id.connector not in self._configs.snapshot().connector_configs:
                return
            current = self.store.task(task_id)
            if current is None or current.worker_id != self._worker_id:
                return
        self.store.put_task(task_id, status)
