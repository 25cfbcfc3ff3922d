"""The distributed herder: connector state in Kafka topics, tasks on a :class:`TaskPlacement`.

Kafka's ``DistributedHerder`` for a cluster with one herder, the driver: every change is written
to the config topic first (:class:`KafkaConfigBackingStore`) and the herder's view is what the
topic says afterwards, so a restarted driver recovers each connector, its target state and its
committed task configs from the topic alone. Connectors run in the driver on the
:class:`Worker`; their tasks run wherever the :class:`TaskPlacement` puts them (Spark executors),
one *generation* (committed set of task configs) at a time, and report their own statuses into
the status topic.

Every operation that changes state runs on the herder's own thread, one after another, as
Kafka's herder thread does; REST requests wait for theirs (at most
:attr:`DistributedHerder.request_timeout_s`). A reconfiguration writes the new task configs and
their commit record, which ends the running generation (its tasks commit and exit), waits for the
old generation to end (``task.shutdown.graceful.timeout.ms``, after which the placement cancels
what still runs) and launches the new one.

Restarting tasks re-commits the connector's current task configs: a new generation in which
every task of the connector restarts from its committed offsets (the running ones stop
gracefully first).
"""

from __future__ import annotations

import concurrent.futures
import functools
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from cdk.errors import AlreadyExistsException, ConnectException, NotFoundException
from cdk.runtime._config_secrets import secret_keys
from cdk.runtime._herder_base import AbstractHerder
from cdk.runtime._status import (
    ConnectorTaskId,
    State,
    Status,
    TargetState,
)
from cdk.runtime.distributed._placement import TaskGeneration, TaskPlacement

if TYPE_CHECKING:
    from cdk.runtime._worker import Worker
    from cdk.runtime.distributed._config import DistributedConfig
    from cdk.runtime.isolation._plugins import Plugins
    from cdk.runtime.storage._config_store import KafkaConfigBackingStore
    from cdk.runtime.storage._offset_store import OffsetBackingStore
    from cdk.runtime.storage._status_store import KafkaStatusBackingStore

__all__ = ["DistributedHerder"]

log = logging.getLogger("cdk.runtime.distributed")

_T = TypeVar("_T")
_Future = concurrent.futures.Future


