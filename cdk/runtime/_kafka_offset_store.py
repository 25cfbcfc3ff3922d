"""Offsets in a compacted Kafka topic, as Kafka Connect's distributed workers keep them."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Collection, Mapping
from typing import Any

from cdk.errors import ConfigException, ConnectException
from cdk.runtime._offset_store import OffsetBackingStore, apply_changes
from cdk.runtime._topics import ensure_topic

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
    ) -> None:
        if not topic:
            raise ConfigException("offset.storage.topic", topic, "Must be a non-empty topic name")
        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self._overrides = dict(client_overrides or {})
        self._partitions = partitions
        self._replication_factor = replication_factor
        self._timeout_s = timeout_s
        self._lock = threading.RLock()
        self._data: dict[bytes, bytes] = {}
        self._producer: Any = None
        self._consumer: Any = None
        self._assigned: list[Any] = []

    def _client_config(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        config: dict[str, Any] = {"bootstrap.servers": self.bootstrap_servers}
        config.update(extra)
        config.update(self._overrides)
        return config

    def start(self) -> None:
        """Create the topic if missing and read every stored offset.

        Raises:
            ConnectException: the cluster cannot be reached or the topic cannot be created
                or read.
        """
        from confluent_kafka import TopicPartition

        from cdk.kafka import new_admin, new_consumer, new_producer

        with self._lock:
            if self._consumer is not None:
                return
            admin = new_admin(self._client_config({}))
            num_partitions = ensure_topic(
                admin,
                self.topic,
                partitions=self._partitions,
                replication_factor=self._replication_factor,
                config={"cleanup.policy": "compact"},
                timeout_s=self._timeout_s,
                purpose="offset storage",
            )
            _check_compacted(admin, self.topic, self._timeout_s)
            self._producer = new_producer(
                self._client_config(
                    {
                        "acks": "all",
                        "max.in.flight.requests.per.connection": 1,
                        "partitioner": "murmur2_random",
                        "linger.ms": 0,
                    }
                )
            )
            self._consumer = new_consumer(
                self._client_config(
                    {
                        "group.id": f"cdk-offsets-reader-{os.getpid()}-{id(self)}",
                        "enable.auto.commit": False,
                        "enable.auto.offset.store": False,
                        "auto.offset.reset": "earliest",
                        "isolation.level": "read_committed",
                        "enable.partition.eof": True,
                        "fetch.wait.max.ms": 50,
                    }
                )
            )
            self._assigned = [
                TopicPartition(self.topic, p, -2)  # OFFSET_BEGINNING
                for p in range(num_partitions)
            ]
            self._consumer.assign(self._assigned)
            try:
                self._read_to_end()
            except BaseException:
                self._close_clients()
                raise

    def _read_to_end(self) -> None:
        """Consume until every partition reached the end it had when this call began."""
        from confluent_kafka import KafkaError

        consumer = self._consumer
        if consumer is None:
            raise ConnectException(f"The offset store on topic {self.topic} is not started")
        deadline = time.monotonic() + self._timeout_s
        ends: dict[int, int] = {}
        for tp in self._assigned:
            try:
                _low, high = consumer.get_watermark_offsets(tp, timeout=self._timeout_s)
            except Exception as e:
                raise ConnectException(
                    f"Could not read the end offsets of the offsets topic {self.topic}: {e}"
                ) from e
            if high > 0:
                ends[tp.partition] = high
        positions: dict[int, int] = dict.fromkeys(ends, -1)
        for tp in consumer.position([tp for tp in self._assigned if tp.partition in ends]):
            if tp.offset >= 0:
                positions[tp.partition] = tp.offset
        while any(positions[p] < end for p, end in ends.items()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ConnectException(
                    f"Timed out reading the offsets topic {self.topic} to its end"
                )
            for message in consumer.consume(num_messages=500, timeout=min(remaining, 0.5)):
                partition = message.partition()
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        if partition in positions:
                            positions[partition] = max(positions[partition], message.offset())
                        continue
                    raise ConnectException(f"Error reading the offsets topic {self.topic}: {error}")
                if partition in positions:
                    positions[partition] = max(positions[partition], message.offset() + 1)
                key = message.key()
                if key is None:
                    continue
                value = message.value()
                if value is None:
                    self._data.pop(key, None)
                else:
                    self._data[key] = value

    def get(self, keys: Collection[bytes]) -> dict[bytes, bytes]:
        """Read to the end of the topic, then return the stored values of ``keys``."""
        with self._lock:
            self._read_to_end()
            return {k: self._data[k] for k in keys if k in self._data}

    def all(self) -> dict[bytes, bytes]:
        """Read to the end of the topic, then return every stored key and value."""
        with self._lock:
            self._read_to_end()
            return dict(self._data)

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Produce ``values`` and wait until every record is acknowledged.

        Raises:
            ConnectException: a record was rejected or not acknowledged in time.
        """
        if not values:
            return
        with self._lock:
            producer = self._producer
            if producer is None:
                raise ConnectException(f"The offset store on topic {self.topic} is not started")
            errors: list[Any] = []

            def on_delivery(err: Any, _msg: Any) -> None:
                if err is not None:
                    errors.append(err)

            try:
                for key, value in values.items():
                    while True:
                        try:
                            producer.produce(
                                self.topic, key=key, value=value, on_delivery=on_delivery
                            )
                            break
                        except BufferError:
                            producer.poll(0.1)
            except Exception as e:
                producer.flush(self._timeout_s)
                raise ConnectException(f"Could not write offsets to topic {self.topic}: {e}") from e
            left = producer.flush(self._timeout_s)
            if left:
                raise ConnectException(
                    f"Timed out writing offsets to topic {self.topic}: "
                    f"{left} records unacknowledged"
                )
            if errors:
                raise ConnectException(
                    f"Could not write offsets to topic {self.topic}: {errors[0]}"
                )
            apply_changes(self._data, values)

    def stop(self) -> None:
        """Flush pending writes and close the clients."""
        with self._lock:
            self._close_clients()

    def _close_clients(self) -> None:
        if self._producer is not None:
            self._producer.flush(self._timeout_s)
            self._producer = None
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(topic={self.topic!r})"


def _check_compacted(admin: Any, topic: str, timeout_s: float) -> None:
    """Refuse an offsets topic whose ``cleanup.policy`` is not ``compact`` (as Kafka does)."""
    from confluent_kafka.admin import ConfigResource  # type: ignore[attr-defined]

    try:
        futures = admin.describe_configs([ConfigResource("topic", topic)])
        entries = next(iter(futures.values())).result(timeout=timeout_s)
        policy = entries["cleanup.policy"].value
    except Exception as e:  # noqa: BLE001 - a cluster that cannot describe configs
        log.debug("Could not check the cleanup.policy of topic %s: %s", topic, e)
        return
    if policy is not None and {p.strip() for p in str(policy).split(",")} != {"compact"}:
        raise ConfigException(
            f"The offsets topic '{topic}' must have 'cleanup.policy=compact' so that source "
            f"offsets are kept, but it has 'cleanup.policy={policy}'. Use another topic for "
            "'offset.storage.topic' or change the topic's policy to compact."
        )
