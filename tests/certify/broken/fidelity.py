"""Connectors that mangle hostile values, one per class of the field's classic bugs (SCH-09).

Each was CERTIFIABLE while the harness sent only benign values (``name-17``, small integers,
timestamps in 2026): the ids were right and so were the values it sent. Each sink is the
baseline SQLite sink (``_sqlite_base``) with one thing done to the values before they are
written, as a real store does it; the newline-splitting one is the FileStream sink, whose
driver does not declare that a line cannot hold a line break; the source cuts strings at NUL
as a C string does.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from typing_extensions import override

from cdk import (
    ConnectException,
    Schema,
    SchemaBuilder,
    SchemaType,
    SinkRecord,
    SinkTask,
    SourceRecord,
    SourceTask,
    Struct,
    Timestamp,
)
from harness import Limit
from reference_connectors.filestream.certify import FileStreamSinkDriver
from tests.certify.broken._sqlite_base import (
    SqliteSinkConnector,
    SqliteSinkTask,
    SqliteSourceConnector,
    SqliteSourceTask,
)
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver

Mangle = Callable[[Schema, Any], Any]


def _mangled(record: SinkRecord, mangle: Mangle) -> SinkRecord:
    """``record`` with ``mangle`` applied to every field but ``id``."""
    schema = record.value_schema
    if schema is None or not isinstance(record.value, Struct):
        return record
    out = Struct(schema)
    for f in schema.fields:
        value = record.value.get(f.name)
        out.put(f.name, value if f.name == "id" or value is None else mangle(f.schema, value))
    return record.new_record(value=out)


class _ManglingSinkTask(SqliteSinkTask):
    """The baseline sink with :meth:`mangle` done to each value before it is written."""

    @staticmethod
    def mangle(schema: Schema, value: Any) -> Any:
        return value

    @override
    def _write(self, connection: sqlite3.Connection, records: Sequence[SinkRecord]) -> None:
        super()._write(connection, [_mangled(r, self.mangle) for r in records])


# ---------------------------------------------------------------------------- truncating


class TruncatingSinkTask(_ManglingSinkTask):
    """Cuts every string to 24 characters, as a VARCHAR(24) column without strict mode."""

    @staticmethod
    def mangle(schema: Schema, value: Any) -> Any:
        return value[:24] if schema.type is SchemaType.STRING else value


class TruncatingSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return TruncatingSinkTask


class TruncatingSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = TruncatingSinkConnector


# ---------------------------------------------------------------------------- ASCII only


class AsciiSinkTask(_ManglingSinkTask):
    """Stores strings in a store that is not UTF-8: what ASCII cannot hold becomes '?'."""

    @staticmethod
    def mangle(schema: Schema, value: Any) -> Any:
        if schema.type is SchemaType.STRING:
            return value.encode("ascii", errors="replace").decode("ascii")
        return value


class AsciiSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return AsciiSinkTask


class AsciiSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = AsciiSinkConnector


# ---------------------------------------------------------------------------- trimming


class TrimmingSinkTask(_ManglingSinkTask):
    """Trims the whitespace around every string (it "cleans" the input)."""

    @staticmethod
    def mangle(schema: Schema, value: Any) -> Any:
        return value.strip() if schema.type is SchemaType.STRING else value


class TrimmingSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return TrimmingSinkTask


class TrimmingSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = TrimmingSinkConnector


# ---------------------------------------------------------------------------- INT64 as double


class FloatInt64SinkTask(_ManglingSinkTask):
    """Keeps INT64 values as doubles (a JSON library or column that does): past 2^53 they round."""

    @staticmethod
    def mangle(schema: Schema, value: Any) -> Any:
        if schema.type is SchemaType.INT64 and schema.name is None:
            return min(int(float(value)), 2**63 - 1)  # 2^63 - 1 rounds up past the range
        return value


class FloatInt64SinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return FloatInt64SinkTask


class FloatInt64SinkDriver(SqliteSinkDriver):
    """Sends an INT64 field besides the id (whose values are small)."""

    connector: ClassVar[type] = FloatInt64SinkConnector

    @override
    def value_schema(self) -> Schema:
        base = super().value_schema()
        builder = SchemaBuilder.struct().name(base.name or "record")
        for f in base.fields:
            builder.field(f.name, f.schema)
        return builder.field("count", Schema.OPTIONAL_INT64_SCHEMA).build()


# ---------------------------------------------------------------------------- time zone


class TzShiftingSinkTask(_ManglingSinkTask):
    """Writes a timestamp's local wall clock (UTC+2) where readers take UTC."""

    @staticmethod
    def mangle(schema: Schema, value: Any) -> Any:
        if schema.name == Timestamp.LOGICAL_NAME:
            try:
                local = value.astimezone(dt.timezone(dt.timedelta(hours=2)))
            except OverflowError:  # the last hours of year 9999 have no local time here
                return value
            return local.replace(tzinfo=dt.timezone.utc)
        return value


class TzShiftingSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return TzShiftingSinkTask


class TzShiftingSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = TzShiftingSinkConnector


# ---------------------------------------------------------------------------- NUL refused


class NulRefusingSinkTask(SqliteSinkTask):
    """Fails on a string with NUL, as PostgreSQL's text does; its driver does not declare it."""

    @override
    def _write(self, connection: sqlite3.Connection, records: Sequence[SinkRecord]) -> None:
        for record in records:
            value = record.value
            if isinstance(value, Struct) and any(
                isinstance(value.get(f.name), str) and "\x00" in value.get(f.name)
                for f in value.schema.fields
            ):
                raise ConnectException("text fields cannot contain NUL (0x00) bytes")
        super()._write(connection, records)


class NulRefusingSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return NulRefusingSinkTask


class NulRefusingSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = NulRefusingSinkConnector


# ---------------------------------------------------------------------------- newline splitting


class NewlineSplittingSinkDriver(FileStreamSinkDriver):
    """The FileStream sink, whose driver does not declare that a line cannot hold a line break.

    The sink writes a line per record, so a value with a line break becomes two lines.
    """

    value_limits: Sequence[Limit] = ()


# ------------------------------------------------------------------------------------- source


class CStringSourceTask(SqliteSourceTask):
    """Reads text as a C string would: a string ends at its first NUL."""

    @override
    def _record(self, table: Any, row: tuple[Any, ...]) -> SourceRecord:
        record = super()._record(table, row)
        value: Struct = record.value
        out = Struct(value.schema)
        for f in value.schema.fields:
            item = value.get(f.name)
            if isinstance(item, str):
                item = item.split("\x00", 1)[0]
            out.put(f.name, item)
        return record.new_record(value=out)


class CStringSourceConnector(SqliteSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return CStringSourceTask


class CStringSourceDriver(SqliteSourceDriver):
    connector: ClassVar[type] = CStringSourceConnector
