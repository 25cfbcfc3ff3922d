"""WorkerSourceTask against the embedded broker: delivery, acks, offsets, errors, pause."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient

from cdk.api import RecordMetadata, SourceRecord, SourceTask
from cdk.converters import JsonConverter, SimpleHeaderConverter, StringConverter
from cdk.data import Schema
from cdk.errors import RetriableException
from cdk.kafka import new_producer
from cdk.runtime._contexts import WorkerSourceTaskContext
from cdk.runtime._source_runner import TopicCreation, WorkerSourceTask
from cdk.runtime._status import ConnectorTaskId, State, StatusStore, TargetState
from cdk.runtime.errors import ErrorHandlingConfig, RetryWithToleranceOperator
from cdk.runtime.storage import (
    MemoryOffsetBackingStore,
    OffsetStorageReaderImpl,
    OffsetStorageWriter,
)
from cdk.transforms import Transformation, TransformationChain
from tests._wait import wait_until

PARTITION = {"file": "gen"}


class GenTask(SourceTask):
    """Emits ``total`` records value ``n`` with offset ``{"n": n}``, resuming from the reader."""

    def __init__(self) -> None:
        self.total = 0
        self.batch = 50
        self.next = 0
        self.fail_at: int | None = None
        self.retriable_polls = 0
        self.polls = 0
        self.committed: list[tuple[SourceRecord, RecordMetadata | None]] = []
        self.commits = 0
        self.stopped = threading.Event()
        self._idle = threading.Event()

    def start(self, props: dict[str, str]) -> None:
        self.total = int(props["total"])
        self.batch = int(props.get("batch", "50"))
        if props.get("fail.at"):
            self.fail_at = int(props["fail.at"])
        self.retriable_polls = int(props.get("retriable.polls", "0"))
        offset = self.context.offset_storage_reader.offset(PARTITION)
        self.next = 0 if offset is None else int(offset["n"]) + 1

    def poll(self) -> list[SourceRecord] | None:
        self.polls += 1
        if self.retriable_polls:
            self.retriable_polls -= 1
            raise RetriableException("not yet")
        if self.fail_at is not None and self.next >= self.fail_at:
            raise ValueError(f"boom at {self.next}")
        if self.next >= self.total:
            self._idle.wait(0.02)
            return None
        end = min(self.next + self.batch, self.total)
        topic = self.props_topic
        records = [
            SourceRecord(PARTITION, {"n": n}, topic, None, None, None, Schema.INT64_SCHEMA, n)
            for n in range(self.next, end)
        ]
        self.next = end
        return records

    def commit(self) -> None:
        self.commits += 1

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.committed.append((record, metadata))

    def stop(self) -> None:
        self.stopped.set()
        self._idle.set()

    props_topic = ""


@pytest.fixture
def topic() -> str:
    return f"src-{uuid.uuid4().hex[:10]}"


class Harness:
    """Builds runners sharing one offset store and status store."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.store = MemoryOffsetBackingStore()
        self.store.start()
        self.status = StatusStore()
        self.runners: list[WorkerSourceTask] = []

    def runner(
        self,
        task: SourceTask,
        props: Mapping[str, str],
        *,
        connector: str = "gen",
        chain_props: Mapping[str, str] | None = None,
        errors: Mapping[str, str] | None = None,
        flush_interval_ms: int = 60000,
        target: TargetState = TargetState.STARTED,
        producer_factory: Callable[[Mapping[str, Any]], Any] | None = None,
        topic_creation: TopicCreation | None = None,
        value_converter: Any = None,
    ) -> WorkerSourceTask:
        reader = OffsetStorageReaderImpl(self.store, connector)
        key_converter = StringConverter()
        key_converter.configure({}, True)
        if value_converter is None:
            value_converter = JsonConverter()
            value_converter.configure({"schemas.enable": "true"}, False)
        runner = WorkerSourceTask(
            ConnectorTaskId(connector, 0),
            task,
            props,
            WorkerSourceTaskContext(props, reader),
            worker_id="test:0",
            status_store=self.status,
            target=target,
            key_converter=key_converter,
            value_converter=value_converter,
            header_converter=SimpleHeaderConverter(),
            transformation_chain=TransformationChain.from_config(chain_props or {}),
            operator=RetryWithToleranceOperator(ErrorHandlingConfig.from_props(errors or {})),
            producer_config={"bootstrap.servers": self.bootstrap},
            offset_writer=OffsetStorageWriter(self.store, connector),
            flush_interval_ms=flush_interval_ms,
            admin_config={"bootstrap.servers": self.bootstrap},
            topic_creation=topic_creation,
            closers=[reader.close],
            producer_factory=producer_factory,
        )
        self.runners.append(runner)
        return runner

    def committed_offset(self, connector: str = "gen") -> dict[str, Any] | None:
        reader = OffsetStorageReaderImpl(self.store, connector)
        return reader.offset(PARTITION)

    def close(self) -> None:
        for runner in self.runners:
            runner.stop()
            assert runner.await_stop(10), f"{runner} did not stop"
        self.store.stop()


