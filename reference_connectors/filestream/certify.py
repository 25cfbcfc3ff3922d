"""Certification drivers for the FileStream connectors (``cdk certify`` and the kit's tests).

The external system is a text file: the source driver appends one line per record
(``record-<id>``), the sink driver reads the lines the sink wrote. Lines carry no schema, so
schema evolution and the incompatible-schema check do not apply.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from cdk.data import Schema
from harness import SinkDriver, SourceDriver
from reference_connectors.filestream import FileStreamSinkConnector, FileStreamSourceConnector

__all__ = ["FileStreamSinkDriver", "FileStreamSourceDriver"]

_PREFIX = "record-"


def _id_of(line: Any) -> int:
    text = str(line).strip()
    if not text.startswith(_PREFIX):
        raise ValueError(f"{text!r} is not a line the driver wrote ({_PREFIX}<id>)")
    return int(text[len(_PREFIX) :])


class FileStreamSourceDriver(SourceDriver):
    """Appends ``record-<id>`` lines to ``input.txt``; the connector tails it."""

    connector: ClassVar[type] = FileStreamSourceConnector

    @property
    def file(self) -> Path:
        return self.workdir / "input.txt"

    def setup(self) -> None:
        self.file.touch()

    def example_config(self, topic: str) -> dict[str, str]:
        return {"file": str(self.file), "topic": topic}

    def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
        with self.file.open("a", encoding="utf-8") as out:
            out.writelines(f"{_PREFIX}{i}\n" for i in ids)
            out.flush()
            os.fsync(out.fileno())

    def record_id(self, key: Any, value: Any) -> Hashable:
        return _id_of(value)

    def expected_value(self, record_id: int) -> Any:
        return f"{_PREFIX}{record_id}"  # the line, without its newline


class FileStreamSinkDriver(SinkDriver):
    """Sends ``record-<id>`` strings; reads back the lines of ``output.txt``."""

    connector: ClassVar[type] = FileStreamSinkConnector
    accepts_any_schema: ClassVar[bool] = True

    @property
    def file(self) -> Path:
        return self.workdir / "output.txt"

    def example_config(self, topics: str) -> dict[str, str]:
        return {"file": str(self.file), "topics": topics}

    def value_schema(self) -> Schema:
        return Schema.STRING_SCHEMA

    def value(self, record_id: int, schema: Schema) -> Any:
        return f"{_PREFIX}{record_id}"

    def _lines(self) -> list[str]:
        if not self.file.exists():
            return []
        # Only complete lines: a put may be half way through writing the last one.
        lines = self.file.read_text(encoding="utf-8").splitlines(keepends=True)
        return [line[:-1] for line in lines if line.endswith("\n") and line.strip()]

    def read_back(self) -> list[Hashable]:
        return [_id_of(line) for line in self._lines()]

    def read_values(self) -> dict[Hashable, Any]:
        # The values are strings: each record's stored value is its line.
        return {_id_of(line): line for line in self._lines()}
