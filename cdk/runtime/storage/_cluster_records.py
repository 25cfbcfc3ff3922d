"""The records of Kafka Connect's config and status topics, as Java workers write them.

A distributed cluster keeps its state in three compacted topics. The offsets topic has its own
module (:mod:`cdk.runtime.storage._offset_format`); this one holds the keys and values of the other
two, so the kit's distributed mode reads topics a Java cluster wrote and writes topics a Java
cluster (or ``kafka-console-consumer``) reads the same way.

Config topic (``config.storage.topic``), values JSON without a schema envelope:

============================== =========================================================
key                            value
============================== =========================================================
``connector-<name>``           ``{"properties":{...}}`` (``None``: the connector was deleted)
``task-<name>-<n>``            ``{"properties":{...}}``
``commit-<name>``              ``{"tasks":N}``: the task configs before it are complete
``target-state-<name>``        ``{"state":"PAUSED","state.v2":"STOPPED"}`` (``state`` is
                               ``PAUSED`` for ``STOPPED``, for workers that predate it)
``restart-connector-<name>``   ``{"include-tasks":B,"only-failed":B}``
``logger-cluster-<namespace>`` ``{"level":"DEBUG"}``: a cluster-wide log level (KIP-976)
``tasks-fencing-<name>``       ``{"task-count":N}``: the leader fenced the producers of the
                               generation before, which had N tasks (exactly-once sources)
============================== =========================================================

Status topic (``status.storage.topic``):

====================================== ============================================================
key                                    value
====================================== ============================================================
``status-connector-<name>``            ``{"state":S,"trace":T|null,"worker_id":W,"generation":G}``
``status-task-<name>-<n>``             the same
``status-topic-<topic>:connector-<c>`` ``{"topic":{"name":..,"connector":..,"task":N,``
                                       ``"discoverTimestamp":MS}}``
====================================== ============================================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cdk.runtime._status import ConnectorTaskId, State, Status, TargetState

__all__ = [
    "CONNECTOR_PREFIX",
    "COMMIT_PREFIX",
    "LOGGER_CLUSTER_PREFIX",
    "RESTART_PREFIX",
    "STATUS_CONNECTOR_PREFIX",
    "STATUS_TASK_PREFIX",
    "STATUS_TOPIC_PREFIX",
    "TARGET_STATE_PREFIX",
    "TASK_COUNT_PREFIX",
    "TASK_PREFIX",
    "ConfigRecord",
    "StatusRecord",
    "commit_key",
    "connector_key",
    "decode_config",
    "decode_status",
    "encode_commit",
    "encode_properties",
    "encode_logger_level",
    "encode_restart",
    "encode_status",
    "encode_target_state",
    "encode_task_count",
    "encode_topic_status",
    "logger_key",
    "restart_key",
    "task_count_key",
    "status_connector_key",
    "status_task_key",
    "status_topic_key",
    "target_state_key",
    "task_key",
]

CONNECTOR_PREFIX = "connector-"
TASK_PREFIX = "task-"
COMMIT_PREFIX = "commit-"
TARGET_STATE_PREFIX = "target-state-"
RESTART_PREFIX = "restart-connector-"
LOGGER_CLUSTER_PREFIX = "logger-cluster-"
TASK_COUNT_PREFIX = "tasks-fencing-"
STATUS_CONNECTOR_PREFIX = "status-connector-"
STATUS_TASK_PREFIX = "status-task-"
STATUS_TOPIC_PREFIX = "status-topic-"
_TOPIC_SEPARATOR = ":connector-"


def _dumps(value: Any) -> bytes:
    # Jackson's compact form, as Kafka's JsonConverter writes it (non-ASCII as UTF-8)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------------------------- keys
def connector_key(name: str) -> str:
    """``connector-<name>``."""
    return CONNECTOR_PREFIX + name


def task_key(task: ConnectorTaskId) -> str:
    """``task-<name>-<n>``."""
    return f"{TASK_PREFIX}{task.connector}-{task.task}"


def commit_key(name: str) -> str:
    """``commit-<name>``."""
    return COMMIT_PREFIX + name


def target_state_key(name: str) -> str:
    """``target-state-<name>``."""
    return TARGET_STATE_PREFIX + name


def task_count_key(name: str) -> str:
    """``tasks-fencing-<name>``."""
    return TASK_COUNT_PREFIX + name


def restart_key(name: str) -> str:
    """``restart-connector-<name>``."""
    return RESTART_PREFIX + name


def logger_key(namespace: str) -> str:
    """``logger-cluster-<namespace>``."""
    return LOGGER_CLUSTER_PREFIX + namespace


def status_connector_key(name: str) -> str:
    """``status-connector-<name>``."""
    return STATUS_CONNECTOR_PREFIX + name


def status_task_key(task: ConnectorTaskId) -> str:
    """``status-task-<name>-<n>``."""
    return f"{STATUS_TASK_PREFIX}{task.connector}-{task.task}"


def status_topic_key(topic: str, connector: str) -> str:
    """``status-topic-<topic>:connector-<connector>``."""
    return f"{STATUS_TOPIC_PREFIX}{topic}{_TOPIC_SEPARATOR}{connector}"


# ---------------------------------------------------------------------------------- values
def encode_properties(properties: dict[str, str]) -> bytes:
    """The value of a ``connector-`` or ``task-`` record."""
    return _dumps({"properties": properties})


def encode_commit(tasks: int) -> bytes:
    """The value of a ``commit-`` record: how many task configs precede it."""
    return _dumps({"tasks": tasks})


def encode_task_count(tasks: int) -> bytes:
    """The value of a ``tasks-fencing-`` record (Kafka's ``TASK_COUNT_RECORD_V0``)."""
    return _dumps({"task-count": tasks})


def encode_target_state(state: TargetState) -> bytes:
    """The value of a ``target-state-`` record (``state`` keeps ``PAUSED`` for ``STOPPED``)."""
    legacy = TargetState.PAUSED if state is TargetState.STOPPED else state
    return _dumps({"state": legacy.value, "state.v2": state.value})


def encode_restart(include_tasks: bool, only_failed: bool) -> bytes:
    """The value of a ``restart-connector-`` record."""
    return _dumps({"include-tasks": include_tasks, "only-failed": only_failed})


def encode_logger_level(level: str) -> bytes:
    """The value of a ``logger-cluster-`` record (Kafka's ``LOGGER_LEVEL_V0``: ``level``)."""
    return _dumps({"level": level})


def encode_status(status: Status, generation: int) -> bytes:
    """The value of a ``status-connector-`` or ``status-task-`` record."""
    return _dumps(
        {
            "state": str(status.state),
            "trace": status.trace,
            "worker_id": status.worker_id,
            "generation": generation,
        }
    )


def encode_topic_status(topic: str, task: ConnectorTaskId, discover_timestamp_ms: int) -> bytes:
    """The value of a ``status-topic-`` record."""
    return _dumps(
        {
            "topic": {
                "name": topic,
                "connector": task.connector,
                "task": task.task,
                "discoverTimestamp": discover_timestamp_ms,
            }
        }
    )


# ---------------------------------------------------------------------------------- decoding
@dataclass(frozen=True)
class ConfigRecord:
    """One record of the config topic, decoded.

    Attributes:
        kind: ``connector``, ``task``, ``commit``, ``target-state``, ``restart``, ``logger``,
            ``task-count`` or ``other`` (keys this module does not know, such as
            ``session-key``: skip them).
        connector: the connector the record is about (``""`` for ``other``; the logger
            namespace for ``logger``).
        task: the task number of a ``task`` record, else ``None``.
        properties: the config of a ``connector`` or ``task`` record (``None`` for a tombstone).
        tasks: the task count of a ``commit`` or ``task-count`` record.
        target_state: the state of a ``target-state`` record (``None`` for a tombstone).
        include_tasks: of a ``restart`` record.
        only_failed: of a ``restart`` record.
        level: the level of a ``logger`` record (``None`` for a tombstone).
    """

    kind: str
    connector: str
    task: int | None = None
    properties: dict[str, str] | None = None
    tasks: int | None = None
    target_state: TargetState | None = None
    include_tasks: bool = False
    only_failed: bool = False
    level: str | None = None


def _loads(value: bytes | None) -> Any:
    return None if value is None else json.loads(value)


def _split_task(rest: str) -> tuple[str, int] | None:
    name, sep, number = rest.rpartition("-")
    if not sep or not number.isdigit():
        return None
    return name, int(number)


def decode_config(key: str, value: bytes | None) -> ConfigRecord:
    """Decode one config-topic record (raises ``ValueError`` on a malformed value)."""
    data = _loads(value)
    if key.startswith(CONNECTOR_PREFIX):
        props = None if data is None else dict(data["properties"])
        return ConfigRecord("connector", key[len(CONNECTOR_PREFIX) :], properties=props)
    if key.startswith(TASK_PREFIX):
        split = _split_task(key[len(TASK_PREFIX) :])
        if split is None:
            return ConfigRecord("other", "")
        props = None if data is None else dict(data["properties"])
        return ConfigRecord("task", split[0], task=split[1], properties=props)
    if key.startswith(COMMIT_PREFIX):
        count = None if data is None else int(data["tasks"])
        return ConfigRecord("commit", key[len(COMMIT_PREFIX) :], tasks=count)
    if key.startswith(TASK_COUNT_PREFIX):
        count = None if data is None else int(data["task-count"])
        return ConfigRecord("task-count", key[len(TASK_COUNT_PREFIX) :], tasks=count)
    if key.startswith(TARGET_STATE_PREFIX):
        state = None
        if data is not None:
            state = TargetState(data.get("state.v2") or data["state"])
        return ConfigRecord("target-state", key[len(TARGET_STATE_PREFIX) :], target_state=state)
    if key.startswith(RESTART_PREFIX):
        data = data or {}
        return ConfigRecord(
            "restart",
            key[len(RESTART_PREFIX) :],
            include_tasks=bool(data.get("include-tasks", False)),
            only_failed=bool(data.get("only-failed", False)),
        )
    if key.startswith(LOGGER_CLUSTER_PREFIX):
        level = None if data is None else str(data["level"])
        return ConfigRecord("logger", key[len(LOGGER_CLUSTER_PREFIX) :], level=level)
    return ConfigRecord("other", "")


@dataclass(frozen=True)
class StatusRecord:
    """One record of the status topic, decoded.

    Attributes:
        kind: ``connector``, ``task``, ``topic`` or ``other``.
        connector: the connector the record is about.
        task: the task id of a ``task`` (or ``topic``) record.
        status: the status of a ``connector`` or ``task`` record (``None`` for a tombstone).
        generation: the generation the status was written in.
        topic: the topic of a ``topic`` record.
        discover_timestamp_ms: of a ``topic`` record.
    """

    kind: str
    connector: str
    task: ConnectorTaskId | None = None
    status: Status | None = None
    generation: int = -1
    topic: str | None = None
    discover_timestamp_ms: int | None = None


def decode_status(key: str, value: bytes | None) -> StatusRecord:
    """Decode one status-topic record (raises ``ValueError`` on a malformed value)."""
    data = _loads(value)

    def status() -> tuple[Status | None, int]:
        if data is None:
            return None, -1
        st = Status(State(data["state"]), data.get("worker_id", ""), data.get("trace"))
        return st, int(data.get("generation", -1))

    if key.startswith(STATUS_CONNECTOR_PREFIX):
        st, gen = status()
        return StatusRecord("connector", key[len(STATUS_CONNECTOR_PREFIX) :], None, st, gen)
    if key.startswith(STATUS_TASK_PREFIX):
        split = _split_task(key[len(STATUS_TASK_PREFIX) :])
        if split is None:
            return StatusRecord("other", "")
        st, gen = status()
        task = ConnectorTaskId(*split)
        return StatusRecord("task", task.connector, task, st, gen)
    if key.startswith(STATUS_TOPIC_PREFIX):
        topic, sep, connector = key[len(STATUS_TOPIC_PREFIX) :].rpartition(_TOPIC_SEPARATOR)
        if not sep:
            return StatusRecord("other", "")
        if data is None:
            return StatusRecord("topic", connector, topic=topic)
        inner = data["topic"]
        return StatusRecord(
            "topic",
            connector,
            task=ConnectorTaskId(connector, int(inner["task"])),
            topic=topic,
            discover_timestamp_ms=int(inner["discoverTimestamp"]),
        )
    return StatusRecord("other", "")
