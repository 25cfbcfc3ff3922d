"""The ``cdk`` format's options: the connector's config plus the ``cdk.*`` options of the kit.

Every option that does not start with ``cdk.`` is the connector's configuration, exactly as a
Kafka Connect properties file would give it (``connector.class``, ``tasks.max``, ``topics``, the
connector's own keys). Spark lower-cases option names, which matches Kafka's lower-case keys.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _json_str
from typing import Any, Literal

from cdk.api import Connector, SinkConnector, SourceConnector
from cdk.errors import ConfigException, ConnectException

__all__ = ["Options", "canonical", "parse_options", "plugins", "start_connector"]

log = logging.getLogger(__name__)

_PREFIX = "cdk."
#: Connector keys a worker applies and the cdk format does not: refused rather than ignored, as
#: ignoring them would change the data silently.
_NOT_APPLIED = ("transforms", "predicates")
#: The kit's own options: name -> (default, what it means).
KIT_OPTIONS: dict[str, tuple[str, str]] = {
    "cdk.idle.polls": (
        "1",
        "Bounded reads end after this many consecutive polls returned nothing new.",
    ),
    "cdk.max.records.per.batch": (
        "10000",
        "Streaming reads: at most this many records per task in one micro-batch.",
    ),
    "cdk.replay.timeout.ms": (
        "60000",
        "Streaming reads: how long a micro-batch's replay may poll without reaching the batch's "
        "end offset before the read fails (the connector's offsets are not replayable).",
    ),
    "cdk.delivery": (
        "exactly-once",
        "Streaming reads: exactly-once (a replay must reach the batch's end offsets) or "
        "at-least-once (a replay that does not reach them ends at the first idle poll).",
    ),
    "cdk.batch.size": ("1000", "Sinks: rows per put() call."),
    "cdk.write.id": (
        "",
        "Batch writes: the id giving the sink's offsets (write id << 32 + row number); "
        "default: the epoch second the write started.",
    ),
    "cdk.retry.timeout.ms": (
        "60000",
        "How long a task's RetriableException is retried before the Spark task fails.",
    ),
    "cdk.sink.idle.ms": (
        "0",
        "Streaming writes: above 0, a sink task stays started in the executor's Python worker "
        "for the query's next micro-batches, and is stopped after this long without one (its "
        "stop() then comes from a thread of the kit); 0: a task per micro-batch and partition, "
        "stopped at its end.",
    ),
}


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def canonical(value: Any) -> str:
    """A canonical JSON text (sorted keys) for a source partition or offset.

    The text is ``json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)``
    (checkpoints hold it, so it never changes); a flat map of string keys to strings and
    integers, what most connectors' partitions and offsets are, is written without the
    encoder's machinery.
    """
    if type(value) is dict:
        parts = []
        for key in sorted(value) if len(value) > 1 else value:
            if type(key) is not str:
                return _CANONICAL.encode(value)
            item = value[key]
            kind = type(item)
            if kind is int:
                text = int.__repr__(item)
            elif kind is str:
                text = _json_str(item)
            else:
                return _CANONICAL.encode(value)
            parts.append(_json_str(key) + ":" + text)
        return "{" + ",".join(parts) + "}"
    return _CANONICAL.encode(value)


@dataclass(frozen=True)
class Options:
    """The parsed options: the connector config and the kit's settings."""

    connector_class: str
    config: dict[str, str]
    idle_polls: int
    max_records: int
    replay_timeout_ms: int
    exactly_once: bool
    batch_size: int
    write_id: int | None
    retry_timeout_ms: int
    sink_idle_ms: int = 0

    @property
    def name(self) -> str:
        """The connector's name (``name`` option, else its class)."""
        return self.config.get("name") or self.connector_class


def _int(options: Mapping[str, str], key: str, minimum: int) -> int:
    raw = options.get(key, KIT_OPTIONS[key][0])
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ConfigException(key, raw, "Not a number") from None
    if value < minimum:
        raise ConfigException(key, raw, f"Value must be at least {minimum}")
    return value