@pytest.fixture
def harness(kafka_bootstrap: str) -> Iterator[Harness]:
    h = Harness(kafka_bootstrap)
    yield h
    h.close()


def read_values(bootstrap: str, topic: str, expected: int, timeout: float = 20.0) -> list[Any]:
    """Read ``expected`` records of partition 0 from the beginning (values as JSON payloads)."""
    import json

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        values: list[Any] = []

        def more() -> bool:
            for msg in consumer.consume(1000, 0.2):
                if msg.error() is None:
                    values.append(json.loads(msg.value())["payload"])
            return len(values) >= expected

        wait_until(more, timeout, message=lambda: f"{expected} records, got {len(values)}")
        # Nothing more than expected (a short drain).
        for msg in consumer.consume(1000, 0.5):
            if msg.error() is None:
                values.append(json.loads(msg.value())["payload"])
        return values
    finally:
        consumer.close()


def start(runner: WorkerSourceTask, task: GenTask, topic: str) -> None:
    task.props_topic = topic
    runner.start()


def test_delivers_records_in_order_and_commits_offsets_on_stop(
    harness: Harness, topic: str
) -> None:
    task = GenTask()
    runner = harness.runner(task, {"total": "500"})
    start(runner, task, topic)
    wait_until(lambda: len(task.committed) == 500, message="500 acks")
    assert harness.status.task(runner.id).state is State.RUNNING  # type: ignore[union-attr]
    runner.stop()
    assert runner.await_stop(10)
    assert task.stopped.is_set()
    assert read_values(harness.bootstrap, topic, 500) == list(range(500))
    offsets = [m.offset for _, m in task.committed if m is not None]
    assert offsets == list(range(500))
    assert all(m is not None and m.topic == topic for _, m in task.committed)
    assert harness.committed_offset() == {"n": 499}
    assert task.commits >= 1
    assert harness.status.task(runner.id).state is State.UNASSIGNED  # type: ignore[union-attr]


def test_periodic_commit_and_restart_resumes_without_duplicates(
    harness: Harness, topic: str
) -> None:
    first = GenTask()
    runner = harness.runner(first, {"total": "120"}, flush_interval_ms=50)
    start(runner, first, topic)
    wait_until(lambda: harness.committed_offset() == {"n": 119}, message="periodic commit")
    assert first.commits >= 1
    runner.stop()
    assert runner.await_stop(10)

    second = GenTask()
    runner2 = harness.runner(second, {"total": "300"})
    start(runner2, second, topic)
    wait_until(lambda: len(second.committed) == 180, message="the remaining 180 records")
    runner2.stop()
    assert runner2.await_stop(10)
    assert read_values(harness.bootstrap, topic, 300) == list(range(300))
    assert harness.committed_offset() == {"n": 299}


class _HoldingProducer:
    """A real producer whose delivery reports for chosen values are held back until released."""

    def __init__(self, config: Mapping[str, Any], hold: set[bytes]) -> None:
        self._producer = new_producer(config)
        self._hold = hold
        self.held: list[tuple[Callable[[Any, Any], None], Any, Any]] = []
        self.release = threading.Event()

    def produce(self, topic: str, value: Any = None, key: Any = None, **kwargs: Any) -> None:
        callback = kwargs.pop("on_delivery")
        if value is not None and any(h in value for h in self._hold):

            def hold(err: Any, msg: Any) -> None:
                self.held.append((callback, err, msg))

            kwargs["on_delivery"] = hold
        else:
            kwargs["on_delivery"] = callback
        self._producer.produce(topic, value, key, **kwargs)

    def poll(self, timeout: float = 0) -> int:
        n = self._producer.poll(timeout)
        if self.release.is_set():
            held, self.held = self.held, []
            for callback, err, msg in held:
                callback(err, msg)
        return int(n)

    def flush(self, timeout: float = 0) -> int:
        n = self._producer.flush(timeout)
        self.poll(0)
        return int(n)


