"""The ``cdk-kafka`` format: Kafka topics as a Spark source and sink on confluent-kafka.

For clusters without Spark's Kafka jars (the pyspark wheel has none) and the embedded broker.
Rows have the columns of Spark's own Kafka source: ``key`` and ``value`` (binary), ``topic``,
``partition``, ``offset``, ``timestamp``, ``headers``. Options: ``kafka.bootstrap.servers``
(other ``kafka.*`` options go to the clients), ``subscribe`` (comma-separated topics) to read,
``topic`` (or a ``topic`` column) to write. A read ends at the last records found when it is
planned (the high watermarks, read past while more records come: Tansu reports them a batch
late); streaming offsets are ``{"topic:partition": next offset}``. Writes use the idempotent
producer and flush at the end of each partition: at-least-once.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Iterator, Sequence
from typing import Any

from cdk.errors import ConfigException, ConnectException
from cdk.spark._lazy import require
from cdk.spark._register import KAFKA_FORMAT

require("pyspark.sql.datasource")
from pyspark.sql.datasource import (  # noqa: E402
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)

__all__ = ["KafkaDataSource"]

SCHEMA = (
    "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, "
    "timestamp TIMESTAMP, headers ARRAY<STRUCT<key: STRING, value: BINARY>>"
)
_UTC = _dt.timezone.utc
_TIMEOUT_S = 30.0
#: How long one consume() call of a read waits (the read gives up after _TIMEOUT_S without one).
_POLL_S = 0.5
_PROBE_IDLE_S = 0.5


def _client_config(options: dict[str, str]) -> dict[str, str]:
    config = {k[len("kafka.") :]: v for k, v in options.items() if k.startswith("kafka.")}
    if not config.get("bootstrap.servers"):
        raise ConfigException(
            "Missing required option kafka.bootstrap.servers of the cdk-kafka format"
        )
    return config


def _topics(options: dict[str, str]) -> list[str]:
    topics = [t.strip() for t in options.get("subscribe", "").split(",") if t.strip()]
    if not topics:
        raise ConfigException("Missing required option subscribe (topics to read, comma-separated)")
    return topics


def _watermarks(config: dict[str, str], topics: list[str]) -> dict[str, tuple[int, int]]:
    from confluent_kafka import TopicPartition

    from cdk.kafka import consumer_config, new_consumer

    consumer = new_consumer(consumer_config(config["bootstrap.servers"], overrides=config))
    try:
        metadata = consumer.list_topics(timeout=_TIMEOUT_S)
        marks: dict[str, tuple[int, int]] = {}
        for topic in topics:
            described = metadata.topics.get(topic)
            if described is None or described.error is not None:
                raise ConnectException(f"Topic {topic!r} does not exist or cannot be described")
            for partition in described.partitions:
                low, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=_TIMEOUT_S
                )
                marks[f"{topic}:{partition}"] = (low, high)
        return _probe_ends(consumer, marks)
    finally:
        consumer.close()


def _probe_ends(consumer: Any, marks: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """Read past each reported high watermark: some brokers (Tansu) report it a batch late."""
    from confluent_kafka import TopicPartition

    if not marks:
        return marks
    ends = dict(marks)
    assignment = []
    for key, (_, high) in marks.items():
        topic, _, number = key.rpartition(":")
        assignment.append(TopicPartition(topic, int(number), high))
    consumer.assign(assignment)
    while True:
        messages = consumer.consume(1000, timeout=_PROBE_IDLE_S)
        if not messages:
            return ends
        for m in messages:
            if m.error() is None:
                key = f"{m.topic()}:{m.partition()}"
                low, high = ends[key]
                ends[key] = (low, max(high, m.offset() + 1))


class _Range(InputPartition):
    def __init__(self, key: str, start: int, end: int) -> None:
        super().__init__(key)
        self.key, self.start, self.end = key, start, end


def _read(config: dict[str, str], part: _Range) -> Iterator[tuple[Any, ...]]:
    from confluent_kafka import TopicPartition

    from cdk.kafka import consumer_config, new_consumer

    topic, _, number = part.key.rpartition(":")
    if part.end <= part.start:
        return
    consumer = new_consumer(consumer_config(config["bootstrap.servers"], overrides=config))
    assigned = TopicPartition(topic, int(number), part.start)
    try:
        consumer.assign([assigned])
        position = part.start
        deadline = time.monotonic() + _TIMEOUT_S
        while position < part.end:
            # consume() waits for as many records as asked or its timeout: ask for what is
            # left, and wait a short while at a time (offsets may have gaps: control records)
            messages = consumer.consume(min(1000, part.end - position), timeout=_POLL_S)
            if not messages:
                (fetched,) = consumer.position([assigned])
                if fetched.offset >= part.end:
                    return  # only offsets without records were left
                if time.monotonic() >= deadline:
                    raise ConnectException(
                        f"No records from {part.key} at offset {position} (expected up to "
                        f"{part.end}) within {_TIMEOUT_S:.0f} s"
                    )
                continue
            deadline = time.monotonic() + _TIMEOUT_S
            for m in messages:
                if m.error() is not None:
                    raise ConnectException(f"Reading {part.key}: {m.error()}")
                offset = m.offset() or 0
                if offset >= part.end:
                    return
                position = offset + 1
                kind, ms = m.timestamp()
                yield (
                    m.key(),
                    m.value(),
                    topic,
                    int(number),
                    offset,
                    _dt.datetime.fromtimestamp(ms / 1000, _UTC) if kind and ms >= 0 else None,
                    list(m.headers() or []),
                )
    finally:
        consumer.close()


class KafkaReader(DataSourceReader):
    """Bounded read: every partition from its low to its high watermark."""

    def __init__(self, options: dict[str, str]) -> None:
        self.config = _client_config(options)
        self.topics = _topics(options)

    def partitions(self) -> Sequence[Any]:
        """One partition per topic partition with records."""
        marks = _watermarks(self.config, self.topics)
        return [_Range(k, low, high) for k, (low, high) in sorted(marks.items()) if high > low]

    def read(self, partition: Any) -> Iterator[tuple[Any, ...]]:
        """The records of one topic partition."""
        return _read(self.config, partition)


class KafkaStreamReader(DataSourceStreamReader):
    """Streaming read; offsets ``{"topic:partition": next offset}``."""

    def __init__(self, options: dict[str, str]) -> None:
        self.config = _client_config(options)
        self.topics = _topics(options)
        self.earliest = options.get("startingoffsets", "earliest").strip().lower() != "latest"

    def initialOffset(self) -> dict[str, Any]:
        """Low (``startingOffsets=earliest``, the default) or high watermarks."""
        marks = _watermarks(self.config, self.topics)
        return {k: (low if self.earliest else high) for k, (low, high) in marks.items()}

    def latestOffset(self, start: dict[str, Any], limit: Any = None) -> dict[str, Any]:
        """The high watermarks (new partitions start at their low watermark)."""
        marks = _watermarks(self.config, self.topics)
        return {k: max(high, int(start.get(k, low))) for k, (low, high) in marks.items()}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[Any]:
        """One partition per topic partition with new records."""
        return [
            _Range(k, int(start.get(k, 0)), int(e))
            for k, e in sorted(end.items())
            if int(e) > int(start.get(k, 0))
        ]

    def read(self, partition: Any) -> Iterator[tuple[Any, ...]]:
        """The batch's records of one topic partition."""
        return _read(self.config, partition)


