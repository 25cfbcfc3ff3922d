"""How the sink turns a record into a statement: tables, columns, DDL and parameters.

A :class:`Plan` is built once per (table, key schema, value schema) and cached: which columns
the record fills and from where (the Kafka coordinates, the key, a key field or a value field),
the statement, and a converter per column. Building it checks the table against the schema:
the table is created when it is missing (``auto.create``), a column is added for a new optional
or defaulted field (``auto.evolve``), and a field whose type does not fit its column, a required
field the table lacks, or a missing table without ``auto.create`` raise a
:class:`~cdk.DataException` naming the field and the table. DDL runs in its own transaction,
before the rows are written (MariaDB/MySQL commit DDL implicitly, which would otherwise commit
rows without their offsets).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cdk import DataException, Schema, SchemaType, SinkRecord, Struct
from reference_connectors.sql._dialects import ColumnDef, Dialect
from reference_connectors.sql._reflect import _catalog_type, default_schema
from reference_connectors.sql._sink_config import KAFKA_PK_FIELDS
from reference_connectors.sql._types_in import (
    Kind,
    SqlType,
    from_declared_sqlite,
    from_reflected,
    quiet_reflection,
)
from reference_connectors.sql._types_out import (
    _identity,
    accepts,
    column_type,
    default_literal,
    describe,
    to_parameter,
)

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["Plan", "PlanBuilder", "WriteSettings", "coordinates"]

log = logging.getLogger(__name__)

_KAFKA_SCHEMAS = (Schema.STRING_SCHEMA, Schema.INT32_SCHEMA, Schema.INT64_SCHEMA)


def coordinates(record: SinkRecord) -> str:
    """A record's place, for messages."""
    return (
        f"record at topic {record.topic!r} partition {record.kafka_partition} "
        f"offset {record.kafka_offset}"
    )


@dataclass(frozen=True)
class WriteSettings:
    """The sink keys that shape statements."""

    insert_mode: str
    pk_mode: str
    pk_fields: tuple[str, ...]
    fields_whitelist: frozenset[str]
    auto_create: bool
    auto_evolve: bool
    timezone: dt.tzinfo


@dataclass(frozen=True)
class _Source:
    """A column, and where its value comes from.

    ``where`` is ``topic``, ``partition``, ``offset``, ``key``, ``key_field`` or ``value``.
    """

    where: str
    column: str
    schema: Schema
    field: Any = None  # the struct Field, for key_field and value


@dataclass(frozen=True)
class _Column:
    name: str
    sql_type: SqlType | None
    type_text: str


@dataclass(frozen=True)
class Plan:
    """The statement for one (table, key schema, value schema), and its parameters.

    Attributes:
        table: the table.
        sql: the statement (None: nothing to write, e.g. an update without non-key columns).
        getters: one function per statement parameter, from a record to the driver's value.
    """

    table: str
    sql: str | None
    getters: tuple[Callable[[SinkRecord], Any], ...]

    def params(self, record: SinkRecord) -> tuple[Any, ...]:
        """The statement's parameters for ``record``."""
        return tuple([get(record) for get in self.getters])


def _getter(source: _Source, convert: Callable[[Any], Any]) -> Callable[[SinkRecord], Any]:
    where, name = source.where, source.column
    if where == "value":
        if convert is _identity:
            return lambda r: r.value.get(name)
        return lambda r: convert(r.value.get(name))
    if where == "key_field":
        return lambda r: convert(r.key.get(name))
    if where == "key":
        return lambda r: convert(r.key)
    if where == "topic":
        return lambda r: r.topic
    if where == "partition":
        return lambda r: r.kafka_partition
    return lambda r: r.kafka_offset


