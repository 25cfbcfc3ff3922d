"""What a record's pipeline was doing when it failed: stages, consumed records, contexts.

:class:`ProcessingContext` travels with one record through its pipeline; the
:class:`~cdk.runtime.errors._retry_operator.RetryWithToleranceOperator` sets the :class:`Stage` and
class running, and the error when one fails. Reporters read it to log the failure or write the
original :class:`ConsumedRecord` to the dead letter queue.
"""

from __future__ import annotations

import enum
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any

from cdk.api import (
    SourceRecord,
    TimestampType,
    TopicPartition,
)

__all__ = [
    "ConsumedRecord",
    "ProcessingContext",
    "Stage",
    "class_name",
    "stack_trace",
]


class Stage(enum.Enum):
    """The step of a record's pipeline an operation belongs to (Kafka's ``Stage``)."""

    TASK_START = "TASK_START"
    TASK_POLL = "TASK_POLL"
    TASK_PUT = "TASK_PUT"
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    KAFKA_CONSUME = "KAFKA_CONSUME"

    def __str__(self) -> str:
        return self.value


def class_name(cls: type) -> str:
    """The dotted name of a class, through its public package when it re-exports it.

    ``cdk.converters._json.JsonConverter`` becomes ``cdk.converters.JsonConverter``; classes
    of other packages keep ``module.QualName``. This is what logs and DLQ headers show where
    Kafka shows ``Class.getName()``.
    """
    module = getattr(cls, "__module__", "") or ""
    qualname = getattr(cls, "__qualname__", getattr(cls, "__name__", repr(cls)))
    if module == "builtins":
        return str(qualname)
    parts = module.split(".")
    while len(parts) > 1 and any(p.startswith("_") for p in parts):
        parent = ".".join(parts[:-1])
        package = sys.modules.get(parent)
        if package is None or getattr(package, str(qualname), None) is not cls:
            break
        parts = parts[:-1]
    return f"{'.'.join(parts)}.{qualname}" if parts and parts[0] else str(qualname)


def stack_trace(error: BaseException) -> str:
    """The formatted traceback of ``error`` (what statuses and DLQ headers carry as the trace)."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


@dataclass
class ConsumedRecord:
    """The raw Kafka record a sink pipeline was processing (what goes to the DLQ).

    Attributes:
        topic: the topic it was read from.
        partition: its partition.
        offset: its offset.
        key: the raw key bytes.
        value: the raw value bytes.
        headers: the raw headers in order.
        timestamp: its timestamp in ms, if any.
        timestamp_type: what the timestamp means.
    """

    topic: str
    partition: int
    offset: int
    key: bytes | None = None
    value: bytes | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int | None = None
    timestamp_type: TimestampType = TimestampType.NO_TIMESTAMP_TYPE

    @property
    def topic_partition(self) -> TopicPartition:
        """The record's topic and partition."""
        return TopicPartition(self.topic, self.partition)

    @classmethod
    def from_message(cls, message: Any) -> ConsumedRecord:
        """Capture a ``confluent_kafka.Message`` read by a sink consumer."""
        ts_type, ts = message.timestamp()
        timestamp_type = {
            1: TimestampType.CREATE_TIME,
            2: TimestampType.LOG_APPEND_TIME,
        }.get(ts_type, TimestampType.NO_TIMESTAMP_TYPE)
        return cls(
            topic=message.topic(),
            partition=message.partition(),
            offset=message.offset(),
            key=message.key(),
            value=message.value(),
            headers=list(message.headers() or []),
            timestamp=ts if timestamp_type is not TimestampType.NO_TIMESTAMP_TYPE else None,
            timestamp_type=timestamp_type,
        )


class ProcessingContext:
    """What the pipeline of one record is doing, and how it failed (if it did).

    Create one per record: ``ProcessingContext(consumed=...)`` for a sink, or
    ``ProcessingContext(source_record=...)`` for a source.

    Attributes:
        consumed: the raw record consumed from Kafka (sinks).
        source_record: the record as the source task returned it (sources).
        stage: the stage executing now (or when it failed).
        executing_class: the class running that stage.
        error: the error that failed the record, if any.
        attempt: how many attempts the current stage took.
    """

    def __init__(
        self,
        consumed: ConsumedRecord | None = None,
        source_record: SourceRecord | None = None,
    ) -> None:
        self.consumed = consumed
        self.source_record = source_record
        self.stage: Stage | None = None
        self.executing_class: type | None = None
        self.error: BaseException | None = None
        self.attempt = 0

    @property
    def failed(self) -> bool:
        """Whether an error was recorded for this record."""
        return self.error is not None

    def to_string(self, include_messages: bool = False) -> str:
        """Kafka's description: ``Executing stage 'X' with class 'Y'[, where ...].``."""
        stage = self.stage.name if self.stage is not None else "null"
        klass = class_name(self.executing_class) if self.executing_class is not None else "null"
        text = f"Executing stage '{stage}' with class '{klass}'"
        if include_messages and self.source_record is not None:
            text += f", where source record is = {self.source_record!r}"
        elif include_messages and self.consumed is not None:
            msg = self.consumed
            text += (
                f", where consumed record is {{topic='{msg.topic}', partition={msg.partition}, "
                f"offset={msg.offset}"
            )
            if msg.timestamp_type in (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME):
                text += f", timestamp={msg.timestamp}, timestampType={msg.timestamp_type}"
            text += "}"
        return text + "."

    def __str__(self) -> str:
        return self.to_string(False)

    def __repr__(self) -> str:
        return f"ProcessingContext({self.to_string(False)!r}, error={self.error!r})"
