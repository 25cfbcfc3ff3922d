"""Connector and task statuses in a compacted Kafka topic (Kafka's ``KafkaStatusBackingStore``).

In distributed mode several processes report states: the driver writes connector statuses, each
executor writes the statuses of the tasks it runs. :class:`KafkaStatusBackingStore` is a
:class:`~cdk.runtime.StatusStore` whose writes are records of the status topic
(``status-connector-<name>``, ``status-task-<name>-<n>``, ``status-topic-<topic>:connector-<name>``
in Kafka's formats, see :mod:`cdk.runtime.storage._cluster_records`) and whose reads first read the
topic to its end, so they show what any process wrote.

A ``DESTROYED`` status is written as a tombstone, as Kafka does. Each record carries a
*generation*, the connector's task-config generation (the offset of its ``commit-<name>`` record
in the config topic): a task status read with an older generation than the one already known for
that task is ignored, so a task of an ended generation that reports late (a cancelled Spark task
attempt) cannot overwrite the state of its successor.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from cdk.errors import ConfigException
from cdk.runtime._status import (
    ActiveTopics,
    ConnectorTaskId,
    State,
    Status,
    StatusStore,
    TopicStatus,
)
from cdk.runtime.storage._cluster_records import (
    decode_status,
    encode_status,
    encode_topic_status,
    status_connector_key,
    status_task_key,
    status_topic_key,
)
from cdk.runtime.util._kafka_log import KafkaBasedLog, LogRecord

__all__ = ["KafkaStatusBackingStore", "StatusStoreView"]

log = logging.getLogger("cdk.runtime.statusstore")


class _TopicActiveTopics(ActiveTopics):
    """Active topics whose first use is also written to the status topic."""

    __slots__ = ("_store",)

    def __init__(self, connector: str, store: KafkaStatusBackingStore) -> None:
        super().__init__(connector)
        self._store = store

    def record(self, topic: str, task: ConnectorTaskId) -> None:
        with self._lock:
            if topic in self._topics:
                return
            status = TopicStatus(topic, task, int(time.time() * 1000))
            self._topics[topic] = status
        self._store.write_topic(status)

    def load(self, status: TopicStatus) -> None:
        """Keep a topic read from the status topic (no write)."""
        with self._lock:
            self._topics.setdefault(status.topic, status)

    def forget(self, topic: str) -> None:
        """Drop a topic whose record was tombstoned."""
        with self._lock:
            self._topics.pop(topic, None)


class KafkaStatusBackingStore(StatusStore):
    """Statuses in the status topic, shared by the driver and the executors.

    Args:
        topic: ``status.storage.topic``.
        bootstrap_servers: the cluster.
        client_overrides: extra librdkafka settings (security and the like).
        partitions: ``status.storage.partitions`` (when the topic is created).
        replication_factor: ``status.storage.replication.factor`` (when created).
        timeout_s: how long one write or read to the end may take.
        create: create the topic when missing.

    Raises:
        ConfigException: ``topic`` is empty.
    """

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str,
        client_overrides: Mapping[str, Any] | None = None,
        *,
        partitions: int = 5,
        replication_factor: int = 3,
        timeout_s: float = 30.0,
        create: bool = True,
    ) -> None:
        if not topic:
            raise ConfigException("status.storage.topic", topic, "Must be a non-empty topic name")
        super().__init__()
        self.topic = topic
        self._generation_lock = threading.Lock()
        self._generations: dict[str, int] = {}
        #: the generation of the last status read or written per task and per connector
        self._task_generations: dict[ConnectorTaskId, int] = {}
        self._connector_generations: dict[str, int] = {}
        self._log = KafkaBasedLog(
            topic,
            bootstrap_servers,
            self._apply,
            client_overrides,
            partitions=partitions,
            replication_factor=replication_factor,
            purpose="status storage",
            timeout_s=timeout_s,
            create=create,
        )

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Create the topic if missing and read every status.

        Raises:
            ConnectException: the cluster cannot be reached or the topic cannot be read.
            ConfigException: the topic is not compacted.
        """
        self._log.start()

    def stop(self) -> None:
        """Flush pending writes and close the clients."""
        self._log.stop()

    def __enter__(self) -> KafkaStatusBackingStore:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def refresh(self) -> None:
        """Read the topic to its end (the reads do it themselves)."""
        if self._log.started:
            self._log.read_to_end()

    # ------------------------------------------------------------------ generations
    def set_generation(self, connector: str, generation: int) -> None:
        """The generation written with ``connector``'s statuses from now on."""
        with self._generation_lock:
            self._generations[connector] = generation

    def generation(self, connector: str) -> int:
        """The generation written with ``connector``'s statuses (``-1`` when never set)."""
        with self._generation_lock:
            return self._generations.get(connector, -1)

    # ------------------------------------------------------------------ reading the topic
    def _apply(self, record: LogRecord) -> None:
        raw_key, value, _partition, offset = record
        if raw_key is None:
            return
        key = raw_key.decode("utf-8", errors="replace")
        try:
            rec = decode_status(key, value)
        except (ValueError, KeyError, TypeError) as e:
            log.error("Discarding the malformed status record %s at offset %d: %s", key, offset, e)
            return
        if rec.kind == "connector":
            if rec.status is None:
                self._connector_generations.pop(rec.connector, None)
                super().remove_connector_status(rec.connector)
            else:
                self._connector_generations[rec.connector] = rec.generation
                super().put_connector(rec.connector, rec.status)
        elif rec.kind == "task":
            assert rec.task is not None
            known = self._task_generations.get(rec.task)
            if rec.status is None:
                self._task_generations.pop(rec.task, None)
                super().remove_task(rec.task)
            elif known is None or rec.generation >= known:
                self._task_generations[rec.task] = rec.generation
                super().put_task(rec.task, rec.status)
            else:
                log.debug(
                    "Ignoring status %s of task %s from generation %d (known: %d)",
                    rec.status.state,
                    rec.task,
                    rec.generation,
                    known,
                )
        elif rec.kind == "topic" and rec.topic is not None:
            topics = self._active(rec.connector)
            if rec.task is None or rec.discover_timestamp_ms is None:
                topics.forget(rec.topic)
            else:
                topics.load(TopicStatus(rec.topic, rec.task, rec.discover_timestamp_ms))

    def _new_active_topics(self, connector: str) -> ActiveTopics:
        return _TopicActiveTopics(connector, self)

    def _active(self, connector: str) -> _TopicActiveTopics:
        topics = super().active_topics(connector)
        assert isinstance(topics, _TopicActiveTopics)
        return topics

    def _send(self, key: str, value: bytes | None) -> None:
        self._log.send([(key.encode("utf-8"), value)])

    # ------------------------------------------------------------------ StatusStore: writes
    def put_connector(self, name: str, status: Status, generation: int | None = None) -> None:
        """Write connector ``name``'s status (``DESTROYED``: a tombstone)."""
        gen = self.generation(name) if generation is None else generation
        with self._log.lock:  # no read applies an older record after this one
            if status.state is State.DESTROYED:
                self._send(status_connector_key(name), None)
                super().remove_connector_status(name)
                return
            self._send(status_connector_key(name), encode_status(status, gen))
            self._connector_generations[name] = gen
            super().put_connector(name, status)

    def put_task(
        self, task_id: ConnectorTaskId, status: Status, generation: int | None = None
    ) -> None:
        """Write a task's status (``DESTROYED``: a tombstone)."""
        gen = self.generation(task_id.connector) if generation is None else generation
        if status.state is State.DESTROYED:
            self.remove_task(task_id)
            return
        with self._log.lock:
            self._send(status_task_key(task_id), encode_status(status, gen))
            self._task_generations[task_id] = max(gen, self._task_generations.get(task_id, gen))
            super().put_task(task_id, status)

    def remove_task(self, task_id: ConnectorTaskId) -> None:
        """Forget a task's status: a tombstone."""
        with self._log.lock:
            self._send(status_task_key(task_id), None)
            self._task_generations.pop(task_id, None)
            super().remove_task(task_id)

    def remove_connector(self, name: str) -> None:
        """Forget a connector, its tasks and its active topics: tombstones for all of them."""
        self.refresh()
        keys = [status_connector_key(name)]
        keys += [status_task_key(ConnectorTaskId(name, t)) for t in super().tasks(name)]
        keys += [status_topic_key(t, name) for t in super().topics(name)]
        self._log.send([(k.encode("utf-8"), None) for k in keys])
        with self._log.lock:
            for task in [t for t in self._task_generations if t.connector == name]:
                del self._task_generations[task]
        super().remove_connector(name)

    def reset_topics(self, connector: str) -> None:
        """Forget the active topics of ``connector``: tombstones for their records."""
        self.refresh()
        keys = [status_topic_key(t, connector) for t in super().topics(connector)]
        self._log.send([(k.encode("utf-8"), None) for k in keys])
        super().reset_topics(connector)

    def write_topic(self, status: TopicStatus) -> None:
        """Write a ``status-topic-`` record (a task used ``status.topic`` first)."""
        try:
            self._send(
                status_topic_key(status.topic, status.task.connector),
                encode_topic_status(status.topic, status.task, status.discover_timestamp),
            )
        except Exception as e:  # noqa: BLE001 - topic tracking must not fail a task
            log.warning("Could not record active topic %s of %s: %s", status.topic, status.task, e)

    def active_topics(self, connector: str) -> ActiveTopics:
        """The active topics of ``connector``: a first use is written to the status topic."""
        return self._active(connector)

    # ------------------------------------------------------------------ StatusStore: reads
    def connector(self, name: str) -> Status | None:
        """The status of connector ``name`` as the topic says now."""
        self.refresh()
        return super().connector(name)

    def connector_with_generation(self, name: str) -> tuple[Status, int] | None:
        """The status of connector ``name`` and the generation it was written with, now.

        The tasks of distributed mode end when this is ``UNASSIGNED`` with a generation at
        least theirs (the herder writes it so when it shuts down).
        """
        self.refresh()
        with self._log.lock:
            status = super().connector(name)
            if status is None:
                return None
            return status, self._connector_generations.get(name, -1)

    def task(self, task_id: ConnectorTaskId) -> Status | None:
        """The status of a task as the topic says now."""
        self.refresh()
        return super().task(task_id)

    def tasks(self, connector: str) -> dict[int, Status]:
        """The statuses of a connector's tasks as the topic says now."""
        self.refresh()
        return super().tasks(connector)

    def connectors(self) -> set[str]:
        """The connectors with a status in the topic."""
        self.refresh()
        return super().connectors()

    def topics(self, connector: str) -> list[str]:
        """The active topics of ``connector`` as the topic says now."""
        self.refresh()
        return super().topics(connector)

    def __repr__(self) -> str:
        return f"KafkaStatusBackingStore(topic={self.topic!r})"


