"""{{ cookiecutter.__class_prefix }}SinkConnector: records are appended to JSON-lines files.

Each topic partition has its own file in ``output.dir``, ``<topic>-<partition>.jsonl``: one JSON
object per record (its value's fields, by the record's schema), and the file's schema next to it
in ``<topic>-<partition>.schema.json`` (Kafka Connect's JSON schema format). Before it writes a
batch, the task checks every record's schema against the file's: a newer schema with an added
optional field extends the file's schema (``schema.evolution=add_fields``), an older one without
an optional field is stored with null there, and a changed type is refused with a DataException.
Each ``put()`` reaches the file before it returns, and ``flush()`` makes it durable (fsync), so
the offsets the framework commits after ``flush()`` never run ahead of the data.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import IO

from cdk import (
    ConfigDef,
    ConnectException,
    DataException,
    OffsetAndMetadata,
    RetriableException,
    Schema,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from typing_extensions import override

from {{ cookiecutter.package_name }}._config import (
    OUTPUT_DIR,
    RETRY_BACKOFF_MS,
    SCHEMA_EVOLUTION,
    SINK_CONFIG_DEF,
    VERSION,
    parse,
)
from {{ cookiecutter.package_name }}._jsonl import (
    merged_schema,
    schema_from_json,
    schema_to_json,
    to_json,
)

__all__ = [
    "{{ cookiecutter.__class_prefix }}SinkConnector",
    "{{ cookiecutter.__class_prefix }}SinkTask",
    "data_file",
    "schema_file",
]

log = logging.getLogger(__name__)


def data_file(directory: Path, tp: TopicPartition) -> Path:
    """The file that holds the records of ``tp``."""
    return directory / f"{tp.topic}-{tp.partition}.jsonl"


def schema_file(data: Path) -> Path:
    """The file that holds the schema of the data file ``data``."""
    return data.with_name(data.name[: -len(".jsonl")] + ".schema.json")


class {{ cookiecutter.__class_prefix }}SinkConnector(SinkConnector):
    """Writes records to JSON-lines files, a file per topic partition."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    @override
    def version(self) -> str:
        return VERSION

    @override
    def config(self) -> ConfigDef:
        return SINK_CONFIG_DEF

    @override
    def task_class(self) -> type[SinkTask]:
        return {{ cookiecutter.__class_prefix }}SinkTask

    @override
    def start(self, props: dict[str, str]) -> None:
        parse(SINK_CONFIG_DEF, props)  # a ConfigException names the bad key
        self._props = dict(props)

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # The framework divides the topic partitions over the tasks.
        return [dict(self._props) for _ in range(max_tasks)]

    @override
    def stop(self) -> None:
        """Nothing to release: the tasks own the files."""

    @override
    def alter_offsets(
        self, props: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        return True  # the offsets live in the consumer group only


class _File:
    """One open data file and its schema."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.schema_path = schema_file(path)
        self.schema: Schema | None = None
        if self.schema_path.exists():
            self.schema = schema_from_json(json.loads(self.schema_path.read_text("utf-8")))
        self.out: IO[str] = path.open("a", encoding="utf-8")

    def set_schema(self, schema: Schema) -> None:
        """Replace the file's schema, atomically and durably, before lines that need it."""
        temporary = self.schema_path.with_name(self.schema_path.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as out:
            json.dump(schema_to_json(schema), out, indent=2)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.schema_path)
        self.schema = schema

    def close(self) -> None:
        self.out.close()


class {{ cookiecutter.__class_prefix }}SinkTask(SinkTask):
    """Appends each record's value to its partition's file."""

    def __init__(self) -> None:
        self._dir = Path()
        self._add_fields = True
        self._backoff_ms = 1000
        self._files: dict[TopicPartition, _File] = {}

    @override
    def version(self) -> str:
        return VERSION

    @override
    def start(self, props: dict[str, str]) -> None:
        config = parse(SINK_CONFIG_DEF, props)
        self._dir = Path(config.get_string(OUTPUT_DIR))
        self._add_fields = config.get_string(SCHEMA_EVOLUTION).lower() == "add_fields"
        self._backoff_ms = config.get_long(RETRY_BACKOFF_MS)

    def _check_directory(self) -> None:
        # TODO(partner): check your external system here: transient errors become a
        # RetriableException (the batch is redelivered), permanent ones a ConnectException.
        try:
            mode = self._dir.stat().st_mode  # one look: the directory may come and go meanwhile
        except OSError as exc:
            self.context.timeout(self._backoff_ms)
            raise RetriableException(
                f"{OUTPUT_DIR} {self._dir} is unavailable ({exc.strerror}); retrying"
            ) from exc
        if not stat.S_ISDIR(mode):
            raise ConnectException(f"{OUTPUT_DIR} {self._dir} is not a directory any more")

    def _file(self, tp: TopicPartition) -> _File:
        file = self._files.get(tp)
        if file is None:
            try:
                file = _File(data_file(self._dir, tp))
            except OSError as exc:
                self._check_directory()  # the whole directory went away: retry later
                raise ConnectException(f"Cannot open the file of {tp}: {exc}") from exc
            except (ValueError, KeyError) as exc:
                raise ConnectException(f"The schema file of {tp} is not valid: {exc}") from exc
            self._files[tp] = file
        return file

    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        self._check_directory()
        # Check every record first, so that a bad record leaves the whole batch unwritten.
        lines: dict[TopicPartition, list[str]] = {}
        schemas: dict[TopicPartition, Schema] = {}
        reporter = self.context.errant_record_reporter()
        for record in records:
            tp = TopicPartition(record.topic, record.kafka_partition or 0)
            current = schemas.get(tp) or self._file(tp).schema
            try:
                schema, line = _line(record, current, add_fields=self._add_fields)
            except DataException as exc:
                if reporter is None:
                    raise
                reporter.report(record, exc)  # to the dead letter queue; the rest goes on
                continue
            schemas[tp] = schema
            lines.setdefault(tp, []).append(line)
        for tp, batch in lines.items():
            file = self._files[tp]
            try:
                if schemas[tp] != file.schema:
                    file.set_schema(schemas[tp])
                file.out.write("".join(batch))
                file.out.flush()  # visible to readers now; flush() makes it durable
            except OSError as exc:
                self._check_directory()
                raise ConnectException(f"Cannot write to {file.path}: {exc}") from exc

    @override
    def flush(self, current_offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        for file in self._files.values():
            try:
                file.out.flush()
                os.fsync(file.out.fileno())
            except OSError as exc:
                raise ConnectException(f"Cannot flush {file.path}: {exc}") from exc

    @override
    def close(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            file = self._files.pop(tp, None)
            if file is not None:
                file.close()

    @override
    def stop(self) -> None:
        for file in self._files.values():
            file.close()
        self._files.clear()


def _line(record: SinkRecord, current: Schema | None, *, add_fields: bool) -> tuple[Schema, str]:
    """The file's schema after ``record``, and the record as one JSON line.

    Raises:
        DataException: the record cannot be stored; the message names it and the reason.
    """
    where = f"record {record.topic}-{record.kafka_partition}@{record.kafka_offset}"
    if record.value is None:
        raise DataException(f"{where}: a null value (tombstone) has nothing to store")
    if record.value_schema is None:
        raise DataException(
            f"{where} has no schema: this sink needs one (set value.converter.schemas.enable=true "
            "for the JsonConverter, or use the AvroConverter)"
        )
    try:
        schema = merged_schema(current, record.value_schema, add_fields=add_fields)
    except DataException as exc:
        raise DataException(f"{where}: {exc}") from exc
    value = record.value
    fields = {
        f.name: to_json(f.schema, value.get(f.name) if record.value_schema.field(f.name) else None)
        for f in schema.fields
    }
    try:
        text = json.dumps(fields, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:
        raise DataException(f"{where}: cannot be written as JSON: {exc}") from exc
    return schema, text + "\n"
