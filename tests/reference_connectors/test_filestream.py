from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from cdk import ConfigException, ConnectException, OffsetAndMetadata, SinkRecord, TopicPartition
from cdk.api import OffsetStorageReader, SourceTaskContext
from reference_connectors.filestream import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)


class _Reader(OffsetStorageReader):
    def __init__(self, stored: dict[str, dict[str, Any]]) -> None:
        self.stored = stored

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.stored.get(partition["filename"])

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.offset(p)) for p in partitions]


class _Context(SourceTaskContext):
    def __init__(self, reader: _Reader) -> None:
        self.reader = reader

    def configs(self) -> dict[str, str]:
        return {}

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


def _task(path: Path, stored: dict[str, dict[str, Any]] | None = None) -> FileStreamSourceTask:
    task = FileStreamSourceTask()
    task.initialize(_Context(_Reader(stored or {})))
    task.start({"file": str(path), "topic": "lines", "batch.size": "2"})
    return task


def test_source_reads_complete_lines_in_batches_with_byte_positions(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nbb\nccc\ndd")
    task = _task(path)
    first = task.poll()
    assert first is not None
    assert [(r.value, r.source_offset) for r in first] == [
        ("a", {"position": 2}),
        ("bb", {"position": 5}),
    ]
    second = task.poll()
    assert second is not None
    assert [r.value for r in second] == ["ccc"]
    assert second[0].source_partition == {"filename": str(path)}
    # "dd" has no newline yet: it is kept until the writer finishes the line.
    assert task.poll() is None
    with path.open("ab") as out:
        out.write(b"d\n")
    third = task.poll()
    assert third is not None
    assert [(r.value, r.source_offset) for r in third] == [("ddd", {"position": 13})]
    task.stop()


def test_source_resumes_from_stored_position(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nbb\nccc\n")
    task = _task(path, {str(path): {"position": 5}})
    records = task.poll()
    assert records is not None
    assert [r.value for r in records] == ["ccc"]
    task.stop()


def test_source_rejects_bad_stored_offset(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("x\n")
    with pytest.raises(ConnectException, match="incorrect type"):
        _task(path, {str(path): {"position": "5"}})


def test_source_connector_validates_and_gives_one_task(tmp_path: Path) -> None:
    connector = FileStreamSourceConnector()
    with pytest.raises(ConfigException, match="topic"):
        connector.start({"file": "x"})
    connector.start({"file": "x", "topic": "t"})
    assert connector.task_configs(4) == [{"file": "x", "topic": "t"}]
    errors = {
        v.name: v.error_messages for v in connector.validate({"batch.size": "0"}).config_values
    }
    assert errors["batch.size"] == [
        "Invalid value 0 for configuration batch.size: Value must be at least 1"
    ]
    assert errors["topic"]


def test_source_connector_alter_offsets_checks_shape() -> None:
    connector = FileStreamSourceConnector()
    assert connector.alter_offsets(
        {}, [({"filename": "f"}, {"position": 3}), ({"filename": "g"}, None)]
    )
    with pytest.raises(ConnectException, match="non-negative"):
        connector.alter_offsets({}, [({"filename": "f"}, {"position": -1})])


def test_sink_appends_values_and_flush_makes_them_durable(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    connector = FileStreamSinkConnector()
    connector.start({"file": str(path)})
    (config,) = connector.task_configs(1)
    task = FileStreamSinkTask()
    task.start(config)
    task.put([SinkRecord("t", 0, None, None, None, v, i) for i, v in enumerate(["x", "y"])])
    task.flush({TopicPartition("t", 0): OffsetAndMetadata(2)})
    assert path.read_text() == "x\ny\n"
    task.stop()


def test_sink_lines_are_in_the_file_when_put_returns(tmp_path: Path) -> None:
    """As Kafka's FileStreamSinkTask: no flush() (offset commit) needed to see the lines."""
    path = tmp_path / "out.txt"
    task = FileStreamSinkTask()
    task.start({"file": str(path)})
    try:
        task.put([SinkRecord("t", 0, None, None, None, "first", 0)])
        assert path.read_text(encoding="utf-8") == "first\n"
        task.put([SinkRecord("t", 0, None, None, None, v, i) for i, v in enumerate("ab", 1)])
        assert path.read_text(encoding="utf-8") == "first\na\nb\n"
        task.put([])
        assert path.read_text(encoding="utf-8") == "first\na\nb\n"
    finally:
        task.stop()
