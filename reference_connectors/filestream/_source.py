"""FileStreamSourceConnector: each new line of a file becomes a record."""

from __future__ import annotations

import logging
import threading
from typing import IO, Any

from typing_extensions import override

from cdk import (
    NO_DEFAULT,
    ConfigDef,
    ConfigException,
    ConnectException,
    ExactlyOnceSupport,
    Importance,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Type,
)
from cdk.config import AbstractConfig, validators

__all__ = ["FileStreamSourceConnector", "FileStreamSourceTask"]

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_BATCH_SIZE = 2000
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"
_STRING = Schema.STRING_SCHEMA

CONFIG_DEF = (
    ConfigDef()
    .define(
        FILE_CONFIG,
        Type.STRING,
        None,
        None,
        Importance.HIGH,
        "Source filename. If not specified, the standard input will be used",
    )
    .define(
        TOPIC_CONFIG,
        Type.STRING,
        NO_DEFAULT,
        validators.NonEmptyString(),
        Importance.HIGH,
        "The topic to publish data to",
    )
    .define(
        BATCH_SIZE_CONFIG,
        Type.INT,
        DEFAULT_BATCH_SIZE,
        validators.Range.at_least(1),
        Importance.LOW,
        "The maximum number of records the source task can read from the file each time it is "
        "polled",
    )
)


class FileStreamSourceConnector(SourceConnector):
    """Reads lines from a file (one task: a file has one reader)."""

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
        AbstractConfig(CONFIG_DEF, props)  # raises ConfigException naming the bad key
        self._props = dict(props)

    @override
    def task_class(self) -> type[SourceTask]:
        return FileStreamSourceTask

    @override
    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        """SUPPORTED for a file (as Kafka's FileStreamSourceConnector).

        Each record's offset is the byte position just after its own line, and a task resumes
        at exactly that position: the records after the last committed offset are exactly the
        lines after it, once each.
        """
        filename = props.get(FILE_CONFIG)
        if filename and filename.strip():
            return ExactlyOnceSupport.SUPPORTED
        return ExactlyOnceSupport.UNSUPPORTED

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # Only one task reads a file, whatever max_tasks allows.
        return [dict(self._props)]

    @override
    def stop(self) -> None:
        """Nothing to release: the task owns the file."""

    @override
    def alter_offsets(
        self,
        props: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        for partition, offset in offsets:
            if set(partition) != {FILENAME_FIELD}:
                raise ConnectException(
                    f"Partition {partition} must have exactly one key, {FILENAME_FIELD!r}"
                )
            if offset is None:
                continue
            position = offset.get(POSITION_FIELD)
            if set(offset) != {POSITION_FIELD} or not isinstance(position, int) or position < 0:
                raise ConnectException(
                    f"Offset {offset} must be {{{POSITION_FIELD!r}: <non-negative integer>}}"
                )
        return True


class FileStreamSourceTask(SourceTask):
    """Tails the file, emitting lines; the offset is the byte position after the last line."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._file: IO[bytes] | None = None
        self._filename: str | None = None
        self._topic = ""
        self._batch_size = DEFAULT_BATCH_SIZE
        self._position = 0
        self._buffer = b""

    @override
    def version(self) -> str:
        return "0.1.0"

    @override
    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(CONFIG_DEF, props)
        self._filename = config.get_string(FILE_CONFIG) or None
        self._topic = config.get_string(TOPIC_CONFIG)
        self._batch_size = config.get_int(BATCH_SIZE_CONFIG)
        if self._filename is None:
            raise ConfigException(FILE_CONFIG, None, "reading standard input is not supported")
        self._partition = {FILENAME_FIELD: self._filename}
        offset = self.context.offset_storage_reader.offset({FILENAME_FIELD: self._filename})
        if offset is not None:
            position = offset.get(POSITION_FIELD)
            if not isinstance(position, int):
                raise ConnectException(f"Offset position is the incorrect type: {position!r}")
            self._position = position
            log.debug("Found previous offset, trying to skip to file offset %d", position)

    def _open(self) -> IO[bytes] | None:
        if self._file is None:
            assert self._filename is not None
            try:
                self._file = open(self._filename, "rb")  # noqa: SIM115 - held across polls
            except FileNotFoundError:
                log.warning(
                    "Couldn't find file %s for FileStreamSourceTask, sleeping to wait "
                    "for it to be created",
                    self._filename,
                )
                return None
            self._file.seek(self._position)
        return self._file

    @override
    def poll(self) -> list[SourceRecord] | None:
        stream = self._open()
        if stream is None:
            self._stop.wait(1.0)
            return None
        records: list[SourceRecord] = []
        partition = self._partition
        topic = self._topic
        while len(records) < self._batch_size:
            line = stream.readline()
            if not line:
                break
            if not line.endswith(b"\n"):
                # A partial line: keep it until the writer finishes it.
                stream.seek(self._position)
                break
            self._position += len(line)
            text = _strip_line_end(line).decode("utf-8", errors="replace")
            records.append(
                SourceRecord(
                    partition,  # one dict for the task's records: offsets are grouped by it
                    {POSITION_FIELD: self._position},
                    topic,
                    None,
                    None,
                    None,
                    _STRING,
                    text,
                )
            )
        if not records:
            self._stop.wait(0.2)  # nothing new yet; stop() interrupts the wait
            return None
        return records

    @override
    def stop(self) -> None:
        self._stop.set()
        if self._file is not None:
            self._file.close()
            self._file = None


def _strip_line_end(line: bytes) -> bytes:
    r"""A line without its ending: ``\n``, or ``\r\n`` (one, not every ``\r`` before it)."""
    line = line[:-1]
    return line[:-1] if line.endswith(b"\r") else line