class StatusStoreView(StatusStore):
    """A status store that reads and writes through to a :class:`KafkaStatusBackingStore`.

    Subclasses change what some writes do (a distributed worker's tasks write ``UNASSIGNED``
    only over their own statuses).

    Args:
        store: the status topic.
    """

    def __init__(self, store: KafkaStatusBackingStore) -> None:
        super().__init__()
        self.store = store

    def put_connector(self, name: str, status: Status) -> None:
        """Write a connector status."""
        self.store.put_connector(name, status)

    def put_task(self, task_id: ConnectorTaskId, status: Status) -> None:
        """Write a task status."""
        self.store.put_task(task_id, status)

    def connector(self, name: str) -> Status | None:
        """The connector's status in the topic."""
        return self.store.connector(name)

    def task(self, task_id: ConnectorTaskId) -> Status | None:
        """The task's status in the topic."""
        return self.store.task(task_id)

    def tasks(self, connector: str) -> dict[int, Status]:
        """The connector's task statuses in the topic."""
        return self.store.tasks(connector)

    def connectors(self) -> set[str]:
        """The connectors with a status in the topic."""
        return self.store.connectors()

    def remove_connector(self, name: str) -> None:
        """Tombstone the connector's statuses."""
        self.store.remove_connector(name)

    def remove_task(self, task_id: ConnectorTaskId) -> None:
        """Tombstone a task's status."""
        self.store.remove_task(task_id)

    def topics(self, connector: str) -> list[str]:
        """The connector's active topics."""
        return self.store.topics(connector)

    def reset_topics(self, connector: str) -> None:
        """Reset the connector's active topics."""
        self.store.reset_topics(connector)

    def active_topics(self, connector: str) -> ActiveTopics:
        """The connector's active topics (written to the topic on first use)."""
        return self.store.active_topics(connector)
