"""The sink task runner: consumer → converters → SMTs → ``put`` → ``pre_commit`` → offset commit.

:class:`WorkerSinkTask` runs one :class:`~cdk.api.SinkTask` on a dedicated thread, as Kafka
Connect's ``WorkerSinkTask``: a consumer in the group ``connect-<connector>`` reads batches, the
key/value/header converters and the SMT chain (under the error-tolerance operator) make
:class:`~cdk.api.SinkRecord` objects, and ``put`` receives them. A
:class:`~cdk.errors.RetriableException` from ``put`` pauses every partition and redelivers the same
batch after ``context.timeout(ms)``; any other exception fails the task. Every
``offset.flush.interval.ms`` (or on ``context.request_commit()``) the task's ``pre_commit``
decides which offsets to commit; rebalances call ``close``/``open`` with a synchronous commit of
the revoked partitions in between.
"""

from __future__ import annotations

import collections
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from typing_extensions import Unpack, override

from cdk.api import (
    Header,
    Headers,
    OffsetAndMetadata,
    SinkRecord,
    SinkTask,
    TimestampType,
    TopicPartition,
)
from cdk.data import Schema
from cdk.errors import ConnectException, RetriableException
from cdk.runtime._contexts import WorkerSinkTaskContext
from cdk.runtime._gc import pace_gc_for_records
from cdk.runtime._status import ConnectorTaskId, State, TargetState
from cdk.runtime._task_runner import WorkerTask, WorkerTaskArgs
from cdk.runtime.errors import ConsumedRecord, ProcessingContext, Stage
from cdk.runtime.util import FetchGaps

if TYPE_CHECKING:
    import confluent_kafka

    from cdk.api import ErrantRecordReporter

__all__ = ["CONSUMER_DEFAULTS", "WorkerSinkTask", "consumer_group_id"]

log = logging.getLogger("cdk.runtime.sink")

#: Consumer settings of sink tasks unless the worker or connector sets them.
CONSUMER_DEFAULTS: dict[str, Any] = {
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 500,
    "fetch.wait.max.ms": 100,
    # Prefetch far ahead (librdkafka fetches only while its queue holds fewer messages than
    # this): on the embedded broker it raised a consume loop from ~85k to ~180k records/s.
    # queued.max.messages.kbytes (64 MiB by default) still bounds the queue's memory.
    "queued.min.messages": 1000000,
}
MAX_POLL_RECORDS = "max.poll.records"
#: ``auto.offset.reset`` values that start a partition with no committed offset at its beginning.
_EARLIEST = frozenset({"earliest", "smallest", "beginning"})
_POLL_SLICE_S = 0.1  # how often a waiting poll checks for stop / state changes
#: How often a ``topics.regex`` subscription looks for topics created or deleted since.
TOPICS_REFRESH_S = 3.0
#: How often a subscription to a topic that does not exist yet looks for it. librdkafka only
#: looks again at its next metadata refresh (``topic.metadata.refresh.interval.ms``, five
#: minutes), where Kafka's Java consumer keeps asking: without this, a sink created before its
#: topic idles for minutes.
MISSING_TOPIC_CHECK_S = 1.0
#: How long a stopping sink task whose consumer is still joining its group waits for the join.
JOIN_BEFORE_LEAVE_S = 30.0
_TOPICS_LIST_TIMEOUT_S = 2.0
#: Kafka's internal topics, never matched by ``topics.regex`` (``exclude.internal.topics``).
_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
_TIMESTAMP_TYPES = {
    0: TimestampType.NO_TIMESTAMP_TYPE,
    1: TimestampType.CREATE_TIME,
    2: TimestampType.LOG_APPEND_TIME,
}
_new_sink_record = SinkRecord.__new__
_new_header = Header.__new__
_new_headers = Headers.__new__
# Header schemas whose values are valid whenever they have exactly this Python type: a header
# converter's output with one of them skips Header's validation, which would only cost time.
_PLAIN_HEADER_TYPES: dict[int, type] = {
    id(Schema.STRING_SCHEMA): str,
    id(Schema.OPTIONAL_STRING_SCHEMA): str,
    id(Schema.BOOLEAN_SCHEMA): bool,
    id(Schema.OPTIONAL_BOOLEAN_SCHEMA): bool,
    id(Schema.BYTES_SCHEMA): bytes,
    id(Schema.OPTIONAL_BYTES_SCHEMA): bytes,
}


def consumer_group_id(connector: str) -> str:
    """The consumer group of a sink connector's tasks: ``connect-<name>`` (as Kafka)."""
    return f"connect-{connector}"


