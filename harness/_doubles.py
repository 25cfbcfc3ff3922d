"""Test doubles for a connector's unit tests: task contexts and an offset reader without a worker.

A unit test calls a task directly (``task.initialize(context)``, ``task.start(props)``,
``task.poll()``...) and needs the context a worker would give it::

    from harness import FakeSourceTaskContext

    context = FakeSourceTaskContext({"topic": "t"}, offsets=[({"queue": "q"}, {"n": 4})])
    task = MySourceTask()
    task.initialize(context)
    task.start({"topic": "t"})  # reads offset {"n": 4} for partition {"queue": "q"}

:class:`FakeSinkTaskContext` records what a sink task asks of the framework (the offsets it
rewinds to, the timeouts after a RetriableException, pauses, commit requests). For what reaches
Kafka, run the task on the embedded broker instead (``harness.providers.kafka``) and read the
topic with :func:`harness.read_topic`, which needs no consumer group.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from typing_extensions import override

from cdk.api import (
    ErrantRecordReporter,
    OffsetStorageReader,
    SinkTaskContext,
    SourceTaskContext,
    TopicPartition,
)

if TYPE_CHECKING:
    from harness.providers.kafka import Record

__all__ = [
    "FakeOffsetStorageReader",
    "FakeSinkTaskContext",
    "FakeSourceTaskContext",
    "read_topic",
]

_Offsets = Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]


def _key(partition: Mapping[str, Any]) -> str:
    return json.dumps(dict(partition), sort_keys=True, default=str)


class FakeOffsetStorageReader(OffsetStorageReader):
    """Committed source offsets held in memory, as a worker's offset reader hands them out.

    Args:
        offsets: ``(source partition, source offset)`` pairs, as a task's records carry them.
    """

    def __init__(self, offsets: _Offsets = ()) -> None:
        self._offsets: dict[str, dict[str, Any]] = {}
        for partition, offset in offsets:
            self.put(partition, offset)

    def put(self, partition: Mapping[str, Any], offset: Mapping[str, Any] | None) -> None:
        """Store ``offset`` for ``partition`` (None removes it), as a commit would."""
        if offset is None:
            self._offsets.pop(_key(partition), None)
        else:
            self._offsets[_key(partition)] = dict(offset)

    @override
    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self._offsets.get(_key(partition))
        return dict(found) if found is not None else None

    @override
    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.offset(p)) for p in partitions]


class FakeSourceTaskContext(SourceTaskContext):
    """A source task's context without a worker.

    Args:
        configs: what ``configs()`` returns (the task's config).
        offsets: the committed offsets the task reads in ``start()``, as
            :class:`FakeOffsetStorageReader` takes them.
    """

    def __init__(self, configs: Mapping[str, str] | None = None, *, offsets: _Offsets = ()) -> None:
        self._configs = dict(configs or {})
        self.reader = FakeOffsetStorageReader(offsets)

    @override
    def configs(self) -> dict[str, str]:
        return dict(self._configs)

    @property
    @override
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


class FakeSinkTaskContext(SinkTaskContext):
    """A sink task's context without a worker; it records what the task asks for.

    Args:
        reporter: what ``errant_record_reporter()`` returns (None: no DLQ or error log).
        configs: what ``configs()`` returns.
        assignment: the partitions ``assignment()`` returns.

    Attributes:
        offsets: the offsets the task asked to consume from (``offset(...)``), by partition.
        timeouts: every ``timeout(ms)`` asked for, in order.
        paused: the partitions paused and not resumed.
        commit_requests: how many times ``request_commit()`` was called.
    """

    def __init__(
        self,
        reporter: ErrantRecordReporter | None = None,
        *,
        configs: Mapping[str, str] | None = None,
        assignment: Iterable[TopicPartition] = (),
    ) -> None:
        self.reporter = reporter
        self._configs = dict(configs or {})
        self._assignment = set(assignment)
        self.offsets: dict[TopicPartition, int] = {}
        self.timeouts: list[int] = []
        self.paused: set[TopicPartition] = set()
        self.commit_requests = 0

    @override
    def configs(self) -> dict[str, str]:
        return dict(self._configs)

    @override
    def offset(
        self, target: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None, /
    ) -> None:
        if isinstance(target, TopicPartition):
            if offset is None:
                raise TypeError("offset(partition, offset) needs the offset")
            self.offsets[target] = offset
        else:
            self.offsets.update(target)

    @override
    def timeout(self, timeout_ms: int) -> None:
        self.timeouts.append(timeout_ms)

    @override
    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    @override
    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    @override
    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    @override
    def request_commit(self) -> None:
        self.commit_requests += 1

    @override
    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter


def read_topic(
    bootstrap_servers: str,
    topic: str,
    *,
    min_records: int | None = None,
    timeout: float = 30.0,
    idle: float = 1.0,
    client_config: Mapping[str, Any] | None = None,
) -> list[Record]:
    """Every record of ``topic`` from the beginning, read without a consumer group.

    A consumer that ``subscribe()``s joins a group first, which takes seconds on the embedded
    broker (and can hang on a group left behind by a killed test); this assigns every partition
    from its start instead. Stops once ``min_records`` were read (fewer within ``timeout``
    seconds is an AssertionError), or without ``min_records`` once every partition was read to
    its end and nothing new came for ``idle`` seconds. Records (``topic``, ``partition``,
    ``offset``, ``key``, ``value``, ``headers``, ``timestamp``; key and value as bytes) come in
    partition, then offset order. ``client_config``: the cluster's security settings.
    """
    from harness.providers.kafka import consume_all

    return consume_all(
        bootstrap_servers,
        topic,
        min_records=min_records,
        timeout=timeout,
        idle=idle,
        client_config=client_config,
    )
