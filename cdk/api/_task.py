"""Tasks: :class:`Task`, :class:`SourceTask`, :class:`SinkTask`, and what the framework offers them.

Tasks copy the data. The framework owns their threads, retries and offset commits: a source task
returns records from :meth:`SourceTask.poll`, a sink task receives them in :meth:`SinkTask.put`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, overload

from cdk.api._coordinates import OffsetAndMetadata, RecordMetadata, TopicPartition
from cdk.api._records import SinkRecord, SourceRecord
from cdk.api._versioned import package_version
from cdk.errors import ConnectException

__all__ = [
    "ErrantRecordReporter",
    "OffsetStorageReader",
    "SinkTask",
    "SinkTaskContext",
    "SourceTask",
    "SourceTaskContext",
    "Task",
    "TransactionContext",
]


class OffsetStorageReader(ABC):
    """Read access to the committed offsets of a source connector.

    Source partitions and offsets are maps of primitive values, as the connector put them in its
    :class:`~cdk.api.SourceRecord` objects.
    """

    @abstractmethod
    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The last committed offset of ``partition``, or None if none was committed."""

    @abstractmethod
    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """The committed offsets of several partitions in one read.

        Returns:
            ``(partition, offset)`` pairs in the order given; the offset is None when absent.
        """


class ErrantRecordReporter(ABC):
    """Reports a record a sink task cannot process (to the log and/or the dead letter queue)."""

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        """Report ``record`` as failed with ``error``.

        The framework waits for every returned future before it commits offsets, so reported
        records are never lost. Raises ConnectException when ``errors.tolerance=none`` (the task
        then fails, as for any other error).
        """


class TransactionContext(ABC):
    """How a source task defines its own transaction boundaries (KIP-618).

    A task gets one as ``self.context.transaction_context`` when the worker runs it exactly
    once with ``transaction.boundary=connector``. Requests made during ``poll()`` apply once
    the framework has handed the records to the producer: a request naming a record applies
    right after that record (which the task returned from ``poll()``, before any
    transformation), a request without one after the whole batch of that ``poll()``.
    """

    @abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit the open transaction: after ``record``, or after the current batch.

        The records and the source offsets of everything dispatched up to that point are then
        written together, atomically.
        """

    @abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort the open transaction: after ``record``, or after the current batch.

        The records of the transaction are dropped; their source offsets are committed anyway
        (in a transaction of their own), so the task is not handed them again.
        """


class SourceTaskContext(ABC):
    """What the framework offers a running source task (``self.context``)."""

    @property
    def transaction_context(self) -> TransactionContext | None:
        """The task's :class:`TransactionContext`; None unless it defines its own boundaries.

        It is only given when the worker runs the task with exactly-once support and the
        connector has ``transaction.boundary=connector``.
        """
        return None

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's configuration."""

    @property
    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """The committed offsets of this connector, to resume from in :meth:`SourceTask.start`."""


class SinkTaskContext(ABC):
    """What the framework offers a running sink task (``self.context``)."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's configuration."""

    @overload
    def offset(self, offsets: Mapping[TopicPartition, int], /) -> None: ...

    @overload
    def offset(self, partition: TopicPartition, offset: int, /) -> None: ...

    @abstractmethod
    def offset(
        self, target: Mapping[TopicPartition, int] | TopicPartition, offset: int | None = None, /
    ) -> None:
        """Rewind or skip: consume from these offsets at the next poll.

        Call with a map ``{TopicPartition: next_offset}`` or with ``(partition, next_offset)``;
        typically from :meth:`SinkTask.open` for sinks that store offsets in the external system.
        """

    @abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """After a :class:`~cdk.errors.RetriableException`, wait this long before redelivering."""

    @abstractmethod
    def assignment(self) -> set[TopicPartition]:
        """The partitions currently assigned to this task."""

    @abstractmethod
    def pause(self, *partitions: TopicPartition) -> None:
        """Stop fetching from these assigned partitions until :meth:`resume`."""

    @abstractmethod
    def resume(self, *partitions: TopicPartition) -> None:
        """Fetch again from partitions paused with :meth:`pause`."""

    @abstractmethod
    def request_commit(self) -> None:
        """Ask for an offset commit as soon as possible (a hint)."""

    @abstractmethod
    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for bad records, or None when no DLQ or error log is configured."""


class Task(ABC):
    """The base of source and sink tasks."""

    def version(self) -> str:
        """The task's version: by default, that of the distribution that ships it."""
        return package_version(type(self))

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Start the task with one of the maps its connector's ``task_configs`` returned."""

    @abstractmethod
    def stop(self) -> None:
        """Stop the task: be brief.

        For a source task that overrides neither :meth:`SourceTask.commit_record` nor
        :meth:`SourceTask.commit`, it is called from another thread than
        :meth:`SourceTask.poll`, at once, so that it can interrupt a blocking poll. A source
        task that overrides either gets it on its own thread once ``poll()`` returned and the
        final flush and commit are done (Kafka Connect 3.9's order), so nothing is committed
        after it; such a task's ``poll()`` must return within about a second.
        """


