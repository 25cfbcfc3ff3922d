"""The test doubles a partner's unit tests use: task contexts, an offset reader, read_topic."""

from __future__ import annotations

import uuid

import pytest

import harness
from cdk import SourceRecord, SourceTask, TopicPartition
from cdk.kafka import new_producer


class _ResumingTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        offset = self.context.offset_storage_reader.offset({"queue": props["queue"]})
        self.next = 0 if offset is None else int(offset["n"]) + 1

    def poll(self) -> list[SourceRecord] | None:
        return [SourceRecord({"queue": "q"}, {"n": self.next}, "t", None, None, None, None, 1)]

    def stop(self) -> None:
        pass


def test_a_source_task_reads_its_offsets_from_the_fake_context() -> None:
    context = harness.FakeSourceTaskContext({"queue": "q"}, offsets=[({"queue": "q"}, {"n": 4})])
    task = _ResumingTask()
    task.initialize(context)
    task.start(context.configs())
    assert task.next == 5
    context.reader.put({"queue": "q"}, None)
    task.start(context.configs())
    assert task.next == 0
    assert context.reader.offsets([{"queue": "q"}, {"queue": "r"}]) == [
        ({"queue": "q"}, None),
        ({"queue": "r"}, None),
    ]


def test_the_fake_sink_context_records_what_the_task_asks() -> None:
    tp = TopicPartition("t", 0)
    context = harness.FakeSinkTaskContext(configs={"a": "1"}, assignment=[tp])
    context.offset(tp, 7)
    context.offset({TopicPartition("t", 1): 3})
    context.timeout(500)
    context.pause(tp)
    context.request_commit()
    assert context.offsets == {tp: 7, TopicPartition("t", 1): 3}
    assert context.timeouts == [500]
    assert context.paused == {tp}
    context.resume(tp)
    assert context.paused == set()
    assert context.commit_requests == 1
    assert context.assignment() == {tp}
    assert context.configs() == {"a": "1"}
    assert context.errant_record_reporter() is None
    with pytest.raises(TypeError, match="needs the offset"):
        context.offset(tp)


def test_read_topic_reads_the_embedded_broker_without_a_group(kafka_bootstrap: str) -> None:
    topic = f"doubles-{uuid.uuid4().hex[:8]}"
    producer = new_producer({"bootstrap.servers": kafka_bootstrap})
    for n in range(5):
        producer.produce(topic, str(n).encode(), b"k")
    assert producer.flush(20) == 0
    records = harness.read_topic(kafka_bootstrap, topic, min_records=5, timeout=20)
    assert [r.value for r in records] == [b"0", b"1", b"2", b"3", b"4"]
    assert [r.offset for r in records] == [0, 1, 2, 3, 4]
