"""The test connectors themselves, driven directly (no worker), so integration failures point at
the runtime and not at them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from cdk.api import (
    ErrantRecordReporter,
    OffsetStorageReader,
    SinkRecord,
    SourceConnectorContext,
    SourceTaskContext,
    TopicPartition,
)
from cdk.data import Struct
from cdk.errors import ConnectException, DataException, RetriableException
from tests._contexts import StubSinkTaskContext
from tests._wait import wait_until
from tests.connectors.generator import (
    VALUE_SCHEMA,
    GeneratorSourceConnector,
    GeneratorSourceTask,
    expected_key,
    expected_value,
)
from tests.connectors.recording import RecordingSinkConnector, RecordingSinkTask, read_store


class DictReader(OffsetStorageReader):
    def __init__(self, offsets: Mapping[str, int]) -> None:
        self._offsets = offsets

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        seq = self._offsets.get(partition["partition"])
        return None if seq is None else {"seq": seq}

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.offset(p)) for p in partitions]


class SourceCtx(SourceTaskContext):
    def __init__(self, offsets: Mapping[str, int] | None = None) -> None:
        self._reader = DictReader(offsets or {})

    def configs(self) -> dict[str, str]:
        return {}

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader


class ConnectorCtx(SourceConnectorContext):
    def __init__(self) -> None:
        self.requests = 0

    def request_task_reconfiguration(self) -> None:
        self.requests += 1

    def raise_error(self, error: BaseException) -> None:
        raise AssertionError(error)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return DictReader({})


def drain(task: GeneratorSourceTask, polls: int = 100) -> list[Any]:
    out = []
    for _ in range(polls):
        records = task.poll()
        if not records:
            break
        out.extend(records)
    return out


def started_task(props: dict[str, str], offsets: Mapping[str, int] | None = None):
    task = GeneratorSourceTask()
    task.initialize(SourceCtx(offsets))
    task.start(props)
    return task


def test_generator_splits_streams_and_emits_each_record_once() -> None:
    connector = GeneratorSourceConnector()
    connector.initialize(ConnectorCtx())
    connector.start(
        {"name": "g", "topic": "t", "records": "25", "partitions": "3", "batch.size": "10"}
    )
    configs = connector.task_configs(2)
    assert [c["task.streams"] for c in configs] == ["p0,p1", "p2"]
    keys = []
    for config in configs:
        task = started_task(config)
        records = drain(task)
        task.stop()
        keys += [r.key for r in records]
        for r in records:
            assert r.value == expected_value(
                r.source_partition["partition"], r.source_offset["seq"]
            )
            assert r.value_schema is VALUE_SCHEMA
    connector.stop()
    assert sorted(keys) == sorted(expected_key(s, n) for s in ("p0", "p1", "p2") for n in range(25))


def test_generator_resumes_after_committed_offset_and_schemaless() -> None:
    task = started_task(
        {"topic": "t", "records": "10", "task.streams": "p0", "schema.enable": "false"}, {"p0": 6}
    )
    records = drain(task)
    assert [r.source_offset["seq"] for r in records] == [7, 8, 9]
    assert records[0].value == {
        "stream": "p0",
        "seq": 7,
        "small": 7,
        "ratio": 1.75,
        "even": False,
        "note": "note 7",
    }
    assert records[0].value_schema is None


def test_generator_injected_failures() -> None:
    task = started_task(
        {
            "name": "gen-fail-unit",
            "topic": "t",
            "records": "50",
            "task.streams": "p0",
            "batch.size": "4",
            "fail.after": "10",
            "retriable.failures": "1",
        }
    )
    with pytest.raises(RetriableException):
        task.poll()
    emitted = (task.poll() or []) + (task.poll() or []) + (task.poll() or [])
    with pytest.raises(ConnectException, match="after 10 records"):
        task.poll()
    assert len(emitted) == 10
    again = started_task(
        {
            "name": "gen-fail-unit",
            "topic": "t",
            "records": "50",
            "task.streams": "p0",
            "batch.size": "4",
            "fail.after": "10",
        },
        {"p0": 9},
    )
    assert len(drain(again)) == 40  # the failure happens once per connector and task


def test_generator_watches_streams_file(tmp_path: Path) -> None:
    streams = tmp_path / "streams"
    streams.write_text("2")
    context = ConnectorCtx()
    connector = GeneratorSourceConnector()
    connector.initialize(context)
    connector.start({"name": "g", "topic": "t", "streams.file": str(streams)})
    try:
        assert len(connector.task_configs(4)) == 2
        streams.write_text("4")
        wait_until(lambda: context.requests == 1, 5, message="reconfiguration request")
        assert [c["task.streams"] for c in connector.task_configs(4)] == ["p0", "p1", "p2", "p3"]
    finally:
        connector.stop()


class Reporter(ErrantRecordReporter):
    def __init__(self) -> None:
        self.reported: list[Any] = []

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        self.reported.append(record.key)
        future: Future[None] = Future()
        future.set_result(None)
        return future


def sink_record(key: str, offset: int, value: Any) -> SinkRecord:
    return SinkRecord("t", 0, None, key, VALUE_SCHEMA, value, offset)


def test_recording_sink_writes_flushes_and_reports(tmp_path: Path) -> None:
    connector = RecordingSinkConnector()
    connector.start(
        {
            "store.dir": str(tmp_path),
            "topics": "t",
            "fail.on": "p0-1",
            "fail.mode": "report",
            "retriable.failures": "1",
        }
    )
    [config] = connector.task_configs(1)
    reporter = Reporter()
    context = StubSinkTaskContext(reporter)
    task = RecordingSinkTask()
    task.initialize(context)
    task.start(config)
    task.open([TopicPartition("t", 0)])
    batch = [sink_record(expected_key("p0", n), n, expected_value("p0", n)) for n in range(3)]
    with pytest.raises(RetriableException):
        task.put(batch)
    assert context.timeouts == [100]
    task.put(batch)
    task.flush({})
    store = read_store(tmp_path)
    assert [r["key"] for r in store.records] == ["p0-0", "p0-2"]
    assert reporter.reported == ["p0-1"]
    assert store.records[1]["value"]["amount"] == {"$decimal": "0.02"}
    task.close([TopicPartition("t", 0)])
    task.stop()
    assert [e["event"] for e in read_store(tmp_path).events] == ["start", "open", "close", "stop"]


def test_recording_sink_raises_on_poison(tmp_path: Path) -> None:
    task = RecordingSinkTask()
    task.initialize(StubSinkTaskContext(Reporter()))
    task.start({"store.dir": str(tmp_path), "fail.on": "bad"})
    with pytest.raises(DataException, match="bad"):
        task.put([sink_record("bad", 0, Struct(VALUE_SCHEMA))])
    task.stop()
