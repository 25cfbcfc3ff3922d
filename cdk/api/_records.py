"""Connect records: :class:`ConnectRecord`, :class:`SourceRecord`, :class:`SinkRecord`."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from cdk.api._headers import Header, Headers
from cdk.data import Schema

__all__ = ["ConnectRecord", "SinkRecord", "SourceRecord", "TimestampType"]

_KEEP: Any = object()
R = TypeVar("R", bound="ConnectRecord")


class TimestampType(enum.Enum):
    """What a Kafka record's timestamp means."""

    NO_TIMESTAMP_TYPE = "NoTimestampType"
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"

    def __str__(self) -> str:
        return self.value


_new_headers = Headers.__new__


def _headers(headers: Headers | Iterable[Header] | None) -> Headers:
    if headers is None:
        empty = _new_headers(Headers)  # Headers() without its argument handling
        empty._headers = []
        return empty
    if isinstance(headers, Headers):
        return headers
    return Headers(headers)


class ConnectRecord:
    """What source and sink records share: topic, partition, key, value, timestamp, headers.

    Records are treated as immutable by the framework: transformations derive new ones with
    :meth:`new_record`. ``timestamp`` is epoch milliseconds (or ``None``).
    """

    __slots__ = (
        "headers",
        "kafka_partition",
        "key",
        "key_schema",
        "timestamp",
        "topic",
        "value",
        "value_schema",
    )

    def __init__(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None = None,
        headers: Headers | Iterable[Header] | None = None,
    ) -> None:
        if timestamp is not None and timestamp < 0:
            raise ValueError(f"Invalid record timestamp {timestamp}: must be >= 0")
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self.headers = _headers(headers)

    def _changes(self, changes: dict[str, Any]) -> dict[str, Any]:
        unknown = set(changes) - set(self._fields())
        if unknown:
            raise TypeError(f"new_record() got unexpected field(s): {', '.join(sorted(unknown))}")
        out = {name: getattr(self, name) for name in self._fields()}
        out.update({k: v for k, v in changes.items() if v is not _KEEP})
        if "headers" not in changes or changes["headers"] is _KEEP:
            out["headers"] = self.headers.duplicate()
        return out

    def _fields(self) -> tuple[str, ...]:
        return (
            "topic",
            "kafka_partition",
            "key_schema",
            "key",
            "value_schema",
            "value",
            "timestamp",
            "headers",
        )

    def new_record(self: R, **changes: Any) -> R:
        """A copy of this record with the given attributes replaced (others kept).

        Example: ``record.new_record(topic="other", value=None, value_schema=None)``.
        Headers are copied, so changing the new record's headers leaves this one's alone.
        """
        values = self._changes(changes)
        values["headers"] = _headers(values["headers"])
        new = object.__new__(type(self))
        for name, value in values.items():
            object.__setattr__(new, name, value)
        return new

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, ConnectRecord)
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # records carry mutable headers

    def __repr__(self) -> str:
        body = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields())
        return f"{type(self).__name__}{{{body}}}"


class SourceRecord(ConnectRecord):
    """A record produced by a source task.

    ``source_partition`` identifies the input stream (e.g. ``{"filename": "/data/a.txt"}``) and
    ``source_offset`` the position in it (e.g. ``{"position": 70}``); the framework commits the
    offsets of delivered records and hands them back on restart.
    """

    __slots__ = ("source_offset", "source_partition")

    def __init__(
        self,
        source_partition: Mapping[str, Any] | None,
        source_offset: Mapping[str, Any] | None,
        topic: str,
        partition: int | None = None,
        key_schema: Schema | None = None,
        key: Any = None,
        value_schema: Schema | None = None,
        value: Any = None,
        timestamp: int | None = None,
        headers: Headers | Iterable[Header] | None = None,
    ) -> None:
        # ConnectRecord.__init__, inlined: sources create records by the million.
        if timestamp is not None and timestamp < 0:
            raise ValueError(f"Invalid record timestamp {timestamp}: must be >= 0")
        self.topic = topic
        self.kafka_partition = partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.timestamp = timestamp
        self.headers = _headers(headers)
        self.source_partition = source_partition
        self.source_offset = source_offset

    def _fields(self) -> tuple[str, ...]:
        return ("source_partition", "source_offset", *super()._fields())


class SinkRecord(ConnectRecord):
    """A record delivered to a sink task, with its Kafka coordinates.

    ``original_topic``, ``original_kafka_partition`` and ``original_kafka_offset`` (Kafka's
    KIP-793) are where the consumer read the record: the runtime sets them before the
    transformations, which may change ``topic`` and ``kafka_partition`` (``RegexRouter``,
    ``TimestampRouter``), and :meth:`new_record` keeps them. A sink that stores its Kafka
    offsets in the external system keys them by these. They default to the record's own
    coordinates.
    """

    __slots__ = (
        "kafka_offset",
        "original_kafka_offset",
        "original_kafka_partition",
        "original_topic",
        "timestamp_type",
    )

    def __init__(
        self,
        topic: str,
        kafka_partition: int,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        kafka_offset: int,
        timestamp: int | None = None,
        timestamp_type: TimestampType = TimestampType.NO_TIMESTAMP_TYPE,
        headers: Headers | Iterable[Header] | None = None,
        *,
        original_topic: str | None = None,
        original_kafka_partition: int | None = None,
        original_kafka_offset: int | None = None,
    ) -> None:
        super().__init__(
            topic, kafka_partition, key_schema, key, value_schema, value, timestamp, headers
        )
        self.kafka_offset = kafka_offset
        self.timestamp_type = timestamp_type
        self.original_topic = topic if original_topic is None else original_topic
        self.original_kafka_partition = (
            kafka_partition if original_kafka_partition is None else original_kafka_partition
        )
        self.original_kafka_offset = (
            kafka_offset if original_kafka_offset is None else original_kafka_offset
        )

    def _fields(self) -> tuple[str, ...]:
        return (
            *super()._fields(),
            "kafka_offset",
            "timestamp_type",
            "original_topic",
            "original_kafka_partition",
            "original_kafka_offset",
        )
