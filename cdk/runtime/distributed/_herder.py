"""The distributed herder: connectors from the config topic, tasks on the cluster's workers.

Kafka's ``DistributedHerder`` for a cluster of drivers. Every driver follows the config topic (its
view of connectors, task configs and target states is what the topic says) and the status topic, and
answers the REST API's reads. One driver leads, holding a lease in the assignments topic
(:mod:`._leader`): it runs the connectors, writes every change to the config topic first (in fenced
transactions) and assigns the connectors' tasks to the live workers of every driver
(:mod:`._coordinator`). The others stand by: their write requests raise :class:`NotLeaderException`
with the leader's URL, and the REST API forwards them there, as Kafka's followers do.

Every operation that changes state runs on the herder's own thread, one after another, as
Kafka's herder thread does; REST requests wait for theirs (at most
:attr:`DistributedHerder.request_timeout_s`). A reconfiguration commits new task configs; the
workers stop the old generation's tasks (committing offsets) and the leader assigns the new ones
once they did. Restarting a task bumps its restart count in the assignment: the worker that runs
it restarts it from its committed offsets, and nothing else moves. A new leader takes over the
running assignment: the tasks keep running through a change of leader.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import logging
import random
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from cdk.errors import AlreadyExistsException, ConnectException, NotFoundException
from cdk.runtime._config_secrets import secret_keys
from cdk.runtime._herder_base import AbstractHerder
from cdk.runtime._loggers import to_python_level
from cdk.runtime._status import ConnectorTaskId, State, Status, TargetState
from cdk.runtime.distributed._coordinator import Coordinator
from cdk.runtime.distributed._fencing import fence_producers, producers_to_fence
from cdk.runtime.distributed._leader import FencedException, TransactionalWriter
from cdk.runtime.distributed._leadership import Leadership
from cdk.runtime.rest._requests import NotLeaderException

if TYPE_CHECKING:
    from cdk.runtime._worker import Worker
    from cdk.runtime.distributed._assignments import AssignmentLog
    from cdk.runtime.distributed._config import DistributedConfig
    from cdk.runtime.isolation._plugins import Plugins
    from cdk.runtime.storage._config_store import KafkaConfigBackingStore
    from cdk.runtime.storage._offset_store import OffsetBackingStore
    from cdk.runtime.storage._status_store import KafkaStatusBackingStore

__all__ = ["DistributedHerder"]

log = logging.getLogger("cdk.runtime.distributed")

_T = TypeVar("_T")
_Future = concurrent.futures.Future


class DistributedHerder(Leadership, AbstractHerder):
    """Manages the connectors of a distributed cluster from one of its drivers.

    Args:
        worker: runs the connectors in this driver while it leads.
        config: the distributed worker configuration.
        plugins: finds connector and other plugin classes.
        status: the status topic.
        offset_store: the offsets topic (for the offsets REST API).
        config_store: the config topic.
        assignments: the assignments topic.
        driver_id: this driver's id (in the leader record and the workers' heartbeats).
        url: this driver's REST URL (where the others forward writes), ``None`` without one.
        kafka_cluster_id: reported by ``GET /``.
    """

    def __init__(
        self,
        worker: Worker,
        config: DistributedConfig,
        plugins: Plugins,
        status: KafkaStatusBackingStore,
        offset_store: OffsetBackingStore,
        config_store: KafkaConfigBackingStore,
        assignments: AssignmentLog,
        *,
        driver_id: str,
        url: str | None = None,
        kafka_cluster_id: str | None = None,
    ) -> None:
        super().__init__(
            worker,
            config,
            plugins,
            status,
            offset_store,
            worker_id=driver_id,
            kafka_cluster_id=kafka_cluster_id,
        )
        self._dconfig = config
        self._kafka_status = status
        self._store = config_store
        # cluster-wide log levels (logger-cluster-<namespace> records) apply here when read
        config_store.on_logger_level = self._apply_cluster_logger_level
        self._assignments = assignments
        self.driver_id = driver_id
        self.url = url
        self._generations: dict[str, int] = {}
        self._leading = False
        self._writer: TransactionalWriter | None = None
        self._coordinator = Coordinator(
            config_store,
            assignments,
            status,
            driver_id=driver_id,
            session_timeout_s=config.session_timeout_ms / 1000.0,
            fence_zombies=self._fence_zombies if config.exactly_once_source_enabled else None,
        )
        self._herder_thread: threading.Thread | None = None
        self._follower: threading.Thread | None = None
        self._follow_stop = threading.Event()
        self._next_check = 0.0
        self._renewed = 0.0
        self._taking = False
        #: standbys wait a little more than the session timeout, not all the same
        self._jitter_s = random.uniform(0, config.heartbeat_interval_ms / 1000.0)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Read the config topic and start following it; leading starts once elected."""
        snapshot = self._store.refresh()
        self._assignments.read_to_end()
        with self._lock:
            self._stopping = False
            self._sync(snapshot)
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="cdk-dherder"
            )
        self._call(lambda: None)  # note the herder thread
        self._follow_stop.clear()
        self._follower = threading.Thread(
            target=self._follow, name="cdk-dherder-follower", daemon=True
        )
        self._follower.start()
        self._ready.set()
        log.info(
            "Distributed herder of driver %s started (%d connector(s) in the config topic)",
            self.driver_id,
            len(snapshot.connectors()),
        )

    def stop(self) -> None:
        """Stop: stand down (stopping the connectors) and stop following the topics."""
        self._follow_stop.set()
        if self._follower is not None:
            self._follower.join(timeout=30)
            self._follower = None
        if self._leading:
            try:
                self._call(self._resign)
            except ConnectException:
                self._stand_down()
        self._reloads.close()
        with self._lock:
            self._stopping = True
            self._ready.clear()
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        log.info("Distributed herder of driver %s stopped", self.driver_id)

    # ------------------------------------------------------------------ the herder thread
    def _call(self, fn: Callable[[], _T]) -> _T:
        """Run ``fn`` on the herder thread and return its result (or raise its error)."""
        if threading.current_thread() is self._herder_thread:
            return fn()
        executor = self._executor
        if executor is None or self._stopping:
            raise ConnectException("The herder is not running")

        def run() -> _T:
            self._herder_thread = threading.current_thread()
            return fn()

        try:
            future = executor.submit(run)
        except RuntimeError:
            raise ConnectException("The herder is not running") from None
        try:
            return future.result(self.request_timeout_s)
        except concurrent.futures.TimeoutError:
            raise ConnectException("Request timed out") from None

    # ------------------------------------------------------------------ log levels (KIP-976)
    def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """Set a level on every driver and worker: Kafka's record in the config topic.

        As Kafka's workers, the driver that is asked writes ``logger-cluster-<namespace>``
        itself (the leader on its herder thread, in its transactions; a standby plainly, as
        the record is no part of the leader's state): every driver and every worker on Spark
        applies it when it reads it, the writer too.

        Raises:
            ValueError: ``level`` is not a Kafka (log4j) level name.
            ConnectException: the record could not be written.
        """
        if to_python_level(level) is None:
            raise ValueError(f"invalid log level '{level}'.")
        if self._leading:
            with contextlib.suppress(NotLeaderException):  # deposed meanwhile: write plainly
                self._as_leader(lambda: self._store.put_logger_level(namespace, level))
                return
        self._store.put_logger_level(namespace, level)

    def _apply_cluster_logger_level(self, namespace: str, level: str) -> None:
        log.info("Setting the level of logger %s to %s (scope=cluster)", namespace, level)
        self._loggers.set_level(namespace, level)

    def _as_leader(self, fn: Callable[[], _T]) -> _T:
        """Run a write on the herder thread, if this driver leads.

        Raises:
            NotLeaderException: another driver leads (the REST API forwards the request).
        """

        def run() -> _T:
            if not self._leading:
                raise NotLeaderException(self.leader_url)
            try:
                return fn()
            except FencedException:
                self._stand_down()
                try:
                    self._assignments.read_to_end()  # the new leader's record
                except ConnectException:
                    log.debug("Could not read the new leader's record", exc_info=True)
                raise NotLeaderException(self.leader_url) from None

        return self._call(run)

    # ------------------------------------------------------------------ generations
    def generation(self, name: str) -> int | None:
        """The connector's current generation: the offset of its last ``commit-<name>`` record.

        ``None`` before its first task configs were committed.

        Raises:
            NotFoundException: no such connector.
        """
        with self._lock:
            self._require(name)
            return self._generations.get(name)

    def _write_tasks(self, name: str, configs: list[dict[str, str]]) -> None:
        """Commit new task configs (a new generation); the workers pick them up."""
        generation = self._store.put_task_configs(name, configs)
        with self._lock:
            previous = len(self._task_configs.get(name, []))
            self._task_configs[name] = configs
            self._generations[name] = generation
        self._kafka_status.set_generation(name, generation)
        log.info("Connector %s: generation %d with %d task(s)", name, generation, len(configs))
        for number in range(len(configs), previous):
            self._status.remove_task(ConnectorTaskId(name, number))
        # each task is UNASSIGNED until the worker it goes to reports it (as in a rebalance)
        for number in range(len(configs)):
            self._kafka_status.put_task(
                ConnectorTaskId(name, number), Status(State.UNASSIGNED, self.worker_id), generation
            )
        self._rebalance()

    def _fence_zombies(self, name: str) -> bool:
        """Fence the previous generation of a source connector's producers (leader).

        Called before the tasks of a generation committed since the connector's last
        task-count record are assigned; writes the new task-count record. Whether the tasks
        may be assigned now (False: fencing failed, it is tried again at the next rebalance).

        Raises:
            FencedException: another driver leads now.
        """
        snapshot = self._store.snapshot()
        if name not in snapshot.pending_fencing:
            return True
        config = snapshot.connector_configs.get(name)
        if config is None or self._connector_kind(config) != "source":
            return True  # only source tasks have transactional producers
        count = len(snapshot.task_configs.get(name, ()))
        previous = snapshot.task_count_records.get(name)
        ids = producers_to_fence(self._dconfig.group_id, name, previous, count)
        try:
            if ids:
                log.info("Fencing zombies of connector %s: %s", name, ", ".join(ids))
                fence_producers(ids, self._dconfig.admin_props())
            else:
                log.debug("No zombie of connector %s to fence; writing its task count", name)
            self._store.put_task_count_record(name, count)
        except FencedException:
            raise
        except ConnectException as e:
            log.error("Zombie fencing of connector %s failed; its tasks wait: %s", name, e)
            return False
        return True

    # ------------------------------------------------------------------ connectors
    def _start_connector(self, name: str, *, force_tasks: bool = False) -> _Future[None]:
        """Start the connector in this driver (herder thread, lock held).

        Returns:
            A future completed once it has started and its task configs were regenerated
            (and committed, when they changed or ``force_tasks``).
        """
        return self._start_connector_then(name, lambda: self._reconfigure(name, force=force_tasks))

    def _reconfigure(self, name: str, *, force: bool = False) -> None:
        """Regenerate the task configs; commit them when they changed (herder thread)."""
        if self._stopping or not self._leading:
            return
        with self._lock:
            configs = self._generate_task_configs(name)
            if configs is None:
                return
            unchanged = configs == self._task_configs.get(name) and name in self._generations
            if unchanged and not force:
                log.debug("Task configs of connector %s unchanged", name)
                return
        try:
            self._write_tasks(name, configs)
        except FencedException:
            self._stand_down()

    def _stop_connector(self, name: str) -> None:
        self._starts.pop(name, None)
        if name in self._worker.connector_names():
            self._worker.stop_connector(name)

    def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        allow_replace: bool = True,
        initial_state: TargetState | str | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        """Create or replace a connector's configuration (``PUT /connectors/{name}/config``).

        The configuration is written to the config topic; the connector (re)starts in the
        leader and its task configs are regenerated and committed (always after a change of
        configuration, so that the tasks run with it).

        Raises:
            AlreadyExistsException: it exists and ``allow_replace`` is false.
            BadRequestException: the configuration is invalid, or ``name`` in it differs.
            NotLeaderException: another driver leads.
        """
        config, target = self._validated_config(name, config, initial_state)

        def write() -> tuple[bool, _Future[None]]:
            with self._lock:
                exists = name in self._configs
                if exists and not allow_replace:
                    raise AlreadyExistsException(f"Connector {name} already exists")
            self._store.put_connector_config(name, config, None if exists else target)
            with self._lock:
                if exists:
                    self._stop_connector(name)
                else:
                    self._targets[name] = target or TargetState.STARTED
                    self._task_configs[name] = []
                self._configs[name] = config
                self._secret_keys[name] = secret_keys(self._plugins, config)
                log.info("%s connector %s", "Reconfiguring" if exists else "Creating", name)
                return exists, self._start_connector(name, force_tasks=exists)

        exists, done = self._as_leader(write)
        self._await(done)
        with self._lock:
            self._require(name)
            return not exists, self._info(name)

    def delete_connector(self, name: str) -> None:
        """Delete a connector: tombstones in the config topic; its tasks are revoked."""

        def delete() -> None:
            with self._lock:
                self._require(name)
            self._store.remove_connector_config(name)
            with self._lock:
                self._stop_connector(name)
                for table in (self._configs, self._targets, self._task_configs, self._secret_keys):
                    table.pop(name, None)
                self._generations.pop(name, None)
                self._coordinator.forget(name)
                self._reloads.cancel(name)
            self._status.remove_connector(name)
            log.info("Deleted connector %s", name)
            self._rebalance()

        self._as_leader(delete)

    # ------------------------------------------------------------------ restarts and states
    def restart_connector(self, name: str) -> None:
        """Restart the connector instance in the leader; its tasks keep running."""

        def restart() -> _Future[None] | None:
            with self._lock:
                self._require(name)
                if self._targets[name] is TargetState.STOPPED:
                    return None
                self._stop_connector(name)
                return self._start_connector(name)

        done = self._as_leader(restart)
        if done is not None:
            self._await(done)

    def restart_task(self, name: str, task: int) -> None:
        """Restart a task where it runs, from its committed offsets.

        Raises:
            NotFoundException: no such connector or task.
        """

        def restart() -> None:
            with self._lock:
                self._require(name)
                count = len(self._task_configs.get(name, []))
                if not 0 <= task < count:
                    raise NotFoundException(f"Task {ConnectorTaskId(name, task)} not found")
            self._coordinator.restart([ConnectorTaskId(name, task)])
            self._rebalance()

        self._as_leader(restart)

    def restart_connector_and_tasks(
        self, name: str, *, only_failed: bool = False, include_tasks: bool = False
    ) -> dict[str, Any]:
        """Restart as requested (the request is also written to the config topic, as Kafka).

        Raises:
            NotFoundException: ``Unknown connector: <name>``, or no status for it yet.
        """

        def restart() -> dict[str, Any]:
            with self._lock:
                plan = self._restart_plan(
                    name, only_failed=only_failed, include_tasks=include_tasks
                )
                stopped = self._targets[name] is TargetState.STOPPED
                count = len(self._task_configs.get(name, []))
            self._store.put_restart_request(name, include_tasks, only_failed)
            if plan.restart_connector and not stopped:
                self._status.put_connector(name, Status(State.RESTARTING, self.worker_id))
                with self._lock:
                    self._stop_connector(name)
                    self._start_connector(name)
            tasks = [ConnectorTaskId(name, t) for t in plan.tasks if t < count]
            if tasks and not stopped:
                for task_id in tasks:
                    self._kafka_status.put_task(task_id, Status(State.RESTARTING, self.worker_id))
                self._coordinator.restart(tasks)
                self._rebalance()
            return plan.response

        return self._as_leader(restart)

    def _set_target(self, name: str, target: TargetState) -> None:
        def change() -> None:
            with self._lock:
                self._require(name, f"Unknown connector {name}")
                previous = self._targets[name]
            if previous is target:
                return
            log.info("Connector %s: target state %s -> %s", name, previous, target)
            if target is TargetState.STOPPED:
                self._stop(name)
                return
            self._store.put_target_state(name, target)
            with self._lock:
                self._targets[name] = target
                if previous is TargetState.STOPPED or name not in self._worker.connector_names():
                    self._start_connector(name)  # its tasks are committed once it has started
                    return
                changed = self._worker.set_target_state(name, target, wait=False)
            if target is TargetState.STARTED:
                # as Kafka: once resumed, regenerate the task configs (commit if changed)
                changed.add_done_callback(lambda _: self._submit(lambda: self._reconfigure(name)))

        self._as_leader(change)

    def _stop(self, name: str) -> None:
        """Kafka's stop: an empty task-config commit, then the STOPPED target state."""
        generation = self._store.put_task_configs(name, [])
        self._store.put_target_state(name, TargetState.STOPPED)
        with self._lock:
            previous = len(self._task_configs.get(name, []))
            self._targets[name] = TargetState.STOPPED
            self._task_configs[name] = []
            self._generations[name] = generation
            self._stop_connector(name)
        self._kafka_status.set_generation(name, generation)
        self._rebalance()
        for number in range(previous):
            self._status.remove_task(ConnectorTaskId(name, number))
        self._status.put_connector(name, Status(State.STOPPED, self.worker_id))

    # ------------------------------------------------------------------ offsets (KIP-875)
    def alter_connector_offsets(self, name: str, offsets: Any) -> dict[str, str]:
        """Alter a stopped connector's offsets (in the leader; others forward)."""
        return self._as_leader(functools.partial(super().alter_connector_offsets, name, offsets))

    def reset_connector_offsets(self, name: str) -> dict[str, str]:
        """Reset a stopped connector's offsets (in the leader; others forward)."""
        return self._as_leader(functools.partial(super().reset_connector_offsets, name))

    # ------------------------------------------------------------------ ConnectorListener
    def request_task_reconfiguration(self, connector: str) -> None:
        """Called by a connector (any thread): regenerate its task configs soon."""
        self._submit(lambda: self._reconfigure(connector))

    def workers(self) -> dict[str, dict[str, Any]]:
        """The cluster's live workers and what each runs (from their heartbeats)."""
        return self._coordinator.live_workers()