def parse_options(options: Mapping[str, str]) -> Options:
    """Split Spark's options into the connector config and the kit's settings.

    Raises:
        ConfigException: ``connector.class`` is missing or a ``cdk.*`` option is unknown or bad.
    """
    items = {str(k).lower(): str(v) for k, v in dict(options).items()}
    unknown = sorted(k for k in items if k.startswith(_PREFIX) and k not in KIT_OPTIONS)
    if unknown:
        raise ConfigException(
            f"Unknown option(s) {', '.join(unknown)} of the cdk format; known: "
            f"{', '.join(sorted(KIT_OPTIONS))} (every other option is the connector's config)"
        )
    config = {k: v for k, v in items.items() if not k.startswith(_PREFIX) and k != "path"}
    chain = sorted(
        k
        for k, v in config.items()
        if k.startswith(_NOT_APPLIED) and (v.strip() or k not in _NOT_APPLIED)
    )
    if chain:
        raise ConfigException(
            f"Option(s) {', '.join(chain)}: the cdk format does not apply transforms or "
            "predicates (its rows are the records as the connector produces them, or as the "
            "sink receives them): express them as DataFrame operations (select, withColumn, "
            "filter), or run the connector under a worker (cdk standalone, cdk distributed)"
        )
    connector_class = config.get("connector.class", "").strip()
    if not connector_class:
        raise ConfigException(
            "Missing required option connector.class of the cdk format: "
            '.option("connector.class", "FileStreamSource") or a class path'
        )
    delivery = items.get("cdk.delivery", KIT_OPTIONS["cdk.delivery"][0]).strip().lower()
    if delivery not in ("exactly-once", "at-least-once"):
        raise ConfigException("cdk.delivery", delivery, "must be exactly-once or at-least-once")
    write_id_raw = items.get("cdk.write.id", "").strip()
    return Options(
        connector_class=connector_class,
        config=config,
        idle_polls=_int(items, "cdk.idle.polls", 1),
        max_records=_int(items, "cdk.max.records.per.batch", 1),
        replay_timeout_ms=_int(items, "cdk.replay.timeout.ms", 0),
        exactly_once=delivery == "exactly-once",
        batch_size=_int(items, "cdk.batch.size", 1),
        write_id=_int(items, "cdk.write.id", 0) if write_id_raw else None,
        retry_timeout_ms=_int(items, "cdk.retry.timeout.ms", 0),
        sink_idle_ms=_int(items, "cdk.sink.idle.ms", 0),
    )


def _validate(connector: Connector, config: dict[str, str]) -> None:
    problems = []
    for value in connector.validate(config).config_values:
        problems += [f"{value.name}: {message}" for message in value.error_messages]
    if problems:
        raise ConfigException(
            f"Invalid configuration of connector {config.get('connector.class')}: "
            + "; ".join(problems)
        )


_plugins: Any = None
_plugins_lock = threading.Lock()


def plugins() -> Any:
    """The process's :class:`~cdk.runtime.Plugins` (discovery runs once per process).

    Spark's Python workers live across tasks, and each micro-batch plans, writes and commits
    through the connector's classes: discovering the plugins again each time (every plugin's
    ``version()``, the entry points) cost a good part of a micro-batch.
    """
    global _plugins
    with _plugins_lock:
        if _plugins is None:
            from cdk.runtime import Plugins

            _plugins = Plugins()
        return _plugins


def start_connector(
    options: Options, kind: Literal["source", "sink"]
) -> tuple[Connector, list[dict[str, str]]]:
    """Load, validate and start the connector; return it with its task configs.

    The caller stops the connector. ``tasks.max`` (default 1) bounds the task configs.

    Raises:
        ConfigException: unknown class, wrong kind (a sink where a source is needed) or an
            invalid config, naming the key.
    """
    connector = plugins().new_connector(options.connector_class)
    if not isinstance(connector, SourceConnector if kind == "source" else SinkConnector):
        wanted = kind
        where = "read" if kind == "source" else "write"
        raise ConfigException(
            f"Connector {options.connector_class} is not a {wanted} connector: Spark can only "
            f"{where} through a {wanted} connector (SourceConnector/SinkConnector)"
        )
    tasks_max = _tasks_max(options.config)
    _validate(connector, options.config)
    connector.initialize(_context(options, kind))
    try:
        connector.start(dict(options.config))
        configs = connector.task_configs(tasks_max)
    except ConnectException:
        connector.stop()
        raise
    except Exception as exc:
        connector.stop()
        raise ConnectException(
            f"Connector {options.name} failed to start: {type(exc).__name__}: {exc}"
        ) from exc
    if not configs:
        connector.stop()
        raise ConnectException(f"Connector {options.name} returned no task configs")
    return connector, [{**options.config, **c} for c in configs]


def _tasks_max(config: Mapping[str, str]) -> int:
    raw = config.get("tasks.max", "1")
    try:
        value = int(raw)
    except ValueError:
        raise ConfigException("tasks.max", raw, "Not a number") from None
    if value < 1:
        raise ConfigException("tasks.max", raw, "Value must be at least 1")
    return value


def _context(options: Options, kind: Literal["source", "sink"]) -> Any:
    """The connector's context in a Spark query.

    A query's task configs are fixed when it starts, so a reconfiguration request is logged (a
    restarted query picks the change up); an error a connector raises from its own threads is
    logged as such. A source connector sees no stored offsets: they live in Spark's checkpoint.
    """
    from cdk.runtime._contexts import WorkerSinkConnectorContext, WorkerSourceConnectorContext
    from cdk.spark._datasource_tasks import _MapOffsetReader

    name = options.connector_class

    def reconfigure() -> None:
        log.warning(
            "Connector %s asked for new task configs; a Spark query keeps the task configs it "
            "started with: restart the query to pick the change up",
            name,
        )

    def error(exc: BaseException) -> None:
        log.error("Connector %s reported an unrecoverable error: %s", name, exc)

    if kind == "source":
        return WorkerSourceConnectorContext(name, reconfigure, error, _MapOffsetReader({}))
    return WorkerSinkConnectorContext(name, reconfigure, error)