class PlanBuilder:
    """Builds (and caches) the plans of one task."""

    def __init__(self, engine: sa.Engine, dialect: Dialect, settings: WriteSettings) -> None:
        self._engine = engine
        self._dialect = dialect
        self._settings = settings
        self._plans: dict[tuple[Any, ...], Plan] = {}
        self._tables: dict[str, dict[str, _Column]] = {}

    def forget(self) -> None:
        """Drop the cached plans and tables (after DDL by someone else, or a failure)."""
        self._plans.clear()
        self._tables.clear()

    # -- plans --------------------------------------------------------------------------------
    def plan(self, table: str, record: SinkRecord) -> Plan:
        """The plan that writes ``record`` (a non-null value) to ``table``.

        Raises:
            DataException: the record cannot be written to the table (see the module doc).
        """
        keyed = self._settings.pk_mode == "record_key"
        cache_key = (table, record.key_schema if keyed else None, record.value_schema)
        plan = self._plans.get(cache_key)
        if plan is None:
            plan = self._build(table, record)
            self._plans[cache_key] = plan
        return plan

    def delete_plan(self, table: str, record: SinkRecord) -> Plan | None:
        """The DELETE of a tombstone's row (None when the table does not exist)."""
        cache_key = ("delete", table, record.key_schema)
        plan = self._plans.get(cache_key)
        if plan is None:
            keys = self._key_sources(record)
            columns = self._columns(table)
            if columns is None:
                return None
            getters = self._converters(table, keys, columns)
            plan = Plan(table, self._dialect.delete(table, [k.column for k in keys]), getters)
            self._plans[cache_key] = plan
        return plan

    def _build(self, table: str, record: SinkRecord) -> Plan:
        schema = record.value_schema
        if schema is None or schema.type is not SchemaType.STRUCT:
            what = "no schema" if schema is None else f"a {describe(schema)} schema"
            raise DataException(
                f"the value has {what}; the SQL sink writes STRUCT values with a schema (one "
                "field per column): use a converter that carries schemas (JsonConverter with "
                "schemas.enable=true, the AvroConverter)"
            )
        if not isinstance(record.value, Struct):
            raise DataException(f"the value is a {type(record.value).__name__}, not a Struct")
        keys = self._key_sources(record)
        key_names = {k.column for k in keys}
        whitelist = self._settings.fields_whitelist
        others = [
            _Source("value", f.name, f.schema, f)
            for f in schema.fields
            if f.name not in key_names and (not whitelist or f.name in whitelist)
        ]
        columns = self._columns(table)
        if columns is None:
            columns = self._create(table, keys, others)
        missing = [s for s in [*keys, *others] if s.column.casefold() not in columns]
        if missing:
            columns = self._evolve(table, missing, key_names)
        mode = self._settings.insert_mode
        key_cols = [columns[k.column.casefold()].name for k in keys]
        other_cols = [columns[s.column.casefold()].name for s in others]
        if mode == "update":
            sql = self._dialect.update(table, key_cols, other_cols) if other_cols else None
            order = [*others, *keys]
        elif mode == "upsert":
            sql = self._dialect.upsert(table, key_cols, other_cols)
            order = [*keys, *others]
        else:
            sql = self._dialect.insert(table, [*key_cols, *other_cols])
            order = [*keys, *others]
        return Plan(table, sql, self._converters(table, order, columns))

    def _converters(
        self, table: str, sources: list[_Source], columns: dict[str, _Column]
    ) -> tuple[Callable[[SinkRecord], Any], ...]:
        getters = []
        for source in sources:
            column = columns[source.column.casefold()]
            if column.sql_type is None:
                raise DataException(
                    f"column {column.name!r} of table {table!r} has the type {column.type_text}, "
                    f"which the sink cannot write (field {source.column!r} is "
                    f"{describe(source.schema)})",
                    field=source.column,
                )
            if not accepts(column.sql_type, source.schema):
                raise DataException(
                    f"field {source.column!r} is {describe(source.schema)}, but column "
                    f"{column.name!r} of table {table!r} is {column.type_text} "
                    f"({column.sql_type}): an incompatible schema change",
                    field=source.column,
                )
            convert = to_parameter(
                source.schema, self._dialect.name, self._settings.timezone, column.sql_type
            )
            getters.append(_getter(source, convert))
        return tuple(getters)

    # -- keys ---------------------------------------------------------------------------------
    def _key_sources(self, record: SinkRecord) -> list[_Source]:
        mode, names = self._settings.pk_mode, list(self._settings.pk_fields)
        if mode == "none":
            return []
        if mode == "kafka":
            columns = names or list(KAFKA_PK_FIELDS)
            return [
                _Source(where, column, schema)
                for where, column, schema in zip(
                    ("topic", "partition", "offset"), columns, _KAFKA_SCHEMAS, strict=True
                )
            ]
        if mode == "record_value":
            schema = record.value_schema
            assert schema is not None
            return [_Source("value", f.name, f.schema, f) for f in _fields(schema, names, "value")]
        schema = record.key_schema
        if schema is None:
            raise DataException(
                "pk.mode=record_key needs record keys with a schema, and this key has none (use "
                "a key converter that carries schemas)"
            )
        if schema.type is SchemaType.STRUCT:
            if not isinstance(record.key, Struct):
                raise DataException(f"the key is a {type(record.key).__name__}, not a Struct")
            fields = _fields(schema, names, "key")
            return [_Source("key_field", f.name, f.schema, f) for f in fields]
        if len(names) != 1:
            raise DataException(
                f"the record key is a primitive ({describe(schema)}), stored in one column: set "
                f"pk.fields to exactly one column name (it is {names or 'empty'})"
            )
        if record.key is None:
            raise DataException("the record key is null, and pk.mode=record_key needs one")
        return [_Source("key", names[0], schema)]

    # -- tables -------------------------------------------------------------------------------
    def _columns(self, table: str) -> dict[str, _Column] | None:
        """The table's columns by case-folded name; None when it does not exist."""
        if table not in self._tables:
            with self._engine.connect() as connection:
                found = _reflect(connection, table)
            if found is None:
                return None
            self._tables[table] = found
        return self._tables[table]

    def _create(self, table: str, keys: list[_Source], others: list[_Source]) -> dict[str, _Column]:
        if not self._settings.auto_create:
            raise DataException(
                f"table {table!r} does not exist and auto.create=false (create the table, or "
                "set auto.create=true)"
            )
        dialect = self._dialect.name
        definitions = [
            ColumnDef(k.column, column_type(k.schema, dialect, key=True), not_null=True)
            for k in keys
        ]
        for source in others:
            try:
                ddl_type = column_type(source.schema, dialect)
            except DataException as exc:
                raise DataException(f"field {source.column!r}: {exc}", field=source.column) from exc
            definitions.append(
                ColumnDef(
                    source.column,
                    ddl_type,
                    not_null=not source.schema.optional,
                    default=default_literal(source.schema, dialect),
                )
            )
        sql = self._dialect.create_table(table, definitions, [k.column for k in keys])
        log.info("Creating table %s: %s", table, sql)
        self._ddl(table, sql, already=lambda columns: columns is not None)
        created = self._columns(table)
        assert created is not None
        return created

    def _evolve(
        self, table: str, missing: list[_Source], key_names: set[str]
    ) -> dict[str, _Column]:
        dialect = self._dialect.name
        for source in missing:
            name = source.column
            if not self._settings.auto_evolve:
                raise DataException(
                    f"table {table!r} has no column for field {name!r} and auto.evolve=false "
                    "(add the column, or set auto.evolve=true)",
                    field=name,
                )
            if name in key_names:
                raise DataException(
                    f"table {table!r} has no column for the primary key field {name!r}; a "
                    "primary key column cannot be added to an existing table",
                    field=name,
                )
            default = default_literal(source.schema, dialect)
            if not source.schema.optional and default is None:
                raise DataException(
                    f"field {name!r} is required and has no default, so it cannot be added to "
                    f"table {table!r} (existing rows would have no value): make it optional "
                    "or give it a default",
                    field=name,
                )
            ddl_type = column_type(source.schema, dialect)
            sql = self._dialect.add_column(table, ColumnDef(name, ddl_type, default=default))
            log.info("Adding a column to table %s: %s", table, sql)
            self._ddl(table, sql, already=_has_column(name))
        columns = self._columns(table)
        assert columns is not None
        return columns

    def _ddl(
        self, table: str, sql: str, already: Callable[[dict[str, _Column] | None], bool]
    ) -> None:
        """Run DDL in its own transaction; fine when another task did the same meanwhile."""
        import sqlalchemy as sa

        self._tables.pop(table, None)
        with self._engine.connect() as connection:
            try:
                connection.exec_driver_sql(sql)
                connection.commit()
            except sa.exc.SQLAlchemyError:
                connection.rollback()
                if not already(_reflect(connection, table)):
                    raise


