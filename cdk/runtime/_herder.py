"""The standalone herder: connector configs, lifecycle and the operations the REST API offers.

Kafka's ``StandaloneHerder`` (with ``AbstractHerder``'s validation) in Python: configurations live
in memory; creating a connector validates it first, starts it on the :class:`Worker`, asks it for
task configs and starts the tasks; ``request_task_reconfiguration`` regenerates the task configs
and restarts the tasks only when they changed. Pause/resume/stop set the connector's target state.
Every configuration handed back (connector config, info, task configs) has its PASSWORD values
masked as ``[hidden]``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import re
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from cdk.api import Connector, SinkConnector, SourceConnector, TopicPartition
from cdk.config import (
    ConfigDef,
    ConfigKey,
    ConfigTransformer,
    ConfigValue,
    Password,
    Type,
    convert_to_string,
)
from cdk.config._providers import instantiate_providers
from cdk.errors import (
    AlreadyExistsException,
    ConfigException,
    ConnectException,
    DataException,
    NotFoundException,
)
from cdk.runtime._connector_config import (
    CONNECTOR_CLASS_CONFIG,
    NAME_CONFIG,
    enrich,
    resolve_plugin_classes,
    sink_connector_config_def,
    source_connector_config_def,
    validate_sink_topics,
)
from cdk.runtime._offsets import (
    OffsetBackingStore,
    connector_offsets,
    reset_connector_offsets,
    validate_offset_format,
    write_connector_offsets,
)
from cdk.runtime._plugins import Plugins, PluginType, plugin_types
from cdk.runtime._status import ConnectorTaskId, State, Status, StatusStore, TargetState
from cdk.runtime._worker_config import CLIENT_OVERRIDE_PREFIXES, WorkerConfig, check_client_override

if TYPE_CHECKING:
    from cdk.runtime._worker import Worker

__all__ = ["BadRequestException", "StandaloneHerder"]

log = logging.getLogger("cdk.runtime.herder")

T = TypeVar("T")
HIDDEN = Password.HIDDEN
_VARIABLE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")
_SECRET_CLIENT_KEY = re.compile(r"(password|secret|sasl\.jaas\.config|credentials)", re.IGNORECASE)


class BadRequestException(ConnectException):
    """A request the REST API answers with 400 Bad Request (Kafka's ``BadRequestException``)."""


def _trace(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


def _type_name(type_: Type | None) -> str | None:
    return None if type_ is None else type_.name


def config_key_info(key: ConfigKey, prefix: str = "") -> dict[str, Any]:
    """Kafka's ``ConfigKeyInfo`` JSON for one key."""
    required = not key.has_default()
    return {
        "name": prefix + key.name,
        "type": key.type.name,
        "required": required,
        "default_value": None if required else convert_to_string(key.default_value, key.type),
        "importance": key.importance.name,
        "documentation": key.documentation,
        "group": key.group,
        "order": key.order_in_group,
        "width": key.width.name,
        "display_name": key.display_name,
        "dependents": list(key.dependents),
    }


def config_value_info(value: ConfigValue, type_: Type | None) -> dict[str, Any]:
    """Kafka's ``ConfigValueInfo`` JSON for one validated value (passwords hidden)."""
    shown: Any = value.value
    if type_ is Type.PASSWORD or isinstance(shown, Password):
        shown = None if shown is None else HIDDEN
    recommended_type = Type.STRING if type_ is Type.LIST else type_
    return {
        "name": value.name,
        "value": convert_to_string(shown, type_) if shown is not None else None,
        "recommended_values": [
            convert_to_string(v, recommended_type) for v in value.recommended_values
        ],
        "errors": list(value.error_messages),
        "visible": value.visible,
    }


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
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._ready = threading.Event()
        self._stopping = False

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
            for name in list(self._configs):
                self._stop_connector_and_tasks(name)
        log.info("Herder stopped")

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
        if not any(isinstance(v, str) and "${" in v for v in config.values()):
            return dict(config)
        providers = instantiate_providers(self._config.originals())
        if not providers:
            return dict(config)
        try:
            data = ConfigTransformer(providers).transform(config).data
        finally:
            for provider in providers.values():
                with contextlib.suppress(Exception):
                    provider.close()
        return {k: str(v) for k, v in data.items()}

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

    def _compute_secret_keys(self, config: Mapping[str, str]) -> frozenset[str]:
        keys: set[str] = set()
        try:
            connector = self._plugins.new_connector(config[CONNECTOR_CLASS_CONFIG])
            definitions = [connector.config()]
            kind = "source" if isinstance(connector, SourceConnector) else "sink"
            base = (
                source_connector_config_def() if kind == "source" else sink_connector_config_def()
            )
            definitions.append(
                enrich(self._plugins, base, resolve_plugin_classes(self._plugins, config), False)
            )
            for definition in definitions:
                keys.update(
                    k.name for k in definition.config_keys().values() if k.type is Type.PASSWORD
                )
        except Exception:  # noqa: BLE001 - masking falls back to the name heuristics below
            log.debug("Could not read the ConfigDef of %s", config.get(CONNECTOR_CLASS_CONFIG))
        for key in config:
            if key.startswith(
                tuple(CLIENT_OVERRIDE_PREFIXES.values())
            ) and _SECRET_CLIENT_KEY.search(key):
                keys.add(key)
        return frozenset(keys)

    def _masked(self, name: str, config: Mapping[str, str]) -> dict[str, str]:
        secrets = self._secret_keys.get(name, frozenset())
        return {
            k: (HIDDEN if k in secrets and v is not None and not _VARIABLE.fullmatch(str(v)) else v)
            for k, v in config.items()
        }

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

    def _submit(self, fn: Callable[[], None]) -> None:
        executor = self._executor
        if executor is None or self._stopping:
            return
        with contextlib.suppress(RuntimeError):  # shutting down
            executor.submit(self._guarded, fn)

    @staticmethod
    def _guarded(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            log.exception("Herder background operation failed")

    def _fail_connector(self, name: str, error: BaseException) -> None:
        self._status.put_connector(name, Status(State.FAILED, self.worker_id, _trace(error)))

    # ------------------------------------------------------------------ worker operations
    def _start_connector(self, name: str) -> None:
        target = self._targets[name]
        if target is TargetState.STOPPED:
            self._status.put_connector(name, Status(State.STOPPED, self.worker_id))
            return
        try:
            props = self._resolve(self._configs[name])
        except ConnectException as exc:
            self._fail_connector(name, exc)
            return
        self._worker.start_connector(name, props, self, target)

    def _stop_tasks(self, name: str) -> None:
        ids = self._task_ids(name)
        running = [i for i in ids if i in self._worker.task_ids()]
        if running:
            self._worker.stop_tasks(running)
        for task_id in ids:
            self._status.remove_task(task_id)

    def _stop_connector_and_tasks(self, name: str) -> None:
        self._stop_tasks(name)
        if name in self._worker.connector_names():
            self._worker.stop_connector(name)

    def _start_tasks(self, name: str) -> None:
        props = self._resolve(self._configs[name])
        target = self._targets[name]
        for task_id, task_props in zip(self._task_ids(name), self._task_configs[name], strict=True):
            self._worker.start_task(task_id, props, self._resolve(task_props), target)

    def _reverse_transform(self, name: str, configs: list[dict[str, str]]) -> list[dict[str, str]]:
        """Put the raw ``${...}`` references back in task configs (as Kafka stores them)."""
        raw = self._configs[name]
        with_variables = {
            k: v for k, v in raw.items() if isinstance(v, str) and _VARIABLE.search(v)
        }
        return [{k: with_variables.get(k, v) for k, v in c.items()} for c in configs]

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
        target = _target_state(initial_state)
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
            self._secret_keys[name] = self._compute_secret_keys(config)
            self._task_configs.setdefault(name, [])
            log.info("%s connector %s", "Reconfiguring" if exists else "Creating", name)
            self._start_connector(name)
            self._update_connector_tasks(name)
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
        """``{name: {"topics": [...]}}``; topic tracking is not implemented, so it is empty."""
        return {name: {"topics": []}}

    # ------------------------------------------------------------------ restarts and states
    def restart_connector(self, name: str) -> None:
        """Restart the connector instance only (``POST /connectors/{name}/restart``)."""
        with self._lock:
            self._require(name)
            if self._targets[name] is TargetState.STOPPED:
                return
            if name in self._worker.connector_names():
                self._worker.stop_connector(name)
            self._start_connector(name)
            self._update_connector_tasks(name)

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
                if name in self._worker.connector_names():
                    self._worker.stop_connector(name)
                self._start_connector(name)
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
                self._start_connector(name)
                self._update_connector_tasks(name)
                return
            self._worker.set_target_state(name, target)
            if target is TargetState.STARTED:
                self._update_connector_tasks(name)

    # ------------------------------------------------------------------ offsets
    def _sink_group(self, config: Mapping[str, str]) -> str:
        return config.get("consumer.override.group.id") or f"connect-{config[NAME_CONFIG]}"

    def _admin(self, config: Mapping[str, str]) -> Any:
        from cdk.kafka import new_admin

        props = {**self._config.admin_props(), **self._config.client_overrides(config, "admin")}
        return new_admin(props)

    def _sink_offsets(self, config: Mapping[str, str]) -> dict[TopicPartition, int]:
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException

        admin = self._admin(config)
        group = self._sink_group(config)
        try:
            futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
            result = futures[group].result(timeout=30)
        except KafkaException as exc:
            text = str(exc)
            if "GROUP_ID_NOT_FOUND" in text or "not found" in text.lower():
                return {}
            raise ConnectException(
                f"Could not read the offsets of consumer group {group}: {exc}"
            ) from exc
        offsets: dict[TopicPartition, int] = {}
        for tp in result.topic_partitions or []:
            if tp.offset is not None and tp.offset >= 0:
                offsets[TopicPartition(tp.topic, tp.partition)] = tp.offset
        return dict(sorted(offsets.items()))

    def connector_offsets(self, name: str) -> dict[str, Any]:
        """``{"offsets": [{"partition": {...}, "offset": {...}}]}`` (``GET .../offsets``)."""
        with self._lock:
            config = dict(self._require(name))
        if self._connector_kind(config) == "sink":
            return {
                "offsets": [
                    {
                        "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                        "offset": {"kafka_offset": offset},
                    }
                    for tp, offset in self._sink_offsets(self._resolve(config)).items()
                ]
            }
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
                handled = self._alter_sink_offsets(connector, config, _sink_offsets_of(offsets))
            else:
                pairs = _source_offsets_of(offsets)
                handled = _call_alter(name, "alter", lambda: connector.alter_offsets(config, pairs))  # type: ignore[attr-defined]
                write_connector_offsets(self._offset_store, name, pairs)
        return {"message": _offsets_message("altered", handled)}

    def reset_connector_offsets(self, name: str) -> dict[str, str]:
        """Remove every offset of a STOPPED connector (``DELETE .../offsets``)."""
        with self._lock:
            config = self._resolve(self._require_stopped(name))
            connector = self._plugins.new_connector(config[CONNECTOR_CLASS_CONFIG])
            if isinstance(connector, SinkConnector):
                current = self._sink_offsets(config)
                reset: dict[TopicPartition, int | None] = dict.fromkeys(current)
                handled = _call_alter(name, "reset", lambda: connector.alter_offsets(config, reset))
                self._delete_group(config)
            else:
                pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
                    (entry["partition"], None)
                    for entry in connector_offsets(self._offset_store, name)
                ]
                source = connector
                handled = _call_alter(name, "reset", lambda: source.alter_offsets(config, pairs))  # type: ignore[attr-defined]
                reset_connector_offsets(self._offset_store, name)
        return {"message": _offsets_message("reset", handled)}

    def _delete_group(self, config: Mapping[str, str]) -> None:
        from confluent_kafka import KafkaException

        group = self._sink_group(config)
        admin = self._admin(config)
        try:
            admin.delete_consumer_groups([group], request_timeout=30)[group].result(timeout=30)
        except KafkaException as exc:
            if "GROUP_ID_NOT_FOUND" not in str(exc) and "not found" not in str(exc).lower():
                raise ConnectException(f"Could not delete consumer group {group}: {exc}") from exc

    def _alter_sink_offsets(
        self,
        connector: SinkConnector,
        config: Mapping[str, str],
        offsets: dict[TopicPartition, int | None],
    ) -> bool:
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        name = config[NAME_CONFIG]
        handled = _call_alter(name, "alter", lambda: connector.alter_offsets(dict(config), offsets))
        group = self._sink_group(config)
        to_write = {tp: o for tp, o in offsets.items() if o is not None}
        if any(o is None for o in offsets.values()):
            # confluent-kafka cannot delete single partitions' offsets: rewrite the group without
            # them (the connector is STOPPED, so the group has no members).
            kept = {tp: o for tp, o in self._sink_offsets(config).items() if tp not in offsets}
            self._delete_group(config)
            to_write = {**kept, **to_write}
        if to_write:
            admin = self._admin(config)
            request = ConsumerGroupTopicPartitions(
                group,
                [
                    KafkaTopicPartition(tp.topic, tp.partition, o)
                    for tp, o in sorted(to_write.items())
                ],
            )
            try:
                admin.alter_consumer_group_offsets([request])[group].result(timeout=30)
            except KafkaException as exc:
                raise ConnectException(
                    f"Failed to alter consumer group offsets for connector {name}: {exc}"
                ) from exc
        return handled

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
        props = dict(props)
        connector_class = props.get(CONNECTOR_CLASS_CONFIG)
        if not connector_class:
            raise BadRequestException(
                f"Connector config with keys [{', '.join(sorted(props))}] contains no "
                "connector type"
            )
        try:
            resolved: dict[str, Any] = self._resolve(
                {k: v for k, v in props.items() if v is not None}
            )
        except ConfigException as exc:
            raise BadRequestException(str(exc)) from exc
        resolved.update({k: v for k, v in props.items() if v is None})
        connector = self._plugins.new_connector(connector_class)
        is_source = isinstance(connector, SourceConnector)
        base = source_connector_config_def() if is_source else sink_connector_config_def()
        with_classes = resolve_plugin_classes(self._plugins, resolved)
        definition = enrich(
            self._plugins, base, with_classes, False, kind="source" if is_source else "sink"
        )
        validated = definition.validate_all(with_classes)
        if not is_source:
            validate_sink_topics(resolved, validated)
        for key, value in props.items():
            if value is None:
                validated.setdefault(key, ConfigValue(key)).add_error_message(
                    "Null value can not be supplied as the configuration value."
                )
        keys: dict[str, ConfigKey] = dict(definition.config_keys())
        groups: list[str] = list(definition.groups())
        own = connector.config()
        if not isinstance(own, ConfigDef):
            raise BadRequestException(
                f"{type(connector).__module__}.{type(connector).__qualname__}.config() must "
                "return a ConfigDef that is not null."
            )
        connector_props = {k: v for k, v in resolved.items() if v is not None}
        try:
            result = connector.validate(connector_props)
        except Exception as exc:
            raise BadRequestException(
                f"{type(connector).__qualname__}.validate() failed: {type(exc).__name__}: {exc}"
            ) from exc
        keys.update(own.config_keys())
        groups.extend(g for g in own.groups() if g not in groups)
        values: dict[str, ConfigValue] = dict(validated)
        for value in result.config_values:
            values[value.name] = value
        configs: list[dict[str, Any]] = []
        error_count = 0
        for name, value in values.items():
            if name not in keys:
                configs.append({"definition": None, "value": config_value_info(value, None)})
                error_count += len(value.error_messages)
        for name, config_key in keys.items():
            value_info = None
            if name in values:
                value_info = config_value_info(values[name], config_key.type)
                error_count += len(values[name].error_messages)
            configs.append({"definition": config_key_info(config_key), "value": value_info})
        for kind in self._client_kinds(connector, resolved):
            count, entries = self._validate_overrides(resolved, kind)
            error_count += count
            configs.extend(entries)
        return {
            "name": self._plugins.class_name(type(connector)),
            "error_count": error_count,
            "groups": groups,
            "configs": configs,
        }

    @staticmethod
    def _client_kinds(connector: Connector, props: Mapping[str, Any]) -> list[str]:
        has_dlq = bool(str(props.get("errors.deadletterqueue.topic.name") or "").strip())
        if isinstance(connector, SourceConnector):
            uses_admin = any(str(k).startswith("topic.creation.") for k in props)
            return ["producer", *(["admin"] if uses_admin else [])]
        return [*(["producer", "admin"] if has_dlq else []), "consumer"]

    def _validate_overrides(
        self, props: Mapping[str, Any], kind: str
    ) -> tuple[int, list[dict[str, Any]]]:
        prefix = CLIENT_OVERRIDE_PREFIXES[kind]
        errors = 0
        entries: list[dict[str, Any]] = []
        for key, value in props.items():
            if not key.startswith(prefix) or len(key) == len(prefix):
                continue
            message = check_client_override(self._config.override_policy, kind, key[len(prefix) :])
            shown = HIDDEN if _SECRET_CLIENT_KEY.search(key) else value
            config_value = ConfigValue(key, shown, (), [message] if message else [])
            errors += 1 if message else 0
            entries.append({"definition": None, "value": config_value_info(config_value, None)})
        return errors, entries

    # ------------------------------------------------------------------ plugins
    def connector_plugins(self, connectors_only: bool = True) -> list[dict[str, str]]:
        """``GET /connector-plugins``: ``[{"class", "type", "version"}]``."""
        descs = self._plugins.connectors() if connectors_only else self._plugins.all()
        return [d.to_json() for d in descs if d.type is not PluginType.CONFIG_PROVIDER]

    def connector_plugin_config(self, plugin_name: str) -> list[dict[str, Any]]:
        """``GET /connector-plugins/{name}/config``: the plugin's keys (then framework keys).

        Raises:
            NotFoundException: ``Unknown plugin <name>.``
            BadRequestException: the class is a config provider or no plugin.
        """
        try:
            cls = self._plugins.load(plugin_name)
        except ConfigException as exc:
            raise NotFoundException(f"Unknown plugin {plugin_name}.") from exc
        kinds = plugin_types(cls)
        if not kinds or kinds == [PluginType.CONFIG_PROVIDER]:
            raise BadRequestException(
                f"Invalid plugin class {plugin_name}. Valid types are sink, source, converter, "
                "header_converter, transformation, predicate."
            )
        plugin = self._plugins.new_plugin(cls)
        base: ConfigDef | None = None
        if isinstance(plugin, SinkConnector):
            base = sink_connector_config_def()
        elif isinstance(plugin, SourceConnector):
            base = source_connector_config_def()
        own = plugin.config()
        keys: dict[str, ConfigKey] = dict(own.config_keys()) if isinstance(own, ConfigDef) else {}
        if base is not None:
            for name, key in base.config_keys().items():
                keys.setdefault(name, key)
        return [config_key_info(k) for k in keys.values()]


# ---------------------------------------------------------------------- helpers
def _target_state(value: TargetState | str | None) -> TargetState | None:
    if value is None or isinstance(value, TargetState):
        return value
    text = str(value).strip().upper()
    mapping = {
        "RUNNING": TargetState.STARTED,
        "PAUSED": TargetState.PAUSED,
        "STOPPED": TargetState.STOPPED,
    }
    if text not in mapping:
        raise BadRequestException(
            f"Invalid initial state {value}: must be one of RUNNING, PAUSED, STOPPED"
        )
    return mapping[text]


def _state(status: Status, override: State | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"state": str(override or status.state), "worker_id": status.worker_id}
    if status.trace is not None and override is None:
        result["trace"] = status.trace
    return result


def _offsets_message(action: str, handled: bool) -> str:
    if handled:
        return f"The offsets for this connector have been {action} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {action} "
        "successfully. However, if this connector manages offsets externally, they will need to "
        f"be manually {action} in the system that the connector uses."
    )


def _call_alter(name: str, action: str, fn: Callable[[], Any]) -> bool:
    try:
        return bool(fn())
    except ConnectException:
        raise
    except Exception as exc:
        raise ConnectException(
            f"Failed to {action} offsets for connector {name}: {type(exc).__name__}: {exc}"
        ) from exc


def _entries(offsets: Iterable[Any]) -> Iterable[tuple[Any, Any]]:
    for entry in offsets:
        if not isinstance(entry, Mapping) or "partition" not in entry:
            raise BadRequestException(
                'Each offset must be an object with a "partition" and an "offset"'
            )
        yield entry["partition"], entry.get("offset")


def _source_offsets_of(
    offsets: Iterable[Any],
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for partition, offset in _entries(offsets):
        if partition is None:
            raise BadRequestException("Source partitions may not be null")
        try:
            validate_offset_format(partition, "Source partitions")
            validate_offset_format(offset, "Source offsets")
        except DataException as exc:
            raise BadRequestException(str(exc)) from exc
        pairs.append((dict(partition), None if offset is None else dict(offset)))
    return pairs


def _sink_offsets_of(offsets: Iterable[Any]) -> dict[TopicPartition, int | None]:
    result: dict[TopicPartition, int | None] = {}
    for partition, offset in _entries(offsets):
        if not isinstance(partition, Mapping) or not {"kafka_topic", "kafka_partition"} <= set(
            partition
        ):
            raise BadRequestException(
                "The partition for a sink connector offset must contain the keys 'kafka_topic' "
                f"and 'kafka_partition', but was: {partition}"
            )
        topic, number = partition["kafka_topic"], partition["kafka_partition"]
        if not isinstance(topic, str) or not topic:
            raise BadRequestException("Kafka topic names must be valid strings and may not be null")
        number = _as_int(number, "Kafka partitions must be valid numbers and may not be null")
        value: int | None = None
        if offset is not None:
            if not isinstance(offset, Mapping) or "kafka_offset" not in offset:
                raise BadRequestException(
                    "The offset for a sink connector should either be null or contain the key "
                    f"'kafka_offset', but was: {offset}"
                )
            value = _as_int(offset["kafka_offset"], "Kafka offsets must be valid numbers")
            if value < 0:
                raise BadRequestException(f"Kafka offsets may not be negative, but was: {value}")
        result[TopicPartition(topic, number)] = value
    return result


def _as_int(value: Any, message: str) -> int:
    if isinstance(value, bool):
        raise BadRequestException(message)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return int(value)
    raise BadRequestException(message)
