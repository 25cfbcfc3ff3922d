"""Kafka coordinates: topic partitions, offsets to commit, and where a record was written."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OffsetAndMetadata", "RecordMetadata", "TopicPartition"]


@dataclass(frozen=True, order=True)
class TopicPartition:
    """A partition of a Kafka topic, as sink tasks see their assignment.

    Attributes:
        topic: the topic name.
        partition: the partition number (0-based).
    """

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class OffsetAndMetadata:
    """An offset to commit for a partition: the offset of the *next* record to read.

    Attributes:
        offset: the next offset to consume.
        metadata: free text stored with the commit.
    """

    offset: int
    metadata: str = ""


@dataclass(frozen=True)
class RecordMetadata:
    """Where the producer wrote a source record, passed to ``SourceTask.commit_record``.

    Attributes:
        topic: the topic written to.
        partition: the partition written to.
        offset: the record's offset in that partition.
        timestamp: the record's timestamp (ms since the epoch), when known.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int | None = None
