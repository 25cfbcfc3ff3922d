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
import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cdk.api import SinkConnector, SourceConnector, TopicPartition
from cdk.errors import AlreadyExistsException, ConnectException, NotFoundException
from cdk.runtime._config_infos import (
    UNKNOWN_KEY_MESSAGE,
    config_infos,
    connector_plugins,
    plugin_config_infos,
    unknown_keys,
)
from cdk.runtime._config_secrets import mask, resolve_variables, restore_variables, secret_keys
from cdk.runtime._connector_config_def import CONNECTOR_CLASS_CONFIG, NAME_CONFIG
from cdk.runtime._connector_offsets import (
    SinkGroupOffsets,
    call_alter,
    connector_offsets,
    offsets_message,
    reset_connector_offsets,
    write_connector_offsets,
)
from cdk.runtime._error_context import stack_trace
from cdk.runtime._loggers import Loggers
from cdk.runtime._offset_store import OffsetBackingStore
from cdk.runtime._plugins import Plugins
from cdk.runtime._requests import (
    BadRequestException,
    parse_initial_state,
    parse_sink_offsets,
    parse_source_offsets,
)
from cdk.runtime._status import ConnectorTaskId, State, Status, StatusStore, TargetState
from cdk.runtime._worker_config import WorkerConfig

if TYPE_CHECKING:
    from cdk.runtime._metrics import ConnectMetrics
    from cdk.runtime._worker import Worker

__all__ = ["StandaloneHerder"]

log = logging.getLogger("cdk.runtime.herder")
config_log = logging.getLogger("cdk.runtime.config")

#: How long a request waits for a connector to start (Kafka's REST request timeout).
REQUEST_TIMEOUT_S = 90.0

_Future = concurrent.futures.Future