class DistributedHerder(AbstractHerder):
    """Manages the connectors of a distributed cluster from its driver.

    Args:
        worker: runs the connectors in this process (its status store should be a
            :class:`DriverStatusView` of ``status``).
        config: the distributed worker configuration.
        plugins: finds connector and other plugin classes.
        status: the status topic.
        offset_store: the offsets topic (for the offsets REST API).
        config_store: the config topic.
        placement: runs the task generations.
        worker_id: the driver's id in statuses (``host:port``).
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
        placement: TaskPlacement,
        *,
        worker_id: str,
        kafka_cluster_id: str | None = None,
    ) -> None:
        super().__init__(
            worker,
            config,
            plugins,
            status,
            offset_store,
            worker_id=worker_id,
            kafka_cluster_id=kafka_cluster_id,
        )
        self._kafka_status = status
        self._store = config_store
        self._placement = placement
        self._generations: dict[str, int] = {}
        #: the generation launched last per connector (absent: nothing launched)
        self._launched: dict[str, int] = {}
        self._herder_thread: threading.Thread | None = None

    @property
    def _graceful_s(self) -> float:
        return self._config.task_shutdown_timeout_ms / 1000.0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Recover every connector from the config topic, then serve requests.

        Connectors come back in their target state; the committed task configs of those not
        STOPPED are launched at once, and regenerated (then re-launched if they changed) once
        the connector has started.
        """
        snapshot = self._store.refresh()
        with self._lock:
            self._stopping = False
            for name in snapshot.connectors():
                config = dict(snapshot.connector_configs[name])
                self._configs[name] = config
                self._targets[name] = snapshot.target_state(name) or TargetState.STARTED
                self._task_configs[name] = snapshot.tasks(name)
                self._secret_keys[name] = secret_keys(self._plugins, config)
                if name in snapshot.generations:
                    self._set_generation(name, snapshot.generations[name])
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="cdk-dherder"
            )
        self._placement.start(self)
        self._call(lambda: None)  # note the herder thread
        for name in snapshot.connectors():
            if name in snapshot.inconsistent:
                log.warning(
                    "Connector %s has an inconsistent set of task configs in the config topic; "
                    "they are regenerated once it starts",
                    name,
                )
            self._submit(functools.partial(self._recover, name))
        self._ready.set()
        log.info(
            "Distributed herder started (driver %s, %d connector(s) recovered)",
            self.worker_id,
            len(snapshot.connectors()),
        )

    def _recover(self, name: str) -> None:
        """Bring a connector of the config topic back (herder thread).

        Its committed task configs are committed again, so that the recovered tasks run in a
        generation later than the ``UNASSIGNED`` status the previous driver wrote when it shut
        down, and launched at once; the connector starts meanwhile and regenerates them.
        """
        with self._lock:
            if name not in self._configs:
                return
            configs = list(self._task_configs[name])
            relaunch = self._targets[name] is not TargetState.STOPPED and bool(configs)
        if relaunch:
            self._write_tasks(name, configs)
        with self._lock:
            self._start_connector(name)

    def stop(self) -> None:
        """Stop: end every generation (``UNASSIGNED`` connector statuses), then the connectors.

        As Kafka's worker shutdown, each connector's status becomes ``UNASSIGNED`` (written
        with the connector's current generation); its tasks read that, commit and exit; the
        placement waits for them up to ``task.shutdown.graceful.timeout.ms`` and cancels the
        rest.
        """
        with self._lock:
            self._stopping = True
            self._ready.clear()
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            names = [n for n in self._configs if self._targets.get(n) is not TargetState.STOPPED]
        for name in names:
            try:
                self._status.put_connector(name, Status(State.UNASSIGNED, self.worker_id))
            except Exception:
                log.exception("Could not write the UNASSIGNED status of connector %s", name)
        try:
            self._placement.close(self._graceful_s)
        except Exception:
            log.exception("Failed to close the task placement")
        with self._lock:
            held = self._worker.connector_names()
            self._worker.stop_connectors([n for n in self._configs if n in held])
            self._starts.clear()
            self._launched.clear()
        log.info("Distributed herder stopped")

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

    def _set_generation(self, name: str, generation: int) -> None:
        self._generations[name] = generation
        self._kafka_status.set_generation(name, generation)

    def _write_tasks(self, name: str, configs: list[dict[str, str]]) -> None:
        """Commit new task configs (ending the running generation) and launch them."""
        generation = self._store.put_task_configs(name, configs)
        with self._lock:
            previous = len(self._task_configs.get(name, []))
            self._task_configs[name] = configs
            self._set_generation(name, generation)
        log.info("Connector %s: generation %d with %d task(s)", name, generation, len(configs))
        self._end_generation(name)
        for number in range(len(configs), previous):
            self._status.remove_task(ConnectorTaskId(name, number))
        with self._lock:
            if self._targets.get(name) is not TargetState.STOPPED and configs:
                self._launch(name)

    def _end_generation(self, name: str) -> None:
        """Wait for the connector's running generation to end (its end was written already)."""
        if name not in self._launched:
            return
        if not self._placement.await_end(name, self._graceful_s):
            log.error(
                "Tasks of connector %s did not stop within task.shutdown.graceful.timeout.ms "
                "(%.0f ms) and were cancelled",
                name,
                self._graceful_s * 1000,
            )
        self._launched.pop(name, None)

    def _launch(self, name: str) -> None:
        """Hand the connector's current generation to the placement (lock held).

        Each task is ``UNASSIGNED`` until its executor reports: with the reason when it has to
        wait for a task slot.
        """
        generation = self._generations.get(name, -1)
        configs = self._task_configs.get(name, [])
        waiting = self._waiting_reason(name, len(configs))
        for number in range(len(configs)):
            reason = waiting[1] if number >= waiting[0] else None
            self._kafka_status.put_task(
                ConnectorTaskId(name, number),
                Status(State.UNASSIGNED, self.worker_id, reason),
                generation=generation,
            )
        self._placement.launch(
            TaskGeneration(
                connector=name,
                generation=generation,
                connector_config=dict(self._configs[name]),
                task_configs=tuple(dict(c) for c in configs),
                target_state=self._targets[name],
            )
        )
        self._launched[name] = generation

    def _waiting_reason(self, name: str, count: int) -> tuple[int, str | None]:
        """How many of the tasks get a slot now, and why the others wait (logged) if any."""
        slots = self._placement.slots()
        if slots is None:
            return count, None
        in_use = sum(
            len(self._task_configs.get(other, []))
            for other in self._launched
            if other != name and self._targets.get(other) is not TargetState.STOPPED
        )
        free = max(slots - in_use, 0)
        if count <= free:
            return count, None
        message = (
            f"Waiting for a task slot: the cluster runs {slots} task(s) at once (executor "
            f"cores) and the tasks of other connectors hold {in_use}, so only {free} of the "
            f"{count} task(s) of connector {name} can run now. The others start when slots free "
            "up: add Spark executors or cores, or lower tasks.max."
        )
        log.warning(message)
        return free, message

    # ------------------------------------------------------------------ PlacementListener
    def generation_ended(
        self, connector: str, generation: int, failures: Mapping[int, str]
    ) -> None:
        """A generation's job ended; tasks it could not keep running are FAILED with the trace."""
        with self._lock:
            current = self._generations.get(connector) == generation and not self._stopping
            if self._launched.get(connector) == generation:
                self._launched.pop(connector, None)
        if not current:
            log.debug("Generation %d of connector %s ended (superseded)", generation, connector)
            return
        for number, trace in sorted(failures.items()):
            task_id = ConnectorTaskId(connector, number)
            log.error("Task %s failed and was not rescheduled:\n%s", task_id, trace)
            last = self._status.task(task_id)
            worker = last.worker_id if last is not None else self.worker_id
            self._kafka_status.put_task(
                task_id, Status(State.FAILED, worker, trace), generation=generation
            )

    # ------------------------------------------------------------------ connectors
    def _start_connector(self, name: str, *, force_tasks: bool = False) -> _Future[None]:
        """Start the connector in the driver (herder thread, lock held).

        Returns:
            A future completed once it has started and its task configs were regenerated
            (written, and launched, when they changed or ``force_tasks``).
        """
        return self._start_connector_then(name, lambda: self._reconfigure(name, force=force_tasks))

    def _reconfigure(self, name: str, *, force: bool = False) -> None:
        """Regenerate the task configs; commit and relaunch when they changed (herder thread)."""
        if self._stopping:
            return
        with self._lock:
            configs = self._generate_task_configs(name)
            if configs is None:
                return
            unchanged = configs == self._task_configs.get(name) and name in self._generations
            if unchanged and not force:
                log.debug("Task configs of connector %s unchanged", name)
                return
        self._write_tasks(name, configs)

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
        driver and its task configs are regenerated and committed (always after a change of
        configuration, so that the tasks run with it).

        Raises:
            AlreadyExistsException: it exists and ``allow_replace`` is false.
            BadRequestException: the configuration is invalid, or ``name`` in it differs.
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

        exists, done = self._call(write)
        self._await(done)
        with self._lock:
            self._require(name)
            return not exists, self._info(name)

    def delete_connector(self, name: str) -> None:
        """Delete a connector: tombstones in the config topic end its tasks; then forget it."""

        def delete() -> None:
            with self._lock:
                self._require(name)
            self._store.remove_connector_config(name)
            self._end_generation(name)
            with self._lock:
                self._stop_connector(name)
                self._configs.pop(name, None)
                self._targets.pop(name, None)
                self._task_configs.pop(name, None)
                self._secret_keys.pop(name, None)
                self._generations.pop(name, None)
            self._status.remove_connector(name)
            log.info("Deleted connector %s", name)

        self._call(delete)

    # ------------------------------------------------------------------ restarts and states
    def restart_connector(self, name: str) -> None:
        """Restart the connector instance in the driver; its tasks keep running."""

        def restart() -> _Future[None] | None:
            with self._lock:
                self._require(name)
                if self._targets[name] is TargetState.STOPPED:
                    return None
                self._stop_connector(name)
                return self._start_connector(name)

        done = self._call(restart)
        if done is not None:
            self._await(done)

    def restart_task(self, name: str, task: int) -> None:
        """Restart a task: its connector's task configs are re-committed (a new generation).

        Raises:
            NotFoundException: no such connector or task.
        """

        def restart() -> None:
            with self._lock:
                self._require(name)
                configs = list(self._task_configs.get(name, []))
                if not 0 <= task < len(configs):
                    raise NotFoundException(f"Task {ConnectorTaskId(name, task)} not found")
            self._write_tasks(name, configs)

        self._call(restart)

    def restart_connector_and_tasks(
        self, name: str, *, only_failed: bool = False, include_tasks: bool = False
    ) -> dict[str, Any]:
        """Restart as requested (the request is also written to the config topic, as Kafka).

        Restarted tasks come back in a new generation of the connector's current task configs.

        Raises:
            NotFoundException: ``Unknown connector: <name>``, or no status for it yet.
        """

        def restart() -> dict[str, Any]:
            with self._lock:
                plan = self._restart_plan(
                    name, only_failed=only_failed, include_tasks=include_tasks
                )
                stopped = self._targets[name] is TargetState.STOPPED
                configs = list(self._task_configs.get(name, []))
            self._store.put_restart_request(name, include_tasks, only_failed)
            if plan.restart_connector and not stopped:
                self._status.put_connector(name, Status(State.RESTARTING, self.worker_id))
                with self._lock:
                    self._stop_connector(name)
                    self._start_connector(name)
            tasks = [t for t in plan.tasks if t < len(configs)]
            if tasks and not stopped:
                for number in tasks:
                    self._kafka_status.put_task(
                        ConnectorTaskId(name, number), Status(State.RESTARTING, self.worker_id)
                    )
                self._write_tasks(name, configs)
            return plan.response

        return self._call(restart)

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
                # as Kafka: once resumed, regenerate the task configs (relaunch if changed)
                changed.add_done_callback(lambda _: self._submit(lambda: self._reconfigure(name)))

        self._call(change)

    def _stop(self, name: str) -> None:
        """Kafka's stop: an empty task-config commit, then the STOPPED target state."""
        generation = self._store.put_task_configs(name, [])
        self._store.put_target_state(name, TargetState.STOPPED)
        with self._lock:
            previous = len(self._task_configs.get(name, []))
            self._targets[name] = TargetState.STOPPED
            self._task_configs[name] = []
            self._set_generation(name, generation)
        self._end_generation(name)
        with self._lock:
            self._stop_connector(name)
        for number in range(previous):
            self._status.remove_task(ConnectorTaskId(name, number))
        self._status.put_connector(name, Status(State.STOPPED, self.worker_id))

    # ------------------------------------------------------------------ ConnectorListener
    def request_task_reconfiguration(self, connector: str) -> None:
        """Called by a connector (any thread): regenerate its task configs soon."""
        self._submit(lambda: self._reconfigure(connector))
