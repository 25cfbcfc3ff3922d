"""The standalone herder: connector configs, lifecycle and the operations the REST API offers.

Kafka's ``StandaloneHerder`` (with ``AbstractHerder``'s validation) in Python: configurations live
in memory; creating a connector validates it first, starts it on the :class:`Worker`, asks it for
task configs and starts the tasks; ``request_task_reconfiguration`` regenerates the task configs
and restarts the tasks only when they changed. Pause/resume/stop set the connector's target state:
as in Kafka, pausing stops the connector instance (its tasks only pause) and resuming starts it
again, then updates its task configs.
Every configuration handed back (connector config, info, task configs) has its PASSWORD values
masked as ``[hidden]``.

A connector starts on its own thread (see :class:`Worker`): the herder does not hold its lock
while a connector's ``start()`` runs. Once the start completes, the herder's background thread
generates the task configs and starts the tasks; a request that creates, updates or restarts a
connector waits for that outside the lock, at most :attr:`StandaloneHerder.request_timeout_s`
(Kafka's 90 s REST request timeout), and then answers ``500 Request timed out`` while the start
goes on. Other requests are answered meanwhile.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cdk.errors import AlreadyExistsException, NotFoundException
from cdk.runtime._config_secrets import secret_keys
from cdk.runtime._herder_base import AbstractHerder
from cdk.runtime._status import ConnectorTaskId, State, Status, StatusStore, TargetState
from cdk.runtime._worker_config import WorkerConfig
from cdk.runtime.isolation._plugins import Plugins
from cdk.runtime.storage._offset_store import OffsetBackingStore

if TYPE_CHECKING:
    from cdk.runtime._worker import Worker

__all__ = ["StandaloneHerder"]

log = logging.getLogger("cdk.runtime.herder")

_Future = concurrent.futures.Future


class StandaloneHerder(AbstractHerder):
    """Manages the connectors of one standalone worker.

    Args:
        worker: runs connectors and tasks.
        config: the worker configuration.
        plugins: finds connector and other plugin classes.
        status: where the worker records connector and task states.
        offset_store: the source offsets (for the offsets REST API).
        worker_id: this worker's id in statuses (``host:port``).
        kafka_cluster_id: reported by ``GET /``.
    """

    def __init__(
        self,
        worker: Worker,
        config: WorkerConfig,
        plugins: Plugins,
        status: StatusStore,
        offset_store: OffsetBackingStore,
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
        #: The worker's start future of each connector: only the latest start updates the tasks.

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start serving requests (the worker must be started already)."""
        with self._lock:
            self._stopping = False
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="cdk-herder"
            )
            self._ready.set()
        log.info("Herder started (worker %s)", self.worker_id)

    def stop(self) -> None:
        """Stop every connector and task (tasks commit their offsets), then the herder."""
        self._reloads.close()
        with self._lock:
            self._stopping = True
            self._ready.clear()
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            # all tasks together, then all connectors together: each step is bounded by its
            # timeout however many connectors misbehave
            ids = [i for name in self._configs for i in self._task_ids(name)]
            running = [i for i in ids if i in self._worker.task_ids()]
            if running:
                self._worker.stop_tasks(running)
            for task_id in ids:
                self._status.remove_task(task_id)
            held = self._worker.connector_names()
            self._worker.stop_connectors([n for n in self._configs if n in held])
            self._starts.clear()
        log.info("Herder stopped")

    # ------------------------------------------------------------------ worker operations
    def _start_connector(self, name: str) -> _Future[None]:
        """Start the connector on the worker (lock held; the start runs on its own thread).

        Returns:
            A future completed once the connector has started (or failed) and, if it runs,
            its task configs were generated and its tasks started.
        """

        def update_tasks() -> None:
            with self._lock:
                if not self._stopping:
                    self._update_connector_tasks(name)

        return self._start_connector_then(name, update_tasks)

    def _stop_tasks(self, name: str) -> None:
        ids = self._task_ids(name)
        running = [i for i in ids if i in self._worker.task_ids()]
        if running:
            self._worker.stop_tasks(running)
        for task_id in ids:
            self._status.remove_task(task_id)

    def _stop_connector_and_tasks(self, name: str) -> None:
        self._stop_tasks(name)
        self._stop_connector(name)

    def _stop_connector(self, name: str) -> None:
        self._starts.pop(name, None)
        if name in self._worker.connector_names():
            self._worker.stop_connector(name)

    def _start_tasks(self, name: str) -> None:
        props = self._resolve(self._configs[name])
        target = self._targets[name]
        for task_id, task_props in zip(self._task_ids(name), self._task_configs[name], strict=True):
            self._worker.start_task(task_id, props, self._resolve(task_props), target)

    def _update_connector_tasks(self, name: str) -> None:
        """Regenerate the task configs; restart the tasks only if they changed."""
        new_configs = self._generate_task_configs(name)
        if new_configs is None:
            return
        if new_configs == self._task_configs.get(name):
            log.debug("Task configs of connector %s unchanged", name)
            return
        log.info("Connector %s: (re)starting %d task(s)", name, len(new_configs))
        self._stop_tasks(name)
        self._task_configs[name] = new_configs
        self._start_tasks(name)

    # ------------------------------------------------------------------ ConnectorListener
    def request_task_reconfiguration(self, connector: str) -> None:
        """Called by a connector (any thread): regenerate its task configs soon."""

        def update() -> None:
            with self._lock:
                if not self._stopping:
                    self._update_connector_tasks(connector)

        self._submit(update)

    # ------------------------------------------------------------------ connectors
    def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        allow_replace: bool = True,
        initial_state: TargetState | str | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        """Create or replace a connector's configuration (``PUT /connectors/{name}/config``).

        Returns:
            ``(created, info)``.

        Raises:
            AlreadyExistsException: it exists and ``allow_replace`` is false.
            BadRequestException: the configuration is invalid, or ``name`` in it differs.
        """
        config, target = self._validated_config(name, config, initial_state)
        with self._lock:
            exists = name in self._configs
            if exists and not allow_replace:
                raise AlreadyExistsException(f"Connector {name} already exists")
            if exists:
                self._stop_connector_and_tasks(name)
                self._task_configs.pop(name, None)
            else:
                self._targets[name] = target or TargetState.STARTED
            self._configs[name] = config
            self._secret_keys[name] = secret_keys(self._plugins, config)
            self._task_configs.setdefault(name, [])
            log.info("%s connector %s", "Reconfiguring" if exists else "Creating", name)
            done = self._start_connector(name)
        self._await(done)
        with self._lock:
            self._require(name)
            return not exists, self._info(name)

    def delete_connector(self, name: str) -> None:
        """Stop and remove a connector and its tasks (``DELETE /connectors/{name}``)."""
        with self._lock:
            self._require(name)
            self._stop_connector_and_tasks(name)
            self._configs.pop(name, None)
            self._targets.pop(name, None)
            self._task_configs.pop(name, None)
            self._secret_keys.pop(name, None)
            self._starts.pop(name, None)
            self._reloads.cancel(name)
            self._status.remove_connector(name)
            log.info("Deleted connector %s", name)

    # ------------------------------------------------------------------ restarts and states
    def restart_connector(self, name: str) -> None:
        """Restart the connector instance only (``POST /connectors/{name}/restart``)."""
        with self._lock:
            self._require(name)
            if self._targets[name] is TargetState.STOPPED:
                return
            self._stop_connector(name)
            done = self._start_connector(name)
        self._await(done)

    def restart_task(self, name: str, task: int) -> None:
        """Restart one task with its current config (``POST .../tasks/{task}/restart``)."""
        with self._lock:
            self._require(name)
            task_id = ConnectorTaskId(name, task)
            configs = self._task_configs.get(name, [])
            if not 0 <= task < len(configs):
                raise NotFoundException(f"Task {task_id} not found")
            if task_id in self._worker.task_ids():
                self._worker.stop_tasks([task_id])
            self._worker.start_task(
                task_id,
                self._resolve(self._configs[name]),
                self._resolve(configs[task]),
                self._targets[name],
            )

    def restart_connector_and_tasks(
        self, name: str, *, only_failed: bool = False, include_tasks: bool = False
    ) -> dict[str, Any]:
        """Restart the connector and/or tasks as requested; return the plan (RESTARTING states).

        Raises:
            NotFoundException: ``Unknown connector: <name>``, or no status for it yet.
        """
        with self._lock:
            plan = self._restart_plan(name, only_failed=only_failed, include_tasks=include_tasks)
            restart_connector, restart_tasks = plan.restart_connector, plan.tasks
            if restart_connector and self._targets[name] is not TargetState.STOPPED:
                self._status.put_connector(name, Status(State.RESTARTING, self.worker_id))
                self._stop_connector(name)
                self._start_connector(name)  # tasks are updated once it has started
            ids = [ConnectorTaskId(name, t) for t in restart_tasks]
            running = [i for i in ids if i in self._worker.task_ids()]
            if running:
                self._worker.stop_tasks(running)
            configs = self._task_configs.get(name, [])
            props = self._resolve(self._configs[name])
            for task_id in ids:
                if task_id.task < len(configs):
                    self._status.put_task(task_id, Status(State.RESTARTING, self.worker_id))
                    self._worker.start_task(
                        task_id, props, self._resolve(configs[task_id.task]), self._targets[name]
                    )
            return plan.response

    def _set_target(self, name: str, target: TargetState) -> None:
        with self._lock:
            self._require(name, f"Unknown connector {name}")
            previous = self._targets[name]
            self._targets[name] = target
            if previous is target:
                return
            log.info("Connector %s: target state %s -> %s", name, previous, target)
            if target is TargetState.STOPPED:
                self._stop_connector_and_tasks(name)
                self._task_configs[name] = []
                self._status.put_connector(name, Status(State.STOPPED, self.worker_id))
                return
            if previous is TargetState.STOPPED or name not in self._worker.connector_names():
                self._start_connector(name)  # its tasks are started once it has started
                return
            resumed = self._worker.set_target_state(name, target, wait=False)
            if target is TargetState.STARTED:
                # A paused connector was stopped: once its start() has run again, regenerate
                # the task configs (the tasks restart only if they changed), as Kafka does.
                def update_tasks() -> None:
                    with self._lock:
                        if not self._stopping and self._targets.get(name) is TargetState.STARTED:
                            self._update_connector_tasks(name)

                resumed.add_done_callback(lambda _: self._submit(update_tasks))
