"""Certification drivers for the FileStream connectors (``cdk certify`` and the kit's tests).

The external system is a text file: the source driver appends one line per record
(``record-<id>``, or the text SCH-09 hands it), the sink driver reads the lines the sink wrote
(``record-<id>;`` followed by whatever SCH-09 appended). Lines carry no schema, so schema
evolution and the incompatible-schema check do not apply; a line cannot hold a line break,
which both drivers declare as a limit.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from cdk.data import Schema
from harness import Limit, SinkDriver, SourceDriver
from reference_connectors.filestream import FileStreamSinkConnector, FileStreamSourceConnector

__all__ = ["FileStreamSinkDriver", "FileStreamSourceDriver"]

_PREFIX = "record-"
#: A line cannot hold a line break: the source reads a record per line, ``\n`` or ``\r\n``
#: ending it (so a value cannot end with ``\r`` either), the sink writes one ending in ``\n``.
_SOURCE_LIMITS = (
    Limit.excludes("*", "\n\r", "a record is a line of the file, ended by \\n or \\r\\n"),
)
_SINK_LIMITS = (Limit.excludes("*", "\n", "a record is a line of the file, ended by \\n"),)
_SOURCE_ID = re.compile(rf"{_PREFIX}(\d+)")
_SINK_ID = re.compile(rf"{_PREFIX}(\d+);")


class FileStreamSourceDriver(SourceDriver):
    """Appends lines to ``input.txt`` (``record-<id>`` or SCH-09's values) for the connector."""

    connector: ClassVar[type] = FileStreamSourceConnector
    value_limits: Sequence[Limit] = _SOURCE_LIMITS

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self._ids_of_lines: dict[str, int] = {}
        self._next_value_id = itertools.count(1_000_000_000)

    @property
    def file(self) -> Path:
        return self.workdir / "input.txt"

    def setup(self) -> None:
        self.file.touch()

    def example_config(self, topic: str) -> dict[str, str]:
        return {"file": str(self.file), "topic": topic}

    def _append(self, lines: Sequence[str]) -> None:
        with self.file.open("a", encoding="utf-8", newline="") as out:
            out.writelines(f"{line}\n" for line in lines)
            out.flush()
            os.fsync(out.fileno())

    def write_records(self, ids: Sequence[int], *, stream: int = 0) -> None:
        self._append([f"{_PREFIX}{i}" for i in ids])

    def record_id(self, key: Any, value: Any) -> Hashable:
        text = str(value)
        if text in self._ids_of_lines:
            return self._ids_of_lines[text]
        match = _SOURCE_ID.fullmatch(text)
        if match is None:
            raise ValueError(f"{text!r} is not a line the driver wrote")
        return int(match.group(1))

    def expected_value(self, record_id: int) -> Any:
        return f"{_PREFIX}{record_id}"  # the line, without its newline

    def value_schema(self) -> Schema:
        return Schema.STRING_SCHEMA  # a line of text

    def write_values(self, values: Sequence[Any], *, stream: int = 0) -> list[Hashable]:
        ids: list[Hashable] = []
        for value in values:  # each is a different string, a line's text
            ids.append(self._ids_of_lines.setdefault(value, next(self._next_value_id)))
        self._append(values)
        return ids


class FileStreamSinkDriver(SinkDriver):
    """Sends ``record-<id>;`` strings; reads back the lines of ``output.txt``."""

    connector: ClassVar[type] = FileStreamSinkConnector
    accepts_any_schema: ClassVar[bool] = True
    value_limits: Sequence[Limit] = _SINK_LIMITS

    @property
    def file(self) -> Path:
        return self.workdir / "output.txt"

    def example_config(self, topics: str) -> dict[str, str]:
        return {"file": str(self.file), "topics": topics}

    def value_schema(self) -> Schema:
        return Schema.STRING_SCHEMA

    def value(self, record_id: int, schema: Schema) -> Any:
        # the id, then a delimiter: SCH-09 appends hostile text to it
        return f"{_PREFIX}{record_id};"

    def _lines(self) -> list[tuple[int, str]]:
        """Every complete line of the file that starts with a record id, with the id."""
        if not self.file.exists():
            return []
        # Bytes decoded as they are: no newline translation, and only \n ends a line (the
        # last line may be half written).
        text = self.file.read_bytes().decode("utf-8")
        out = []
        for line in text.split("\n")[:-1]:
            match = _SINK_ID.match(line)
            if match is not None:  # anything else is not a record (a broken line's rest)
                out.append((int(match.group(1)), line))
        return out

    def read_back(self) -> list[Hashable]:
        return [record_id for record_id, _ in self._lines()]

    def read_values(self) -> dict[Hashable, Any]:
        # The values are strings: each record's stored value is its line.
        return dict(self._lines())