class SourceTask(Task):
    """A task that reads from an external system; the framework writes its records to Kafka."""

    _context: SourceTaskContext | None = None

    def initialize(self, context: SourceTaskContext) -> None:
        """Give the task its context; the framework calls this before :meth:`start`."""
        self._context = context

    @property
    def context(self) -> SourceTaskContext:
        """The context the framework gave this task."""
        if self._context is None:
            raise ConnectException(
                f"{type(self).__name__} has no context: the framework calls initialize() first"
            )
        return self._context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """Return the next records, or None/empty when there are none yet.

        May block briefly while waiting for data; return within about a second so the task stays
        responsive to pause and stop. Raise :class:`~cdk.errors.RetriableException` for a
        transient failure (poll is called again) or any other exception to fail the task.
        """

    def commit(self) -> None:
        """Called after the framework committed offsets (e.g. to acknowledge upstream).

        Called on the task's thread after every offset flush (each ``offset.flush.interval.ms``
        and the final one of a stop), once the offsets of the records Kafka acknowledged so far
        are stored. Never called after :meth:`stop` when the task overrides it (see
        :meth:`commit_record`).
        """

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Called when Kafka acknowledged ``record``: the place to acknowledge it upstream.

        The contract (as Kafka Connect 3.9):

        - ``record`` is the object :meth:`poll` returned (before the transformations), so a
          task may keep what it needs to acknowledge it (a delivery tag) keyed by it.
        - ``metadata`` says where Kafka stored the record (topic, partition, offset,
          timestamp). It is None when the record will never reach Kafka on purpose: a
          transformation dropped it, or ``errors.tolerance=all`` skipped it (a conversion or
          transformation error, or a failed send); acknowledge it too, or the source system
          redelivers it forever.
        - It is called on the task's own thread, the thread that calls :meth:`poll`, between
          polls and during the final flush of a stop; never concurrently with :meth:`poll`.
        - Once for each record Kafka acknowledged, in the order of the acknowledgements (the
          order of the records within a partition). A record Kafka did not acknowledge (the
          worker crashed, the flush timed out on stop) gets no call, so its message stays
          unacknowledged and the source system redelivers it: at least once.
        - A task that overrides it (or :meth:`commit`) gets :meth:`stop` on its own thread
          after :meth:`poll` returned and the final flush and :meth:`commit` are done: no
          ``commit_record`` comes after ``stop()``, so ``stop()`` may close the connection the
          acknowledgements use. A task that does not stop in time
          (``task.shutdown.graceful.timeout.ms``) is cancelled: ``stop()`` is then called from
          another thread and nothing is committed after it.
        """


class SinkTask(Task):
    """A task that receives records from Kafka and writes them to an external system."""

    _context: SinkTaskContext | None = None

    def initialize(self, context: SinkTaskContext) -> None:
        """Give the task its context; the framework calls this before :meth:`start`."""
        self._context = context

    @property
    def context(self) -> SinkTaskContext:
        """The context the framework gave this task."""
        if self._context is None:
            raise ConnectException(
                f"{type(self).__name__} has no context: the framework calls initialize() first"
            )
        return self._context

    @abstractmethod
    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write (or buffer) a batch of records.

        Raise :class:`~cdk.errors.RetriableException` to have the same batch redelivered after
        ``context.timeout(ms)``; any other exception fails the task.
        """

    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """Make everything passed to :meth:`put` so far durable in the external system."""

    def pre_commit(
        self, current_offsets: dict[TopicPartition, OffsetAndMetadata]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Return the offsets that are safe to commit; the default flushes and returns them all.

        Return an empty map to skip this commit (e.g. for sinks that track offsets themselves).
        """
        self.flush(current_offsets)
        return current_offsets

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """Called when partitions are assigned to the task (after a rebalance or on start)."""

    def close(self, partitions: Collection[TopicPartition]) -> None:
        """Called when partitions are revoked: release their writers; offsets were committed."""