class WorkerSinkTask(WorkerTask):
    """Runs one sink task on its own thread.

    The thread, target state, statuses and closers are :class:`WorkerTask`'s.

    Args:
        task_id: the task's id.
        task: the task instance (not yet initialized).
        task_props: the task's configuration (given to ``start``; holds ``topics`` or
            ``topics.regex``).
        consumer_config: librdkafka consumer settings including ``group.id`` (sink defaults
            are added; ``max.poll.records`` is read here, 500 by default).
        errant_reporter: the task's errant record reporter, None when not configured.
        consumer_factory: builds the consumer from its config (``cdk.kafka.new_consumer``).
        **common: :class:`WorkerTask`'s keyword arguments (worker id, status store, target
            state, converters, SMT chain, error operator, flush interval and timeout, closers).
    """

    _log = log
    _kind = "sink"

    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SinkTask,
        task_props: Mapping[str, str],
        *,
        consumer_config: Mapping[str, Any],
        errant_reporter: ErrantRecordReporter | None = None,
        consumer_factory: Callable[[Mapping[str, Any]], confluent_kafka.Consumer] | None = None,
        **common: Unpack[WorkerTaskArgs],
    ) -> None:
        super().__init__(task_id, task_props, **common)
        self.task = task
        config = {**CONSUMER_DEFAULTS, **consumer_config}
        config.setdefault("group.id", consumer_group_id(task_id.connector))
        raw_max = config.pop(MAX_POLL_RECORDS, 500)
        try:
            self._max_poll_records = max(int(raw_max), 1)
        except (TypeError, ValueError):
            raise ConnectException(
                f"Invalid value {raw_max} for configuration {MAX_POLL_RECORDS}"
            ) from None
        config["on_commit"] = self._on_commit
        self._consumer_config = config
        self._reset_earliest = str(config.get("auto.offset.reset", "")).lower() in _EARLIEST
        self._errant_reporter = errant_reporter
        # Raw messages of the batch being delivered, for the errant record reporter's DLQ.
        self._raw: dict[tuple[str, int, int], Any] | None = (
            {} if errant_reporter is not None else None
        )
        self._consumer_factory = consumer_factory
        self.context = WorkerSinkTaskContext(task_props, self, errant_reporter)

        self._consumer: confluent_kafka.Consumer | None = None
        # Offsets keyed by (topic, partition): next offset to read.
        self._assigned: set[TopicPartition] = set()
        self._current: dict[tuple[str, int], int] = {}
        self._last_committed: dict[tuple[str, int], OffsetAndMetadata] = {}
        self._force_commit = False
        self._batch: list[SinkRecord] = []
        self._batch_positions: dict[tuple[str, int], int] = {}
        self._paused_for_redelivery = False
        self._consumer_paused_all = False
        self._in_assign = False
        self._sync_pauses = False
        self._rebalance_error: BaseException | None = None
        self._partitions_closed = False
        # Fetches that skipped records (see cdk.runtime.util.FetchGaps): the re-reads in
        # flight, the partitions sought back during the batch being converted (the rest of the
        # batch's records of those is stale), and the partitions read from their beginning
        # (no committed offset), with the log start once known.
        self._gaps = FetchGaps(self, on_heal=self._count_heal)
        self._rereading: set[tuple[str, int]] = set()
        self._from_start: dict[tuple[str, int], int | None] = {}
        self._dropped = 0

        self._wakeup = False
        # how many times the group gave this task its partitions (see rejoined_since)
        self._assignments = 0
        #: whether a consumer that never got its first assignment finishes that join before it
        #: leaves (brokers that keep a member leaving mid-join; set by the worker)
        self.join_before_leave: Callable[[], bool] | None = None
        self._leaving = False
        # topics.regex: matched in Python against the cluster's topics (Java's whole-name match,
        # Java syntax such as \d), subscribed by name, refreshed every TOPICS_REFRESH_S
        self._topics_pattern: re.Pattern[str] | None = None
        self._subscribed: list[str] = []
        self._next_topics_refresh = 0.0
        #: when to look again for subscribed topics the broker said do not exist (None: all do)
        self._next_missing_check: float | None = None
        # offset commits for the metrics: the latest sequence number, when it started, and
        # the asynchronous commits waiting for their on_commit (sequence number, start)
        self._commit_seq = 0
        self._commit_started = 0.0
        self._async_commits: collections.deque[tuple[int, float]] = collections.deque()

    # -- control (any thread) --------------------------------------------------------------------
    @override
    def stop(self) -> None:
        """Ask the task to stop; the task thread commits, closes partitions and stops the task."""
        with self._lock:
            self._stopping = True
            self._wakeup = True
        self._operator.trigger_stop()

    @override
    def _wake_up(self) -> None:
        self._wakeup = True

    @property
    def group_id(self) -> str:
        """The consumer group the task's consumer joins."""
        return str(self._consumer_config["group.id"])

    @property
    def assignments(self) -> int:
        """How many assignments the group has given the task so far (a rebalance marker)."""
        return self._assignments

    def rejoined_since(self, mark: int) -> bool:
        """Whether the task finished a rebalance after ``mark`` (or is no longer a member).

        A task that has stopped, failed or not yet joined cannot hold a rebalance up, so it
        counts as done.
        """
        return (
            self._assignments > mark
            or self._consumer is None
            or self._stopping
            or not self.thread.is_alive()
        )

    def raw_record_for(self, record: SinkRecord) -> ConsumedRecord | None:
        """The raw Kafka record a delivered sink record came from (for the DLQ), if known."""
        raw = self._raw
        if raw is None:
            return None
        msg = raw.get(
            (
                record.original_topic,
                record.original_kafka_partition or 0,
                record.original_kafka_offset,
            )
        )
        return None if msg is None else ConsumedRecord.from_message(msg)

    # -- SinkTaskOwner (for the context) ---------------------------------------------------------
    def assigned_partitions(self) -> set[TopicPartition]:
        """The partitions currently assigned to this task."""
        return set(self._assigned)

    def consumer_paused_by_worker(self) -> bool:
        """Whether every partition is held paused (connector paused, or redelivery)."""
        return self._should_pause() or self._paused_for_redelivery

    def pause_consumer(self, partitions: set[TopicPartition]) -> None:
        """Pause fetching from ``partitions``: applied on the task thread before its next poll."""
        self._sync_pauses = True
        self._wakeup = True

    def resume_consumer(self, partitions: set[TopicPartition]) -> None:
        """Resume fetching from ``partitions``: applied on the task thread before its next poll."""
        self._sync_pauses = True
        self._wakeup = True

    def _apply_task_pauses(self) -> None:
        """Make the consumer's paused partitions match what the task asked for."""
        self._sync_pauses = False
        consumer = self._consumer
        if consumer is None or not self._assigned or self.consumer_paused_by_worker():
            return
        paused = self.context.retain_paused(set(self._assigned))
        if paused:
            consumer.pause(_kafka_partitions(paused))
        running = self._assigned - paused
        if running:
            consumer.resume(_kafka_partitions(running))

    # -- the task thread -------------------------------------------------------------------------
    @override
    def _await_unpause(self) -> bool:
        while self._target is TargetState.PAUSED and not self._stopping:
            time.sleep(_POLL_SLICE_S)
        return not self._stopping

    @override
    def _initialize_and_start(self) -> bool:
        pace_gc_for_records()
        factory = self._consumer_factory
        if factory is None:
            from cdk.kafka import new_consumer

            factory = new_consumer
        try:
            self._consumer = factory(self._consumer_config)
        except Exception as exc:
            raise ConnectException(f"{self}: failed to create consumer: {exc}") from exc
        self.task.initialize(self.context)
        self.task.start(dict(self._task_props))
        regex = self._task_props.get("topics.regex", "").strip()
        topics = [t.strip() for t in self._task_props.get("topics", "").split(",") if t.strip()]
        if regex:
            from cdk.transforms._regex_router import compile_java_regex

            try:
                self._topics_pattern = compile_java_regex(regex)
            except re.error as exc:
                raise ConnectException(f"{self}: invalid topics.regex '{regex}': {exc}") from exc
            self._refresh_topics()
        elif topics:
            self._subscribe(topics)
        else:
            raise ConnectException(
                f"{self}: the sink task has neither 'topics' nor 'topics.regex' in its config"
            )
        self._task_started = True
        return True

    def _subscribe(self, topics: list[str]) -> None:
        consumer = self._consumer
        assert consumer is not None
        consumer.subscribe(
            topics,
            on_assign=self._on_assign,
            on_revoke=self._on_revoke,
            on_lost=self._on_lost,
        )
        self._subscribed = sorted(topics)

    def _refresh_topics(self) -> None:
        """Subscribe to the cluster's topics whose whole name matches ``topics.regex``.

        Kafka matches the pattern against each topic name (``Matcher.matches``), not a prefix,
        and with Java's syntax; librdkafka's own regex subscriptions do neither, so the names
        are matched here and subscribed explicitly, then re-matched every
        :data:`TOPICS_REFRESH_S` seconds (new topics join, deleted ones leave).
        """
        consumer = self._consumer
        pattern = self._topics_pattern
        assert consumer is not None
        assert pattern is not None
        self._next_topics_refresh = time.monotonic() + TOPICS_REFRESH_S
        try:
            metadata = consumer.list_topics(timeout=_TOPICS_LIST_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - the broker may be briefly unreachable
            log.debug("%s could not list the topics for topics.regex: %s", self, exc)
            return
        matching = sorted(
            name
            for name in metadata.topics
            if name not in _INTERNAL_TOPICS and pattern.fullmatch(name)
        )
        if matching == self._subscribed:
            return
        log.info("%s topics.regex '%s' matches %s", self, pattern.pattern, matching)
        if matching:
            self._subscribe(matching)
        else:
            consumer.unsubscribe()
            self._subscribed = []

    @override
    def _execute(self) -> None:
        sink_metrics = self.metrics.sink
        assert sink_metrics is not None
        next_commit = time.monotonic() + self._flush_interval_s
        was_paused = False
        while not self._stopping:
            paused = self._should_pause()
            if paused != was_paused:
                was_paused = paused
                if paused:
                    self._pause_all()
                    self._report(State.PAUSED)
                    self.context.request_commit()
                else:
                    if not self._paused_for_redelivery:
                        self._resume_all()
                    self._report(State.RUNNING)
            now = time.monotonic()
            if self.context.is_commit_requested() or now >= next_commit:
                self.context.take_commit_request()
                self._commit_offsets(closing=False)
                next_commit = now + self._flush_interval_s
            timeout_s = max(next_commit - now, 0.0)
            retry_ms = self.context.take_timeout_ms()
            if retry_ms > 0:
                timeout_s = min(timeout_s, retry_ms / 1000.0)
            if self._topics_pattern is not None:
                if now >= self._next_topics_refresh:
                    self._refresh_topics()
                timeout_s = min(timeout_s, max(self._next_topics_refresh - now, 0.0))
            elif self._next_missing_check is not None:
                if now >= self._next_missing_check:
                    self._check_missing_topics()
                if self._next_missing_check is not None:
                    timeout_s = min(timeout_s, max(self._next_missing_check - now, 0.0))
            self._rewind()
            if self._sync_pauses:
                self._apply_task_pauses()
            messages = self._poll(timeout_s)
            if self._rebalance_error is not None:
                error, self._rebalance_error = self._rebalance_error, None
                raise error
            if messages:
                self._convert_messages(messages)
                sink_metrics.record_read(len(messages) - self._dropped, self.metrics.clock())
                self._record_active()
            self._deliver_messages()

    def _poll(self, timeout_s: float) -> list[Any]:
        """Wait up to ``timeout_s`` for messages; return early on stop or a state change."""
        consumer = self._consumer
        assert consumer is not None
        max_records = self._max_poll_records
        deadline = time.monotonic() + timeout_s
        self._wakeup = False
        while True:
            if self._sync_pauses:
                return []
            batch = consumer.consume(max_records, 0)
            if batch:
                return batch
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._wakeup or self._stopping:
                return []
            first = consumer.poll(min(remaining, _POLL_SLICE_S))
            if first is not None:
                rest = consumer.consume(max_records - 1, 0) if max_records > 1 else []
                return [first, *rest]
            if self._rebalance_error is not None or self.context.is_commit_requested():
                return []

    def _convert_messages(self, messages: list[Any]) -> None:
        batch = self._batch
        positions = self._batch_positions
        chain = self._chain if len(self._chain) else None
        key_to = self._key_converter.to_connect_data
        value_to = self._value_converter.to_connect_data
        convert_headers = self._convert_headers
        ts_types = _TIMESTAMP_TYPES
        new = _new_sink_record
        new_headers = _new_headers
        raw = self._raw
        active_topics = self._active_topic_names
        self._dropped = 0
        if self._rereading:
            self._rereading.clear()
        # While a partition is read again, every record is checked; otherwise only the first
        # of each partition in the batch and one that is not where the previous one ended.
        check_all = self._gaps.rereading
        in_order = self._in_order
        for msg in messages:
            if msg.error() is not None:
                self._consumer_error(msg.error())
                continue
            topic = msg.topic()
            partition = msg.partition()
            offset = msg.offset()
            tp = (topic, partition)
            if (check_all or positions.get(tp, -1) != offset) and not in_order(tp, offset):
                continue
            positions[tp] = offset + 1
            if raw is not None:
                raw[(topic, partition, offset)] = msg
            try:
                raw_headers = msg.headers()
                if raw_headers:
                    headers = convert_headers(topic, raw_headers)
                else:
                    headers = new_headers(Headers)
                    headers._headers = []
                key = key_to(topic, msg.key(), headers)
                value = value_to(topic, msg.value(), headers)
                if active_topics is not None and topic not in active_topics:
                    self._record_active_topic(topic)  # converted, before the SMTs (as Kafka)
                ts_type, ts = msg.timestamp()
                # Fields set directly: the values come from Kafka, the constructor's checks
                # would only cost time.
                record: Any = new(SinkRecord)
                record.topic = topic
                record.kafka_partition = partition
                record.key_schema = key.schema
                record.key = key.value
                record.value_schema = value.schema
                record.value = value.value
                record.kafka_offset = offset
                record.timestamp = ts if ts_type and ts >= 0 else None
                record.timestamp_type = ts_types[ts_type]
                record.headers = headers
                record.original_topic = topic  # KIP-793, before the transformations
                record.original_kafka_partition = partition
                record.original_kafka_offset = offset
                if chain is not None:
                    record = chain.apply(record)
            except Exception:  # noqa: BLE001 - retried under the error operator
                record = self._convert_tolerant(msg)
            if record is not None:
                batch.append(record)

    def _in_order(self, key: tuple[str, int], offset: int) -> bool:
        """Whether to take a record that may not follow the previous one of its partition.

        When a fetch began past the offset expected, the partition is sought back there and
        read once more (:class:`~cdk.runtime.util.FetchGaps`); its records still in this batch
        are dropped, so none after the gap reaches ``put`` before the ones in it.
        """
        if key in self._rereading:
            self._dropped += 1
            return False
        expected = self._batch_positions.get(key)
        if expected is None:
            expected = self._current.get(key)
            if expected is None:
                expected = self._start_offset(key)
                if expected is None:
                    return True
        if expected == offset and not self._gaps.rereading:
            return True
        if self._gaps.check(key, expected, offset):
            return True
        self._rereading.add(key)
        self._dropped += 1
        self._seek(key[0], key[1], expected)
        return False

    def _start_offset(self, key: tuple[str, int]) -> int | None:
        """Where a partition read from its beginning starts: the log start of the last fetch."""
        if key not in self._from_start:
            return None
        start = self._from_start[key]
        if start is None:
            from confluent_kafka import TopicPartition as KafkaTopicPartition

            consumer = self._consumer
            assert consumer is not None
            try:
                watermarks = consumer.get_watermark_offsets(
                    KafkaTopicPartition(key[0], key[1]), cached=True
                )
            except Exception:  # noqa: BLE001 - unknown start: the first record is taken
                return None
            if not watermarks or watermarks[0] < 0:
                return None
            self._from_start[key] = start = int(watermarks[0])
        return start

    def _count_heal(self) -> None:
        sink_metrics = self.metrics.sink
        assert sink_metrics is not None
        sink_metrics.fetch_gap_heal.record(1.0, self.metrics.clock())

    def _convert_headers(self, topic: str, raw_headers: Sequence[tuple[str, Any]]) -> Headers:
        convert = self._header_converter.to_connect_header
        plain = _PLAIN_HEADER_TYPES
        out = []
        for key, raw in raw_headers:
            converted = convert(topic, key, raw)
            schema = converted.schema
            value = converted.value
            if plain.get(id(schema)) is type(value) and type(key) is str:
                header = _new_header(Header)
                header.key = key
                header.schema = schema
                header.value = value
            else:
                header = Header(key, schema, value)
            out.append(header)
        return Headers(out)

    def _convert_tolerant(self, msg: Any) -> SinkRecord | None:
        """Redo a message's convert/transform stages under the retry/tolerance operator."""
        topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
        raw_headers = msg.headers() or []
        ts_type, ts = msg.timestamp()
        consumed = ConsumedRecord(
            topic=topic,
            partition=partition,
            offset=offset,
            key=msg.key(),
            value=msg.value(),
            headers=list(raw_headers),
            timestamp=ts if ts_type and ts >= 0 else None,
        )
        context = ProcessingContext(consumed=consumed)
        key_conv = self._key_converter
        value_conv = self._value_converter
        converted = self._convert_tolerant_steps(
            [
                (Stage.KEY_CONVERTER, key_conv, lambda: key_conv.to_connect_data(topic, msg.key())),
                (
                    Stage.VALUE_CONVERTER,
                    value_conv,
                    lambda: value_conv.to_connect_data(topic, msg.value()),
                ),
                (
                    Stage.HEADER_CONVERTER,
                    self._header_converter,
                    lambda: self._convert_headers(topic, raw_headers),
                ),
            ],
            context,
        )
        if converted is None:
            return None
        if self._active_topic_names is not None and topic not in self._active_topic_names:
            self._record_active_topic(topic)
        key, value, headers = converted
        assert key is not None
        assert value is not None
        record: Any = SinkRecord(
            topic,
            partition,
            key.schema,
            key.value,
            value.schema,
            value.value,
            offset,
            ts if ts_type and ts >= 0 else None,
            _TIMESTAMP_TYPES.get(ts_type, TimestampType.NO_TIMESTAMP_TYPE),
            headers,
            # KIP-793: where the consumer read it, whatever the transformations make of it
            original_topic=topic,
            original_kafka_partition=partition,
            original_kafka_offset=offset,
        )
        return self._transform_tolerant(record, context)  # type: ignore[no-any-return]

    def _consumer_error(self, error: Any) -> None:
        from confluent_kafka import KafkaError, KafkaException

        if error.code() == KafkaError._PARTITION_EOF:
            return
        if error.fatal():
            raise ConnectException(f"{self}: fatal consumer error: {error}") from KafkaException(
                error
            )
        log.warning("%s consumer error: %s", self, error)
        if (
            error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
            and self._topics_pattern is None
            and self._subscribed
            and self._next_missing_check is None
        ):
            self._next_missing_check = time.monotonic() + MISSING_TOPIC_CHECK_S

    def _check_missing_topics(self) -> None:
        """Subscribe again once every subscribed topic exists, so the consumer sees them now."""
        consumer = self._consumer
        assert consumer is not None
        self._next_missing_check = time.monotonic() + MISSING_TOPIC_CHECK_S
        try:
            metadata = consumer.list_topics(timeout=_TOPICS_LIST_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - the broker may be briefly unreachable
            log.debug("%s could not list the topics: %s", self, exc)
            return
        missing = [
            t
            for t in self._subscribed
            if t not in metadata.topics
            or metadata.topics[t].error is not None
            or not metadata.topics[t].partitions
        ]
        if missing:
            return
        self._next_missing_check = None
        log.info(
            "%s subscribed topics %s exist now: subscribing again so that the consumer gets "
            "their partitions at once",
            self,
            self._subscribed,
        )
        self._subscribe(list(self._subscribed))

    def _deliver_messages(self) -> None:
        batch = self._batch
        clock = self.metrics.clock
        started = clock()
        try:
            self.task.put(list(batch))
        except RetriableException as exc:
            log.error("%s RetriableException from SinkTask %s:", self, self.id, exc_info=exc)
            self._paused_for_redelivery = True
            self._pause_all()
            return
        except Exception as exc:
            log.error(
                "%s Task threw an uncaught and unrecoverable exception. Task is being killed "
                "and will not recover until manually restarted",
                self,
                exc_info=exc,
            )
            raise ConnectException(
                "Exiting WorkerSinkTask due to unrecoverable exception."
            ) from exc
        now = clock()
        sink_metrics = self.metrics.sink
        assert sink_metrics is not None
        sink_metrics.record_put(len(batch), now - started, now)
        self.metrics.task.record_batch(len(batch), now)
        if self._batch_positions:
            self._current.update(self._batch_positions)
            self._batch_positions.clear()
        batch.clear()
        if self._raw:
            self._raw.clear()
        if self._paused_for_redelivery:
            self._paused_for_redelivery = False
            if not self._should_pause():
                self._resume_all()

    # -- pause / resume --------------------------------------------------------------------------
    def _should_pause(self) -> bool:
        return self._target is TargetState.PAUSED

    def _pause_all(self) -> None:
        if self._consumer is not None and self._assigned:
            self._consumer.pause(_kafka_partitions(self._assigned))

    def _resume_all(self) -> None:
        if self._consumer is None:
            return
        paused = self.context.paused_partitions()
        resume = {tp for tp in self._assigned if tp not in paused}
        if resume:
            self._consumer.resume(_kafka_partitions(resume))

    def _rewind(self) -> None:
        if not self.context.has_offsets():
            return
        for tp, offset in self.context.take_offsets().items():
            if tp not in self._assigned:
                log.warning("%s Cannot rewind %s: the partition is not assigned", self, tp)
                continue
            self._seek(tp.topic, tp.partition, offset)
            key = (tp.topic, tp.partition)
            self._last_committed[key] = OffsetAndMetadata(offset)
            self._current[key] = offset
            self._batch_positions.pop(key, None)
            self._gaps.forget([key])

    def _seek(self, topic: str, partition: int, offset: int) -> None:
        """Move the consumer's position in a partition (the next fetch reads from ``offset``)."""
        consumer = self._consumer
        assert consumer is not None
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        try:
            consumer.seek(KafkaTopicPartition(topic, partition, offset))
        except Exception as exc:  # noqa: BLE001 - librdkafka refuses seeks before fetching
            # librdkafka cannot seek a partition it has not started fetching: re-assign it.
            log.debug(
                "%s seek of %s-%d failed (%s); re-assigning at the offset",
                self,
                topic,
                partition,
                exc,
            )
            consumer.incremental_unassign([KafkaTopicPartition(topic, partition)])
            consumer.incremental_assign([KafkaTopicPartition(topic, partition, offset)])

    # -- rebalance callbacks (run inside consumer.poll/consume on the task thread) ----------------
    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        if self._leaving:  # the join finished while the task was leaving: nothing to open
            self._assignments += 1
            return

        tps = {TopicPartition(p.topic, p.partition) for p in partitions}
        log.debug("%s partitions assigned: %s", self, sorted(tps))
        self._assigned = set(tps)
        self._partitions_closed = False
        self._current = {}
        self._last_committed = {}
        self._paused_for_redelivery = False
        self._gaps.forget()
        self._from_start = {}
        # Let the task open its partitions (and possibly ask for offsets) before assigning.
        opened = False
        if self._rebalance_error is None:
            self._in_assign = True
            try:
                self.task.open(set(tps))
                opened = True
            except Exception as exc:  # noqa: BLE001 - re-raised after the rebalance
                self._rebalance_error = exc
            finally:
                self._in_assign = False
        rewinds = self.context.take_offsets() if opened else {}
        committed: dict[tuple[str, int], int] = {}
        known = False  # whether the partitions without a committed offset surely have none
        try:
            for p in consumer.committed(partitions, timeout=30):
                if p.offset >= 0:
                    committed[(p.topic, p.partition)] = p.offset
            known = True
        except Exception as exc:  # noqa: BLE001 - the committed position is only a hint
            log.warning("%s could not read committed offsets: %s", self, exc)
        assignment = []
        for p in partitions:
            key = (p.topic, p.partition)
            offset = rewinds.get(TopicPartition(p.topic, p.partition))
            if offset is not None:
                assignment.append(KafkaTopicPartition(p.topic, p.partition, offset))
                position: int | None = offset
            else:
                assignment.append(KafkaTopicPartition(p.topic, p.partition))
                position = committed.get(key)
                if position is None and known and self._reset_earliest:
                    self._from_start[key] = None  # from the log start, known after a fetch
            if position is not None:
                self._last_committed[key] = OffsetAndMetadata(position)
                self._current[key] = position
        consumer.assign(assignment)
        paused = self.context.retain_paused(tps)
        if self._should_pause():
            self._pause_all()
        elif paused:
            consumer.pause(_kafka_partitions(paused))
        self._assignments += 1
        self._record_partitions()
        self._record_active()

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        log.debug("%s partitions revoked", self)
        if not self._partitions_closed and self._assigned:
            try:
                self._close_partitions()
            except Exception as exc:  # noqa: BLE001 - re-raised after the rebalance
                if self._rebalance_error is None:
                    self._rebalance_error = exc
        self._batch.clear()
        self._batch_positions.clear()
        self._gaps.forget()
        if self._raw:
            self._raw.clear()
        self._assigned = set()
        self._record_partitions()
        self._record_active()

    def _on_lost(self, consumer: Any, partitions: list[Any]) -> None:
        log.warning("%s partitions lost; closing them without committing", self)
        lost = {TopicPartition(p.topic, p.partition) for p in partitions}
        try:
            self.task.close(lost)
        except Exception as exc:  # noqa: BLE001 - re-raised after the rebalance
            if self._rebalance_error is None:
                self._rebalance_error = exc
        self._batch.clear()
        self._batch_positions.clear()
        self._assigned -= lost
        for tp in lost:
            self._current.pop((tp.topic, tp.partition), None)
            self._last_committed.pop((tp.topic, tp.partition), None)
            self._from_start.pop((tp.topic, tp.partition), None)
        self._gaps.forget((tp.topic, tp.partition) for tp in lost)
        self._record_partitions()
        self._record_active()

    def _record_partitions(self) -> None:
        sink_metrics = self.metrics.sink
        assert sink_metrics is not None
        sink_metrics.partition_count = len(self._assigned)

    def _record_active(self) -> None:
        """Record how many consumed records are past the committed offsets (once per batch)."""
        committed = self._last_committed
        consumed = {**self._current, **self._batch_positions}
        active = 0
        for tp in self._assigned:
            key = (tp.topic, tp.partition)
            offset = consumed.get(key)
            last = committed.get(key)
            if offset is not None and last is not None and offset > last.offset:
                active += offset - last.offset
        sink_metrics = self.metrics.sink
        assert sink_metrics is not None
        sink_metrics.active.record(active, self.metrics.clock())

    def _close_partitions(self) -> None:
        """Commit synchronously and close every assigned partition (rebalance or stop)."""
        self._partitions_closed = True
        self._commit_offsets(closing=True)

    # -- offsets ---------------------------------------------------------------------------------
    def _commit_offsets(self, *, closing: bool) -> None:
        assigned = set(self._assigned)
        if self._errant_reporter is not None:
            await_futures = getattr(self._errant_reporter, "await_futures", None)
            if await_futures is not None:
                await_futures()
        current = {
            TopicPartition(t, p): OffsetAndMetadata(o)
            for (t, p), o in self._current.items()
            if TopicPartition(t, p) in assigned
        }
        measured = bool(current)  # as Kafka: a commit with nothing consumed is no attempt
        if measured:
            self._begin_commit()
        try:
            provided = self.task.pre_commit(dict(current))
        except Exception as exc:
            if measured:
                self._commit_completed(self._commit_seq, success=False)
            if closing:
                log.warning(
                    "%s Offset commit failed during close: pre_commit raised", self, exc_info=exc
                )
            else:
                log.error(
                    "%s Offset commit failed, rewinding to last committed offsets",
                    self,
                    exc_info=exc,
                )
                self._rewind_to_last_committed()
            return
        finally:
            if closing:
                try:
                    self.task.close(assigned)
                except Exception as exc:  # noqa: BLE001 - re-raised after the rebalance
                    if self._rebalance_error is None:
                        self._rebalance_error = exc
        if not provided:
            log.debug("%s Skipping offset commit, task opted-out by returning no offsets", self)
            if measured:
                self._commit_completed(self._commit_seq, success=True)
            return
        committable = dict(self._last_committed)
        for tp, om in provided.items():
            key = (tp.topic, tp.partition)
            if tp not in assigned:
                log.warning(
                    "%s Ignoring invalid task provided offset %s/%s -- partition not assigned",
                    self,
                    tp,
                    om,
                )
            elif key in self._current and om.offset <= self._current[key]:
                committable[key] = om
            else:
                log.warning(
                    "%s Ignoring invalid task provided offset %s/%s -- not yet consumed",
                    self,
                    tp,
                    om,
                )
        if committable == self._last_committed and not self._force_commit:
            log.debug("%s Skipping offset commit, no change since last commit", self)
            if measured:
                self._commit_completed(self._commit_seq, success=True)
            return
        self._do_commit(committable, closing, measured)

    def _begin_commit(self) -> None:
        self._commit_seq += 1
        self._commit_started = self.metrics.clock()
        sink_metrics = self.metrics.sink
        assert sink_metrics is not None
        sink_metrics.commit_seq_no = self._commit_seq

    def _commit_completed(self, seq: int, *, success: bool) -> None:
        """Record the end of offset commit ``seq`` (one overtaken by a newer is skipped)."""
        sink_metrics = self.metrics.sink
        assert sink_metrics is not None
        now = self.metrics.clock()
        if seq != self._commit_seq:
            sink_metrics.commit_skip.record(1.0, now)
            return
        self.metrics.task.record_commit(now - self._commit_started, success)
        if success:
            sink_metrics.commit_completion.record(1.0, now)
            self._record_active()

    def _do_commit(
        self,
        offsets: dict[tuple[str, int], OffsetAndMetadata],
        sync: bool,
        measured: bool = False,
    ) -> None:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        consumer = self._consumer
        assert consumer is not None
        to_commit = [
            KafkaTopicPartition(t, p, om.offset, om.metadata)
            if om.metadata
            else KafkaTopicPartition(t, p, om.offset)
            for (t, p), om in offsets.items()
        ]
        if not to_commit:
            if measured:
                self._commit_completed(self._commit_seq, success=True)
            return
        self._force_commit = False
        try:
            if sync:
                consumer.commit(offsets=to_commit, asynchronous=False)
            else:
                if measured:  # on_commit (served by a later poll) completes it
                    self._async_commits.append((self._commit_seq, self._commit_started))
                consumer.commit(offsets=to_commit, asynchronous=True)
        except Exception as exc:  # noqa: BLE001 - a failed commit is retried at the next one
            log.error("%s Commit of offsets threw an unexpected exception: %s", self, exc)
            self._force_commit = True
            if measured:
                if not sync and self._async_commits:
                    self._async_commits.pop()
                self._commit_completed(self._commit_seq, success=False)
            return
        self._last_committed = dict(offsets)
        if sync and measured:
            self._commit_completed(self._commit_seq, success=True)

    def _on_commit(self, err: Any, partitions: list[Any]) -> None:
        # librdkafka reports the asynchronous commits only, in the order they were sent
        seq = self._async_commits.popleft()[0] if self._async_commits else None
        if err is not None:
            from confluent_kafka import KafkaError

            if err.code() != KafkaError._NO_OFFSET:
                log.error("%s Commit of offsets failed: %s", self, err)
                self._force_commit = True
                if seq is not None:
                    self._commit_completed(seq, success=False)
                return
        if seq is not None:
            self._commit_completed(seq, success=True)

    def _rewind_to_last_committed(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        for (topic, partition), om in self._last_committed.items():
            try:
                consumer.seek(KafkaTopicPartition(topic, partition, om.offset))
            except Exception as exc:  # noqa: BLE001 - the rewind is best effort
                log.warning("%s could not rewind %s-%d: %s", self, topic, partition, exc)
            self._current[(topic, partition)] = om.offset
            self._gaps.forget([(topic, partition)])
        self._batch.clear()
        self._batch_positions.clear()

    # -- cleanup ---------------------------------------------------------------------------------
    @override
    def _log_failure(self, exc: BaseException) -> None:
        log.error("%s Task failed: %s", self, exc)

    @override
    def _release(self) -> None:
        started = self._task_started
        consumer = self._consumer
        if started and consumer is not None and not self._cancelled:
            try:
                if not self._partitions_closed and self._assigned:
                    self._close_partitions()
            except Exception:
                log.exception("%s failed to commit offsets and close partitions", self)
        if started:
            try:
                self.task.stop()
            except Exception:
                log.exception("%s Could not stop task", self)
        if consumer is not None:
            self._partitions_closed = True
            self._assigned = set()
            self._record_partitions()
            if not self._cancelled:
                self._finish_first_join(consumer)
            try:
                consumer.close()
            except Exception:
                log.exception("%s failed to close the consumer", self)
            self._consumer = None

    def _finish_first_join(self, consumer: Any) -> None:
        """Let a consumer that is still joining its group finish the join before it leaves.

        A member that leaves while its group re-forms can leave the group stuck on brokers
        that keep it (the embedded Tansu: the next member to join then waits for ever), which a
        sink stopped or moved just after it started would do. Its records are not taken.
        """
        gate = self.join_before_leave
        if self._assignments > 0 or gate is None or not gate():
            return
        if not self._joining(consumer):
            return
        self._leaving = True
        deadline = time.monotonic() + JOIN_BEFORE_LEAVE_S
        while self._assignments == 0 and time.monotonic() < deadline:
            try:
                consumer.poll(0.1)  # drives the join; a record it brings is not taken
            except Exception:  # noqa: BLE001 - leaving anyway
                break
        if self._assignments == 0:
            log.warning(
                "%s leaves its consumer group before its first join finished (waited %.0f s)",
                self,
                JOIN_BEFORE_LEAVE_S,
            )

    def _joining(self, consumer: Any) -> bool:
        """Whether the consumer may have asked to join its group (it may, unless shown not).

        librdkafka sends no JoinGroup while none of the subscribed topics exists (it waits
        for one to appear in its metadata), so a sink whose topics are all missing, or that
        subscribed to nothing (a ``topics.regex`` that matches no topic yet), has no join to
        finish: waiting for one would only hold its stop until the graceful timeout. The
        metadata asked here also reaches the consumer's own, so a topic created meanwhile
        counts as a join that may have started.
        """
        if not self._subscribed:
            return False
        try:
            metadata = consumer.list_topics(timeout=_TOPICS_LIST_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - unknown: assume a join may be under way
            return True
        return any(
            t in metadata.topics
            and metadata.topics[t].error is None
            and metadata.topics[t].partitions
            for t in self._subscribed
        )


def _kafka_partitions(partitions: set[TopicPartition]) -> list[Any]:
    from confluent_kafka import TopicPartition as KafkaTopicPartition

    return [KafkaTopicPartition(tp.topic, tp.partition) for tp in partitions]
