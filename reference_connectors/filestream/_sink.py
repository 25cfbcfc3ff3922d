"""FileStreamSinkConnector: each record's value is appended to a file as a line."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import IO

from typing_extensions import override

from cdk import (
    ConfigDef,
    Importance,
    OffsetAndMetadata,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
    Type,
)
from cdk.config import AbstractConfig

__all__ = ["FileStreamSinkConnector", "FileStreamSinkTask"]

FILE_CONFIG = "file"

CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG,
    Type.STRING,
    None,
    None,
    Importance.HIGH,
    "Destination filename. If not specified, the standard output will be used",
)


class FileStreamSinkConnector(SinkConnector):
    """Appends records to a file (or stdout); one task per configured task slot."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    @override
    def version(self) -> str:
        return "0.1.0"

    @override
    def config(self) -> ConfigDef:
        return CONFIG_DEF

    @override
    def start(self, props: dict[str, str]) -> None:
        AbstractConfig(CONFIG_DEF, props)
        self._props = dict(props)

    @override
    def task_class(self) -> type[SinkTask]:
        return FileStreamSinkTask

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    @override
    def stop(self) -> None:
        """Nothing to release: tasks own the file handles."""

    @override
    def alter_offsets(
        self, props: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        # Offsets live in the consumer group only; the framework may change them freely.
        return True


class FileStreamSinkTask(SinkTask):
    """Writes ``str(value)`` per record.

    Every ``put`` writes its lines through to the file before returning (as Kafka's task, whose
    ``PrintStream`` has no buffer of its own), so readers see them at once rather than at the
    next offset flush; ``flush`` makes the lines durable (fsync).
    """

    def __init__(self) -> None:
        self._out: IO[str] | None = None
        self._owns_out = False

    @override
    def version(self) -> str:
        return "0.1.0"

    @override
    def start(self, props: dict[str, str]) -> None:
        filename = AbstractConfig(CONFIG_DEF, props).get_string(FILE_CONFIG)
        if filename:
            self._out = open(filename, "a", encoding="utf-8")  # noqa: SIM115 - held until stop
            self._owns_out = True
        else:
            self._out = sys.stdout

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        assert self._out is not None
        self._out.writelines(f"{record.value}\n" for record in records)
        self._out.flush()  # one write(2) per batch: the lines are visible when put returns

    @override
    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        if self._out is None:
            return
        self._out.flush()
        if self._owns_out:
            os.fsync(self._out.fileno())

    @override
    def stop(self) -> None:
        if self._out is not None and self._owns_out:
            self._out.close()
        self._out = None
