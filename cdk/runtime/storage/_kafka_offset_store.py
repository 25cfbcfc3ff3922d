"""Offsets in a compacted Kafka topic, as Kafka Connect's distributed workers keep them."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

from cdk.errors import ConfigException, ConnectException
from cdk.runtime.storage._offset_store import OffsetBackingStore, apply_changes
from cdk.runtime.util._kafka_log import KafkaBasedLog, LogRecord

__all__ = ["KafkaOffsetBackingStore"]

log = logging.getLogger("cdk.runtime.offsets")


class KafkaOffsetBackingStore(OffsetBackingStore):
    """Offsets in a compacted Kafka topic, as Kafka Connect's distributed workers keep them.

    :meth:`start` creates the topic when it is missing (``cleanup.policy=compact``; Kafka's
    defaults of 25 partitions and replication factor 3, the latter capped to the number of
    brokers) and reads it from the beginning. :meth:`get` and :meth:`all` first read to the end
    of the topic, so they see what other workers wrote. :meth:`set` produces the keys and values
    (a ``None`` value is a tombstone) and waits until the broker acknowledged all of them.

    Args:
        topic: the offsets topic (Kafka's ``offset.storage.topic``).
        bootstrap_servers: the cluster to use.
        client_overrides: extra librdkafka settings for the producer, consumer and admin
            client (security settings and the like).
        partitions: partitions of the topic when it is created.
        replication_factor: replication factor of the topic when it is created (capped to the
            number of brokers).
        timeout_s: how long one write or read to the end may take.
        transactional: exactly-once tasks write the topic in transactions: it is read from
            the transaction markers, as a ``read_committed`` consumer reads it on Kafka (the
            offsets of aborted transactions hidden, a read to the end ending at the first open
            one: a crashed task's, until its successor fences it), on the embedded broker too,
            whose fetch answers do not list aborted transactions (see
            :class:`~cdk.runtime.util.KafkaBasedLog`).
    """

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str,
        client_overrides: Mapping[str, Any] | None = None,
        *,
        partitions: int = 25,
        replication_factor: int = 3,
        timeout_s: float = 30.0,
        transactional: bool = False,
    ) -> None:
        if not topic:
            raise ConfigException("offset.storage.topic", topic, "Must be a non-empty topic name")
        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self._data: dict[bytes, bytes] = {}
        self._log = KafkaBasedLog(
            topic,
            bootstrap_servers,
            self._apply,
            client_overrides,
            partitions=partitions,
            replication_factor=replication_factor,
            purpose="offset storage",
            timeout_s=timeout_s,
            # exactly-once tasks write it in transactions: read from the markers (KafkaBasedLog)
            stop_at_stable_offset=transactional,
        )

    def _apply(self, record: LogRecord) -> None:
        key, value, _partition, _offset = record
        if key is None:
            return
        if value is None:
            self._data.pop(key, None)
        else:
            self._data[key] = value

    def start(self) -> None:
        """Create the topic if missing and read every stored offset.

        Raises:
            ConnectException: the cluster cannot be reached or the topic cannot be created
                or read.
            ConfigException: the topic exists and is not compacted.
        """
        self._log.start()

    def get(self, keys: Collection[bytes]) -> dict[bytes, bytes]:
        """Read to the end of the topic, then return the stored values of ``keys``."""
        with self._log.lock:
            self._log.read_to_end()
            return {k: self._data[k] for k in keys if k in self._data}

    def all(self) -> dict[bytes, bytes]:
        """Read to the end of the topic, then return every stored key and value."""
        with self._log.lock:
            self._log.read_to_end()
            return dict(self._data)

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Produce ``values`` and wait until every record is acknowledged.

        Raises:
            ConnectException: a record was rejected or not acknowledged in time.
        """
        if not values:
            return
        with self._log.lock:
            if not self._log.started:
                raise ConnectException(f"The offset store on topic {self.topic} is not started")
            self._log.send(list(values.items()))
            apply_changes(self._data, values)

    def stop(self) -> None:
        """Flush pending writes and close the clients."""
        self._log.stop()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(topic={self.topic!r})"
