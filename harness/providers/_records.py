"""Writing and reading topics without consumer groups (no group join to wait for).

Records are counted by reading them, since Tansu's high watermark can lag behind.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, KafkaError, TopicPartition

from cdk.errors import ConnectException
from cdk.kafka import (
    consumer_config,
    new_admin,
    new_consumer,
    new_producer,
    producer_config,
)

__all__ = ["FAST_GROUP_JOIN", "Record", "consume_all", "produce"]

#: Consumer settings that make Tansu complete a group join in about 3 s instead of about 23 s.
FAST_GROUP_JOIN: dict[str, Any] = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}


@dataclass(frozen=True)
class Record:
    """A record read back from Kafka by :func:`consume_all`."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int | None = None


def produce(
    bootstrap_servers: str,
    topic: str,
    values: Iterable[bytes | str | tuple[bytes | str | None, bytes | str | None] | None],
    *,
    partition: int | None = None,
    headers: Mapping[str, bytes | str] | None = None,
    timeout: float = 30.0,
    client_config: Mapping[str, Any] | None = None,
) -> int:
    """Produce records to ``topic`` and wait until all are acknowledged; return how many.

    Each element is a value, or a ``(key, value)`` pair. ``client_config`` holds the cluster's
    security settings (``security.protocol``, ``ssl.*``; see ``KafkaProvider.client_config``).

    Raises:
        ConnectException: a record was not acknowledged within ``timeout`` seconds.
    """
    producer = new_producer(
        producer_config(bootstrap_servers, {"linger.ms": 5, **(client_config or {})})
    )
    errors: list[str] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    count = 0
    extra: dict[str, Any] = {"partition": partition} if partition is not None else {}
    if headers:
        extra["headers"] = list(headers.items())
    for item in values:
        key, value = item if isinstance(item, tuple) else (None, item)
        while True:
            try:
                producer.produce(topic, value=value, key=key, on_delivery=on_delivery, **extra)
                break
            except BufferError:
                producer.poll(0.1)
        count += 1
        producer.poll(0)
    remaining = producer.flush(timeout)
    if remaining or errors:
        raise ConnectException(
            f"{remaining} of {count} records to '{topic}' not acknowledged within {timeout:g}s"
            + (f"; errors: {errors[:3]}" if errors else "")
        )
    return count


def consume_all(
    bootstrap_servers: str,
    topic: str,
    *,
    min_records: int | None = None,
    timeout: float = 30.0,
    idle: float = 1.0,
    client_config: Mapping[str, Any] | None = None,
) -> list[Record]:
    """Read ``topic`` from the beginning of every partition, without a consumer group.

    Stops once ``min_records`` records are read (``timeout`` seconds at most; fewer records is
    an AssertionError), or, without ``min_records``, once every partition was read to its end
    and nothing new arrived for ``idle`` seconds (the end Tansu reports can lag). Records come
    back in partition, then offset order. ``client_config``: the cluster's security settings.
    """
    deadline = time.monotonic() + timeout
    security = dict(client_config or {})
    partitions = _wait_partitions(bootstrap_servers, topic, deadline, security)
    consumer = new_consumer(
        consumer_config(
            bootstrap_servers,
            overrides={"fetch.wait.max.ms": 50, "enable.partition.eof": True, **security},
        )
    )
    records: list[Record] = []
    at_end: set[int] = set()
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        last_new = time.monotonic()
        while True:
            now = time.monotonic()
            if min_records is not None and len(records) >= min_records:
                break
            if min_records is None and len(at_end) == len(partitions) and now - last_new >= idle:
                break
            if now >= deadline:
                if min_records is None:
                    break
                raise AssertionError(
                    f"read {len(records)} of at least {min_records} records from '{topic}' "
                    f"within {timeout:g}s"
                )
            for msg in consumer.consume(500, timeout=min(0.1, max(0.01, deadline - now))):
                error = msg.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        at_end.add(msg.partition() or 0)
                    continue
                at_end.discard(msg.partition() or 0)
                records.append(
                    Record(
                        topic=msg.topic() or topic,
                        partition=msg.partition() or 0,
                        offset=msg.offset() or 0,
                        key=msg.key(),
                        value=msg.value(),
                        headers=_headers(msg.headers()),
                        timestamp=msg.timestamp()[1],
                    )
                )
                last_new = time.monotonic()
    finally:
        consumer.close()
    records.sort(key=lambda r: (r.partition, r.offset))
    return records


def _headers(raw: Any) -> list[tuple[str, bytes | None]]:
    items = raw.items() if isinstance(raw, Mapping) else (raw or [])
    return [(str(k), v.encode() if isinstance(v, str) else v) for k, v in items]


def _wait_partitions(
    bootstrap_servers: str, topic: str, deadline: float, security: Mapping[str, Any]
) -> list[int]:
    admin = new_admin({"bootstrap.servers": bootstrap_servers, **security})
    while True:
        remaining = deadline - time.monotonic()
        with contextlib.suppress(Exception):
            metadata = admin.list_topics(topic=topic, timeout=max(0.5, min(5.0, remaining)))
            described = metadata.topics.get(topic)
            if described is not None and described.error is None and described.partitions:
                return sorted(described.partitions)
        if remaining <= 0:
            raise AssertionError(f"topic '{topic}' does not exist at {bootstrap_servers}")
        time.sleep(0.05)
