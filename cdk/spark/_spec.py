"""What the driver ships to each Spark task of a generation (pickled with the job's closure).

:class:`TaskSpec` holds plain data only (strings, numbers, tuples and dicts), so it pickles to the
executors whatever the driver's worker configuration holds: plugin classes given as classes are
shipped as their import paths, and the driver's ``sys.path`` goes with it so that connectors
importable on the driver (a project checkout, a test directory) import on a loopback cluster's
executors too.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdk.errors import ConfigException

__all__ = [
    "CONFIG_TOPIC_CONFIG",
    "OFFSET_TOPIC_CONFIG",
    "STATUS_TOPIC_CONFIG",
    "TaskSpec",
    "class_path",
    "plain_props",
    "required_topic",
]

CONFIG_TOPIC_CONFIG = "config.storage.topic"
OFFSET_TOPIC_CONFIG = "offset.storage.topic"
STATUS_TOPIC_CONFIG = "status.storage.topic"


def class_path(cls: type) -> str:
    """``module:QualName`` of a class (what :func:`cdk.config.load_class` reads back)."""
    return f"{cls.__module__}:{cls.__qualname__}"


def plain_props(props: Mapping[str, Any]) -> dict[str, Any]:
    """Worker properties with class values replaced by their import paths (picklable anywhere)."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        if isinstance(value, type):
            out[str(key)] = class_path(value)
        elif isinstance(value, (list, tuple)):
            out[str(key)] = ",".join(
                class_path(v) if isinstance(v, type) else str(v) for v in value
            )
        else:
            out[str(key)] = value
    return out


def required_topic(props: Mapping[str, Any], key: str) -> str:
    """The value of a ``*.storage.topic`` worker property.

    Raises:
        ConfigException: it is missing or empty (distributed mode needs all three).
    """
    value = props.get(key)
    if value is None or not str(value).strip():
        raise ConfigException(
            f'Missing required configuration "{key}" which has no default value. '
            "Distributed mode keeps its state in Kafka topics: set config.storage.topic, "
            "offset.storage.topic and status.storage.topic in the worker properties."
        )
    return str(value).strip()


@dataclass(frozen=True)
class TaskSpec:
    """One generation of one connector, as its Spark tasks need it.

    Attributes:
        connector: the connector's name.
        generation: the offset of the generation's ``commit-<name>`` record in the config topic.
        connector_config: the stored connector config (variables unresolved).
        task_configs: the stored task configs by task number (variables unresolved).
        target_state: the target state at launch (``STARTED``, ``PAUSED``).
        worker_props: the worker properties without ``spark.*`` keys, classes as import paths.
        extra_plugins: import paths of plugin classes registered on the driver beyond the
            installed ones.
        python_path: the driver's ``sys.path`` (existing directories are added on executors).
        status_offsets: the status topic's end offsets by partition when the job was launched:
            ``status-connector-<name>`` ``UNASSIGNED`` records from there on end the generation.
        graceful_timeout_ms: ``task.shutdown.graceful.timeout.ms``.
    """

    connector: str
    generation: int
    connector_config: dict[str, str]
    task_configs: dict[int, dict[str, str]]
    target_state: str
    worker_props: dict[str, Any]
    extra_plugins: tuple[str, ...] = ()
    python_path: tuple[str, ...] = field(default_factory=lambda: tuple(sys.path))
    status_offsets: dict[int, int] = field(default_factory=dict)
    graceful_timeout_ms: int = 5000

    @property
    def config_topic(self) -> str:
        """``config.storage.topic``."""
        return required_topic(self.worker_props, CONFIG_TOPIC_CONFIG)

    @property
    def status_topic(self) -> str:
        """``status.storage.topic``."""
        return required_topic(self.worker_props, STATUS_TOPIC_CONFIG)

    @property
    def offset_topic(self) -> str:
        """``offset.storage.topic``."""
        return required_topic(self.worker_props, OFFSET_TOPIC_CONFIG)

    def int_prop(self, key: str, default: int) -> int:
        """An integer worker property (``offset.storage.partitions`` and the like)."""
        value = self.worker_props.get(key)
        try:
            return default if value is None or str(value).strip() == "" else int(str(value))
        except ValueError as exc:
            raise ConfigException(key, value, "Not a number") from exc


def worker_props_without_spark(props: Mapping[str, Any]) -> dict[str, Any]:
    """The worker properties the executors need (``spark.*`` keys stay on the driver)."""
    return {k: v for k, v in plain_props(props).items() if not str(k).startswith("spark.")}


def extra_plugin_paths(classes: Iterable[type]) -> tuple[str, ...]:
    """Import paths of the driver's extra plugin classes."""
    return tuple(class_path(c) for c in classes)
