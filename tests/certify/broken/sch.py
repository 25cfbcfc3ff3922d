"""Connectors with schema defects, one per SCH check, and their drivers.

Each is a small subclass of a baseline SQLite connector (``_sqlite_base``) that gets one thing
about schemas wrong; its driver is the baseline driver pointed at it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import re
import sqlite3
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar

from typing_extensions import override

from cdk import (
    DataException,
    Schema,
    SchemaBuilder,
    SchemaType,
    SinkRecord,
    SinkTask,
    SourceRecord,
    SourceTask,
    Struct,
)
from harness import Limit, SinkDriver, SourceDriver
from tests.certify.broken._sqlite_base import (
    SqliteSinkConnector,
    SqliteSinkTask,
    SqliteSourceConnector,
    SqliteSourceTask,
)
from tests.certify.broken._sqlite_base._types import ColumnType, Kind
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver

# ------------------------------------------------------------------------------------- SCH-01


class MissingFieldSourceTask(SqliteSourceTask):
    """Leaves the NOT NULL column ``name`` out of the value: a required field is null."""

    @override
    def _record(self, table: Any, row: tuple[Any, ...]) -> SourceRecord:
        record = super()._record(table, row)
        schema: Schema = record.value_schema  # type: ignore[assignment]  # always a STRUCT
        value = Struct(schema)
        for field in schema.fields:
            if field.name != "name":
                value.put(field.name, record.value.get(field.name))
        return record.new_record(value=value)


class MissingFieldSourceConnector(SqliteSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return MissingFieldSourceTask


class MissingFieldSourceDriver(SqliteSourceDriver):
    connector: ClassVar[type] = MissingFieldSourceConnector


# ------------------------------------------------------------------------------- SCH-02, 04


class FloatDecimalSourceTask(SqliteSourceTask):
    """Reads decimals through ``float``: ``0.50`` becomes ``Decimal('0.5')``, its scale lost."""

    @override
    def _record(self, table: Any, row: tuple[Any, ...]) -> SourceRecord:
        record = super()._record(table, row)
        amount = record.value.get("amount")
        if amount is not None:
            record.value.put("amount", decimal.Decimal(repr(float(amount))))
        return record


class FloatDecimalSourceConnector(SqliteSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return FloatDecimalSourceTask


class FloatDecimalSourceDriver(SqliteSourceDriver):
    connector: ClassVar[type] = FloatDecimalSourceConnector


# ------------------------------------------------------------------------------------- SCH-03


class SchemalessCrashSinkTask(SqliteSinkTask):
    """Assumes every record has a value schema: schemaless records raise AttributeError."""

    @override
    def _plan(self, connection: sqlite3.Connection, table: str, record: SinkRecord) -> Any:
        schema: Any = record.value_schema
        if not schema.fields:  # AttributeError: 'NoneType' object has no attribute 'fields'
            raise DataException("no fields")
        return super()._plan(connection, table, record)


class SchemalessCrashSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return SchemalessCrashSinkTask


class SchemalessCrashSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = SchemalessCrashSinkConnector


# ------------------------------------------------------------------------------------- SCH-05


class CachedSchemaSourceTask(SqliteSourceTask):
    """Reads a table's schema once and keeps it: columns added later never reach the records."""

    @override
    def _load_schema(self, connection: sqlite3.Connection, table: Any) -> bool:
        if table.schema is not None:
            return True
        return bool(super()._load_schema(connection, table))


