"""Error handling end to end: dead letter queue, errant record reporter, retriable errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Producer

from cdk.converters import JsonConverter
from tests.connectors.generator import KEY_SCHEMA, VALUE_SCHEMA, expected_key, expected_value
from tests.connectors.recording import read_store
from tests.integration._support import (
    Connect,
    all_keys,
    generator_config,
    make_topic,
    reading,
    recording_config,
    unique,
    wait_store_keys,
)

DLQ_HEADERS = {
    "__connect.errors.topic",
    "__connect.errors.partition",
    "__connect.errors.offset",
    "__connect.errors.connector.name",
    "__connect.errors.task.id",
    "__connect.errors.stage",
    "__connect.errors.class.name",
    "__connect.errors.exception.class.name",
    "__connect.errors.exception.message",
    "__connect.errors.exception.stacktrace",
}


def dlq_config(dlq: str) -> dict[str, str]:
    return {
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
        "errors.log.enable": "true",
    }


def test_dlq_receives_unconvertible_records_with_headers(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = make_topic(kafka_bootstrap)
    dlq = make_topic(kafka_bootstrap, prefix="dlq")
    key_conv, value_conv = JsonConverter(), JsonConverter()
    key_conv.configure({}, is_key=True)
    value_conv.configure({}, is_key=False)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    poison = {}
    for n in range(60):
        key = key_conv.from_connect_data(topic, KEY_SCHEMA, expected_key("p0", n))
        if n % 10 == 3:
            raw = f"not json {n} {{".encode()
            poison[raw] = n
            producer.produce(topic, key=key, value=raw)
        else:
            value = value_conv.from_connect_data(topic, VALUE_SCHEMA, expected_value("p0", n))
            producer.produce(topic, key=key, value=value)
    assert producer.flush(10) == 0

    worker = connect()
    store = tmp_path / "store"
    name = unique("rec-dlq")
    worker.rest.create(name, recording_config(topic, store) | dlq_config(dlq))
    good = {expected_key("p0", n): 1 for n in range(60) if n % 10 != 3}
    got = wait_store_keys(store, good)
    with reading(kafka_bootstrap, dlq) as reader:
        messages = reader.wait_for(len(poison))
        reader.poll(0.5)
        assert sorted(m.value for m in reader.messages) == sorted(poison)
        for m in messages:
            headers = {k: (v or b"").decode() for k, v in m.headers}
            assert set(headers) >= DLQ_HEADERS
            assert headers["__connect.errors.topic"] == topic
            assert headers["__connect.errors.partition"] == "0"
            assert int(headers["__connect.errors.offset"]) == poison[m.value]
            assert headers["__connect.errors.connector.name"] == name
            assert headers["__connect.errors.task.id"] == "0"
            assert headers["__connect.errors.stage"] == "VALUE_CONVERTER"
            assert headers["__connect.errors.exception.stacktrace"]
    assert set(got.keys()) == set(good)
    worker.rest.wait_state(name, "RUNNING", tasks=1)  # tolerated: the task keeps running


def test_errant_record_reporter_sends_poison_to_dlq(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    worker = connect()
    topic = make_topic(kafka_bootstrap)
    dlq = make_topic(kafka_bootstrap, prefix="dlq")
    store = tmp_path / "store"
    poison = [expected_key("p0", n) for n in (5, 17, 99)]
    worker.rest.create(unique("gen"), generator_config(topic, records=120, batch_size=30))
    name = unique("rec-report")
    worker.rest.create(
        name,
        recording_config(topic, store, fail_on=",".join(poison), fail_mode="report")
        | dlq_config(dlq),
    )
    good = all_keys(1, 120)
    for key in poison:
        del good[key]
    got = wait_store_keys(store, good)
    with reading(kafka_bootstrap, dlq) as reader:
        reader.wait_for(3)
        reader.poll(0.5)
        assert sorted(reader.keys()) == sorted(poison)
        for m in reader.messages:
            headers = dict(m.headers)
            assert set(headers) >= DLQ_HEADERS
            assert headers["__connect.errors.stage"] == b"TASK_PUT"
    assert set(got.keys()) == set(good)
    assert not set(got.keys()) & set(poison)


def test_poison_record_fails_the_sink_task_with_trace(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    worker = connect()
    topic = make_topic(kafka_bootstrap)
    worker.rest.create(unique("gen"), generator_config(topic, records=50))
    name = unique("rec-raise")
    worker.rest.create(name, recording_config(topic, tmp_path / "s", fail_on="p0-7"))

    def failed() -> str | None:
        tasks = worker.rest.status(name)["tasks"]
        return tasks[0].get("trace") if tasks and tasks[0]["state"] == "FAILED" else None

    from tests._wait import wait_until

    trace = wait_until(failed, 30, 0.1, lambda: worker.rest.raw_status(name))
    assert "poison record key 'p0-7'" in trace
    assert "DataException" in trace


def test_retriable_exceptions_are_retried_without_loss(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    worker = connect()
    topic = make_topic(kafka_bootstrap, partitions=2)
    store = tmp_path / "store"
    worker.rest.create(
        unique("gen"),
        generator_config(topic, records=300, partitions=2, batch_size=20, retriable_failures=3),
    )
    name = unique("rec")
    worker.rest.create(name, recording_config(topic, store, retriable_failures=3))
    expected = all_keys(2, 300)
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(600)
        reader.poll(0.3)
        assert reader.keys() == expected  # the source lost and duplicated nothing
    got = wait_store_keys(store, expected)
    assert got.keys() == expected  # redelivered batches, written once each
    worker.rest.wait_state(name, "RUNNING", tasks=1)
    assert read_store(store).events_named("start")  # one task instance, never restarted
    assert len({e["instance"] for e in read_store(store).events}) == 1
