"""What both herders share: connector state, validation and the read-only REST operations.

:class:`AbstractHerder` is the part of Kafka's ``AbstractHerder`` that does not depend on where
configurations live and tasks run: it holds each connector's configuration, target state and task
configs (the standalone herder in memory, the distributed one as read from the config topic),
validates configurations, answers status, task and config requests with PASSWORD values masked
as ``[hidden]``, computes restart plans, and alters or resets the offsets of STOPPED connectors.
Its subclasses decide how connectors and tasks start and stop: :class:`StandaloneHerder` on this
process's :class:`Worker`, :class:`DistributedHerder` through the config topic and a task
placement.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cdk.api import SinkConnector, SourceConnector
from cdk.errors import ConnectException, NotFoundException
from cdk.runtime._config_reload import ConfigReloads
from cdk.runtime._config_secrets import (
    mask,
    resolve_variables,
    resolve_variables_with_ttls,
    restore_variables,
)
from cdk.runtime._connector_config_def import CONNECTOR_CLASS_CONFIG, NAME_CONFIG
from cdk.runtime._herder_offsets import HerderOffsets
from cdk.runtime._key_notes import unknown_key_message
from cdk.runtime._loggers import Loggers
from cdk.runtime._status import ConnectorTaskId, State, Status, StatusStore, TargetState
from cdk.runtime._worker_config import WorkerConfig
from cdk.runtime.errors._context import stack_trace
from cdk.runtime.isolation._plugins import Plugins
from cdk.runtime.rest._config_infos import (
    config_infos,
    connector_plugins,
    known_keys,
    plugin_config_infos,
    unknown_keys,
)
from cdk.runtime.rest._requests import (
    BadRequestException,
    parse_initial_state,
)
from cdk.runtime.storage._offset_store import OffsetBackingStore

if TYPE_CHECKING:
    from cdk.runtime._worker import Worker
    from cdk.runtime.metrics._registry import ConnectMetrics

__all__ = ["AbstractHerder", "RestartPlan"]

log = logging.getLogger("cdk.runtime.herder")
config_log = logging.getLogger("cdk.runtime.config")

_Future = concurrent.futures.Future

#: How long a request waits for a connector to start (Kafka's REST request timeout).
REQUEST_TIMEOUT_S = 90.0


class RestartPlan:
    """What a restart request restarts (Kafka's ``RestartPlan``).

    Attributes:
        response: the ``ConnectorStateInfo`` answered, with ``RESTARTING`` states.
        restart_connector: whether the connector instance restarts.
        tasks: the task numbers that restart.
    """

    def __init__(self, response: dict[str, Any], restart_connector: bool, tasks: list[int]):
        self.response = response
        self.restart_connector = restart_connector
        self.tasks = tasks


class AbstractHerder(HerderOffsets):
    """Connector state and the operations both herders answer the same way.

    Args:
        worker: runs connectors (and, in standalone mode, tasks).
        config: the worker configuration.
        plugins: finds connector and other plugin classes.
        status: where connector and task states are recorded.
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
        #: the connector starts in flight (the newest per connector; a replaced one is ignored)
        self._starts: dict[str, _Future[None]] = {}
        self._secret_keys: dict[str, frozenset[str]] = {}
        self._ready = threading.Event()
        self._loggers = Loggers()
        #: restarts scheduled by config.action.reload when a provider's values expire
        self._reloads = ConfigReloads(self.restart_connector)
        #: the herder's own thread: lifecycle operations run there one after another
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._stopping = False
        #: How long create/update/restart requests wait (Kafka's REST request timeout).
        self.request_timeout_s = REQUEST_TIMEOUT_S

    # ------------------------------------------------------------------ what subclasses define
    def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        allow_replace: bool = True,
        initial_state: TargetState | str | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        """Create or replace a connector's configuration (``PUT /connectors/{name}/config``)."""
        raise NotImplementedError

    def delete_connector(self, name: str) -> None:
        """Stop and remove a connector and its tasks (``DELETE /connectors/{name}``)."""
        raise NotImplementedError

    def restart_connector(self, name: str) -> None:
        """Restart the connector instance only (``POST /connectors/{name}/restart``)."""
        raise NotImplementedError

    def restart_task(self, name: str, task: int) -> None:
        """Restart one task (``POST /connectors/{name}/tasks/{task}/restart``)."""
        raise NotImplementedError

    def restart_connector_and_tasks(
        self, name: str, *, only_failed: bool = False, include_tasks: bool = False
    ) -> dict[str, Any]:
        """Restart the connector and/or tasks as requested; return the plan."""
        raise NotImplementedError

    def _set_target(self, name: str, target: TargetState) -> None:
        raise NotImplementedError

    def request_task_reconfiguration(self, connector: str) -> None:
        """Regenerate a running connector's task configs (its context asked for it)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ properties
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

    # ------------------------------------------------------------------ the herder thread
    def _start_connector_then(self, name: str, update_tasks: Callable[[], None]) -> _Future[None]:
        """Start the connector (lock held), then run ``update_tasks`` on the herder thread.

        A STOPPED connector is only marked so; one whose config does not resolve is FAILED.
        ``update_tasks`` runs only while this start is still the connector's newest.

        Returns:
            A future completed once the connector has started (or failed) and ``update_tasks``
            ran, or the herder stopped before it could.
        """
        self._starts.pop(name, None)
        done: _Future[None] = _Future()
        target = self._targets[name]
        if target is TargetState.STOPPED:
            self._status.put_connector(name, Status(State.STOPPED, self.worker_id))
            done.set_result(None)
            return done
        try:
            props, ttls = resolve_variables_with_ttls(self._config.originals(), self._configs[name])
        except ConnectException as exc:
            self._fail_connector(name, exc)
            done.set_result(None)
            return done
        self._reloads.schedule(name, self._configs[name], ttls)
        started = self._worker.start_connector(name, props, self, target, wait=False)
        self._starts[name] = started

        def run_update() -> None:
            try:
                if self._starts.get(name) is started:
                    update_tasks()
            finally:
                complete(done)

        def on_started(_: _Future[None]) -> None:
            scheduled = self._submit(run_update)
            if scheduled is None:
                complete(done)
            else:  # cancelled when the herder stops before the update ran
                scheduled.add_done_callback(
                    lambda future: complete(done) if future.cancelled() else None
                )

        started.add_done_callback(on_started)
        return done

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

    def _fail_connector(self, name: str, error: BaseException) -> None:
        self._status.put_connector(name, Status(State.FAILED, self.worker_id, stack_trace(error)))

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

    # ------------------------------------------------------------------ connectors
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

    def _validated_config(
        self, name: str, config: Mapping[str, str], initial_state: TargetState | str | None
    ) -> tuple[dict[str, str], TargetState | None]:
        """Check a connector configuration as ``PUT .../config`` does; ``name`` is added to it.

        Returns:
            The configuration to store and the requested initial state.

        Raises:
            BadRequestException: the configuration is invalid (every error is listed), ``name``
                in it differs, or the initial state is unknown.
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
        known = known_keys(infos)
        for key in unknown_keys(infos, config):
            config_log.warning("[%s|worker] %s", name, unknown_key_message(key, known))
        return config, target

    def _generate_task_configs(self, name: str) -> list[dict[str, str]] | None:
        """Ask the running connector for its task configs (``${...}`` references restored).

        Returns:
            The configs, or ``None`` when the connector is unknown, STOPPED, not running, or
            failed to generate them (it is then FAILED).
        """
        if name not in self._configs or self._targets.get(name) is TargetState.STOPPED:
            return None
        if not self._worker.is_running(name):
            log.info("Skipping update of the tasks of connector %s: it is not running", name)
            return None
        try:
            props = self._resolve(self._configs[name])
            generated = self._worker.connector_task_configs(name, props)
            return restore_variables(self._configs[name], generated)
        except Exception as exc:  # noqa: BLE001 - a connector's failure becomes its FAILED state
            log.error("Connector %s failed to generate task configs: %s", name, exc)
            self._fail_connector(name, exc)
            return None

    def raise_error(self, connector: str, error: BaseException) -> None:
        """Called by a connector (any thread): it failed; record FAILED with the trace."""
        log.error("Connector %s raised an error: %s", connector, error)
        self._fail_connector(connector, error)

    def _restart_plan(self, name: str, *, only_failed: bool, include_tasks: bool) -> RestartPlan:
        """What a restart request restarts, from the current statuses (lock held).

        Raises:
            NotFoundException: ``Unknown connector: <name>``, or no status for it yet.
        """
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
        response = {
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
        return RestartPlan(response, restart_connector, restart_tasks)

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

    # ------------------------------------------------------------------ target states
    def pause_connector(self, name: str) -> None:
        """Pause the connector and its tasks (``PUT /connectors/{name}/pause``)."""
        self._set_target(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        """Resume a paused or stopped connector (``PUT /connectors/{name}/resume``)."""
        self._set_target(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        """Stop the connector and remove its tasks (``PUT /connectors/{name}/stop``)."""
        self._set_target(name, TargetState.STOPPED)

    # ------------------------------------------------------------------ validation and plugins
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


def complete(done: _Future[None]) -> None:
    """Complete ``done`` unless it is already."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        done.set_result(None)


def _state(status: Status, override: State | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"state": str(override or status.state), "worker_id": status.worker_id}
    if status.trace is not None and override is None:
        result["trace"] = status.trace
    return result
