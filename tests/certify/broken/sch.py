"""Connectors with schema defects, one per SCH check, and their drivers.

Each is a small subclass of a SQLite reference connector that gets one thing about schemas
wrong; its driver is the reference driver pointed at it.
"""

from __future__ import annotations

import dataclasses
import decimal
import re
import sqlite3
from typing import Any, ClassVar

from typing_extensions import override

from cdk import DataException, Schema, SinkRecord, SinkTask, SourceRecord, SourceTask, Struct
from reference_connectors.sqlite import (
    SqliteSinkConnector,
    SqliteSinkTask,
    SqliteSourceConnector,
    SqliteSourceTask,
)
from reference_connectors.sqlite._types import ColumnType, Kind
from reference_connectors.sqlite.certify import SqliteSinkDriver, SqliteSourceDriver

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