class _Produced(WriterCommitMessage):
    def __init__(self, count: int) -> None:
        self.count = count


def _write(options: dict[str, str], rows: Iterator[Any]) -> _Produced:
    from cdk.kafka import new_producer, producer_config

    config = _client_config(options)
    default_topic = options.get("topic", "")
    producer = new_producer(producer_config(config["bootstrap.servers"], overrides=config))
    errors: list[str] = []

    def delivered(error: Any, _message: Any) -> None:
        if error is not None:
            errors.append(str(error))

    count = 0
    for row in rows:
        fields = row.asDict()
        topic = fields.get("topic") or default_topic
        if not topic:
            raise ConfigException("Set option topic or give the rows a topic column")
        value, key = fields.get("value"), fields.get("key")
        producer.produce(
            topic,
            value=value.encode() if isinstance(value, str) else value,
            key=key.encode() if isinstance(key, str) else key,
            headers=[(h[0], h[1]) for h in fields.get("headers") or []] or None,
            on_delivery=delivered,
        )
        count += 1
        producer.poll(0)
    remaining = producer.flush(_TIMEOUT_S)
    if remaining or errors:
        raise ConnectException(
            f"{remaining} record(s) not delivered to Kafka; errors: {errors[:3]}"
        )
    return _Produced(count)


class KafkaWriter(DataSourceWriter):
    """Batch write through the idempotent producer."""

    def __init__(self, options: dict[str, str]) -> None:
        _client_config(options)
        self.options = options

    def write(self, iterator: Iterator[Any]) -> _Produced:
        """Produce one partition's rows; flush before returning."""
        return _write(self.options, iterator)


class KafkaStreamWriter(DataSourceStreamWriter):
    """Streaming write: each micro-batch partition produced and flushed (at-least-once)."""

    def __init__(self, options: dict[str, str]) -> None:
        _client_config(options)
        self.options = options

    def write(self, iterator: Iterator[Any]) -> _Produced:
        """Produce one partition's rows; flush before returning."""
        return _write(self.options, iterator)

    def commit(self, messages: list[Any], batchId: int) -> None:
        """Nothing to commit: the records were flushed."""


class KafkaDataSource(DataSource):
    """Kafka topics through confluent-kafka (``format("cdk-kafka")``)."""

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return KAFKA_FORMAT

    def __init__(self, options: Any) -> None:
        super().__init__(options)
        self.plain = {str(k).lower(): str(v) for k, v in dict(options).items()}

    def schema(self) -> str:
        """The columns of Spark's Kafka source."""
        return SCHEMA

    def reader(self, schema: Any) -> Any:
        """Bounded reader."""
        return KafkaReader(self.plain)

    def streamReader(self, schema: Any) -> Any:
        """Streaming reader."""
        return KafkaStreamReader(self.plain)

    def writer(self, schema: Any, overwrite: bool) -> Any:
        """Batch writer."""
        return KafkaWriter(self.plain)

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        """Streaming writer."""
        return KafkaStreamWriter(self.plain)