def test_offsets_never_pass_an_unacked_record(harness: Harness, topic: str) -> None:
    holder: list[_HoldingProducer] = []

    def factory(config: Mapping[str, Any]) -> _HoldingProducer:
        holder.append(_HoldingProducer(config, {b'"payload":40}'}))
        return holder[0]

    task = GenTask()
    runner = harness.runner(
        task, {"total": "100", "batch": "10"}, flush_interval_ms=20, producer_factory=factory
    )
    start(runner, task, topic)
    wait_until(lambda: len(task.committed) == 99, message="all acks but the held one")
    commits = task.commits
    wait_until(lambda: task.commits >= commits + 2, message="two more commits")
    assert harness.committed_offset() == {"n": 39}
    holder[0].release.set()
    wait_until(lambda: harness.committed_offset() == {"n": 99}, message="the full commit")
    assert len(task.committed) == 100


def test_smt_dropped_records_commit_with_no_metadata(harness: Harness, topic: str) -> None:
    task = GenTask()
    chain = {
        "transforms": "drop",
        "transforms.drop.type": "Filter",
        "transforms.drop.predicate": "all",
        "predicates": "all",
        "predicates.all.type": "TopicNameMatches",
        "predicates.all.pattern": ".*",
    }
    runner = harness.runner(task, {"total": "20"}, chain_props=chain)
    start(runner, task, topic)
    wait_until(lambda: len(task.committed) == 20, message="20 dropped records")
    assert all(metadata is None for _, metadata in task.committed)
    runner.stop()
    assert runner.await_stop(10)
    assert harness.committed_offset() == {"n": 19}


def test_poll_failure_fails_task_with_trace_and_stops_it(harness: Harness, topic: str) -> None:
    task = GenTask()
    runner = harness.runner(task, {"total": "100", "fail.at": "30", "batch": "10"})
    start(runner, task, topic)
    wait_until(lambda: not runner.thread.is_alive(), message="the task thread to end")
    status = harness.status.task(runner.id)
    assert status is not None
    assert status.state is State.FAILED
    assert status.trace is not None
    assert "ValueError: boom at 30" in status.trace
    assert "Traceback" in status.trace
    assert task.stopped.is_set()
    # What was delivered before the failure is committed.
    assert harness.committed_offset() == {"n": 29}


def test_retriable_poll_is_polled_again(harness: Harness, topic: str) -> None:
    task = GenTask()
    runner = harness.runner(task, {"total": "10", "retriable.polls": "3"})
    start(runner, task, topic)
    wait_until(lambda: len(task.committed) == 10, message="10 acks after retries")
    assert harness.status.task(runner.id).state is State.RUNNING  # type: ignore[union-attr]


def test_pause_stops_polling_and_resume_continues(harness: Harness, topic: str) -> None:
    task = GenTask()
    runner = harness.runner(task, {"total": "10"}, target=TargetState.PAUSED)
    start(runner, task, topic)
    wait_until(
        lambda: (
            harness.status.task(runner.id) is not None
            and harness.status.task(runner.id).state is State.PAUSED
        ),  # type: ignore[union-attr]
        message="PAUSED",
    )
    assert task.polls == 0
    runner.set_target_state(TargetState.STARTED)
    wait_until(lambda: len(task.committed) == 10, message="records after resume")
    assert harness.status.task(runner.id).state is State.RUNNING  # type: ignore[union-attr]
    runner.set_target_state(TargetState.PAUSED)
    wait_until(
        lambda: harness.status.task(runner.id).state is State.PAUSED,  # type: ignore[union-attr]
        message="PAUSED again",
    )
    polls = task.polls
    runner.set_target_state(TargetState.STARTED)
    wait_until(lambda: task.polls > polls, message="polling again")


class _FailingOn(JsonConverter):
    def from_connect_data(self, topic: str, schema: Any, value: Any, headers: Any = None) -> Any:
        if value == 5:
            raise ValueError("cannot convert 5")
        return super().from_connect_data(topic, schema, value, headers)


def _failing_converter() -> JsonConverter:
    converter = _FailingOn()
    converter.configure({"schemas.enable": "true"}, False)
    return converter