class StandaloneHerder:
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
        self._worker = worker
        self._config = config
        self._plugins = plugins
        self._status = status
        self._offset_store = offset_store
        self.worker_id = worker_id
        self.kafka_cluster_id = kafka_cluster_id
        self._lock = threading.RLock()
        self._configs: dict[str, dict[str, str]] = {}
        self._targets: dict[str, TargetState] = {}
        self._task_configs: dict[str, list[dict[str, str]]] = {}
        self._secret_keys: dict[str, frozenset[str]] = {}
        #: The worker's start future of each connector: only the latest start updates the tasks.
        self._starts: dict[str, _Future[None]] = {}
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        #: How long create/update/restart requests wait for the connector to start.
        self.request_timeout_s = REQUEST_TIMEOUT_S
        self._ready = threading.Event()
        self._stopping = False
        self._loggers = Loggers()

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

    @property
    def config(self) -> WorkerConfig:
        """The worker configuration."""
        return self._config

    @property
    def metrics(self) -> ConnectMetrics:
        """The worker's metrics registry (``GET /metrics``)."""
        return self._worker.metrics

    @property
    def ready(self) -> bool:
        """Whether the herder has started and is not stopping (``GET /health``)."""
        return self._ready.is_set()

    # ------------------------------------------------------------------ helpers
    def _require(self, name: str, message: str | None = None) -> dict[str, str]:
        config = self._configs.get(name)
        if config is None:
            raise NotFoundException(message or f"Connector {name} not found")
        return config

    def _resolve(self, config: Mapping[str, str]) -> dict[str, str]:
        """The config with ``${provider:path:key}`` variables resolved by the worker's providers."""
        return resolve_variables(self._config.originals(), config)

    def _connector_kind(self, config: Mapping[str, str]) -> str:
        try:
            cls = self._plugins.connector_class(config.get(CONNECTOR_CLASS_CONFIG, ""))
        except ConnectException:
            return "unknown"
        if issubclass(cls, SourceConnector):
            return "source"
        if issubclass(cls, SinkConnector):
            return "sink"
        return "unknown"

    def _masked(self, name: str, config: Mapping[str, str]) -> dict[str, str]:
        return mask(config, self._secret_keys.get(name, frozenset()))

    def _task_ids(self, name: str) -> list[ConnectorTaskId]:
        return [ConnectorTaskId(name, i) for i in range(len(self._task_configs.get(name, [])))]

    def _info(self, name: str) -> dict[str, Any]:
        config = self._configs[name]
        return {
            "name": name,
            "config": self._masked(name, config),
            "tasks": [{"connector": t.connector, "task": t.task} for t in self._task_ids(name)],
            "type": self._connector_kind(config),
        }

    def _submit(self, fn: Callable[[], None]) -> _Future[None] | None:
        """Run ``fn`` on the herder's background thread; None when the herder is stopping."""
        executor = self._executor
        if executor is None or self._stopping:
            return None
        try:
            return executor.submit(self._guarded, fn)
        except RuntimeError:  # shutting down
            return None

    def _await(self, done: _Future[None]) -> None:
        """Wait (without the lock) for a connector start and its task update to complete.

        Raises:
            ConnectException: ``Request timed out`` after :attr:`request_timeout_s`; the start
                goes on and its tasks are started when it completes.
        """
        try:
            done.result(self.request_timeout_s)
        except concurrent.futures.TimeoutError:
            raise ConnectException("Request timed out") from None

    @staticmethod
    def _guarded(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            log.exception("Herder background operation failed")

    def _fail_connector(self, name: str, error: BaseException) -> None:
        self._status.put_connector(name, Status(State.FAILED, self.worker_id, stack_trace(error)))

    # ------------------------------------------------------------------ worker operations
    def _start_connector(self, name: str) -> _Future[None]:
        """Start the connector on the worker (lock held; the start runs on its own thread).

        Returns:
            A future completed once the connector has started (or failed) and, if it runs,
            its task configs were generated and its tasks started.
        """
        self._starts.pop(name, None)
        done: _Future[None] = _Future()
        target = self._targets[name]
        if target is TargetState.STOPPED:
            self._status.put_connector(name, Status(State.STOPPED, self.worker_id))
            done.set_result(None)
            return done
        try:
            props = self._resolve(self._configs[name])
        except ConnectException as exc:
            self._fail_connector(name, exc)
            done.set_result(None)
            return done
        started = self._worker.start_connector(name, props, self, target, wait=False)
        self._starts[name] = started

        def update_tasks() -> None:
            try:
                with self._lock:
                    if not self._stopping and self._starts.get(name) is started:
                        self._update_connector_tasks(name)
            finally:
                _complete(done)

        def on_started(_: _Future[None]) -> None:
            scheduled = self._submit(update_tasks)
            if scheduled is None:
                _complete(done)
            else:
                scheduled.add_done_callback(_complete_if_cancelled)

        def _complete_if_cancelled(future: _Future[None]) -> None:
            if future.cancelled():  # the herder stopped before the update ran
                _complete(done)

        started.add_done_callback(on_started)
        return done

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

    def _reverse_transform(self, name: str, configs: list[dict[str, str]]) -> list[dict[str, str]]:
        """Put the raw ``${...}`` references back in task configs (as Kafka stores them)."""
        return restore_variables(self._configs[name], configs)

    def _update_connector_tasks(self, name: str) -> None:
        """Regenerate the task configs; restart the tasks only if they changed."""
        if name not in self._configs or self._targets.get(name) is TargetState.STOPPED:
            return
        if not self._worker.is_running(name):
            log.info("Skipping update of the tasks of connector %s: it is not running", name)
            return
        try:
            props = self._resolve(self._configs[name])
            new_configs = self._reverse_transform(
                name, self._worker.connector_task_configs(name, props)
            )
        except Exception as exc:  # noqa: BLE001 - a connector's failure becomes its FAILED state
            log.error("Connector %s failed to generate task configs: %s", name, exc)
            self._fail_connector(name, exc)
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

    def raise_error(self, connector: str, error: BaseException) -> None:
        """Called by a connector (any thread): it failed; record FAILED with the trace."""
        log.error("Connector %s raised an error: %s", connector, error)
        self._fail_connector(connector, error)

    # ------------------------------------------------------------------ connectors
    def connectors(self) -> list[str]:
        """The names of the connectors, in creation order."""
        with self._lock:
            return list(self._configs)

    def connector_info(self, name: str) -> dict[str, Any]:
        """``{"name", "config", "tasks", "type"}`` (passwords hidden)."""
        with self._lock:
            self._require(name)
            return self._info(name)

    def connector_config(self, name: str) -> dict[str, str]:
        """The connector's configuration (passwords hidden)."""
        with self._lock:
            return self._masked(name, self._require(name))

    def raw_connector_config(self, name: str) -> dict[str, str]:
        """The connector's configuration as given, secrets included (not for the REST API)."""
        with self._lock:
            return dict(self._require(name))

    def target_state(self, name: str) -> TargetState:
        """The state the user asked the connector to be in."""
        with self._lock:
            self._require(name)
            return self._targets[name]

    def create_connector(
        self,
        name: str,
        config: Mapping[str, str],
        initial_state: TargetState | str | None = None,
    ) -> dict[str, Any]:
        """Validate and create a connector (``POST /connectors``).

        Raises:
            AlreadyExistsException: ``Connector <name> already exists``.
            BadRequestException: the configuration is invalid (every error is listed).
        """
        _, info = self.put_connector_config(
            name, config, allow_replace=False, initial_state=initial_state
        )
        return info

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
        config = dict(config)
        included = config.get(NAME_CONFIG)
        if included is None:
            config[NAME_CONFIG] = name
        elif included != name:
            raise BadRequestException(
                f"Connector name configuration ({included}) doesn't match connector name in the "
                f"URL ({name})"
            )
        target = parse_initial_state(initial_state)
        infos = self.validate_connector_config(config, strict_class=True)
        errors = [e for c in infos["configs"] if c["value"] for e in c["value"]["errors"]]
        if infos["error_count"]:
            raise BadRequestException(
                f"Connector configuration is invalid and contains the following "
                f"{infos['error_count']} error(s):\n"
                + "".join(f"{e}\n" for e in errors)
                + "You can also find the above list of errors at the endpoint "
                "`/connector-plugins/{connectorType}/config/validate`"
            )
        for key in unknown_keys(infos, config):
            config_log.warning(UNKNOWN_KEY_MESSAGE, name, key)
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

    def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> dict[str, Any]:
        """Merge ``patch`` into the configuration (a None value removes the key) and apply it.

        Raises:
            NotFoundException: no such connector.
            BadRequestException: the result is invalid, or the patch renames the connector.
        """
        with self._lock:
            merged = dict(self._require(name))
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        _, info = self.put_connector_config(name, merged, allow_replace=True)
        return info

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
            self._status.remove_connector(name)
            log.info("Deleted connector %s", name)

    # ------------------------------------------------------------------ status and tasks
    def connector_status(self, name: str) -> dict[str, Any]:
        """Kafka's ``ConnectorStateInfo``: the connector's and its tasks' states."""
        with self._lock:
            status = self._status.connector(name)
            if status is None or name not in self._configs:
                raise NotFoundException(f"No status found for connector {name}")
            return {
                "name": name,
                "connector": _state(status),
                "tasks": [
                    {"id": task, **_state(task_status)}
                    for task, task_status in self._status.tasks(name).items()
                ],
                "type": self._connector_kind(self._configs[name]),
            }

    def task_status(self, name: str, task: int) -> dict[str, Any]:
        """One task's state: ``{"id", "state", "worker_id"[, "trace"]}``."""
        task_id = ConnectorTaskId(name, task)
        status = self._status.task(task_id)
        if status is None:
            raise NotFoundException(f"No status found for task {task_id}")
        return {"id": task, **_state(status)}

    def tasks(self, name: str) -> list[dict[str, Any]]:
        """``[{"id": {"connector", "task"}, "config": {...}}]`` (passwords hidden)."""
        with self._lock:
            self._require(name)
            return [
                {
                    "id": {"connector": name, "task": i},
                    "config": self._masked(name, task_config),
                }
                for i, task_config in enumerate(self._task_configs.get(name, []))
            ]

    def task_configs(self, name: str) -> list[dict[str, str]]:
        """The raw task configurations (secrets included; for tests and the worker)."""
        with self._lock:
            self._require(name)
            return [dict(c) for c in self._task_configs.get(name, [])]

    def connector_active_topics(self, name: str) -> dict[str, Any]:
        """``{name: {"topics": [...]}}``: the topics the connector's tasks used (KIP-558).

        Source tasks record the topics Kafka acknowledged their records for, sink tasks the
        topics of the records they consumed. As in Kafka, an unknown (or deleted) connector
        has no active topics: the answer is an empty list, not an error.
        """
        return {name: {"topics": self._status.topics(name)}}

    def reset_connector_active_topics(self, name: str) -> None:
        """Forget the connector's active topics; its tasks record the ones they use again."""
        self._status.reset_topics(name)
        log.info("Reset the active topics of connector %s", name)

    # ------------------------------------------------------------------ log levels (KIP-495)
    def logger_level(self, name: str) -> dict[str, Any] | None:
        """``{"level", "last_modified"}`` of an existing logger (``root`` too), else ``None``."""
        return self._loggers.level(name)

    def all_logger_levels(self) -> dict[str, dict[str, Any]]:
        """The root logger and every logger with an explicit level, sorted by name."""
        return self._loggers.all_levels()

    def set_worker_logger_level(self, namespace: str, level: str) -> list[str]:
        """Set the level of a logger and its descendants in this worker; their names, sorted.

        Raises:
            ValueError: ``level`` is not a Kafka (log4j) level name.
        """
        return self._loggers.set_level(namespace, level)

    def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """Set the level across the cluster: in standalone mode, this worker is the cluster.

        Raises:
            ValueError: ``level`` is not a Kafka (log4j) level name.
        """
        self._loggers.set_level(namespace, level)

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
            if name not in self._configs:
                raise NotFoundException(f"Unknown connector: {name}")
            status = self._status.connector(name)
            if status is None:
                raise NotFoundException(f"Status for connector {name} not found")
            restart_connector = not only_failed or status.state is State.FAILED
            task_statuses = self._status.tasks(name)
            restart_tasks = [
                task
                for task, task_status in task_statuses.items()
                if include_tasks and (not only_failed or task_status.state is State.FAILED)
            ]
            plan = {
                "name": name,
                "connector": _state(status, State.RESTARTING if restart_connector else None),
                "tasks": [
                    {
                        "id": task,
                        **_state(task_status, State.RESTARTING if task in restart_tasks else None),
                    }
                    for task, task_status in task_statuses.items()
                ],
                "type": self._connector_kind(self._configs[name]),
            }
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
            return plan

    def pause_connector(self, name: str) -> None:
        """Pause the connector and its tasks (``PUT /connectors/{name}/pause``)."""
        self._set_target(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        """Resume a paused or stopped connector (``PUT /connectors/{name}/resume``)."""
        self._set_target(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        """Stop the connector and remove its tasks (``PUT /connectors/{name}/stop``)."""
        self._set_target(name, TargetState.STOPPED)

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

    # ------------------------------------------------------------------ offsets
    def connector_offsets(self, name: str) -> dict[str, Any]:
        """``{"offsets": [{"partition": {...}, "offset": {...}}]}`` (``GET .../offsets``)."""
        with self._lock:
            config = dict(self._require(name))
        if self._connector_kind(config) == "sink":
            return {"offsets": SinkGroupOffsets(self._config, self._resolve(config)).rest_offsets()}
        return {"offsets": connector_offsets(self._offset_store, name)}

    def _require_stopped(self, name: str) -> dict[str, str]:
        config = dict(self._require(name))
        if self._targets[name] is not TargetState.STOPPED or self._task_configs.get(name):
            raise BadRequestException(
                "Connectors must be in the STOPPED state before their offsets can be modified. "
                "This can be done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return config

    def alter_connector_offsets(self, name: str, offsets: Any) -> dict[str, str]:
        """Write new offsets for a STOPPED connector (``PATCH .../offsets``).

        Args:
            name: the connector.
            offsets: the request's ``offsets`` list of ``{"partition": ..., "offset": ...}``.

        Raises:
            NotFoundException: no such connector.
            BadRequestException: not STOPPED, or the offsets are malformed.
        """
        if not isinstance(offsets, list) or not offsets:
            raise BadRequestException("The offsets to be altered may not be null or empty")
        with self._lock:
            config = self._resolve(self._require_stopped(name))
            connector = self._plugins.new_connector(config[CONNECTOR_CLASS_CONFIG])
            if isinstance(connector, SinkConnector):
                sink_offsets = parse_sink_offsets(offsets)
                handled = call_alter(
                    name, "alter", lambda: connector.alter_offsets(dict(config), sink_offsets)
                )
                SinkGroupOffsets(self._config, config).alter(sink_offsets)
            else:
                pairs = parse_source_offsets(offsets)
                handled = call_alter(name, "alter", lambda: connector.alter_offsets(config, pairs))  # type: ignore[attr-defined]
                write_connector_offsets(self._offset_store, name, pairs)
        return {"message": offsets_message("altered", handled)}

    def reset_connector_offsets(self, name: str) -> dict[str, str]:
        """Remove every offset of a STOPPED connector (``DELETE .../offsets``)."""
        with self._lock:
            config = self._resolve(self._require_stopped(name))
            connector = self._plugins.new_connector(config[CONNECTOR_CLASS_CONFIG])
            if isinstance(connector, SinkConnector):
                group = SinkGroupOffsets(self._config, config)
                current = group.offsets()
                reset: dict[TopicPartition, int | None] = dict.fromkeys(current)
                handled = call_alter(name, "reset", lambda: connector.alter_offsets(config, reset))
                group.delete()
            else:
                pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
                    (entry["partition"], None)
                    for entry in connector_offsets(self._offset_store, name)
                ]
                source = connector
                handled = call_alter(name, "reset", lambda: source.alter_offsets(config, pairs))  # type: ignore[attr-defined]
                reset_connector_offsets(self._offset_store, name)
        return {"message": offsets_message("reset", handled)}

    # ------------------------------------------------------------------ validation
    def validate_connector_config(
        self, props: Mapping[str, Any], *, strict_class: bool = False
    ) -> dict[str, Any]:
        """Validate a connector configuration: Kafka's ``ConfigInfos`` JSON.

        The framework keys (with the configured transformations', predicates' and topic
        creation groups' keys) and the connector's own ``validate`` are merged; client overrides
        are checked against the worker's override policy. PASSWORD values are hidden.

        Raises:
            BadRequestException: ``connector.class`` is missing.
            ConfigException: the connector class is unknown.
        """
        return config_infos(self._plugins, self._config, props, self._resolve)

    # ------------------------------------------------------------------ plugins
    def connector_plugins(self, connectors_only: bool = True) -> list[dict[str, str]]:
        """``GET /connector-plugins``: ``[{"class", "type", "version"}]``."""
        return connector_plugins(self._plugins, connectors_only)

    def connector_plugin_config(self, plugin_name: str) -> list[dict[str, Any]]:
        """``GET /connector-plugins/{name}/config``: the plugin's keys (then framework keys).

        Raises:
            NotFoundException: ``Unknown plugin <name>.``
            BadRequestException: the class is a config provider or no plugin.
        """
        return plugin_config_infos(self._plugins, plugin_name)


def _complete(done: _Future[None]) -> None:
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        done.set_result(None)


def _state(status: Status, override: State | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"state": str(override or status.state), "worker_id": status.worker_id}
    if status.trace is not None and override is None:
        result["trace"] = status.trace
    return result
