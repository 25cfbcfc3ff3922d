"""WorkerSinkTask against the embedded broker: delivery, commits, retries, failures, rebalance."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition

from cdk.api import OffsetAndMetadata, SinkRecord, SinkTask, TopicPartition
from cdk.converters import JsonConverter, SimpleHeaderConverter, StringConverter
from cdk.errors import IllegalWorkerStateException, RetriableException
from cdk.kafka import create_topics, new_producer
from cdk.runtime._sink_runner import WorkerSinkTask
from cdk.runtime._status import ConnectorTaskId, State, StatusStore, TargetState
from cdk.runtime.errors import (
    DeadLetterQueueReporter,
    ErrorHandlingConfig,
    RetryWithToleranceOperator,
    WorkerErrantRecordReporter,
)
from cdk.transforms import TransformationChain
from tests._fetch_skip import SkippingConsumer, skipping_factory
from tests._wait import wait_until


class CollectTask(SinkTask):
    """Collects the records put; behaviours switched by its props."""

    def __init__(self) -> None:
        self.records: list[SinkRecord] = []
        self.puts: list[list[SinkRecord]] = []
        self.opened: list[set[TopicPartition]] = []
        self.closed: list[set[TopicPartition]] = []
        self.lock = threading.Lock()
        self.retriable_left = 0
        self.fail_on: int | None = None
        self.rewind: int | None = None
        self.stopped = False
        self.flushed: list[dict[TopicPartition, OffsetAndMetadata]] = []

    def start(self, props: dict[str, str]) -> None:
        self.retriable_left = int(props.get("retriable", "0"))
        self.fail_on = int(props["fail.on"]) if props.get("fail.on") else None
        self.rewind = int(props["rewind"]) if props.get("rewind") else None
        self.pause_on = int(props["pause.on"]) if props.get("pause.on") else None

    def open(self, partitions: Collection[TopicPartition]) -> None:
        with self.lock:
            self.opened.append(set(partitions))
        if self.rewind is not None:
            self.context.offset(dict.fromkeys(partitions, self.rewind))

    def close(self, partitions: Collection[TopicPartition]) -> None:
        with self.lock:
            self.closed.append(set(partitions))

    def put(self, records: Sequence[SinkRecord]) -> None:
        with self.lock:
            self.puts.append(list(records))
        if records and self.retriable_left:
            self.retriable_left -= 1
            self.context.timeout(50)
            raise RetriableException("try again")
        for record in records:
            if record.value == self.fail_on:
                raise ValueError(f"cannot write {record.value}")
        with self.lock:
            self.records.extend(records)
        for record in records:
            if record.value == self.pause_on:
                self.context.pause(TopicPartition(record.topic, record.kafka_partition or 0))

    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.flushed.append(dict(current_offsets))

    def stop(self) -> None:
        self.stopped = True

    def values(self) -> list[Any]:
        with self.lock:
            return [r.value for r in self.records]


@pytest.fixture
def topic(kafka_bootstrap: str) -> str:
    name = f"sink-{uuid.uuid4().hex[:10]}"
    create_topics(kafka_bootstrap, [name], partitions=1)
    return name


def produce(bootstrap: str, topic: str, values: Sequence[Any], partition: int = 0) -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"}, False)
    producer = new_producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
    for value in values:
        raw = value if isinstance(value, bytes) else converter.from_connect_data(topic, None, value)
        producer.produce(topic, raw, b"k", partition=partition, headers=[("h", b"42")])
    assert producer.flush(10) == 0


class Harness:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.status = StatusStore()
        self.runners: list[WorkerSinkTask] = []
        self.connector = f"c{uuid.uuid4().hex[:8]}"

    def runner(
        self,
        task: SinkTask,
        props: Mapping[str, str],
        *,
        number: int = 0,
        errors: Mapping[str, str] | None = None,
        flush_interval_ms: int = 60000,
        target: TargetState = TargetState.STARTED,
        dlq: bool = False,
        consumer_factory: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> WorkerSinkTask:
        key_converter = StringConverter()
        key_converter.configure({}, True)
        value_converter = JsonConverter()
        value_converter.configure({"schemas.enable": "false"}, False)
        header_converter = SimpleHeaderConverter()
        config = ErrorHandlingConfig.from_props(errors or {})
        reporters = []
        if dlq:
            reporters.append(
                DeadLetterQueueReporter.create(
                    config,
                    self.connector,
                    number,
                    producer_config={"bootstrap.servers": self.bootstrap},
                )
            )
        operator = RetryWithToleranceOperator(config, reporters)
        errant = None
        if config.enable_errant_record_reporter:
            errant = WorkerErrantRecordReporter(
                operator, key_converter, value_converter, header_converter
            )
        runner = WorkerSinkTask(
            ConnectorTaskId(self.connector, number),
            task,
            props,
            worker_id="test:0",
            status_store=self.status,
            target=target,
            key_converter=key_converter,
            value_converter=value_converter,
            header_converter=header_converter,
            transformation_chain=TransformationChain.from_config(props),
            operator=operator,
            consumer_config={
                "bootstrap.servers": self.bootstrap,
                "group.id": f"connect-{self.connector}",
            },
            errant_reporter=errant,
            consumer_factory=consumer_factory,
            flush_interval_ms=flush_interval_ms,
            closers=[operator.close],
        )
        if errant is not None:
            errant.raw_record_for = runner.raw_record_for
        self.runners.append(runner)
        return runner

    def state(self, runner: WorkerSinkTask) -> State | None:
        status = self.status.task(runner.id)
        return None if status is None else status.state

    def committed(self, topic: str, partitions: int = 1) -> list[int]:
        consumer = Consumer(
            {"bootstrap.servers": self.bootstrap, "group.id": f"connect-{self.connector}"}
        )
        try:
            found = consumer.committed(
                [KafkaTopicPartition(topic, p) for p in range(partitions)], timeout=10
            )
            return [tp.offset for tp in found]
        finally:
            consumer.close()

    def close(self) -> None:
        for runner in self.runners:
            runner.stop()
        for runner in self.runners:
            assert runner.await_stop(15), f"{runner} did not stop"


@pytest.fixture
def harness(kafka_bootstrap: str) -> Iterator[Harness]:
    h = Harness(kafka_bootstrap)
    yield h
    h.close()


def stop(runner: WorkerSinkTask) -> None:
    runner.stop()
    assert runner.await_stop(15)


def test_delivers_all_records_and_commits_consumed_offsets(harness: Harness, topic: str) -> None:
    produce(harness.bootstrap, topic, list(range(300)))
    task = CollectTask()
    runner = harness.runner(task, {"topics": topic})
    runner.start()
    wait_until(lambda: len(task.values()) == 300, message=lambda: f"300, got {len(task.values())}")
    assert task.values() == list(range(300))
    first = task.records[0]
    assert (first.topic, first.kafka_partition, first.kafka_offset) == (topic, 0, 0)
    assert first.key == "k"
    assert first.timestamp is not None
    assert first.headers.last_with_name("h").value == 42  # type: ignore[union-attr]
    assert harness.state(runner) is State.RUNNING
    assert task.opened == [{TopicPartition(topic, 0)}]
    stop(runner)
    assert task.closed == [{TopicPartition(topic, 0)}]
    assert task.stopped
    assert task.flushed[-1] == {TopicPartition(topic, 0): OffsetAndMetadata(300)}
    assert harness.committed(topic) == [300]
    assert harness.state(runner) is State.UNASSIGNED

    # A new task in the same group resumes after the committed offset.
    produce(harness.bootstrap, topic, [300, 301])
    again = CollectTask()
    runner2 = harness.runner(again, {"topics": topic})
    runner2.start()
    wait_until(lambda: again.values() == [300, 301], message="the two new records")


def test_periodic_and_requested_commits(harness: Harness, topic: str) -> None:
    produce(harness.bootstrap, topic, list(range(20)))
    task = CollectTask()
    runner = harness.runner(task, {"topics": topic}, flush_interval_ms=100)
    runner.start()
    wait_until(lambda: harness.committed(topic) == [20], message="periodic commit of 20")


def test_topics_regex_subscription(harness: Harness, topic: str) -> None:
    produce(harness.bootstrap, topic, [1, 2, 3])
    task = CollectTask()
    runner = harness.runner(task, {"topics.regex": topic[:-3] + ".*"})
    runner.start()
    wait_until(lambda: task.values() == [1, 2, 3], message="records via topics.regex")


def test_retriable_exception_redelivers_the_same_batch(harness: Harness, topic: str) -> None:
    produce(harness.bootstrap, topic, list(range(50)))
    task = CollectTask()
    runner = harness.runner(task, {"topics": topic, "retriable": "2"})
    runner.start()
    wait_until(lambda: len(task.values()) == 50, message="50 records after retries")
    non_empty = [p for p in task.puts if p]
    assert [r.value for r in non_empty[0]] == [r.value for r in non_empty[1]]
    assert [r.value for r in non_empty[1]] == [r.value for r in non_empty[2]]
    assert task.values() == list(range(50))
    assert harness.state(runner) is State.RUNNING


def test_put_failure_fails_task_with_trace(harness: Harness, topic: str) -> None:
    produce(harness.bootstrap, topic, list(range(10)))
    task = CollectTask()
    runner = harness.runner(task, {"topics": topic, "fail.on": "7"})
    runner.start()
    wait_until(lambda: not runner.thread.is_alive(), message="the task thread to end")
    status = harness.status.task(runner.id)
    assert status is not None
    assert status.state is State.FAILED
    assert "Exiting WorkerSinkTask due to unrecoverable exception." in (status.trace or "")
    assert "ValueError: cannot write 7" in (status.trace or "")
    assert task.stopped
    # Nothing of the failed batch was committed.
    assert harness.committed(topic) == [-1001]


def test_pause_stops_delivery_and_resume_restarts_it(harness: Harness, topic: str) -> None:
    produce(harness.bootstrap, topic, [0, 1])
    task = CollectTask()
    runner = harness.runner(task, {"topics": topic}, flush_interval_ms=100)
    runner.start()
    wait_until(lambda: task.values() == [0, 1], message="first records")
    runner.set_target_state(TargetState.PAUSED)
    wait_until(lambda: harness.state(runner) is State.PAUSED, message="PAUSED")
    produce(harness.bootstrap, topic, [2, 3])
    puts = len(task.puts)
    # Several empty delivery rounds pass while paused, none with the new records.
    wait_until(lambda: len(task.puts) >= puts + 3, message="idle rounds while paused")
    assert task.values() == [0, 1]
    runner.set_target_state(TargetState.STARTED)
    wait_until(lambda: task.values() == [0, 1, 2, 3], message="records after resume")
    assert harness.state(runner) is State.RUNNING


def test_context_offset_rewinds_on_open(harness: Harness, topic: str) -> None:
    produce(harness.bootstrap, topic, list(range(10)))
    task = CollectTask()
    runner = harness.runner(task, {"topics": topic, "rewind": "6"})
    runner.start()
    wait_until(lambda: task.values() == [6, 7, 8, 9], message="records from offset 6")


def test_context_pause_requires_assigned_partitions(harness: Harness, topic: str) -> None:
    produce(harness.bootstrap, topic, [1])
    task = CollectTask()
    runner = harness.runner(task, {"topics": topic, "pause.on": "1"}, flush_interval_ms=100)
    runner.start()
    wait_until(lambda: task.values() == [1], message="first record")
    with pytest.raises(IllegalWorkerStateException, match="not currently assigned"):
        task.context.pause(TopicPartition("other", 0))
    with pytest.raises(IllegalWorkerStateException, match="not currently assigned"):
        task.context.resume(TopicPartition("other", 0))
    tp = TopicPartition(topic, 0)
    assert task.context.assignment() == {tp}
    produce(harness.bootstrap, topic, [2])
    puts = len(task.puts)
    wait_until(lambda: len(task.puts) >= puts + 3, message="rounds while the partition is paused")
    assert task.values() == [1]
    task.context.resume(tp)
    wait_until(lambda: task.values() == [1, 2], message="record after resume")
    assert task.context.errant_record_reporter() is None


def test_rebalance_closes_and_opens_partitions(harness: Harness, kafka_bootstrap: str) -> None:
    topic = f"sink-{uuid.uuid4().hex[:10]}"
    create_topics(kafka_bootstrap, [topic], partitions=2)
    produce(kafka_bootstrap, topic, list(range(10)), partition=0)
    produce(kafka_bootstrap, topic, list(range(10, 20)), partition=1)
    first = CollectTask()
    runner1 = harness.runner(first, {"topics": topic}, number=0)
    runner1.start()
    wait_until(lambda: len(first.values()) == 20, message="20 records on the first task")
    both = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    assert first.opened == [both]
    second = CollectTask()
    runner2 = harness.runner(second, {"topics": topic}, number=1)
    runner2.start()
    wait_until(lambda: second.opened and first.closed, timeout=30, message="a rebalance")
    assert first.closed[0] == both
    wait_until(lambda: len(first.opened) == 2, message="the first task re-opened")
    assert len(first.opened[1]) == 1
    assert len(second.opened[-1]) == 1
    assert first.opened[1] | second.opened[-1] == both
    # Offsets were committed on revocation: nothing is delivered twice.
    produce(kafka_bootstrap, topic, [100], partition=0)
    produce(kafka_bootstrap, topic, [101], partition=1)
    wait_until(
        lambda: sorted(first.values()[20:] + second.values()) == [100, 101],
        message="new records on their owners",
    )


def test_conversion_failure_goes_to_the_dead_letter_queue(
    harness: Harness, topic: str, kafka_bootstrap: str
) -> None:
    dlq = f"dlq-{uuid.uuid4().hex[:8]}"
    produce(kafka_bootstrap, topic, [1, b"not json", 3])
    task = CollectTask()
    errors = {
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
    }
    runner = harness.runner(task, {"topics": topic}, errors=errors, dlq=True)
    runner.start()
    wait_until(lambda: task.values() == [1, 3], message="the good records")
    assert task.context.errant_record_reporter() is not None
    consumer = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": f"dlq-{uuid.uuid4().hex[:6]}"}
    )
    try:
        consumer.assign([KafkaTopicPartition(dlq, 0, 0)])
        found: list[Any] = []
        wait_until(
            lambda: (
                found.extend(m for m in consumer.consume(10, 0.2) if m.error() is None) or found
            ),
            message="a DLQ record",
        )
        message = found[0]
        assert message.value() == b"not json"
        headers = dict(message.headers())
        assert headers["__connect.errors.topic"] == topic.encode()
        assert headers["__connect.errors.offset"] == b"1"
        assert headers["__connect.errors.stage"] == b"VALUE_CONVERTER"
    finally:
        consumer.close()
    stop(runner)
    assert harness.committed(topic) == [3]


# -- fetches that skip records (the embedded broker's; see tests/_fetch_skip.py) ------------------
class OrderedTask(CollectTask):
    """Also checks every flush: no offset handed to pre_commit passes a record not yet put."""

    def __init__(self, holes: Collection[int] = ()) -> None:
        super().__init__()
        self.holes = set(holes)  # offsets with no record (transaction markers)
        self.violations: list[str] = []

    def offsets(self) -> dict[int, list[int]]:
        with self.lock:
            out: dict[int, list[int]] = {}
            for r in self.records:
                out.setdefault(r.kafka_partition or 0, []).append(r.kafka_offset)
            return out

    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        super().flush(current_offsets)
        put = self.offsets()
        for tp, om in current_offsets.items():
            unread = sorted(set(range(om.offset)) - self.holes - set(put.get(tp.partition, [])))
            if unread:
                self.violations.append(f"{tp} at {om.offset} before {unread[:5]} were put")


def _gap_logs(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "cdk.runtime.fetchgaps" and r.levelno == level
    ]


@pytest.mark.parametrize("disturbance", ["none", "task-pause", "retriable"])
def test_records_a_fetch_skipped_are_read_again_before_the_ones_after(
    harness: Harness, kafka_bootstrap: str, caplog: pytest.LogCaptureFixture, disturbance: str
) -> None:
    topic = f"sink-{uuid.uuid4().hex[:10]}"
    create_topics(kafka_bootstrap, [topic], partitions=2)
    produce(kafka_bootstrap, topic, list(range(100)), partition=0)
    produce(kafka_bootstrap, topic, list(range(100, 200)), partition=1)
    made: list[SkippingConsumer] = []
    # In partition 0 a fetch leaves out offsets 40-54; in partition 1 the very first fetch
    # (no committed offset: the task reads from the log start) leaves out 0-9.
    factory = skipping_factory([(topic, 0, 40, 15), (topic, 1, 0, 10)], made)
    props = {"topics": topic}
    if disturbance == "task-pause":
        props["pause.on"] = "39"  # the task pauses partition 0 when it gets offset 39
    elif disturbance == "retriable":
        props["retriable"] = "2"  # the first 2 puts with records ask for a redelivery
    task = OrderedTask()
    caplog.set_level(logging.DEBUG, logger="cdk.runtime.fetchgaps")
    runner = harness.runner(task, props, consumer_factory=factory, flush_interval_ms=20)
    runner.start()
    if disturbance == "task-pause":
        wait_until(lambda: 39 in task.offsets().get(0, []), message="offset 39 of partition 0")
        puts = len(task.puts)
        wait_until(lambda: len(task.puts) >= puts + 3, message="rounds while 0 is paused")
        assert task.offsets()[0] == list(range(40))
        task.context.resume(TopicPartition(topic, 0))
    wait_until(
        lambda: len(task.values()) >= 200, message=lambda: f"200 records, got {task.offsets()}"
    )
    stop(runner)
    # the consumer did leave them out of its first fetches
    assert len(made[0].left_out) == 25
    # every record once, in offset order in each partition: none after a gap before those in it
    assert task.offsets() == {0: list(range(100)), 1: list(range(100))}
    assert task.violations == []
    assert harness.committed(topic, 2) == [100, 100]
    sink_metrics = runner.metrics.sink
    assert sink_metrics is not None
    assert sink_metrics.fetch_gap_heal.total == 2
    warnings = _gap_logs(caplog, logging.WARNING)
    assert len(warnings) == 2, warnings
    assert any(
        f"{topic}-0: a fetch from offset 40 returned records from offset 55" in w for w in warnings
    ), warnings
    assert any(
        f"{topic}-1: a fetch from offset 0 returned records from offset 10" in w for w in warnings
    ), warnings


def test_transaction_markers_are_read_again_once_then_taken(
    harness: Harness, topic: str, kafka_bootstrap: str, caplog: pytest.LogCaptureFixture
) -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "false"}, False)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(10)
    for txn in range(4):
        producer.begin_transaction()
        for i in range(5):
            producer.produce(topic, converter.from_connect_data(topic, None, txn * 5 + i), b"k")
        producer.commit_transaction(10)
    # records at 0-4, 6-10, 12-16, 18-22: each commit marker holds an offset (5, 11, 17, 23)
    caplog.set_level(logging.DEBUG, logger="cdk.runtime.fetchgaps")
    task = OrderedTask(holes={5, 11, 17, 23})
    runner = harness.runner(task, {"topics": topic}, flush_interval_ms=20)
    runner.start()
    wait_until(lambda: len(task.values()) >= 20, message=lambda: f"20 records: {task.offsets()}")
    stop(runner)
    assert task.values() == list(range(20))
    assert task.offsets() == {0: [o for o in range(23) if o % 6 != 5]}
    assert task.violations == []
    assert harness.committed(topic) == [23]
    sink_metrics = runner.metrics.sink
    assert sink_metrics is not None
    assert sink_metrics.fetch_gap_heal.total == 0
    assert _gap_logs(caplog, logging.WARNING) == []
    # one re-read per hole between records (5, 11, 17), each confirmed empty and taken
    rereads = [m for m in _gap_logs(caplog, logging.DEBUG) if "reading again" in m]
    assert len(rereads) == 3, rereads
    assert len([m for m in _gap_logs(caplog, logging.DEBUG) if "has no records" in m]) == 3


def test_converted_headers_equal_validated_ones() -> None:
    """The plain-type fast path builds the same headers as Header(), which still validates."""
    from cdk.api import Header, Headers
    from cdk.data import Schema, SchemaAndValue
    from cdk.errors import DataException

    class Odd(SimpleHeaderConverter):
        """Returns what SimpleHeaderConverter does, except for a few crafted header values."""

        def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> Any:
            if value == b"bad-string":
                return SchemaAndValue(Schema.STRING_SCHEMA, 42)  # does not match its schema
            if value == b"str-as-bytes":
                return SchemaAndValue(Schema.BYTES_SCHEMA, "text")
            return super().to_connect_header(topic, header_key, value)

    converter = StringConverter()
    converter.configure({}, False)
    runner = WorkerSinkTask(
        ConnectorTaskId("headers", 0),
        CollectTask(),
        {"topics": "t"},
        worker_id="test:0",
        status_store=StatusStore(),
        target=TargetState.STARTED,
        key_converter=converter,
        value_converter=converter,
        header_converter=Odd(),
        transformation_chain=TransformationChain.from_config({}),
        operator=RetryWithToleranceOperator(ErrorHandlingConfig.from_props({})),
        consumer_config={"bootstrap.servers": "127.0.0.1:9"},
    )
    raw = [("s", b"text"), ("b", b"true"), ("n", b"42"), ("e", b""), ("z", None), ("l", b"[1,2]")]
    headers = runner._convert_headers("t", raw)
    expected = Headers()
    for key, value in raw:
        converted = SimpleHeaderConverter().to_connect_header("t", key, value)
        expected.add_header(Header(key, converted.schema, converted.value))
    assert list(headers) == list(expected)
    assert [type(h) for h in headers] == [Header] * len(raw)
    for value in (b"bad-string", b"str-as-bytes"):
        with pytest.raises(DataException):
            runner._convert_headers("t", [("x", value)])
