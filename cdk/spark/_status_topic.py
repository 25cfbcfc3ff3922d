"""On an executor: a status store that also writes every task status to the status topic.

The task runners report through a :class:`~cdk.runtime._status.StatusStore`; on an executor that
store is :class:`TopicStatusStore`, which keeps the statuses in memory as usual and writes each
task status (``status-task-<name>-<n>``) and each newly used topic
(``status-topic-<topic>:connector-<name>``) to the status topic in Kafka Connect's format, with
the executor as ``worker_id`` and the generation's commit offset as ``generation``.
"""

from __future__ import annotations

import logging
from typing import Any

from cdk.runtime._cluster_records import (
    encode_status,
    encode_topic_status,
    status_task_key,
    status_topic_key,
)
from cdk.runtime._status import ActiveTopics, ConnectorTaskId, Status, StatusStore

__all__ = ["TopicStatusStore"]

log = logging.getLogger("cdk.spark.executor")


class _TrackedTopics(ActiveTopics):
    """Active topics that also write ``status-topic-`` records when a topic is first used."""

    __slots__ = ("_store",)

    def __init__(self, connector: str, store: TopicStatusStore) -> None:
        super().__init__(connector)
        self._store = store

    def record(self, topic: str, task: ConnectorTaskId) -> None:
        """Record ``topic`` and write its ``status-topic-`` record the first time."""
        new = topic not in self.names
        super().record(topic, task)
        if new:
            status = next((s for s in self.statuses() if s.topic == topic), None)
            if status is not None:
                self._store.write(
                    status_topic_key(topic, task.connector),
                    encode_topic_status(topic, status.task, status.discover_timestamp),
                )


class TopicStatusStore(StatusStore):
    """Statuses in memory and in the status topic.

    Args:
        topic: the status topic.
        client_config: librdkafka settings (``bootstrap.servers`` and security).
        generation: written into each status record.
        timeout_s: how long a write may take to be acknowledged.
    """

    def __init__(
        self, topic: str, client_config: dict[str, Any], generation: int, timeout_s: float = 30.0
    ) -> None:
        from cdk.kafka import new_producer

        super().__init__()
        self.topic = topic
        self.generation = generation
        self._timeout_s = timeout_s
        self._producer = new_producer(
            {
                **client_config,
                "acks": "all",
                "enable.idempotence": True,
                "partitioner": "murmur2_random",  # Java's key partitioning
                "linger.ms": 0,
            }
        )

    def put_task(self, task_id: ConnectorTaskId, status: Status) -> None:
        """Record the task's status and write it to the status topic."""
        super().put_task(task_id, status)
        self.write(status_task_key(task_id), encode_status(status, self.generation))

    def active_topics(self, connector: str) -> ActiveTopics:
        """The connector's active topics; a newly used one is written to the status topic."""
        with self._lock:
            topics = self._topics.get(connector)
            if topics is None:
                topics = self._topics[connector] = _TrackedTopics(connector, self)
            return topics

    def write(self, key: str, value: bytes | None) -> None:
        """Produce one record and wait for the acknowledgement (errors are logged)."""
        errors: list[Any] = []

        def on_delivery(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(err)

        try:
            self._producer.produce(
                self.topic, key=key.encode("utf-8"), value=value, on_delivery=on_delivery
            )
            left = self._producer.flush(self._timeout_s)
        except Exception as exc:  # noqa: BLE001 - a status write never fails the task
            log.error("Could not write %s to the status topic %s: %s", key, self.topic, exc)
            return
        if left or errors:
            log.error(
                "Could not write %s to the status topic %s: %s",
                key,
                self.topic,
                errors[0] if errors else "not acknowledged in time",
            )

    def close(self) -> None:
        """Flush what is pending."""
        self._producer.flush(self._timeout_s)