def _has_column(name: str) -> Callable[[dict[str, _Column] | None], bool]:
    return lambda columns: columns is not None and name.casefold() in columns


def _fields(schema: Schema, names: list[str], what: str) -> list[Any]:
    if not names:
        return list(schema.fields)
    fields = []
    for name in names:
        found = schema.field(name)
        if found is None:
            raise DataException(
                f"pk.fields names {name!r}, but the {what} schema has no such field (fields: "
                f"{[f.name for f in schema.fields]})",
                field=name,
            )
        fields.append(found)
    return fields


def _reflect(connection: sa.Connection, table: str) -> dict[str, _Column] | None:
    """The columns of ``table`` by case-folded name; None when there is no such table."""
    import sqlalchemy as sa

    dialect = connection.dialect.name
    if dialect == "sqlite":
        quoted = connection.dialect.identifier_preparer.quote_identifier(table)
        rows = connection.exec_driver_sql(f"PRAGMA table_info({quoted})").fetchall()
        if not rows:
            return None
        return {
            str(row[1]).casefold(): _Column(
                str(row[1]), from_declared_sqlite(str(row[2] or "")), str(row[2] or "(no type)")
            )
            for row in rows
        }
    inspector = sa.inspect(connection)
    if not inspector.has_table(table):
        return None
    family = "mysql" if dialect in ("mysql", "mariadb") else "postgresql"
    columns = {}
    with quiet_reflection():
        reflected = inspector.get_columns(table)
    for info in reflected:
        sa_type = info["type"]
        try:
            type_text = str(sa_type.compile(dialect=connection.dialect))
        except sa.exc.CompileError:
            type_text = type(sa_type).__name__
        name = str(info["name"])
        if isinstance(sa_type, sa.types.NullType):  # a type SQLAlchemy does not know
            schema = default_schema(connection, None)
            type_text = _catalog_type(connection, table, name, schema) or type_text
        sql_type = from_reflected(family, sa_type)
        numeric = isinstance(sa_type, sa.Numeric) and not isinstance(sa_type, sa.Float)
        if sql_type is None and numeric and not getattr(sa_type, "precision", None):
            sql_type = SqlType(Kind.DECIMAL)  # NUMERIC without a precision: any decimal
        columns[name.casefold()] = _Column(name, sql_type, type_text)
    return columns
