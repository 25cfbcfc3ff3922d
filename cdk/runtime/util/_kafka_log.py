"""A compacted Kafka topic read as a log of keyed records (Kafka Connect's ``KafkaBasedLog``).

The offset, config and status stores of distributed mode each keep their state in one compacted
topic: :class:`KafkaBasedLog` creates the topic when it is missing, reads it from the beginning
on :meth:`~KafkaBasedLog.start`, hands every record it reads to a callback, reads to the end of
the topic on demand (so a store sees what other processes wrote), and writes records and waits for
the broker to acknowledge them. A fetch that skips records the broker holds is noticed and read
again (:class:`~cdk.runtime.util.FetchGaps`), so the callback sees every record, in order.
In a topic written in transactions (``transactional_writes``), a hole is first looked up in the
raw record batches (:class:`~cdk.runtime.util.MarkerProbe`): one of transaction markers only,
which no consumer receives, is not read again (one fetch finds the markers of hundreds of
transactions, where a re-read per marker made a late reader of a busy topic time out).

A topic written in transactions (the offsets topic of exactly-once workers,
``stop_at_stable_offset``) is read with :class:`~cdk.runtime.util.CommittedReader` instead of
a librdkafka consumer: it hides the records of aborted transactions from their markers and ends
a read at the first open transaction, as a Kafka broker's ``read_committed`` answer does (the
embedded broker's fetch answers hide no aborted transaction, and its ``ListOffsets`` answers 0
as the end of a partition while a transaction is open there). Where that reader cannot read the
topic (TLS or SASL, compressed batches), the log reads it with the librdkafka consumer from the
beginning again (right on a Kafka broker).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cdk.errors import ConfigException, ConnectException
from cdk.runtime.util._committed import (
    CommittedReader,
    FetchTimedOut,
    MarkerProbe,
    UnsupportedFetch,
)
from cdk.runtime.util._fetch_gaps import FetchGaps
from cdk.runtime.util._topics import ensure_topic

__all__ = ["KafkaBasedLog", "LogRecord", "LogWriter"]

log = logging.getLogger("cdk.runtime.kafkalog")
#: ListOffsets' special timestamps: the log start offset and the end offset (the last stable
#: offset under read_committed).
_EARLIEST = -2
_LATEST = -1
#: How long read_to_end waits for the records its consumer has fetched past the end it was told.
_FETCHED_QUIET_S = 0.05
#: How long read_to_end waits without progress short of the end before it takes the position
#: reached for the last stable offset (an open transaction holds a read_committed consumer
#: there; Kafka answers that offset as the end, the embedded broker answers the high watermark).
_STALLED_S = 3.0

#: What the callback receives: key, value (``None``: a tombstone), partition, offset.
LogRecord = tuple[bytes | None, bytes | None, int, int]
#: Writes records to a topic for a log instead of its own producer (distributed mode's leader
#: writes in transactions): ``(topic, [(key, value), ...]) -> offsets``.
LogWriter = Callable[[str, Sequence[tuple[bytes, "bytes | None"]]], list[int]]


class KafkaBasedLog:
    """A compacted topic consumed from the beginning and written with acknowledgements.

    Args:
        topic: the topic.
        bootstrap_servers: the cluster.
        on_record: called (under the log's lock) with every record read, in order per partition.
        client_overrides: extra librdkafka settings of the producer, consumer and admin client.
        partitions: partitions of the topic when it is created.
        replication_factor: its replication factor when created (capped to the brokers;
            ``-1``: the broker's default).
        purpose: what the topic is for, in messages (``offset storage``, ``config storage``).
        timeout_s: how long one write, or one read to the end, may take.
        create: create the topic when missing (readers that only follow a topic pass False).
        stop_at_stable_offset: the topic is written in transactions: read it as a
            ``read_committed`` consumer reads it on Kafka, from the transaction markers (see
            the module's docstring).
        transactional_writes: the topic is written in transactions, in part at least (it may
            be read with a librdkafka consumer still): a hole of transaction markers only is
            not read again (see the module's docstring). Implied by ``stop_at_stable_offset``.
    """

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str,
        on_record: Callable[[LogRecord], None],
        client_overrides: Mapping[str, Any] | None = None,
        *,
        partitions: int = 1,
        replication_factor: int = 3,
        purpose: str = "the runtime",
        timeout_s: float = 30.0,
        create: bool = True,
        stop_at_stable_offset: bool = False,
        transactional_writes: bool = False,
    ) -> None:
        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self.purpose = purpose
        self._on_record = on_record
        self._overrides = dict(client_overrides or {})
        self._partitions = partitions
        self._replication_factor = replication_factor
        self._timeout_s = timeout_s
        self._create = create
        #: read with the marker-aware reader; without it (its fallback), a read to the end that
        #: stops moving below the end is taken to have reached the last stable offset (an open
        #: transaction) after ``_STALLED_S``, as Kafka's answer would end it
        self.stop_at_stable_offset = stop_at_stable_offset
        self._transactional = transactional_writes or stop_at_stable_offset
        self._markers: MarkerProbe | None = None
        self._committed: CommittedReader | None = None
        self._leaders: dict[int, tuple[str, int]] = {}
        self._admin: Any = None
        self.lock = threading.RLock()
        self._producer: Any = None
        self._consumer: Any = None
        self._assigned: list[Any] = []
        self._writer: LogWriter | None = None
        # the offset expected next in each partition (from the log start), and the re-reads
        self._next: dict[int, int] = {}
        self._gaps = FetchGaps(self)

    def use_writer(self, writer: LogWriter | None) -> None:
        """Send through ``writer`` from now on (``None``: the log's own producer again)."""
        with self.lock:
            self._writer = writer

    def _client_config(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        config: dict[str, Any] = {"bootstrap.servers": self.bootstrap_servers}
        config.update(extra)
        config.update(self._overrides)
        return config

    @property
    def partitions(self) -> int:
        """How many partitions the topic has (0 before :meth:`start`)."""
        return len(self._assigned)

    @property
    def healed_gaps(self) -> int:
        """How many fetches skipped records the broker holds, healed by reading again."""
        return self._gaps.healed

    @property
    def started(self) -> bool:
        """Whether :meth:`start` succeeded and :meth:`stop` was not called since."""
        return self._consumer is not None

    def start(self) -> None:
        """Create the topic if missing (compacted), then read it from the beginning.

        Raises:
            ConnectException: the cluster cannot be reached, or the topic cannot be created or
                read.
            ConfigException: the topic exists and is not compacted.
        """
        from confluent_kafka import TopicPartition

        from cdk.kafka import new_admin, new_consumer, new_producer

        with self.lock:
            if self._consumer is not None:
                return
            admin = new_admin(self._client_config({}))
            if self._create:
                num_partitions = ensure_topic(
                    admin,
                    self.topic,
                    partitions=self._partitions,
                    replication_factor=self._replication_factor,
                    config={"cleanup.policy": "compact"},
                    timeout_s=self._timeout_s,
                    purpose=self.purpose,
                )
            else:
                num_partitions = _partition_count(admin, self.topic, self._timeout_s)
            check_compacted(admin, self.topic, self._timeout_s, self.purpose)
            self._producer = new_producer(
                self._client_config(
                    {
                        "acks": "all",
                        "max.in.flight.requests.per.connection": 1,
                        "partitioner": "murmur2_random",
                        "linger.ms": 0,
                    }
                )
            )
            self._consumer = new_consumer(
                self._client_config(
                    {
                        "group.id": f"cdk-log-reader-{os.getpid()}-{id(self)}",
                        "enable.auto.commit": False,
                        "enable.auto.offset.store": False,
                        "auto.offset.reset": "earliest",
                        "isolation.level": "read_committed",
                        "enable.partition.eof": True,
                        "fetch.wait.max.ms": 50,
                    }
                )
            )
            self._assigned = [
                TopicPartition(self.topic, p, -2)  # OFFSET_BEGINNING
                for p in range(num_partitions)
            ]
            self._next = {}
            self._gaps.forget()
            self._committed = None
            self._markers = None
            plaintext = _plaintext(self._client_config({}))
            if self._transactional and plaintext:
                self._admin = admin
                self._leaders = {}
                self._markers = MarkerProbe(
                    self.topic,
                    self._leader,
                    timeout_s=self._timeout_s,
                    client_id=f"cdk-log-reader-{os.getpid()}",
                )
            if self.stop_at_stable_offset and plaintext:
                self._committed = CommittedReader(
                    self.topic,
                    self._leader,
                    timeout_s=self._timeout_s,
                    client_id=f"cdk-log-reader-{os.getpid()}",
                )
            else:
                self._consumer.assign(self._assigned)
            try:
                self.read_to_end()
            except BaseException:
                self._close_clients()
                raise

    def read_to_end(self) -> None:
        """Consume until every partition reached the end it had when this call began.

        Raises:
            ConnectException: not started, the end offsets cannot be read, or the read timed
                out.
        """
        with self.lock:
            consumer = self._consumer
            if consumer is None:
                raise ConnectException(f"The {self.purpose} on topic {self.topic} is not started")
            deadline = time.monotonic() + self._timeout_s
            if self._committed is not None and self._read_committed(deadline) is not None:
                return
            ends: dict[int, int] = {}
            # read from the beginning: the first record is expected at the log start
            unknown = [tp for tp in self._assigned if tp.partition not in self._next]
            for partition, low in self._list_offsets(consumer, unknown, _EARLIEST):
                self._next.setdefault(partition, max(low, 0))
            for partition, high in self._list_offsets(consumer, self._assigned, _LATEST):
                if high > 0:
                    ends[partition] = high
            positions: dict[int, int] = dict.fromkeys(ends, -1)
            for tp in consumer.position([tp for tp in self._assigned if tp.partition in ends]):
                if tp.offset >= 0:
                    positions[tp.partition] = tp.offset
            self._read_until(ends, positions, deadline)
            # The embedded broker (Tansu) answers the end offset of a partition with the base
            # offset of its last batch + 1, short of the batch's other records. The high
            # watermark of the fetch that brought that batch is right (the consumer keeps the
            # latest), and the batch's other records are fetched already: take them. Records
            # past the last stable offset (an open transaction) do not come under
            # read_committed: that read stops after a short quiet time instead of waiting.
            more = False
            for tp in self._assigned:
                if tp.partition in ends:
                    _low, fetched = consumer.get_watermark_offsets(tp, cached=True)
                    if fetched > ends[tp.partition]:
                        ends[tp.partition] = fetched
                        more = True
            if more:
                self._read_until(ends, positions, deadline, quiet_s=_FETCHED_QUIET_S)

    def _read_committed(self, deadline: float) -> int | None:
        """Read to the end with the marker-aware reader; how many records (None: it cannot).

        When it cannot read the topic, the librdkafka consumer reads it from the beginning
        instead, from now on (the callback then sees the records read so far again).
        """
        reader = self._committed
        assert reader is not None
        try:
            messages = reader.read(range(len(self._assigned)), deadline)
        except FetchTimedOut as exc:
            raise ConnectException(
                f"Timed out reading the {self.purpose} topic {self.topic} to its end: {exc}"
            ) from exc
        except UnsupportedFetch as exc:
            log.warning(
                "The %s topic %s cannot be read from its transaction markers (%s): reading it "
                "with a read_committed consumer from the beginning again",
                self.purpose,
                self.topic,
                exc,
            )
            reader.close()
            self._committed = None
            self._next = {}
            self._consumer.assign(self._assigned)
            return None
        for message in messages:
            self._on_record((message.key(), message.value(), message.partition(), message.offset()))
        return len(messages)

    def _leader(self, partition: int, refresh: bool) -> tuple[str, int]:
        """Where ``partition``'s leader listens (from the cluster's metadata)."""
        if refresh or partition not in self._leaders:
            try:
                metadata = self._admin.list_topics(topic=self.topic, timeout=self._timeout_s)
                described = metadata.topics.get(self.topic)
                leaders: dict[int, tuple[str, int]] = {}
                for number, info in (described.partitions if described else {}).items():
                    broker = metadata.brokers.get(info.leader)
                    if broker is not None:
                        leaders[number] = (broker.host, broker.port)
            except Exception as e:
                raise ConnectException(
                    f"Could not find the leaders of the {self.purpose} topic {self.topic}: {e}"
                ) from e
            if partition not in leaders:
                if partition in self._leaders:
                    return self._leaders[partition]  # no leader now: the last one, again
                raise ConnectException(
                    f"The {self.purpose} topic {self.topic} has no leader for partition {partition}"
                )
            self._leaders.update(leaders)
        return self._leaders[partition]

    def _list_offsets(
        self, consumer: Any, partitions: Sequence[Any], which: int
    ) -> list[tuple[int, int]]:
        """The earliest or latest (``which``) offsets of ``partitions`` in one ListOffsets request.

        One request, not one per partition: while the consumer fetches, each request waits for
        the fetch in flight, and a topic of 25 partitions (the offset topic's default) took a
        third of a second to read one at a time, on every new task's first offset read.
        """
        if not partitions:
            return []
        from confluent_kafka import TopicPartition

        try:
            answers = consumer.offsets_for_times(
                [TopicPartition(tp.topic, tp.partition, which) for tp in partitions],
                timeout=self._timeout_s,
            )
        except Exception as e:
            raise ConnectException(
                f"Could not read the end offsets of the {self.purpose} topic {self.topic}: {e}"
            ) from e
        failed = [tp for tp in answers if tp.error is not None]
        if failed:
            raise ConnectException(
                f"Could not read the end offsets of the {self.purpose} topic {self.topic}: "
                f"partition {failed[0].partition}: {failed[0].error}"
            )
        return [(tp.partition, tp.offset) for tp in answers]

    def _read_until(
        self,
        ends: Mapping[int, int],
        positions: dict[int, int],
        deadline: float,
        quiet_s: float | None = None,
    ) -> None:
        """Consume until each partition's position (updated in place) reaches its end.

        With ``quiet_s``, also stop when nothing came for that long.
        """
        consumer = self._consumer
        progress = time.monotonic()
        reached = dict(positions)
        while any(positions[p] < end for p, end in ends.items()):
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                raise ConnectException(
                    f"Timed out reading the {self.purpose} topic {self.topic} to its end"
                )
            if positions != reached:
                reached = dict(positions)
                progress = now
            elif self.stop_at_stable_offset and now - progress >= _STALLED_S:
                self._log_stable_offset(ends, positions)
                return
            # consume() waits its whole timeout unless it fills the batch: drain what is
            # there, else wait for the next record only as long as it takes to arrive
            messages = consumer.consume(num_messages=500, timeout=0)
            if not messages:
                wait = min(remaining, 0.5 if quiet_s is None else quiet_s)
                first = consumer.poll(wait)
                if first is None and quiet_s is not None:
                    return
                messages = [] if first is None else [first]
            self._handle(messages, positions)

    def _log_stable_offset(self, ends: Mapping[int, int], positions: Mapping[int, int]) -> None:
        stuck = [p for p, end in ends.items() if positions[p] < end]
        log.info(
            "The %s topic %s: partitions %s are held at offsets %s, below their ends %s (an "
            "open transaction): read up to there",
            self.purpose,
            self.topic,
            stuck,
            [positions[p] for p in stuck],
            [ends[p] for p in stuck],
        )

    def _handle(self, messages: Sequence[Any], positions: dict[int, int] | None) -> int:
        """Hand a fetch's records to the callback in order (gaps read again); how many.

        ``positions`` (a read to the end's), when given, is moved past what was read.
        """
        from confluent_kafka import KafkaError

        expected = self._next
        rereading: set[int] = set()
        check_all = self._gaps.rereading
        count = 0
        for message in messages:
            partition = message.partition()
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    if partition in rereading:
                        continue  # fetched before the seek back
                    if check_all:  # a re-read that reached the end with no record
                        self._gaps.forget([(self.topic, partition)])
                    if positions is not None and partition in positions:
                        positions[partition] = max(positions[partition], message.offset())
                    continue
                raise ConnectException(
                    f"Error reading the {self.purpose} topic {self.topic}: {error}"
                )
            offset = message.offset()
            if (check_all or expected.get(partition, offset) != offset) and not (
                self._in_order(partition, offset, rereading)
            ):
                continue
            expected[partition] = offset + 1
            if positions is not None and partition in positions:
                positions[partition] = max(positions[partition], offset + 1)
            count += 1
            self._on_record((message.key(), message.value(), partition, offset))
        return count

    def _in_order(self, partition: int, offset: int, rereading: set[int]) -> bool:
        """Whether to take a record that may not follow the previous one of its partition.

        A fetch that began past the offset expected has the partition read again from there
        (once); the partition's records still in the batch are dropped meanwhile.
        """
        if partition in rereading:
            return False
        expected = self._next.get(partition)
        if expected is None:
            return True
        if (
            self._transactional
            and not self._gaps.rereading
            and self._only_markers(partition, expected, offset)
        ):
            return True  # transaction markers, which no consumer receives
        if self._gaps.check((self.topic, partition), expected, offset):
            return True
        rereading.add(partition)
        from confluent_kafka import TopicPartition

        consumer = self._consumer
        try:
            consumer.seek(TopicPartition(self.topic, partition, expected))
        except Exception as exc:  # noqa: BLE001 - librdkafka refuses seeks before fetching
            log.debug("%r seek of partition %d failed (%s); re-assigning it", self, partition, exc)
            consumer.incremental_unassign([TopicPartition(self.topic, partition)])
            consumer.incremental_assign([TopicPartition(self.topic, partition, expected)])
        return False

    def _only_markers(self, partition: int, first: int, end: int) -> bool:
        """Whether the offsets from ``first`` up to ``end`` hold transaction markers only."""
        if self._markers is not None:
            return self._markers.only_markers(partition, first, end)
        # TLS or SASL (the probe speaks plaintext), so a Kafka broker, which skips no records:
        # a hole of one offset is a marker
        return end == first + 1

    def poll(self, timeout_s: float) -> int:
        """Read what arrives within ``timeout_s`` (returning at the first batch); how many records.

        A follower calls it in a loop: it wakes up as soon as a record is written.

        Raises:
            ConnectException: not started, or the topic cannot be read.
        """
        with self.lock:
            consumer = self._consumer
            if consumer is None:
                raise ConnectException(f"The {self.purpose} on topic {self.topic} is not started")
            if self._committed is not None:
                read = self._read_committed(time.monotonic() + self._timeout_s)
                if read is not None:
                    if not read:
                        time.sleep(min(timeout_s, _FETCHED_QUIET_S))
                    return read
            messages = consumer.consume(num_messages=500, timeout=0)
            if not messages:
                first = consumer.poll(timeout_s)
                messages = [] if first is None else [first]
            return self._handle(messages, None)

    def send(self, records: Sequence[tuple[bytes, bytes | None]]) -> list[int]:
        """Produce ``records`` (key, value; ``None`` a tombstone) in order and wait for the acks.

        Returns:
            The offset of each record in the topic, in order.

        Raises:
            ConnectException: a record was rejected or not acknowledged in time.
        """
        if not records:
            return []
        writer = self._writer
        if writer is not None:
            return writer(self.topic, records)
        with self.lock:
            producer = self._producer
            if producer is None:
                raise ConnectException(f"The {self.purpose} on topic {self.topic} is not started")
            errors: list[Any] = []
            offsets: list[int] = [-1] * len(records)

            def on_delivery(index: int) -> Callable[[Any, Any], None]:
                def done(err: Any, msg: Any) -> None:
                    if err is not None:
                        errors.append(err)
                    else:
                        offsets[index] = msg.offset()

                return done

            try:
                for index, (key, value) in enumerate(records):
                    while True:
                        try:
                            producer.produce(
                                self.topic, key=key, value=value, on_delivery=on_delivery(index)
                            )
                            break
                        except BufferError:
                            producer.poll(0.1)
            except Exception as e:
                producer.flush(self._timeout_s)
                raise ConnectException(
                    f"Could not write to the {self.purpose} topic {self.topic}: {e}"
                ) from e
            left = producer.flush(self._timeout_s)
            if left:
                raise ConnectException(
                    f"Timed out writing to the {self.purpose} topic {self.topic}: "
                    f"{left} records unacknowledged"
                )
            if errors:
                raise ConnectException(
                    f"Could not write to the {self.purpose} topic {self.topic}: {errors[0]}"
                )
            return offsets

    def stop(self) -> None:
        """Flush pending writes and close the clients."""
        with self.lock:
            self._close_clients()

    def _close_clients(self) -> None:
        if self._producer is not None:
            self._producer.flush(self._timeout_s)
            self._producer = None
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
        if self._committed is not None:
            self._committed.close()
            self._committed = None
        if self._markers is not None:
            self._markers.close()
            self._markers = None
        self._admin = None

    def __repr__(self) -> str:
        return f"KafkaBasedLog(topic={self.topic!r}, purpose={self.purpose!r})"


def _plaintext(config: Mapping[str, Any]) -> bool:
    """Whether the clients connect without TLS or SASL (what the marker-aware reader speaks)."""
    return str(config.get("security.protocol", "plaintext")).strip().lower() == "plaintext"


def _partition_count(admin: Any, topic: str, timeout_s: float) -> int:
    try:
        described = admin.list_topics(topic=topic, timeout=timeout_s).topics.get(topic)
    except Exception as e:
        raise ConnectException(f"Could not describe topic {topic}: {e}") from e
    if described is None or described.error is not None or not described.partitions:
        raise ConnectException(f"Topic {topic} does not exist")
    return len(described.partitions)


def check_compacted(admin: Any, topic: str, timeout_s: float, purpose: str) -> None:
    """Refuse a topic whose ``cleanup.policy`` is not ``compact`` (as Kafka does).

    Raises:
        ConfigException: the policy is something else; names the topic and the policy.
    """
    from confluent_kafka.admin import ConfigResource  # type: ignore[attr-defined]

    try:
        futures = admin.describe_configs([ConfigResource("topic", topic)])
        entries = next(iter(futures.values())).result(timeout=timeout_s)
        policy = entries["cleanup.policy"].value
    except Exception as e:  # noqa: BLE001 - a cluster that cannot describe configs
        log.debug("Could not check the cleanup.policy of topic %s: %s", topic, e)
        return
    if policy is not None and {p.strip() for p in str(policy).split(",")} != {"compact"}:
        what = _TOPIC_NAMES.get(purpose, purpose)
        raise ConfigException(
            f"The {what} topic '{topic}' must have 'cleanup.policy=compact' so that "
            f"{_KEPT.get(purpose, 'its records are')} kept, but it has "
            f"'cleanup.policy={policy}'. Use another topic for '{_KEYS.get(purpose, 'it')}' or "
            "change the topic's policy to compact."
        )


_TOPIC_NAMES = {
    "offset storage": "offsets",
    "config storage": "config",
    "status storage": "status",
}
_KEPT = {
    "offset storage": "source offsets are",
    "config storage": "connector configurations are",
    "status storage": "statuses are",
}
_KEYS = {
    "offset storage": "offset.storage.topic",
    "config storage": "config.storage.topic",
    "status storage": "status.storage.topic",
}
