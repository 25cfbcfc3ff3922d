"""The exactly-once source task runner (Kafka's ``ExactlyOnceWorkerSourceTask``, KIP-618).

:class:`ExactlyOnceWorkerSourceTask` runs a source task with a transactional producer
(``transactional.id`` ``<group.id>-<connector>-<task>``): the records of a transaction and the
source offsets they carry, written to the worker's offsets topic by the same producer, are
committed together or not at all, so a ``read_committed`` reader sees each record once and a
restarted task resumes exactly after the last committed record. ``init_transactions`` before
``start()`` fences every earlier producer of the same task (a zombie from a previous
generation, or a worker that was only frozen): it can commit nothing more.

Boundaries (``transaction.boundary``): ``poll`` commits after each non-empty ``poll()``;
``interval`` after the first ``poll()`` once ``transaction.boundary.interval.ms`` (default
``offset.flush.interval.ms``) passed; ``connector`` when the task asks through
``self.context.transaction_context`` (after a named record, or after the batch), aborting the
same way. The open transaction is committed when the task is paused and when it stops (except
with ``connector``, which commits then only if the task asked). A transaction that fails to
commit fails the task (its records are never visible to ``read_committed`` readers); a failed
task commits nothing more. ``commit_record`` is called for a transaction's records once it
committed, then ``commit()``.

The at-least-once runner (:class:`~cdk.runtime.WorkerSourceTask`) is unchanged; this one
shares its pipeline (SMTs, converters, error tolerance, topic creation) and loop structure.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from typing_extensions import override

from cdk.api import RecordMetadata, SourceRecord, TransactionContext
from cdk.errors import ConnectException
from cdk.runtime._exactly_once import TransactionBoundary
from cdk.runtime._source_runner import WorkerSourceTask
from cdk.runtime._status import TargetState
from cdk.runtime.storage._offset_format import offset_key, offset_value, validate_offset_format

if TYPE_CHECKING:
    import confluent_kafka

__all__ = ["ExactlyOnceWorkerSourceTask", "WorkerTransactionContext", "murmur2_partition"]

log = logging.getLogger("cdk.runtime.source")

#: How long initialising transactions, one commit or one abort may take.
TRANSACTION_TIMEOUT_S = 60.0


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` of ``data`` (a signed 32-bit int), for its default partitioner."""
    length = len(data)
    m = 0x5BD1E995
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    tail = length - rest
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def murmur2_partition(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner (and ``KafkaOffsetBackingStore``) picks."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class WorkerTransactionContext(TransactionContext):
    """The transaction requests of a task with ``transaction.boundary=connector``.

    Records are matched by identity (the objects ``poll()`` returned). Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commit_batch = False
        self._abort_batch = False
        self._commit_records: dict[int, SourceRecord] = {}
        self._abort_records: dict[int, SourceRecord] = {}

    @override
    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._commit_batch = True
            else:
                self._commit_records[id(record)] = record

    @override
    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._abort_batch = True
            else:
                self._abort_records[id(record)] = record

    def should_commit_batch(self) -> bool:
        """Whether the task asked to commit after the batch (the request is consumed)."""
        with self._lock:
            self._check_batch()
            asked, self._commit_batch = self._commit_batch, False
            return asked

    def should_abort_batch(self) -> bool:
        """Whether the task asked to abort after the batch (the request is consumed)."""
        with self._lock:
            self._check_batch()
            asked, self._abort_batch = self._abort_batch, False
            return asked

    def should_commit_on(self, record: SourceRecord) -> bool:
        """Whether the task asked to commit after ``record`` (the request is consumed)."""
        with self._lock:
            self._check_record(record)
            return self._commit_records.pop(id(record), None) is not None

    def should_abort_on(self, record: SourceRecord) -> bool:
        """Whether the task asked to abort after ``record`` (the request is consumed)."""
        with self._lock:
            self._check_record(record)
            return self._abort_records.pop(id(record), None) is not None

    def _check_batch(self) -> None:
        if self._commit_batch and self._abort_batch:
            raise ConnectException("Connector requested both commit and abort of same transaction")

    def _check_record(self, record: SourceRecord) -> None:
        key = id(record)
        if key in self._commit_records and key in self._abort_records:
            raise ConnectException(
                "Connector requested both commit and abort of same record against topic/partition "
                f"{record.topic}/{record.kafka_partition}"
            )


class ExactlyOnceWorkerSourceTask(WorkerSourceTask):
    """Runs one source task exactly once: its records and offsets in Kafka transactions.

    Args:
        *args: :class:`~cdk.runtime.WorkerSourceTask`'s positional arguments.
        transactional_id: the producer's ``transactional.id`` (``<group.id>-<connector>-<task>``).
        offsets_topic: the worker's offsets topic, written by the task's producer.
        boundary: ``poll``, ``interval`` or ``connector`` (``transaction.boundary``).
        boundary_interval_ms: the ``interval`` boundary's period.
        transaction_context: the task's context for ``connector`` boundaries.
        **kwargs: :class:`~cdk.runtime.WorkerSourceTask`'s keyword arguments (the
            ``offset_writer`` is not used: offsets go through the producer).
    """

    def __init__(
        self,
        *args: Any,
        transactional_id: str,
        offsets_topic: str,
        boundary: str = TransactionBoundary.POLL,
        boundary_interval_ms: int | None = None,
        transaction_context: WorkerTransactionContext | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        config = {
            **self._producer_config,
            "transactional.id": transactional_id,
            "enable.idempotence": True,
            "acks": "all",
        }
        # librdkafka wants a record's delivery timeout within the transaction's (Java does not
        # mind): the worker's "unlimited" delivery.timeout.ms becomes the transaction timeout
        transaction_timeout = int(config.get("transaction.timeout.ms", 60000))
        config["transaction.timeout.ms"] = transaction_timeout
        for key in ("delivery.timeout.ms", "message.timeout.ms"):
            if key in config and int(config[key]) > transaction_timeout:
                config[key] = transaction_timeout
        self._producer_config = config
        self.transactional_id = transactional_id
        self._offsets_topic = offsets_topic
        self._offsets_partitions = 0
        if boundary == TransactionBoundary.CONNECTOR and transaction_context is None:
            raise ConnectException(
                "Transaction context must be provided when using connector-defined transaction "
                "boundaries"
            )
        self._boundary = boundary
        self._boundary_interval_s = (
            self._flush_interval_s if boundary_interval_ms is None else boundary_interval_ms / 1000
        )
        self._transaction_context = transaction_context
        self._transaction_open = False
        #: offsets dispatched in the open transaction: key bytes → (partition, offset)
        self._staged: dict[bytes, Mapping[str, Any] | None] = {}
        #: the transaction's records with their metadata once Kafka acknowledged them
        self._committable: list[tuple[SourceRecord, Any]] = []
        self._transaction_size = 0
        self._async_error: Any = None
        self._eos_failed = False
        #: the last source partition staged and its key (consecutive records share one)
        self._last_partition: Mapping[str, Any] | None = None
        self._last_key = b""
        #: the sizes of the committed transactions (for tests and diagnostics; the last 1,000)
        self.transaction_sizes: list[int] = []
        source_metrics = self.metrics.source
        if source_metrics is not None:
            source_metrics.enable_transactions()

    # -- the producer ----------------------------------------------------------------------------
    @override
    def _new_producer(self) -> confluent_kafka.Producer:
        producer = super()._new_producer()
        try:
            # fences every earlier producer of this task: a zombie commits nothing more
            producer.init_transactions(TRANSACTION_TIMEOUT_S)
            metadata = producer.list_topics(self._offsets_topic, timeout=TRANSACTION_TIMEOUT_S)
        except Exception as exc:
            raise ConnectException(
                f"{self}: failed to initialize the transactional producer "
                f"({self.transactional_id}): {exc}"
            ) from exc
        topic = metadata.topics.get(self._offsets_topic)
        if topic is None or topic.error is not None or not topic.partitions:
            raise ConnectException(
                f"{self}: the offsets topic {self._offsets_topic} has no partitions"
            )
        self._offsets_partitions = len(topic.partitions)
        return producer

    # -- the loop --------------------------------------------------------------------------------
    @override
    def _execute(self) -> None:
        try:
            self._execute_transactions()
        except BaseException:
            self._eos_failed = True
            raise

    def _execute_transactions(self) -> None:
        producer = self._producer
        assert producer is not None
        last_commit = time.monotonic()
        while not self._stopping:
            if self._target is not TargetState.STARTED:
                self._maybe_commit_final()  # no transaction left open while paused
                self._pause_loop()
                last_commit = time.monotonic()
                continue
            if not self._poll_and_send():  # sends through _send_records, below
                return
            # after every poll, as Kafka's loop (a null poll too: an idle task's interval
            # transaction and a connector's batch request still end)
            if self._batch_boundary(last_commit):
                last_commit = time.monotonic()
            producer.poll(0)
            if self._records_done:
                self._record_writes()

    def _batch_boundary(self, last_commit: float) -> bool:
        """After a poll: commit if the boundary says so; whether the interval starts again."""
        boundary = self._boundary
        if boundary == TransactionBoundary.POLL:
            return self._maybe_commit(True)
        if boundary == TransactionBoundary.INTERVAL:
            due = time.monotonic() >= last_commit + self._boundary_interval_s
            self._maybe_commit(due)
            return due  # the interval starts again even when nothing was open (as Kafka)
        context = self._transaction_context
        assert context is not None
        if context.should_abort_batch():
            log.info("%s Aborting transaction for batch as requested by connector", self)
            self._abort()
            return self._maybe_commit(True)
        return self._maybe_commit(context.should_commit_batch())

    def _record_boundary(self, record: SourceRecord) -> None:
        """After one record was dispatched (or dropped): the connector's per-record requests."""
        context = self._transaction_context
        if context is None:
            return
        if context.should_abort_on(record):
            log.info(
                "%s Aborting transaction for record on topic %s as requested by connector",
                self,
                record.topic,
            )
            self._abort()
            self._maybe_commit(True)
        elif context.should_commit_on(record):
            self._maybe_commit(True)

    # -- sending -------------------------------------------------------------------------------
    @override
    def _send_records(self, records: Sequence[SourceRecord]) -> None:
        """Transform, convert and produce a polled batch inside the open transaction."""
        chain = self._chain if len(self._chain) else None
        key_from = self._key_converter.from_connect_data
        value_from = self._value_converter.from_connect_data
        to_header = self._header_converter.from_connect_header
        track = self._calls_commit_record
        per_record = self._transaction_context is not None
        producer = self._producer
        assert producer is not None
        produce: Callable[..., None] = producer.produce
        for index, pre in enumerate(records):
            if not isinstance(pre, SourceRecord):
                raise ConnectException(
                    f"{self}: poll() returned {type(pre).__name__} at index {index}; "
                    "expected SourceRecord"
                )
            headers: list[tuple[str, bytes | None]] | None = None
            try:
                record = pre if chain is None else chain.apply(pre)
                if record is not None:
                    topic = record.topic
                    rec_headers = record.headers
                    if rec_headers:
                        headers = [
                            (h.key, to_header(topic, h.key, h.schema, h.value)) for h in rec_headers
                        ]
                    key = key_from(topic, record.key_schema, record.key, rec_headers)
                    value = value_from(topic, record.value_schema, record.value, rec_headers)
            except Exception:  # noqa: BLE001 - retried under the error operator
                converted = self._convert_tolerant(pre, index)
                record = None
                if converted is not None:
                    record, key, value, headers = converted
            if record is None:  # dropped by an SMT or skipped under tolerance
                self._stage_offset(pre)
                if track:
                    self._committable.append((pre, None))
                self._records_done += 1
                if per_record:
                    self._record_boundary(pre)
                continue
            topic = record.topic
            if topic not in self._known_topics:
                if topic == self._offsets_topic:
                    raise ConnectException(
                        "Source tasks may not produce to their own offsets topics when "
                        "exactly-once support is enabled"
                    )
                self._maybe_create_topic(topic)
            if not self._transaction_open:
                self._maybe_begin()
            if track:
                entry: list[Any] = [pre, None]
                self._committable.append((pre, entry))
                callback = self._tracking_callback(entry, topic)
            elif self._active_topic_names is not None and topic not in self._active_topic_names:
                callback = self._tracking_callback(None, topic)
            else:
                callback = self._on_delivery
            try:
                if record.kafka_partition is None and record.timestamp is None:
                    if headers:
                        produce(topic, value, key, on_delivery=callback, headers=headers)
                    else:
                        produce(topic, value, key, on_delivery=callback)
                else:
                    self._produce(record, key, value, headers, callback)
            except BufferError:
                self._produce_retrying(
                    functools.partial(self._produce, record, key, value, headers, callback)
                )
            except Exception as exc:
                raise ConnectException("Unrecoverable exception trying to send") from exc
            self._stage_offset(pre)
            self._transaction_size += 1
            if per_record:
                self._record_boundary(pre)

    def _on_delivery(self, err: Any, msg: Any) -> None:
        self._records_done += 1
        if err is None:
            self._records_written += 1
        elif self._async_error is None:
            self._async_error = err

    def _tracking_callback(self, entry: list[Any] | None, topic: str) -> Callable[[Any, Any], None]:
        """A delivery callback that keeps the record's metadata and/or records its topic."""

        def delivered(err: Any, msg: Any) -> None:
            self._on_delivery(err, msg)
            if err is not None:
                return
            if self._active_topic_names is not None and topic not in self._active_topic_names:
                self._record_active_topic(topic)
            if entry is not None:
                ts_type, ts = msg.timestamp()
                entry[1] = RecordMetadata(
                    msg.topic(), msg.partition(), msg.offset(), ts if ts_type else None
                )

        return delivered

    def _stage_offset(self, record: SourceRecord) -> None:
        """Keep the record's offset as its partition's latest (validated when committed)."""
        partition = record.source_partition
        if partition is None:
            return
        last = self._last_partition
        if partition is not last and partition != last:
            self._last_partition = partition
            self._last_key = offset_key(self.id.connector, partition)
        self._staged[self._last_key] = record.source_offset

    # -- transactions --------------------------------------------------------------------------
    def _maybe_begin(self) -> None:
        if not self._transaction_open:
            producer = self._producer
            assert producer is not None
            producer.begin_transaction()
            self._transaction_open = True

    def _maybe_commit(self, should: bool) -> bool:
        if should and (self._transaction_open or self._staged):
            self._commit_transaction()
            return True
        return False

    def _maybe_commit_final(self) -> None:
        if self._boundary == TransactionBoundary.CONNECTOR:
            context = self._transaction_context
            assert context is not None
            if context.should_abort_batch():
                self._abort()
                self._maybe_commit(True)
            else:
                self._maybe_commit(context.should_commit_batch())
        else:
            self._maybe_commit(True)

    def _commit_transaction(self) -> None:
        """Write the staged offsets and commit; on failure the task fails (nothing visible)."""
        producer = self._producer
        assert producer is not None
        clock = self.metrics.clock
        started = clock()
        self._maybe_begin()  # an abort may have just ended the transaction: offsets need one
        error: BaseException | None = None
        try:
            for key, offset in self._staged.items():
                validate_offset_format(offset)
                send = functools.partial(
                    producer.produce,
                    self._offsets_topic,
                    None if offset is None else offset_value(offset),
                    key,
                    partition=murmur2_partition(key, self._offsets_partitions),
                )
                try:
                    send()
                except BufferError:
                    self._produce_retrying(send)
            producer.commit_transaction(TRANSACTION_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - KafkaException, BufferError: the task fails
            error = exc
        self._transaction_open = False
        if error is None and self._async_error is not None:
            error = ConnectException(str(self._async_error))
        if error is not None:
            self.metrics.task.record_commit(clock() - started, False)
            log.error("%s Failed to commit producer transaction", self, exc_info=error)
            raise ConnectException(
                f"Failed to flush offsets and/or records for task {self.id}"
            ) from error
        self.metrics.task.record_commit(clock() - started, True)
        self.transaction_sizes.append(self._transaction_size)
        if len(self.transaction_sizes) > 1000:
            del self.transaction_sizes[:-1000]
        source_metrics = self.metrics.source
        if source_metrics is not None:
            source_metrics.record_transaction(self._transaction_size, clock())
        self._transaction_size = 0
        self._staged.clear()
        committable, self._committable = self._committable, []
        for pre, entry in committable:
            self._commit_task_record(pre, None if entry is None else entry[1])
        self._commit_source_task()

    def _abort(self) -> None:
        producer = self._producer
        assert producer is not None
        if self._transaction_open:
            producer.abort_transaction(TRANSACTION_TIMEOUT_S)
        self._transaction_open = False
        self._transaction_size = 0
        self._async_error = None
        # the aborted records' offsets stay staged: committed next, so they are not redelivered
        self._committable = [(pre, None) for pre, _entry in self._committable]

    # -- the at-least-once runner's hooks ----------------------------------------------------
    @override
    def _commit_offsets(self) -> bool:
        """While paused nothing is open; offsets only move with transactions."""
        return True

    @override
    def _final_commit(self) -> None:
        """On stop: commit the open transaction as the boundary says, abort what is left."""
        try:
            if self._eos_failed:
                log.debug("%s Skipping final offset commit as task has failed", self)
            else:
                self._maybe_commit_final()
        finally:
            if self._transaction_open:
                # it would hold read_committed readers back until the broker times it out
                producer = self._producer
                assert producer is not None
                try:
                    producer.abort_transaction(10.0)
                except Exception:
                    log.debug("%s could not abort the open transaction", self, exc_info=True)
                self._transaction_open = False
            if self._records_done:
                self._record_writes()

    @override
    def __repr__(self) -> str:
        return f"ExactlyOnceWorkerSourceTask{{id={self.id}}}"
