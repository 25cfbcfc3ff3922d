"""Connector configurations in a compacted Kafka topic (Kafka's ``KafkaConfigBackingStore``).

The config topic (``config.storage.topic``, one partition, compacted) holds every connector's
configuration, its task configurations, its target state and restart requests, in the records of
:mod:`cdk.runtime.storage._cluster_records`. :class:`KafkaConfigBackingStore` reads the topic from
the beginning into a :class:`ClusterConfigState` snapshot and writes records with a read to the end
afterwards, so the snapshot always includes its own writes.

As in Kafka, task configurations take effect only when the ``commit-<name>`` record that follows
them is read: ``task-<name>-<n>`` records are held back until then. A commit whose task set is
incomplete (compaction removed some task records) leaves the connector *inconsistent*: its
previous task configs stay and the herder must regenerate them. The offset of the commit record
applied last is the connector's *generation*, which the tasks of distributed mode compare with
later commits to know when their generation ended.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cdk.errors import ConfigException
from cdk.runtime._status import ConnectorTaskId, TargetState
from cdk.runtime.storage._cluster_records import (
    commit_key,
    connector_key,
    decode_config,
    encode_commit,
    encode_logger_level,
    encode_properties,
    encode_restart,
    encode_target_state,
    encode_task_count,
    logger_key,
    restart_key,
    target_state_key,
    task_count_key,
    task_key,
)
from cdk.runtime.util._kafka_log import KafkaBasedLog, LogRecord, LogWriter

__all__ = ["ClusterConfigState", "ConfigUpdateListener", "KafkaConfigBackingStore"]

log = logging.getLogger("cdk.runtime.configstore")


@dataclass(frozen=True)
class ClusterConfigState:
    """What the config topic says, as of one read (Kafka's ``ClusterConfigState``).

    Attributes:
        offset: the offset after the last record read.
        connector_configs: each connector's configuration, in the order they were first written.
        target_states: each connector's target state.
        task_configs: the committed task configs of each consistent connector, task ``i`` at
            index ``i``.
        generations: the offset of the commit record of each connector's current task configs.
        inconsistent: connectors whose last commit found an incomplete set of task configs.
        task_count_records: the last ``tasks-fencing-<name>`` record of each connector: how
            many tasks the generation had whose producers were fenced (exactly-once sources).
        pending_fencing: connectors whose task configs were committed after their last
            task-count record (Kafka's ``pendingFencing``): before their tasks start with
            exactly-once support, the previous generation's producers must be fenced.
    """

    offset: int = 0
    connector_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    target_states: Mapping[str, TargetState] = field(default_factory=dict)
    task_configs: Mapping[str, tuple[Mapping[str, str], ...]] = field(default_factory=dict)
    generations: Mapping[str, int] = field(default_factory=dict)
    inconsistent: frozenset[str] = frozenset()
    task_count_records: Mapping[str, int] = field(default_factory=dict)
    pending_fencing: frozenset[str] = frozenset()

    def connectors(self) -> list[str]:
        """The connectors with a configuration."""
        return list(self.connector_configs)

    def tasks(self, connector: str) -> list[dict[str, str]]:
        """The committed task configs of ``connector`` (none when unknown or inconsistent)."""
        return [dict(c) for c in self.task_configs.get(connector, ())]

    def target_state(self, connector: str) -> TargetState | None:
        """The target state of ``connector``, ``None`` when it has no configuration."""
        if connector not in self.connector_configs:
            return None
        return self.target_states.get(connector, TargetState.STARTED)


class ConfigUpdateListener(Protocol):
    """What a reader of the config topic is told about records it reads after :meth:`start`."""

    def on_connector_config_update(self, connector: str) -> None:
        """A connector's configuration was written."""

    def on_connector_config_remove(self, connector: str) -> None:
        """A connector was deleted (tombstone)."""

    def on_task_config_update(self, connector: str, generation: int) -> None:
        """A commit record of ``connector`` was read (``generation``: its offset)."""

    def on_target_state_change(self, connector: str, state: TargetState) -> None:
        """A connector's target state was written."""

    def on_restart_request(self, connector: str, include_tasks: bool, only_failed: bool) -> None:
        """A restart request was written."""


class KafkaConfigBackingStore:
    """Connector, task and target-state records in the config topic.

    Args:
        topic: ``config.storage.topic``.
        bootstrap_servers: the cluster.
        client_overrides: extra librdkafka settings (security and the like).
        replication_factor: ``config.storage.replication.factor`` (the topic has one
            partition, as Kafka requires, so that all records are read in order).
        listener: told about the records read after :meth:`start` (optional).
        timeout_s: how long one write or read to the end may take.
        create: create the topic when missing (a reader that only follows it passes False).

    Raises:
        ConfigException: ``topic`` is empty.
    """

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str,
        client_overrides: Mapping[str, Any] | None = None,
        *,
        replication_factor: int = 3,
        listener: ConfigUpdateListener | None = None,
        timeout_s: float = 30.0,
        create: bool = True,
    ) -> None:
        if not topic:
            raise ConfigException("config.storage.topic", topic, "Must be a non-empty topic name")
        self.topic = topic
        self._listener = listener
        #: called with ``(namespace, level)`` for each logger record read after :meth:`start`
        #: (as Kafka, records read while starting are not applied: cluster levels are not
        #: persistent across restarts)
        self.on_logger_level: Callable[[str, str], None] | None = None
        self._started = False
        self._offset = 0
        self._configs: dict[str, dict[str, str]] = {}
        self._targets: dict[str, TargetState] = {}
        self._tasks: dict[str, tuple[dict[str, str], ...]] = {}
        self._deferred: dict[str, dict[int, dict[str, str]]] = {}
        self._generations: dict[str, int] = {}
        self._inconsistent: set[str] = set()
        self._task_counts: dict[str, int] = {}
        self._pending_fencing: set[str] = set()
        self._events: list[tuple[str, tuple[Any, ...]]] = []
        self._log = KafkaBasedLog(
            topic,
            bootstrap_servers,
            self._apply,
            client_overrides,
            partitions=1,
            replication_factor=replication_factor,
            purpose="config storage",
            timeout_s=timeout_s,
            create=create,
            transactional_writes=True,  # the leader's
        )

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Create the topic if missing and read it from the beginning.

        Raises:
            ConnectException: the cluster cannot be reached or the topic cannot be read.
            ConfigException: the topic is not compacted, or has more than one partition.
        """
        self._log.start()
        if self._log.partitions != 1:
            count = self._log.partitions
            self._log.stop()
            raise ConfigException(
                f"Topic '{self.topic}' supplied via the 'config.storage.topic' property is "
                "required to have a single partition in order to guarantee consistency of "
                f"connector configurations, but found {count} partitions."
            )
        with self._log.lock:
            self._events.clear()
            self._started = True

    def stop(self) -> None:
        """Close the clients."""
        self._log.stop()
        self._started = False

    def __enter__(self) -> KafkaConfigBackingStore:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ reading
    def refresh(self) -> ClusterConfigState:
        """Read to the end of the topic (telling the listener), then return the snapshot."""
        self._log.read_to_end()
        self._dispatch()
        return self.snapshot()

    def poll(self, timeout_s: float) -> bool:
        """Read what arrives within ``timeout_s`` (telling the listener); whether anything did."""
        got = self._log.poll(timeout_s) > 0
        if got:
            self._dispatch()
        return got

    def use_writer(self, writer: LogWriter | None) -> None:
        """Write through ``writer`` (distributed mode's leader: transactions); ``None``: plainly."""
        self._log.use_writer(writer)

    def snapshot(self) -> ClusterConfigState:
        """The state as of the last read (no read)."""
        with self._log.lock:
            return ClusterConfigState(
                offset=self._offset,
                connector_configs={k: dict(v) for k, v in self._configs.items()},
                target_states=dict(self._targets),
                task_configs={k: tuple(dict(c) for c in v) for k, v in self._tasks.items()},
                generations=dict(self._generations),
                inconsistent=frozenset(self._inconsistent),
                task_count_records=dict(self._task_counts),
                pending_fencing=frozenset(self._pending_fencing),
            )

    def _dispatch(self) -> None:
        with self._log.lock:
            events, self._events = self._events, []
        listener = self._listener
        if listener is None:
            return
        for method, args in events:
            try:
                getattr(listener, method)(*args)
            except Exception:
                log.exception("The config topic listener failed on %s%r", method, args)

    def _event(self, method: str, *args: Any) -> None:
        if self._started and self._listener is not None:
            self._events.append((method, args))

    def _apply(self, record: LogRecord) -> None:
        raw_key, value, _partition, offset = record
        self._offset = offset + 1
        if raw_key is None:
            log.error("Discarding a config topic record without a key at offset %d", offset)
            return
        key = raw_key.decode("utf-8", errors="replace")
        try:
            rec = decode_config(key, value)
        except (ValueError, KeyError, TypeError) as e:
            log.error("Discarding malformed config record %s at offset %d: %s", key, offset, e)
            return
        name = rec.connector
        if rec.kind == "connector":
            if rec.properties is None:
                log.info("Removed connector %s due to null configuration", name)
                self._configs.pop(name, None)
                self._tasks.pop(name, None)
                self._deferred.pop(name, None)
                self._generations.pop(name, None)
                self._inconsistent.discard(name)
                self._task_counts.pop(name, None)
                self._pending_fencing.discard(name)
                self._event("on_connector_config_remove", name)
            else:
                self._configs[name] = rec.properties
                self._targets.setdefault(name, TargetState.STARTED)
                self._event("on_connector_config_update", name)
        elif rec.kind == "task":
            assert rec.task is not None
            if rec.properties is not None:
                self._deferred.setdefault(name, {})[rec.task] = rec.properties
        elif rec.kind == "commit":
            self._commit(name, rec.tasks or 0, offset)
        elif rec.kind == "task-count":
            if rec.tasks is None:
                self._task_counts.pop(name, None)
            else:
                self._task_counts[name] = rec.tasks
                self._pending_fencing.discard(name)
        elif rec.kind == "target-state":
            if rec.target_state is None:
                self._targets.pop(name, None)
                if name in self._configs:  # every configured connector keeps a target state
                    self._targets[name] = TargetState.STARTED
            else:
                self._targets[name] = rec.target_state
                self._event("on_target_state_change", name, rec.target_state)
        elif rec.kind == "restart":
            self._event("on_restart_request", name, rec.include_tasks, rec.only_failed)
        elif rec.kind == "logger":
            apply = self.on_logger_level
            if self._started and apply is not None and rec.level is not None:
                try:
                    apply(name, rec.level)
                except Exception:
                    log.exception("Could not apply the cluster log level %s=%s", name, rec.level)
        else:
            log.debug("Ignoring config topic record %s", key)

    def _commit(self, name: str, count: int, offset: int) -> None:
        deferred = self._deferred.pop(name, {})
        if all(i in deferred for i in range(count)):
            self._tasks[name] = tuple(deferred[i] for i in range(count))
            self._inconsistent.discard(name)
            self._generations[name] = offset
            self._pending_fencing.add(name)
            self._event("on_task_config_update", name, offset)
        else:
            log.warning(
                "Incomplete set of task configs for connector %s (commit of %d at offset %d, "
                "probably compacted): keeping the previous ones until they are rewritten",
                name,
                count,
                offset,
            )
            self._inconsistent.add(name)

    # ------------------------------------------------------------------ writing
    def _write(self, records: Sequence[tuple[str, bytes | None]]) -> list[int]:
        offsets = self._log.send([(k.encode("utf-8"), v) for k, v in records])
        self.refresh()
        return offsets

    def put_connector_config(
        self, connector: str, config: Mapping[str, str], target_state: TargetState | None = None
    ) -> None:
        """Write a connector's configuration (after its target state, when one is given)."""
        records: list[tuple[str, bytes | None]] = []
        if target_state is not None:
            records.append((target_state_key(connector), encode_target_state(target_state)))
        records.append((connector_key(connector), encode_properties(dict(config))))
        self._write(records)

    def remove_connector_config(self, connector: str) -> None:
        """Delete a connector: tombstones for its configuration and its target state."""
        self._write([(connector_key(connector), None), (target_state_key(connector), None)])

    def put_task_configs(self, connector: str, configs: Sequence[Mapping[str, str]]) -> int:
        """Write a connector's task configs followed by their commit record.

        Returns:
            The new generation: the offset of the commit record.
        """
        records: list[tuple[str, bytes | None]] = [
            (task_key(ConnectorTaskId(connector, i)), encode_properties(dict(c)))
            for i, c in enumerate(configs)
        ]
        records.append((commit_key(connector), encode_commit(len(configs))))
        return self._write(records)[-1]

    def put_task_count_record(self, connector: str, tasks: int) -> None:
        """Write that the producers of the generation before were fenced (``tasks-fencing-``).

        ``tasks`` is the number of tasks of the connector's current generation (Kafka's
        ``putTaskCountRecord``): the next fencing fences that many producers.
        """
        self._write([(task_count_key(connector), encode_task_count(tasks))])

    def put_target_state(self, connector: str, state: TargetState) -> None:
        """Write a connector's target state."""
        self._write([(target_state_key(connector), encode_target_state(state))])

    def put_restart_request(self, connector: str, include_tasks: bool, only_failed: bool) -> None:
        """Write a restart request (``restart-connector-<name>``)."""
        self._write([(restart_key(connector), encode_restart(include_tasks, only_failed))])

    def put_logger_level(self, namespace: str, level: str) -> None:
        """Write a cluster-wide log level (``logger-cluster-<namespace>``), as Kafka's workers."""
        self._write([(logger_key(namespace), encode_logger_level(level))])

    def __repr__(self) -> str:
        return f"KafkaConfigBackingStore(topic={self.topic!r})"