def test_converter_error_tolerated_with_errors_tolerance_all(harness: Harness, topic: str) -> None:
    task = GenTask()
    runner = harness.runner(
        task,
        {"total": "10"},
        errors={"errors.tolerance": "all", "errors.log.enable": "true"},
        value_converter=_failing_converter(),
    )
    start(runner, task, topic)
    wait_until(lambda: len(task.committed) == 10, message="10 records handled")
    skipped = [r.value for r, m in task.committed if m is None]
    assert skipped == [5]
    assert read_values(harness.bootstrap, topic, 9) == [0, 1, 2, 3, 4, 6, 7, 8, 9]


def test_converter_error_fails_task_without_tolerance(harness: Harness, topic: str) -> None:
    task = GenTask()
    runner = harness.runner(task, {"total": "10"}, value_converter=_failing_converter())
    start(runner, task, topic)
    wait_until(lambda: not runner.thread.is_alive(), message="the task thread to end")
    status = harness.status.task(runner.id)
    assert status is not None
    assert status.state is State.FAILED
    assert "Tolerance exceeded in error handler" in (status.trace or "")
    assert "cannot convert 5" in (status.trace or "")


def test_topic_creation_uses_the_default_group(harness: Harness, topic: str) -> None:
    rules = TopicCreation.from_props(
        {
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "3",
        }
    )
    assert rules is not None
    task = GenTask()
    runner = harness.runner(task, {"total": "5"}, topic_creation=rules)
    start(runner, task, topic)
    wait_until(lambda: len(task.committed) == 5, message="5 acks")
    admin = AdminClient({"bootstrap.servers": harness.bootstrap})
    metadata = admin.list_topics(topic, timeout=10)
    assert len(metadata.topics[topic].partitions) == 3


def test_topic_creation_groups() -> None:
    rules = TopicCreation.from_props(
        {
            "topic.creation.groups": "compacted",
            "topic.creation.compacted.include": "state-.*",
            "topic.creation.compacted.exclude": "state-tmp",
            "topic.creation.compacted.partitions": "5",
            "topic.creation.compacted.cleanup.policy": "compact",
            "topic.creation.default.replication.factor": "-1",
            "topic.creation.default.partitions": "1",
        }
    )
    assert rules is not None
    group = rules.group_for("state-a")
    assert (group.name, group.partitions, group.configs) == (
        "compacted",
        5,
        {"cleanup.policy": "compact"},
    )
    assert rules.group_for("state-tmp").name == "default"
    assert rules.group_for("other").name == "default"
    assert TopicCreation.from_props({"topic.creation.default.partitions": "1"}) is None
    assert (
        TopicCreation.from_props(
            {
                "topic.creation.default.replication.factor": "1",
                "topic.creation.default.partitions": "1",
            },
            enabled=False,
        )
        is None
    )


class _MetadataProducer:
    """A real producer recording its metadata requests; optionally failing them."""

    def __init__(self, config: Mapping[str, Any], fail: bool) -> None:
        self._producer = new_producer(config)
        self._fail = fail
        self.metadata_topics: list[str | None] = []

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        self.metadata_topics.append(topic)
        if self._fail:
            from confluent_kafka import KafkaException

            raise KafkaException("metadata: injected failure")
        return self._producer.list_topics(topic, timeout=timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._producer, name)


@pytest.mark.parametrize("fail", [False, True], ids=["ok", "failing"])
def test_topic_metadata_is_fetched_once_before_its_first_record(
    harness: Harness, topic: str, fail: bool
) -> None:
    holder: list[_MetadataProducer] = []

    def factory(config: Mapping[str, Any]) -> _MetadataProducer:
        holder.append(_MetadataProducer(config, fail))
        return holder[0]

    task = GenTask()
    runner = harness.runner(task, {"total": "200", "batch": "20"}, producer_factory=factory)
    start(runner, task, topic)
    wait_until(lambda: len(task.committed) == 200, message="200 acks")
    assert holder[0].metadata_topics == [topic]  # once, for the one topic, whatever the outcome
    assert read_values(harness.bootstrap, topic, 200) == list(range(200))


class FlakyRouter(Transformation[SourceRecord]):
    """Routes records to ``<topic>-routed``; its first call raises RetriableException."""

    calls = 0

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        type(self).calls += 1
        if type(self).calls == 1:
            raise RetriableException("not yet")
        return record.new_record(topic=f"{record.topic}-routed")


