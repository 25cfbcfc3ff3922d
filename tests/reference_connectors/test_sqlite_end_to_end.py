"""The SQLite aliases on a real worker (EmbeddedWorker) and the session's broker.

``SqliteSource`` and ``SqliteSink`` run the SQL connectors with the defaults of the kit's former
SQLite-only connectors; the configs here are the ones their users wrote (a bare file path, no
mode, no primary key settings). Source: tables copied to their topics, a new column visible in
Kafka, a new table picked up by reconfiguration, and exact resumption after a clean restart.
Sink: newer and older schemas written, an incompatible one failing the task without writing
the row, schemaless records refused clearly, and a locked database retried without loss.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from confluent_kafka import Consumer, Producer

from cdk import Schema, SchemaBuilder, Struct
from cdk.converters import JsonConverter
from harness import default_sink_value, default_sink_value_schema
from reference_connectors.sql.certify import SqliteSinkDriver, SqliteSourceDriver
from tests._wait import wait_until
from tests.integration._support import (
    JSON,
    Connect,
    Message,
    make_topic,
    reading,
    unique,
    worker_props,
)


@pytest.fixture
def connect(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Callable[..., Connect]]:
    """Start workers sharing one offsets file; all are stopped at teardown."""
    started: list[Connect] = []

    def start(extra: dict[str, str] | None = None) -> Connect:
        props = worker_props(kafka_bootstrap, tmp_path / "offsets", 0)
        props.update(extra or {})
        worker = Connect(props)
        started.append(worker)
        return worker

    yield start
    for worker in reversed(started):
        worker.stop()


def _stored(driver: SqliteSinkDriver) -> list[int]:
    """The ids in the sink's database, sorted (with duplicates)."""
    return sorted(cast(int, i) for i in driver.read_back())


