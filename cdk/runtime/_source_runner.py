"""The source task runner: poll → SMTs → converters → producer → acks → offset commits.

:class:`WorkerSourceTask` runs one :class:`~cdk.api.SourceTask` on a dedicated thread, as Kafka
Connect's ``WorkerSourceTask``: records from ``poll()`` go through the transformation chain and
the key/value/header converters (under the error-tolerance operator) to an idempotent
confluent-kafka producer; each delivery report acks the record's :class:`SubmittedRecord` and calls
``commit_record``. Every ``offset.flush.interval.ms`` and on stop, the source offsets up to the
last record with no unacknowledged record before it are written to the offset store, then
``commit()`` is called.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from typing_extensions import Unpack, override

from cdk.api import Headers, RecordMetadata, SourceRecord, SourceTask
from cdk.errors import ConfigException, ConnectException, RetriableException
from cdk.runtime._gc import pace_gc_for_records
from cdk.runtime._log_context import in_context
from cdk.runtime._status import ConnectorTaskId, State, TargetState
from cdk.runtime._submitted import SubmittedRecord, SubmittedRecords
from cdk.runtime._task_runner import WorkerTask, WorkerTaskArgs
from cdk.runtime.errors import ProcessingContext, Stage

if TYPE_CHECKING:
    import confluent_kafka

    from cdk.runtime.storage import OffsetStorageWriter

__all__ = ["TopicCreation", "TopicCreationGroup", "WorkerSourceTask"]

log = logging.getLogger("cdk.runtime.source")

# librdkafka producer settings for throughput; anything the user sets wins.
PRODUCER_DEFAULTS: dict[str, Any] = {
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 5,
    "batch.num.messages": 10000,
    "batch.size": 1048576,
    "queue.buffering.max.messages": 200000,
    "queue.buffering.max.kbytes": 262144,
}

_SEND_FAILED_BACKOFF_S = 0.1
_METADATA_TIMEOUT_S = 2.0
_Headers = list[tuple[str, bytes | None]]
_Converted = tuple[SourceRecord, bytes | None, bytes | None, _Headers | None]


# -- topic creation ------------------------------------------------------------------------------
@dataclass
class TopicCreationGroup:
    """A ``topic.creation.<group>`` rule: which topics it covers and how to create them.

    Attributes:
        name: the group's name (``default`` for the default group).
        include: regexes of the topic names the group covers.
        exclude: regexes of topic names it does not cover (exclusion wins).
        partitions: partitions of a new topic (-1: the broker default).
        replication_factor: replication factor of a new topic (-1: the broker default).
        configs: other topic configs (``cleanup.policy``, ...).
    """

    name: str
    include: list[re.Pattern[str]]
    exclude: list[re.Pattern[str]] = field(default_factory=list)
    partitions: int = -1
    replication_factor: int = -1
    configs: dict[str, str] = field(default_factory=dict)

    def matches(self, topic: str) -> bool:
        """Whether this group covers ``topic``."""
        if any(p.fullmatch(topic) for p in self.exclude):
            return False
        return any(p.fullmatch(topic) for p in self.include)


class TopicCreation:
    """The connector's topic creation rules (Kafka's ``topic.creation.*``, KIP-158).

    Topic creation is on for a connector when ``topic.creation.default.replication.factor`` and
    ``topic.creation.default.partitions`` are set (and the worker's ``topic.creation.enable`` is
    true). Otherwise the runner relies on the broker to create topics on first produce.
    """

    def __init__(self, groups: Sequence[TopicCreationGroup]) -> None:
        self.groups = list(groups)

    @classmethod
    def from_props(cls, props: Mapping[str, str], *, enabled: bool = True) -> TopicCreation | None:
        """The rules in a connector's properties, or None when topic creation is off.

        Raises:
            ConfigException: naming the key, for an invalid number or regex.
        """
        prefix = "topic.creation."
        if not enabled:
            return None
        if (
            f"{prefix}default.replication.factor" not in props
            or f"{prefix}default.partitions" not in props
        ):
            return None
        names = [g.strip() for g in props.get(f"{prefix}groups", "").split(",") if g.strip()]
        groups = [cls._group(props, name) for name in names if name != "default"]
        groups.append(cls._group(props, "default"))
        return cls(groups)

    @staticmethod
    def _group(props: Mapping[str, str], name: str) -> TopicCreationGroup:
        prefix = f"topic.creation.{name}."
        own = {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}

        def regexes(key: str, default: str) -> list[re.Pattern[str]]:
            raw = own.pop(key, default)
            out = []
            for item in (s.strip() for s in str(raw).split(",")):
                if not item:
                    continue
                try:
                    out.append(re.compile(item))
                except re.error as exc:
                    raise ConfigException(prefix + key, raw, f"Invalid regex: {exc}") from exc
            return out

        def number(key: str) -> int:
            raw = own.pop(key, "-1")
            try:
                value = int(str(raw).strip())
            except ValueError:
                raise ConfigException(prefix + key, raw, "Not a number") from None
            if value == 0 or value < -1:
                raise ConfigException(
                    prefix + key, raw, "Value must be -1 (broker default) or at least 1"
                )
            return value

        include = regexes("include", ".*" if name == "default" else "")
        exclude = regexes("exclude", "")
        return TopicCreationGroup(
            name,
            include,
            exclude,
            partitions=number("partitions"),
            replication_factor=number("replication.factor"),
            configs={k: str(v) for k, v in own.items()},
        )

    def group_for(self, topic: str) -> TopicCreationGroup:
        """The first group covering ``topic`` (the default group covers the rest)."""
        for group in self.groups:
            if group.matches(topic):
                return group
        return self.groups[-1]


# -- the runner ----------------------------------------------------------------------------------
class WorkerSourceTask(WorkerTask):
    """Runs one source task on its own thread.

    The thread, target state, statuses and closers are :class:`WorkerTask`'s.

    Args:
        task_id: the task's id.
        task: the task instance (not yet initialized).
        task_props: the task's configuration (given to ``start``).
        context: the task's context (given to ``initialize``).
        producer_config: librdkafka producer settings (throughput defaults are added).
        offset_writer: where source offsets are committed.
        admin_config: admin client settings, for topic creation.
        topic_creation: the connector's topic creation rules, None to leave it to the broker.
        producer_factory: builds the producer from its config (``cdk.kafka.new_producer``).
        admin_factory: builds an admin client from its config (``cdk.kafka.new_admin``).
        **common: :class:`WorkerTask`'s keyword arguments (worker id, status store, target
            state, converters, SMT chain, error operator, flush interval and timeout, closers).
    """

    _log = log
    _kind = "source"

    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SourceTask,
        task_props: Mapping[str, str],
        context: Any,
        *,
        producer_config: Mapping[str, Any],
        offset_writer: OffsetStorageWriter,
        admin_config: Mapping[str, Any] | None = None,
        topic_creation: TopicCreation | None = None,
        producer_factory: Callable[[Mapping[str, Any]], confluent_kafka.Producer] | None = None,
        admin_factory: Callable[[Mapping[str, Any]], Any] | None = None,
        **common: Unpack[WorkerTaskArgs],
    ) -> None:
        super().__init__(task_id, task_props, **common)
        self.task = task
        self._context = context
        self._producer_config = {**PRODUCER_DEFAULTS, **producer_config}
        self._writer = offset_writer
        self._admin_config = dict(
            admin_config or {"bootstrap.servers": self._producer_config.get("bootstrap.servers")}
        )
        self._topic_creation = topic_creation
        self._producer_factory = producer_factory
        self._admin_factory = admin_factory

        self._submitted = SubmittedRecords()
        self._producer: confluent_kafka.Producer | None = None
        self._admin: Any = None
        self._known_topics: set[str] = set()
        self._send_error: BaseException | None = None
        self._tolerate_all = self._operator.tolerance_all
        self._calls_commit_record = type(task).commit_record is not SourceTask.commit_record
        # A task that acknowledges upstream (it overrides commit_record or commit) gets stop()
        # on its own thread once poll() returned and the final flush and commit are done, as
        # Kafka 3.9 calls it: no commit_record/commit comes after stop(). Any other task gets
        # stop() at once from another thread, to interrupt a blocking poll().
        self._defer_task_stop = (
            self._calls_commit_record or type(task).commit is not SourceTask.commit
        )

        self._wake = threading.Event()
        self._task_stop_called = False
        # True while the task thread runs connector code that cannot touch the producer
        # (task.start/poll): a cancel may then close the producer (guarded by _lock)
        self._in_task_code = False
        self._producer_closed = False
        # polled records finished (acked, dropped or skipped) and written since the last
        # _record_writes: counted per ack group, handed to the metrics once per loop
        self._records_done = 0
        self._records_written = 0

    # -- control (any thread) --------------------------------------------------------------------
    @override
    def stop(self) -> None:
        """Ask the task to stop; returns at once.

        For a task that overrides neither ``commit_record`` nor ``commit``, ``task.stop()`` is
        called from another thread than ``poll()`` (so that it can interrupt a blocking poll):
        a short-lived daemon thread ``cdk-task-stop-<connector>-<n>``, so that a ``stop()`` that
        hangs holds up neither the caller nor the task's own thread. The loop then ends and the
        task thread commits the offsets. A task that overrides either acknowledges upstream:
        the task thread calls its ``stop()`` after the final flush and commit, so that every
        ``commit_record`` for a record Kafka acknowledged comes before it (Kafka 3.9's order).
        """
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
            call_stop = not self._defer_task_stop and self._task_stop_due()
        self._wake.set()
        self._operator.trigger_stop()
        if call_stop:
            threading.Thread(
                target=in_context(self.id.connector, self.id.task, self._call_task_stop),
                name=f"cdk-task-stop-{self.id.connector}-{self.id.task}",
                daemon=True,
            ).start()

    @override
    def cancel(self) -> None:
        """Give up on a task that did not stop in time: it reports and commits nothing more.

        As Kafka, the producer is closed at once (its unsent records dropped) when the task
        thread is inside connector code (``poll()`` or ``start()`` that does not return), on a
        daemon thread; otherwise the task thread closes it when it gets back to the runner.
        """
        super().cancel()
        self._stop_deferred_task()
        with self._lock:
            producer = self._producer
            if not self._in_task_code or producer is None or self._producer_closed:
                return
            self._producer_closed = True
        threading.Thread(
            target=in_context(self.id.connector, self.id.task, self._discard_producer),
            args=(producer,),
            name=f"cdk-task-close-{self.id.connector}-{self.id.task}",
            daemon=True,
        ).start()

    def _stop_deferred_task(self) -> None:
        """On cancel, stop a task whose stop() waited for the final commit, from another thread.

        The task commits nothing more (``commit_record``/``commit`` are not called after this),
        so stop() may close what they needed; the unacknowledged records are redelivered.
        """
        if not self._defer_task_stop:
            return
        with self._lock:
            call_stop = self._task_stop_due()
        if call_stop:
            threading.Thread(
                target=self._call_task_stop,
                name=f"cdk-task-stop-{self.id.connector}-{self.id.task}",
                daemon=True,
            ).start()

    def _discard_producer(self, producer: confluent_kafka.Producer) -> None:
        """Drop a cancelled task's unsent records and close its producer."""
        try:
            producer.purge()
            producer.close()
        except Exception:
            log.exception("%s failed to close the producer of the cancelled task", self)

    @override
    def _wake_up(self) -> None:
        self._wake.set()

    # -- the task thread -------------------------------------------------------------------------
    @override
    def _initialize_and_start(self) -> bool:
        pace_gc_for_records()
        self._producer = self._new_producer()
        self.task.initialize(self._context)
        self._in_task_code = True
        try:
            self.task.start(dict(self._task_props))
        finally:
            with self._lock:
                self._in_task_code = False
        with self._lock:
            self._task_started = True
            call_stop = not self._defer_task_stop and self._task_stop_due()
        if call_stop:
            self._call_task_stop()
        return not self._stopping

    def _new_producer(self) -> confluent_kafka.Producer:
        factory = self._producer_factory
        if factory is None:
            from cdk.kafka import new_producer

            factory = new_producer
        try:
            return factory(self._producer_config)
        except Exception as exc:
            raise ConnectException(f"{self}: failed to create producer: {exc}") from exc

    @override
    def _execute(self) -> None:
        producer = self._producer
        assert producer is not None
        next_commit = time.monotonic() + self._flush_interval_s
        while not self._stopping:
            if self._target is not TargetState.STARTED:
                self._pause_loop()
                next_commit = min(next_commit, time.monotonic() + self._flush_interval_s)
                continue
            if self._send_error is not None:
                self._raise_send_error()
            if not self._poll_and_send():
                return
            producer.poll(0)
            if self._records_done:
                self._record_writes()
            now = time.monotonic()
            if now >= next_commit:
                self._commit_offsets()
                next_commit = now + self._flush_interval_s
        if self._send_error is not None:
            self._raise_send_error()

    def _poll_and_send(self) -> bool:
        """One ``poll()`` of the task, its metrics, and :meth:`_send_records` of what it returned.

        The step both runners' loops share (the exactly-once runner sends in its transaction
        by overriding :meth:`_send_records`).

        Returns:
            False when the task was cancelled meanwhile (the producer is gone: stop the loop).
        """
        clock = self.metrics.clock
        self._in_task_code = True
        started = clock()
        try:
            records = self.task.poll()
        except RetriableException as exc:
            log.warning(
                "%s failed to poll records from SourceTask. Will retry operation.",
                self,
                exc_info=exc,
            )
            records = None
        finally:
            with self._lock:
                self._in_task_code = False
                closed = self._producer_closed
        if closed:
            return False
        if records is not None:
            returned: Any = records  # a list by contract; any iterable is accepted
            if not isinstance(returned, list):
                records = list(returned)
            polled_at = clock()
            source_metrics = self.metrics.source
            assert source_metrics is not None
            source_metrics.record_poll(len(records), polled_at - started, polled_at)
            self.metrics.task.record_batch(len(records), polled_at)
            if records:
                self._send_records(records)
        return True

    def _pause_loop(self) -> None:
        self._report(State.PAUSED)
        producer = self._producer
        assert producer is not None
        next_commit = time.monotonic() + self._flush_interval_s
        while self._target is not TargetState.STARTED and not self._stopping:
            self._wake.wait(min(0.1, max(next_commit - time.monotonic(), 0.0)))
            self._wake.clear()
            producer.poll(0)
            if self._records_done:
                self._record_writes()
            now = time.monotonic()
            if now >= next_commit:
                self._commit_offsets()
                next_commit = now + self._flush_interval_s
        if not self._stopping:
            self._report(State.RUNNING)

    @override
    def _await_unpause(self) -> bool:
        while self._target is TargetState.PAUSED and not self._stopping:
            self._wake.wait(0.5)
            self._wake.clear()
        return not self._stopping

    def _record_writes(self) -> None:
        """Hand the records finished since the last call to the source task metrics."""
        done, written = self._records_done, self._records_written
        self._records_done = self._records_written = 0
        source_metrics = self.metrics.source
        assert source_metrics is not None
        source_metrics.record_write(written, done, self.metrics.clock())

    def _raise_send_error(self) -> None:
        error = self._send_error
        raise ConnectException("Unrecoverable exception from producer send callback") from error

    # -- sending -----------------------------------------------------------------------------
    def _send_records(self, records: Sequence[SourceRecord]) -> None:
        """Transform, convert and produce a polled batch.

        Consecutive records of the batch with the same source partition share one
        :class:`_AckGroup`, tracked as one submitted record with the group's last offset: it is
        acknowledged once every record of the group is, so committed offsets never pass an
        unacknowledged record, at the cost of one tracking entry per group instead of per record.
        """
        if not isinstance(records, list):
            records = list(records)
        chain = self._chain if len(self._chain) else None
        key_from = self._key_converter.from_connect_data
        value_from = self._value_converter.from_connect_data
        to_header = self._header_converter.from_connect_header
        producer = self._producer
        assert producer is not None
        produce: Callable[..., None] = producer.produce
        known_topics = self._known_topics
        active_topics = self._active_topic_names
        submitted = self._submitted
        calls_commit_record = self._calls_commit_record
        group: _AckGroup | None = None
        for index, pre in enumerate(records):
            if type(pre) is not SourceRecord and not isinstance(pre, SourceRecord):
                raise ConnectException(
                    f"{self}: poll() returned {type(pre).__name__} at index {index}; "
                    "expected SourceRecord"
                )
            partition = pre.source_partition
            if group is None or (partition is not group.partition and partition != group.partition):
                if group is not None:
                    group.close(submitted, index)
                group = _AckGroup(self, partition, index)
            group.offset = pre.source_offset
            group.remaining += 1
            try:
                record = pre if chain is None else chain.apply(pre)
                if record is not None:
                    topic = record.topic
                    rec_headers = record.headers
                    headers = (
                        [(h.key, to_header(topic, h.key, h.schema, h.value)) for h in rec_headers]
                        if (rec_headers._headers if type(rec_headers) is Headers else rec_headers)
                        else None
                    )
                    key = key_from(topic, record.key_schema, record.key, rec_headers)
                    value = value_from(topic, record.value_schema, record.value, rec_headers)
            except Exception:  # noqa: BLE001 - retried under the error operator
                converted = self._convert_tolerant(pre, index)
                if converted is None:
                    self._commit_task_record(pre, None)
                    group.skipped += 1
                    group.done_one()
                    continue
                record, key, value, headers = converted
                topic = record.topic  # the transform may have failed before it was read
            else:
                if record is None:
                    self._commit_task_record(pre, None)
                    group.skipped += 1
                    group.done_one()
                    continue
            if topic not in known_topics:
                self._maybe_create_topic(topic)
            callback = group.on_delivery if not calls_commit_record else _RecordCallback(group, pre)
            if active_topics is not None and topic not in active_topics:
                callback = _ActiveTopicCallback(self, topic, callback)
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
            except Exception as exc:  # noqa: BLE001 - KafkaException, TypeError... of a sync send
                self._send_failed(group, pre, topic, exc, synchronous=True)
        if group is not None:
            group.close(submitted, len(records))

    def _produce(
        self,
        record: SourceRecord,
        key: bytes | None,
        value: bytes | None,
        headers: _Headers | None,
        callback: Callable[[Any, Any], None],
    ) -> None:
        producer = self._producer
        assert producer is not None
        kwargs: dict[str, Any] = {"on_delivery": callback}
        if record.kafka_partition is not None:
            kwargs["partition"] = record.kafka_partition
        if record.timestamp is not None:
            kwargs["timestamp"] = record.timestamp
        if headers:
            kwargs["headers"] = headers
        producer.produce(record.topic, value, key, **kwargs)

    def _produce_retrying(self, send: Callable[[], None]) -> None:
        """Produce when the local queue is full: serve delivery reports until ``send`` fits."""
        producer = self._producer
        assert producer is not None
        while True:
            if self._cancelled:
                raise ConnectException(f"{self} was cancelled while sending")
            producer.poll(_SEND_FAILED_BACKOFF_S)
            try:
                send()
                return
            except BufferError:
                continue

    def _convert_headers(self, topic: str, headers: Any) -> _Headers:
        convert = self._header_converter.from_connect_header
        return [(h.key, convert(topic, h.key, h.schema, h.value)) for h in headers]

    def _convert_tolerant(self, pre: SourceRecord, index: int) -> _Converted | None:
        """Redo a record's transform/convert stages under the retry/tolerance operator.

        Returns None when the record was dropped (by an SMT, or a tolerated error).
        """
        context = ProcessingContext(source_record=pre)
        record = self._transform_tolerant(pre, context)
        if record is None:
            return None
        topic = record.topic
        rec_headers = record.headers
        key_conv = self._key_converter
        value_conv = self._value_converter
        converted = self._convert_tolerant_steps(
            [
                (
                    Stage.HEADER_CONVERTER,
                    self._header_converter,
                    lambda: self._convert_headers(topic, rec_headers) if rec_headers else None,
                ),
                (
                    Stage.KEY_CONVERTER,
                    key_conv,
                    lambda: key_conv.from_connect_data(
                        topic, record.key_schema, record.key, rec_headers
                    ),
                ),
                (
                    Stage.VALUE_CONVERTER,
                    value_conv,
                    lambda: value_conv.from_connect_data(
                        topic, record.value_schema, record.value, rec_headers
                    ),
                ),
            ],
            context,
        )
        if converted is None:
            return None
        headers, key, value = converted
        return record, key, value, headers

    def _delivered(self, pre: SourceRecord, msg: Any) -> None:
        ts_type, ts = msg.timestamp()
        metadata = RecordMetadata(
            msg.topic(), msg.partition(), msg.offset(), ts if ts_type else None
        )
        self._commit_task_record(pre, metadata)

    def _send_failed(
        self,
        group: _AckGroup,
        pre: SourceRecord | None,
        topic: str,
        error: Any,
        *,
        synchronous: bool = False,
    ) -> None:
        log.error("%s failed to send record to %s: %s", self, topic, error)
        if self._tolerate_all:
            if pre is not None:
                self._commit_task_record(pre, None)
            group.skipped += 1
            group.done_one()
            return
        exc = error if isinstance(error, BaseException) else ConnectException(str(error))
        if synchronous:
            raise ConnectException("Unrecoverable exception trying to send") from exc
        if self._send_error is None:
            self._send_error = exc

    def _commit_task_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if not self._calls_commit_record or self._task_stop_called:
            return  # never after stop(): a cancelled task's records are redelivered
        try:
            self.task.commit_record(record, metadata)
        except Exception:
            log.exception("%s Exception thrown while calling task.commit_record()", self)

    def _maybe_create_topic(self, topic: str) -> None:
        """Create a topic the task writes to for the first time, if it does not exist.

        With ``topic.creation.*`` rules, the topic gets its group's settings and a failure fails
        the task (as Kafka). Without rules, it is created with one partition and the broker's
        default replication factor (as a stock broker's auto-creation would); if that is not
        allowed, the broker is left to auto-create it.
        """
        from confluent_kafka import KafkaError
        from confluent_kafka.cimpl import NewTopic

        rules = self._topic_creation
        if rules is not None:
            group = rules.group_for(topic)
            new_topic = NewTopic(
                topic,
                num_partitions=group.partitions,
                replication_factor=group.replication_factor,
                config=dict(group.configs),
            )
            log.info("%s creating topic '%s' using creation group %s", self, topic, group.name)
        else:
            new_topic = NewTopic(topic, num_partitions=1, replication_factor=-1)
        try:
            if self._admin is None:
                factory = self._admin_factory
                if factory is None:
                    from cdk.kafka import new_admin

                    factory = new_admin
                self._admin = factory(self._admin_config)
            future = self._admin.create_topics([new_topic], operation_timeout=30)[topic]
            future.result(timeout=60)
        except Exception as exc:
            error = exc.args[0] if exc.args else None
            exists = (
                isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS
            )
            if not exists and rules is not None:
                raise ConnectException(
                    f"Task failed to create new topic {topic}. Ensure that the task is "
                    "authorized to create topics or that the topic exists and restart the task"
                ) from exc
            if not exists:
                log.warning(
                    "%s could not create topic '%s' (%s); relying on the broker to create it",
                    self,
                    topic,
                    exc,
                )
        self._fetch_metadata(topic)
        self._known_topics.add(topic)

    def _fetch_metadata(self, topic: str) -> None:
        """Fetch the metadata of a topic before its first record is produced (best effort).

        Like the Java producer's metadata wait on the first send to a topic. It also matters for
        the idempotent producer: librdkafka asks for its producer id as soon as a broker
        connection is up, and otherwise only at its next 500 ms retry tick, which would hold the
        task's first deliveries back by up to a second.
        """
        producer = self._producer
        if producer is None:
            return
        try:
            producer.list_topics(topic, timeout=_METADATA_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - the producer fetches metadata itself anyway
            log.debug("%s could not fetch the metadata of topic '%s': %s", self, topic, exc)

    # -- offsets ---------------------------------------------------------------------------------
    def _commit_offsets(self) -> bool:
        """Write the committable offsets to the store, then call ``task.commit()``."""
        clock = self.metrics.clock
        started = clock()
        committed = self._write_offsets()
        self.metrics.task.record_commit(clock() - started, committed)
        return committed

    def _write_offsets(self) -> bool:
        committable = self._submitted.committable_offsets()
        for partition, offset in committable.offsets:
            self._writer.offset(partition, offset)
        try:
            flushing = self._writer.begin_flush()
        except Exception:
            log.exception("%s failed to begin an offset flush", self)
            return False
        if flushing:
            try:
                self._writer.do_flush()
            except Exception:
                log.exception("%s failed to flush offsets to storage", self)
                self._writer.cancel_flush()
                return False
        self._commit_source_task()
        return True

    def _commit_source_task(self) -> None:
        if self._defer_task_stop and self._task_stop_called:
            return  # never after stop() for a task that acknowledges upstream
        try:
            self.task.commit()
        except Exception:
            log.exception("%s Exception thrown while calling task.commit()", self)

    def _final_commit(self) -> None:
        producer = self._producer
        if producer is not None:
            remaining = producer.flush(self._flush_timeout_s)
            if remaining:
                log.warning(
                    "%s %d records were not acknowledged within offset.flush.timeout.ms "
                    "(%d ms); their offsets are not committed",
                    self,
                    remaining,
                    int(self._flush_timeout_s * 1000),
                )
            if self._records_done:
                self._record_writes()
        self._commit_offsets()

    # -- cleanup ---------------------------------------------------------------------------------
    def _task_stop_due(self) -> bool:
        """Whether to call ``task.stop()`` now (started, stopping, not yet called); under _lock.

        It is then marked called, so that stop(), the end of start() and close call it once
        between them.
        """
        if self._task_started and self._stopping and not self._task_stop_called:
            self._task_stop_called = True
            return True
        return False

    def _call_task_stop(self) -> None:
        try:
            self.task.stop()
        except Exception:
            log.exception("%s Exception thrown while calling task.stop()", self)

    @override
    def _release(self) -> None:
        if self._producer_closed:  # closed by cancel()
            self._producer = None
        if not self._cancelled:
            try:
                if self._producer is not None:
                    self._final_commit()
            except Exception:
                log.exception("%s failed to commit offsets on close", self)
        with self._lock:
            self._stopping = True
            call_stop = self._task_stop_due()
        if call_stop:
            self._call_task_stop()
        if self._producer is not None:
            if self._cancelled:
                self._discard_producer(self._producer)
            else:
                self._producer.flush(0)
            self._producer = None
        self._admin = None


class _AckGroup:
    """Consecutive records of one poll batch with the same source partition, acked as one."""

    __slots__ = ("_submitted", "offset", "owner", "partition", "remaining", "size", "skipped")

    def __init__(
        self, owner: WorkerSourceTask, partition: Mapping[str, Any] | None, start: int
    ) -> None:
        self.owner = owner
        self.partition = partition
        self.offset: Mapping[str, Any] | None = None
        self.remaining = 0
        self.size = start  # the index of its first record in the batch; its size once closed
        self.skipped = 0  # of which dropped by an SMT or skipped under tolerance
        self._submitted: SubmittedRecord | None = None

    def done_one(self) -> None:
        """One record of the group was delivered, dropped, or skipped under tolerance."""
        self.remaining -= 1
        if self.remaining == 0 and self._submitted is not None:
            self._finish(self._submitted)

    def close(self, submitted: SubmittedRecords, end: int) -> None:
        """Every record of the group was handed over: track it with its last offset.

        ``end`` is the index (in the poll batch) just after the group's last record.
        """
        self.size = end - self.size
        self._submitted = submitted.submit(self.partition, self.offset)
        if self.remaining == 0:
            self._finish(self._submitted)

    def _finish(self, submitted: SubmittedRecord) -> None:
        """Every record of the group is done: ack it and count it for the metrics."""
        submitted.ack()
        owner = self.owner
        owner._records_done += self.size
        owner._records_written += self.size - self.skipped

    def on_delivery(self, err: Any, msg: Any) -> None:
        """The producer's delivery report of one record of the group."""
        if err is None:  # done_one(), inlined: this runs once per record
            self.remaining -= 1
            if self.remaining == 0 and self._submitted is not None:
                self._finish(self._submitted)
        else:
            self.owner._send_failed(self, None, msg.topic() if msg is not None else "?", err)


class _RecordCallback:
    """A delivery report callback that also calls ``commit_record`` for its record."""

    __slots__ = ("group", "record")

    def __init__(self, group: _AckGroup, record: SourceRecord) -> None:
        self.group = group
        self.record = record

    def __call__(self, err: Any, msg: Any) -> None:
        group = self.group
        if err is None:
            group.done_one()
            group.owner._delivered(self.record, msg)
        else:
            topic = msg.topic() if msg is not None else "?"
            group.owner._send_failed(group, self.record, topic, err)


class _ActiveTopicCallback:
    """Records the topic as active (KIP-558) when Kafka acknowledges the record, then delegates.

    Only records sent while their topic is not yet recorded get this wrapper.
    """

    __slots__ = ("callback", "owner", "topic")

    def __init__(
        self, owner: WorkerSourceTask, topic: str, callback: Callable[[Any, Any], None]
    ) -> None:
        self.owner = owner
        self.topic = topic
        self.callback = callback

    def __call__(self, err: Any, msg: Any) -> None:
        if err is None:
            self.owner._record_active_topic(self.topic)
        self.callback(err, msg)