def test_records_keep_their_topic_when_a_transform_retry_succeeds(
    harness: Harness, topic: str
) -> None:
    """The first record's SMT fails once and its retry succeeds: it goes to the SMT's topic.

    The runner also lists that topic, the one Kafka acknowledged, as the connector's active
    topic (KIP-558), and nothing else.
    """
    FlakyRouter.calls = 0
    task = GenTask()
    runner = harness.runner(
        task,
        {"total": "20"},
        chain_props={
            "transforms": "route",
            "transforms.route.type": f"{__name__}.FlakyRouter",
        },
        errors={"errors.retry.timeout": "10000", "errors.retry.delay.max.ms": "10"},
    )
    start(runner, task, topic)
    routed = f"{topic}-routed"
    wait_until(lambda: len(task.committed) == 20, message="20 acks")
    assert all(m is not None and m.topic == routed for _, m in task.committed)
    assert read_values(harness.bootstrap, routed, 20) == list(range(20))
    assert harness.status.topics("gen") == [routed]
    assert harness.status.task(runner.id).state is State.RUNNING  # type: ignore[union-attr]


class _AckingTask(GenTask):
    """A GenTask that notes on which thread, and in what order, the runtime calls it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        self.poll_thread: str | None = None

    def poll(self) -> list[SourceRecord] | None:
        self.poll_thread = threading.current_thread().name
        return super().poll()

    def commit(self) -> None:
        self.calls.append(("commit", threading.current_thread().name))
        super().commit()

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self.calls.append(("commit_record", threading.current_thread().name))
        super().commit_record(record, metadata)

    def stop(self) -> None:
        self.calls.append(("stop", threading.current_thread().name))
        super().stop()


def test_a_task_that_acknowledges_gets_stop_after_its_last_commit_record(
    harness: Harness, topic: str
) -> None:
    # Kafka 3.9's order for a task overriding commit_record/commit: the final flush's
    # commit_record calls and the final commit() come first, then stop(), on the task thread.
    task = _AckingTask()
    runner = harness.runner(task, {"total": "2000", "batch": "500"})
    start(runner, task, topic)
    wait_until(lambda: task.next >= 2000, 20, message="the task to poll every record")
    runner.stop()
    assert runner.await_stop(20)
    names = [name for name, _ in task.calls]
    assert names.count("stop") == 1
    assert names[-1] == "stop", names[-5:]
    assert names.count("commit_record") == 2000
    assert task.calls[-1][1] == task.poll_thread  # stop() on the task's own thread
    assert {thread for _, thread in task.calls} == {task.poll_thread}
    assert all(metadata is not None for _, metadata in task.committed)


def test_a_task_that_does_not_acknowledge_is_stopped_at_once_from_another_thread(
    harness: Harness, topic: str
) -> None:
    # No commit_record/commit override: stop() comes from a stop thread, to interrupt poll().
    stop_threads: list[str] = []

    polled = threading.Event()

    class Plain(SourceTask):
        props_topic = ""

        def start(self, props: dict[str, str]) -> None:
            self._stop = threading.Event()

        def poll(self) -> list[SourceRecord] | None:
            polled.set()
            self._stop.wait(30)  # blocks until stop() interrupts it
            return None

        def stop(self) -> None:
            stop_threads.append(threading.current_thread().name)
            self._stop.set()

    task = Plain()
    runner = harness.runner(task, {})
    task.props_topic = topic
    runner.start()
    wait_until(polled.is_set, 20, message="the task to poll")
    runner.stop()
    assert runner.await_stop(5)  # poll() returned at once: stop() interrupted it
    assert len(stop_threads) == 1
    assert stop_threads[0].startswith("cdk-task-stop-")


def test_a_cancelled_acknowledging_task_gets_no_commit_record_after_stop(
    harness: Harness, topic: str
) -> None:
    # A task whose poll() hangs is cancelled: stop() then comes from another thread, and the
    # runtime calls neither commit_record nor commit after it (the records are redelivered).
    release = threading.Event()
    hanging = threading.Event()

    class Hanging(_AckingTask):
        def poll(self) -> list[SourceRecord] | None:
            if self.next >= 5:
                hanging.set()
                release.wait(20)
            return super().poll()

    task = Hanging()
    runner = harness.runner(task, {"total": "10", "batch": "5"})
    start(runner, task, topic)
    wait_until(hanging.is_set, 20, message="the second poll to hang")
    runner.stop()
    assert not runner.await_stop(0.5)
    runner.cancel()
    wait_until(lambda: any(n == "stop" for n, _ in task.calls), 10, message="stop() after cancel")
    release.set()
    assert runner.await_stop(20)
    names = [name for name, _ in task.calls]
    assert names.count("stop") == 1
    assert "commit_record" not in names[names.index("stop") :]
    assert "commit" not in names[names.index("stop") :]