def _wait_topic(bootstrap: str, topic: str) -> None:
    """Wait until the broker knows ``topic`` (a source creates its topics on first produce)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("meta")})
    try:
        wait_until(
            lambda: bool(consumer.list_topics(timeout=5).topics.get(topic, None)),
            60,
            0.2,
            f"topic {topic} to exist",
        )
    finally:
        consumer.close()


def _payload(raw: bytes | None) -> Any:
    assert raw is not None
    return json.loads(raw)["payload"]


def _ids(messages: list[Message]) -> Counter[int]:
    return Counter(int(_payload(m.key)) for m in messages)


def test_source_copies_evolves_discovers_tables_and_resumes_exactly(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    (tmp_path / "db").mkdir()
    driver = SqliteSourceDriver(tmp_path / "db")
    driver.setup()
    prefix = unique("sqlite-src") + "-"
    name = unique("sqlite-src")
    config = {
        "connector.class": "SqliteSource",
        "tasks.max": "2",
        "connection.url": str(driver.database.path),  # the old source's keys, its defaults
        "topic.prefix": prefix,
        "poll.interval.ms": "100",
        "table.poll.interval.ms": "500",
    }
    driver.write_records([1, 2, 3], stream=0)

    first = connect()
    first.rest.create(name, config)
    _wait_topic(kafka_bootstrap, prefix + "t0")
    with reading(kafka_bootstrap, prefix + "t0") as t0:
        t0.wait_for(3)
        column = driver.evolve_schema(stream=0)
        driver.write_records([4, 5], stream=0)
        t0.wait_for(5)
        envelope = json.loads(t0.messages[-1].value or b"{}")
        assert column in [f["field"] for f in envelope["schema"]["fields"]]
        assert envelope["schema"]["name"] == "t0"
        assert envelope["payload"][column] == f"{column}-5"
        assert _payload(t0.messages[-2].value)["amount"] is not None  # id 4: a Decimal

        driver.write_records([6, 7], stream=1)  # a new table: the monitor reconfigures the tasks
        _wait_topic(kafka_bootstrap, prefix + "t1")
        with reading(kafka_bootstrap, prefix + "t1") as t1:
            t1.wait_for(2)
            assert _ids(t1.messages) == Counter({6: 1, 7: 1})
        first.rest.wait_state(name, "RUNNING", tasks=2)

        first.stop()  # clean: offsets committed
        driver.write_records([8, 9], stream=0)
        second = connect()
        second.rest.create(name, config)
        t0.wait_for(7)
        t0.poll(0.5)
        assert _ids(t0.messages) == Counter(dict.fromkeys((1, 2, 3, 4, 5, 8, 9), 1))


def _producer(bootstrap: str) -> tuple[Producer, JsonConverter, JsonConverter]:
    keys, values = JsonConverter(), JsonConverter()
    keys.configure({}, is_key=True)
    values.configure({}, is_key=False)
    return Producer({"bootstrap.servers": bootstrap}), keys, values


def _send(bootstrap: str, topic: str, items: list[tuple[int, Schema, Struct]]) -> None:
    producer, keys, values = _producer(bootstrap)
    for record_id, schema, value in items:
        producer.produce(
            topic,
            key=keys.from_connect_data(topic, Schema.INT64_SCHEMA, record_id),
            value=values.from_connect_data(topic, schema, value),
        )
    assert producer.flush(10) == 0


def _schema(*, add: dict[str, Schema] | None = None, drop: str = "") -> Schema:
    builder = SchemaBuilder.struct().name("cdk.certify.Record")
    for field in default_sink_value_schema().fields:
        if field.name != drop:
            builder.field(field.name, field.schema)
    for name, field_schema in (add or {}).items():
        builder.field(name, field_schema)
    return builder.build()


def _item(record_id: int, schema: Schema) -> tuple[int, Schema, Struct]:
    return record_id, schema, default_sink_value(record_id, schema)


def _sink_driver(tmp_path: Path) -> SqliteSinkDriver:
    (tmp_path / "db").mkdir()
    driver = SqliteSinkDriver(tmp_path / "db")
    driver.setup()
    return driver


def _sink_config(driver: SqliteSinkDriver, topics: str) -> dict[str, str]:
    """The old sink's keys: upserts on ``id`` and auto DDL are the alias's defaults."""
    return {
        "connector.class": "SqliteSink",
        "tasks.max": "1",
        "connection.url": str(driver.database.path),
        "topics": topics,
        "retry.backoff.ms": "200",
    }


def _failed_trace(worker: Connect, name: str) -> str:
    def trace() -> str:
        tasks = worker.rest.status(name)["tasks"]
        return str(tasks[0].get("trace", "")) if tasks and tasks[0]["state"] == "FAILED" else ""

    return wait_until(trace, 60, 0.1, lambda: worker.rest.raw_status(name))


def test_sink_writes_newer_and_older_schemas_and_fails_cleanly_on_bad_ones(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    driver = _sink_driver(tmp_path)
    topic = make_topic(kafka_bootstrap, prefix="sqlite-sink")
    loose = make_topic(kafka_bootstrap, prefix="sqlite-loose")
    current = _schema()
    newer = _schema(add={"note": Schema.OPTIONAL_STRING_SCHEMA})
    older = _schema(drop="score")
    _send(
        kafka_bootstrap,
        topic,
        [_item(1, current), _item(2, current), _item(3, newer), _item(4, newer), _item(5, older)],
    )
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(loose, key=b"1", value=json.dumps({"id": 1, "name": "x"}).encode())
    assert producer.flush(10) == 0

    worker = connect()
    name, loose_name = unique("sqlite-sink"), unique("sqlite-loose")
    worker.rest.create(name, _sink_config(driver, topic))
    worker.rest.create(
        loose_name,
        {
            **_sink_config(driver, loose),
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
        },
    )
    wait_until(
        lambda: _stored(driver) == [1, 2, 3, 4, 5],
        60,
        0.1,
        lambda: f"rows 1..5 in the sink, have {driver.read_back()}",
    )
    values = driver.read_values()
    assert values[3]["note"] == "note-3"
    assert values[1]["note"] is None
    assert values[5]["score"] is None
    assert values[5]["amount"] == default_sink_value(5, older).get("amount")

    bad = SchemaBuilder.struct().field("id", Schema.STRING_SCHEMA).build()
    _send(kafka_bootstrap, topic, [(6, bad, Struct(bad).put("id", "6"))])
    trace = _failed_trace(worker, name)
    assert "DataException" in trace
    assert f"record at topic '{topic}' partition 0 offset 5" in trace
    assert f"field 'id' is STRING, but column 'id' of table '{topic}' is BIGINT (INT64)" in trace
    assert _stored(driver) == [1, 2, 3, 4, 5]

    loose_trace = _failed_trace(worker, loose_name)
    assert "DataException" in loose_trace
    assert "the value has no schema" in loose_trace
    assert "JsonConverter with schemas.enable=true" in loose_trace


def test_sink_retries_a_locked_database_without_loss(
    connect: Callable[..., Connect],
    kafka_bootstrap: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="cdk.runtime")
    driver = _sink_driver(tmp_path)
    topic = make_topic(kafka_bootstrap, prefix="sqlite-outage")
    schema = _schema()
    _send(kafka_bootstrap, topic, [_item(i, schema) for i in range(1, 6)])
    worker = connect()
    name = unique("sqlite-outage")
    worker.rest.create(name, _sink_config(driver, topic))
    wanted = list(range(1, 6))
    wait_until(lambda: _stored(driver) == wanted, 60, 0.1, "rows 1..5")

    def retried() -> bool:
        return any("RetriableException from SinkTask" in r.getMessage() for r in caplog.records)

    with driver.outage():
        _send(kafka_bootstrap, topic, [_item(i, schema) for i in range(6, 11)])
        wait_until(retried, 60, 0.1, "the sink to report the locked database as retriable")
        assert worker.rest.task_states(name) == ["RUNNING"]
    wanted = list(range(1, 11))
    wait_until(
        lambda: _stored(driver) == wanted,
        60,
        0.1,
        lambda: f"rows 1..10 after the outage, have {_stored(driver)}",
    )
    assert worker.rest.task_states(name) == ["RUNNING"]