class CachedSchemaSourceConnector(SqliteSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return CachedSchemaSourceTask


class CachedSchemaSourceDriver(SqliteSourceDriver):
    connector: ClassVar[type] = CachedSchemaSourceConnector


# ------------------------------------------------------------------------------------- SCH-06


class NoEvolveSinkTask(SqliteSinkTask):
    """Never adds columns: a field the table lacks makes the plan raise a raw KeyError."""

    @override
    def _evolve(
        self, connection: sqlite3.Connection, table: str, missing: Any, key_names: set[str]
    ) -> Any:
        return self._columns(connection, table)


class NoEvolveSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return NoEvolveSinkTask


class NoEvolveSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = NoEvolveSinkConnector


# ------------------------------------------------------------------------------------- SCH-07


class EveryColumnSinkTask(SqliteSinkTask):
    """Requires a field for every column of the table: records of an older schema are refused."""

    @override
    def _build_plan(self, connection: sqlite3.Connection, table: str, record: SinkRecord) -> Any:
        plan = super()._build_plan(connection, table, record)
        schema: Schema = record.value_schema  # type: ignore[assignment]
        fields = {f.name.casefold() for f in schema.fields}
        missing = sorted(set(self._columns(connection, table)) - fields)
        if missing:
            raise DataException(f"the record has no field for the columns {missing}")
        return plan


class EveryColumnSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return EveryColumnSinkTask


class EveryColumnSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = EveryColumnSinkConnector


# ------------------------------------------------------------------------------------- SCH-08


@dataclasses.dataclass(frozen=True)
class _CoercingType(ColumnType):
    """Accepts any field type and coerces text into numbers by its digits (``"x16"`` -> 16)."""

    @override
    def accepts(self, schema: Schema) -> bool:
        return True

    @override
    def to_sqlite(self, value: Any) -> Any:
        if self.kind is Kind.INT64 and isinstance(value, str):
            return int(re.sub(r"[^0-9-]", "", value) or 0)
        return super().to_sqlite(value)


class CoercingSinkTask(SqliteSinkTask):
    """Trusts any record schema and coerces values into the table's columns."""

    @override
    def _columns(self, connection: sqlite3.Connection, table: str) -> dict[str, Any]:
        return {
            name: dataclasses.replace(
                column, type=_CoercingType(column.type.kind, column.type.scale)
            )
            if column.type is not None
            else column
            for name, column in super()._columns(connection, table).items()
        }


class CoercingSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return CoercingSinkTask


class CoercingSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = CoercingSinkConnector


# ------------------------------------------------------------------------ value fidelity (SCH-02)
# Each certified before value fidelity was required: the ids were right, the values were not.


def _with_value(record: SinkRecord, schema: Schema, values: dict[str, Any]) -> SinkRecord:
    struct = Struct(schema)
    for field in schema.fields:
        struct.put(field.name, values[field.name])
    return record.new_record(value_schema=schema, value=struct)


class GarblingSinkTask(SqliteSinkTask):
    """Stores the right ids but replaces every other STRING field with a constant."""

    @override
    def _write(self, connection: sqlite3.Connection, records: Sequence[SinkRecord]) -> None:
        garbled = []
        for record in records:
            schema = record.value_schema
            if schema is None or not isinstance(record.value, Struct):
                garbled.append(record)
                continue
            values = {
                f.name: "garbled"
                if f.name != "id" and f.schema.type is SchemaType.STRING
                else record.value.get(f.name)
                for f in schema.fields
            }
            garbled.append(_with_value(record, schema, values))
        super()._write(connection, garbled)


class GarblingSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return GarblingSinkTask


class GarblingSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = GarblingSinkConnector


class DroppingSinkTask(SqliteSinkTask):
    """Leaves the optional field ``score`` out of what it stores, without a word."""

    @override
    def _write(self, connection: sqlite3.Connection, records: Sequence[SinkRecord]) -> None:
        kept = []
        for record in records:
            schema = record.value_schema
            if schema is None or not isinstance(record.value, Struct) or not schema.field("score"):
                kept.append(record)
                continue
            builder = SchemaBuilder.struct().name(schema.name or "dropped")
            for field in schema.fields:
                if field.name != "score":
                    builder.field(field.name, field.schema)
            smaller = builder.build()
            values = {f.name: record.value.get(f.name) for f in smaller.fields}
            kept.append(_with_value(record, smaller, values))
        super()._write(connection, kept)


class DroppingSinkConnector(SqliteSinkConnector):
    @override
    def task_class(self) -> type[SinkTask]:
        return DroppingSinkTask


class DroppingSinkDriver(SqliteSinkDriver):
    connector: ClassVar[type] = DroppingSinkConnector


class DeclaredDropSinkDriver(DroppingSinkDriver):
    """The same sink, whose driver declares the field it does not store, with the reason."""

    unstored_fields: ClassVar[Mapping[str, str]] = {
        "score": "the table keeps no score: scores are recomputed downstream"
    }


class WrongValueSourceTask(SqliteSourceTask):
    """Emits valid records whose ``name`` belongs to the next row: schemas right, values wrong."""

    @override
    def _record(self, table: Any, row: tuple[Any, ...]) -> SourceRecord:
        record = super()._record(table, row)
        value: Struct = record.value
        wrong = Struct(value.schema)
        for field in value.schema.fields:
            wrong.put(field.name, value.get(field.name))
        wrong.put("name", f"name-{value.get('id') + 1}")
        return record.new_record(value=wrong)


class WrongValueSourceConnector(SqliteSourceConnector):
    @override
    def task_class(self) -> type[SourceTask]:
        return WrongValueSourceTask


class WrongValueSourceDriver(SqliteSourceDriver):
    connector: ClassVar[type] = WrongValueSourceConnector


class IdsOnlySinkDriver(SqliteSinkDriver):
    """A correct sink whose driver reads back ids only: its values cannot be verified."""

    read_values = SinkDriver.read_values


class UnstatedSourceDriver(SqliteSourceDriver):
    """A correct source whose driver does not state the values it wrote."""

    expected_value = SourceDriver.expected_value


# ----------------------------------------------------------------------- server-assigned fields
class StampingSourceDriver(SqliteSourceDriver):
    """The external system stamps ``created`` itself: whatever the harness asks for, the row
    holds the time of the write (as an API stamps ``updatedAt``). Without a declaration SCH-09
    fails on it: the driver cannot write the harness's values there.
    """

    @override
    def write_values(self, values: Sequence[Any], *, stream: int = 0) -> list[Hashable]:
        stamped = []
        for value in values:
            copy = Struct(value.schema)
            for f in value.schema.fields:
                copy.put(f.name, value.get(f.name))
            copy.put("created", _STAMP + dt.timedelta(milliseconds=len(stamped)))
            stamped.append(copy)
        return super().write_values(stamped, stream=stream)


_STAMP = dt.datetime(2031, 5, 4, 3, 2, 1, tzinfo=dt.timezone.utc)


class DeclaredStampingSourceDriver(StampingSourceDriver):
    """The same system, with the stamped field declared: SCH-09 leaves it out and says so."""

    value_limits: ClassVar[Sequence[Limit]] = (
        Limit.server_assigned("created", "the system stamps each row it writes"),
    )
