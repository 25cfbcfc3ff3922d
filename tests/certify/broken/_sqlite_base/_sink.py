"""SqliteSinkConnector: records become rows of SQLite tables (as Confluent's JDBC sink).

Every ``put`` is written in one transaction and committed before it returns, so what the
framework commits as consumer offsets (after the default ``pre_commit``/``flush``) is always
durable. In ``upsert`` mode a redelivered record overwrites its own row, which makes the results
exactly-once. The sink needs record schemas: each value schema is checked against the table
(columns created or added when allowed) before any row is written, because SQLite itself would
store a value of any type in any column.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typing_extensions import override

from cdk import (
    AbstractConfig,
    Config,
    ConfigDef,
    ConfigException,
    ConnectException,
    DataException,
    RetriableException,
    Schema,
    SchemaType,
    SinkConnector,
    SinkRecord,
    SinkTask,
    Struct,
    TopicPartition,
)
from tests.certify.broken._sqlite_base._config import (
    AUTO_CREATE,
    AUTO_EVOLVE,
    BATCH_SIZE,
    CONNECTION_URL,
    DELETE_ENABLED,
    INSERT_MODE,
    PK_FIELDS,
    PK_MODE,
    RETRY_BACKOFF_MS,
    SINK_CONFIG_DEF,
    TABLE_NAME_FORMAT,
    VERSION,
    add_problems,
    connect,
    database_path,
    quote,
    sink_config_problems,
    translate_error,
)
from tests.certify.broken._sqlite_base._types import (
    ColumnType,
    column_type,
    column_type_for,
    describe_schema,
)

__all__ = ["SqliteSinkConnector", "SqliteSinkTask"]

log = logging.getLogger(__name__)

_SCHEMAS_HINT = (
    "the SQLite sink needs records with a schema: use a converter that carries one, e.g. "
    "value.converter=org.apache.kafka.connect.json.JsonConverter with "
    "value.converter.schemas.enable=true, or the AvroConverter"
)


def _parse(props: dict[str, str]) -> AbstractConfig:
    """The parsed sink configuration; ConfigException for a bad key or a bad combination."""
    config = AbstractConfig(SINK_CONFIG_DEF, props)
    for key, message in sink_config_problems(config.values()):
        raise ConfigException(key, config.get(key), message)
    return config


class SqliteSinkConnector(SinkConnector):
    """Writes records to tables of one SQLite database; every task gets the same config."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    @override
    def version(self) -> str:
        return VERSION

    @override
    def config(self) -> ConfigDef:
        return SINK_CONFIG_DEF

    @override
    def validate(self, props: dict[str, str]) -> Config:
        config = super().validate(props)
        parsed = {v.name: v.value for v in config.config_values if not v.error_messages}
        add_problems(config.config_values, sink_config_problems(parsed))
        return config

    @override
    def start(self, props: dict[str, str]) -> None:
        _parse(props)
        self._props = dict(props)

    @override
    def task_class(self) -> type[SinkTask]:
        return SqliteSinkTask

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    @override
    def stop(self) -> None:
        """Nothing to release: the tasks own their connections."""

    @override
    def alter_offsets(
        self, props: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        # The offsets live in the consumer group only; the framework may change them freely.
        return True


# ---------------------------------------------------------------------------------------------
# What a task knows about a table, and how it writes one record schema into it.


@dataclass(frozen=True)
class _Column:
    name: str
    declared: str
    type: ColumnType | None
    not_null: bool
    has_default: bool
    pk: int


@dataclass(frozen=True)
class _Field:
    """Where a column's value comes from: the key itself, a key field or a value field."""

    source: str  # "key", "key_field" or "value"
    name: str
    schema: Schema


@dataclass(frozen=True)
class _Plan:
    """The checked SQL and parameter extraction for one (table, key schema, value schema)."""

    table: str
    sql: str
    columns: tuple[tuple[_Field, _Column, ColumnType], ...]

    def params(self, record: SinkRecord) -> tuple[Any, ...]:
        """The statement parameters of ``record``; DataException for a value it cannot store."""
        values = []
        for field, column, ctype in self.columns:
            value = _extract(record, field)
            if value is None and (column.not_null or column.pk):
                raise DataException(
                    f"{_coordinates(record)}: field {field.name!r} is null but column "
                    f"{column.name!r} of table {self.table!r} is NOT NULL or part of the primary "
                    "key",
                    field=field.name,
                )
            try:
                values.append(ctype.to_sqlite(value))
            except (TypeError, ValueError, AttributeError) as exc:
                raise DataException(
                    f"{_coordinates(record)}: field {field.name!r} cannot be stored in column "
                    f"{column.name!r} ({ctype}) of table {self.table!r}: {exc}",
                    field=field.name,
                ) from exc
        return tuple(values)


def _extract(record: SinkRecord, field: _Field) -> Any:
    if field.source == "key":
        return record.key
    container = record.key if field.source == "key_field" else record.value
    if container is None:
        return None
    if not isinstance(container, Struct):
        raise DataException(
            f"{_coordinates(record)}: expected a Struct {field.source.split('_')[0]}, got "
            f"{type(container).__name__}",
            field=field.name,
        )
    return container.get(field.name)


def _coordinates(record: SinkRecord) -> str:
    return (
        f"Record at topic {record.topic!r} partition {record.kafka_partition} "
        f"offset {record.kafka_offset}"
    )


class SqliteSinkTask(SinkTask):
    """Writes each batch in one transaction: all of it, or (on any error) none of it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._path = Path()
        self._plans: dict[tuple[str, Schema | None, Schema | None], _Plan] = {}
        self._table = ""

    @override
    def version(self) -> str:
        return VERSION

    @override
    def start(self, props: dict[str, str]) -> None:
        config = _parse(props)
        self._path = database_path(config.get_string(CONNECTION_URL))
        self._table_format = config.get_string(TABLE_NAME_FORMAT)
        self._auto_create = config.get_boolean(AUTO_CREATE)
        self._auto_evolve = config.get_boolean(AUTO_EVOLVE)
        self._upsert = config.get_string(INSERT_MODE).lower() == "upsert"
        self._pk_mode = config.get_string(PK_MODE).lower()
        self._pk_fields = [str(f) for f in config.get_list(PK_FIELDS)]
        self._batch_size = config.get_int(BATCH_SIZE)
        self._delete_enabled = config.get_boolean(DELETE_ENABLED)
        self._retry_backoff_ms = config.get_int(RETRY_BACKOFF_MS)
        try:
            connection = connect(self._path, create=True)
        except sqlite3.Error as exc:
            raise translate_error(exc, "opening the database", self._path) from exc
        with self._lock:
            self._connection = connection

    # -- writing ----------------------------------------------------------------------------------
    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        with self._lock:
            connection = self._connection
            if connection is None:
                raise ConnectException("SqliteSinkTask.put() called on a stopped task")
            tables = dict.fromkeys(quote(self._table_name(r.topic)) for r in records)
            self._table = ", ".join(tables)  # narrowed to one table while writing
            try:
                connection.execute("BEGIN IMMEDIATE")  # take the write lock up front
                try:
                    self._write(connection, records)
                    connection.execute("COMMIT")  # durable before put returns
                except BaseException:
                    self._rollback(connection)
                    raise
            except sqlite3.Error as exc:
                action = f"writing to table {self._table}"
                error = translate_error(exc, action, self._path)
                if isinstance(error, RetriableException):
                    self.context.timeout(self._retry_backoff_ms)
                raise error from exc

    def _table_name(self, topic: str) -> str:
        return self._table_format.replace("${topic}", topic)

    def _rollback(self, connection: sqlite3.Connection) -> None:
        # DDL of this transaction is rolled back too: forget the plans that relied on it.
        self._plans.clear()
        if connection.in_transaction:
            try:
                connection.execute("ROLLBACK")
            except sqlite3.Error as exc:
                log.warning("Rolling back a transaction on %s failed: %s", self._path, exc)

    def _write(self, connection: sqlite3.Connection, records: Sequence[SinkRecord]) -> None:
        plan: _Plan | None = None
        rows: list[tuple[Any, ...]] = []

        def flush() -> None:
            if plan is not None and rows:
                self._table = quote(plan.table)
                connection.executemany(plan.sql, rows)
            rows.clear()

        for record in records:
            table = self._table_name(record.topic)
            self._table = quote(table)
            if record.value is None:
                flush()
                self._delete(connection, table, record)
                continue
            current = self._plan(connection, table, record)
            if current is not plan:
                flush()
                plan = current
            rows.append(current.params(record))
            if len(rows) >= self._batch_size:
                flush()
        flush()

    def _plan(self, connection: sqlite3.Connection, table: str, record: SinkRecord) -> _Plan:
        schema = record.value_schema
        if schema is None:
            raise DataException(
                f"{_coordinates(record)} has no value schema (a schemaless "
                f"{type(record.value).__name__}): {_SCHEMAS_HINT}"
            )
        if schema.type is not SchemaType.STRUCT or not isinstance(record.value, Struct):
            raise DataException(
                f"{_coordinates(record)} has a {describe_schema(schema)} value; the SQLite sink "
                "writes STRUCT values (one field per column)"
            )
        key_schema = record.key_schema if self._pk_mode == "record_key" else None
        cache_key = (table, key_schema, schema)
        plan = self._plans.get(cache_key)
        if plan is None:
            try:
                plan = self._build_plan(connection, table, record)
            except DataException as exc:
                raise DataException(f"{_coordinates(record)}: {exc}", field=exc.field) from exc
            self._plans[cache_key] = plan
        return plan

    # -- schema checks --------------------------------------------------------------------------
    def _key_fields(self, record: SinkRecord) -> list[_Field]:
        """The primary key fields of a record (empty when pk.mode=none)."""
        if self._pk_mode == "record_value":
            schema = record.value_schema
            assert schema is not None
            names = self._pk_fields or [f.name for f in schema.fields]
            fields = []
            for name in names:
                found = schema.field(name)
                if found is None:
                    raise DataException(
                        f"pk.fields names {name!r}, but the value schema has no such field "
                        f"(fields: {[f.name for f in schema.fields]})",
                        field=name,
                    )
                fields.append(_Field("value", found.name, found.schema))
            return fields
        if self._pk_mode == "record_key":
            key_schema = record.key_schema
            if key_schema is None:
                raise DataException(
                    "pk.mode=record_key needs record keys with a schema, and this key has none "
                    "(use a key converter that carries schemas)"
                )
            if key_schema.type is SchemaType.STRUCT:
                names = self._pk_fields or [f.name for f in key_schema.fields]
                fields = []
                for name in names:
                    found = key_schema.field(name)
                    if found is None:
                        raise DataException(
                            f"pk.fields names {name!r}, but the key schema has no such field",
                            field=name,
                        )
                    fields.append(_Field("key_field", found.name, found.schema))
                return fields
            if len(self._pk_fields) != 1:
                raise DataException(
                    f"a {describe_schema(key_schema)} key is stored in one column: set pk.fields "
                    f"to one column name (it is {self._pk_fields})"
                )
            return [_Field("key", self._pk_fields[0], key_schema)]
        return []

    def _build_plan(self, connection: sqlite3.Connection, table: str, record: SinkRecord) -> _Plan:
        schema = record.value_schema
        assert schema is not None
        keys = self._key_fields(record)
        key_names = {f.name.casefold() for f in keys}
        fields = keys + [
            _Field("value", f.name, f.schema)
            for f in schema.fields
            if f.name.casefold() not in key_names
        ]
        for field in fields:
            if column_type_for(field.schema) is None:
                raise DataException(
                    f"field {field.name!r} has type {describe_schema(field.schema)}, which has no "
                    "SQLite column type (flatten nested values first, e.g. with the Flatten "
                    "transformation)",
                    field=field.name,
                )
        columns = self._columns(connection, table)
        if not columns:
            columns = self._create(connection, table, keys, fields)
        missing = [f for f in fields if f.name.casefold() not in columns]
        if missing:
            columns = self._evolve(connection, table, missing, key_names)
        plan_columns = []
        for field in fields:
            column = columns[field.name.casefold()]
            ctype = column.type
            if ctype is None or not ctype.accepts(field.schema):
                got = describe_schema(field.schema)
                raise DataException(
                    f"field {field.name!r} has type {got}, but column {column.name!r} of table "
                    f"{table!r} in database {self._path} is declared {column.declared!r}: "
                    f"expected {ctype or 'a type the sink supports'}, got {got}",
                    field=field.name,
                )
            plan_columns.append((field, column, ctype))
        covered = {f.name.casefold() for f in fields}
        for name, column in columns.items():
            rowid = column.pk and column.type is not None and column.declared.upper() == "INTEGER"
            if name not in covered and column.not_null and not column.has_default and not rowid:
                raise DataException(
                    f"column {column.name!r} of table {table!r} is NOT NULL, but the record "
                    f"schema has no field {column.name!r} (a required field is missing)",
                    field=column.name,
                )
        return _Plan(table, self._sql(connection, table, plan_columns, keys), tuple(plan_columns))

    def _sql(
        self,
        connection: sqlite3.Connection,
        table: str,
        columns: list[tuple[_Field, _Column, ColumnType]],
        keys: list[_Field],
    ) -> str:
        names = [quote(column.name) for _, column, _ in columns]
        sql = (
            f"INSERT INTO {quote(table)} ({', '.join(names)}) "
            f"VALUES ({', '.join('?' for _ in names)})"
        )
        if not self._upsert:
            return sql
        key_columns = [column.name for field, column, _ in columns if field in keys]
        self._check_unique(connection, table, key_columns)
        updates = [
            f"{quote(column.name)} = excluded.{quote(column.name)}"
            for field, column, _ in columns
            if field not in keys
        ]
        target = ", ".join(quote(name) for name in key_columns)
        action = f"DO UPDATE SET {', '.join(updates)}" if updates else "DO NOTHING"
        return f"{sql} ON CONFLICT ({target}) {action}"

    def _check_unique(
        self, connection: sqlite3.Connection, table: str, key_columns: list[str]
    ) -> None:
        """Upserts need a PRIMARY KEY or UNIQUE index on exactly the key columns."""
        wanted = {name.casefold() for name in key_columns}
        for index in connection.execute(f"PRAGMA index_list({quote(table)})").fetchall():
            if not index[2]:  # not unique
                continue
            info = connection.execute(f"PRAGMA index_info({quote(index[1])})").fetchall()
            if {str(row[2]).casefold() for row in info} == wanted:
                return
        pk = {c.name.casefold() for c in self._columns(connection, table).values() if c.pk}
        if pk == wanted:
            return  # an INTEGER PRIMARY KEY has no index of its own
        raise ConnectException(
            f"insert.mode=upsert on table {table!r} in database {self._path} needs a PRIMARY KEY "
            f"or UNIQUE index on {sorted(key_columns)}, but its primary key is {sorted(pk)}; "
            "check pk.mode and pk.fields"
        )

    def _columns(self, connection: sqlite3.Connection, table: str) -> dict[str, _Column]:
        """The table's columns by case-folded name (empty when the table does not exist)."""
        rows = connection.execute(f"PRAGMA table_info({quote(table)})").fetchall()
        return {
            str(name).casefold(): _Column(
                str(name),
                str(declared or ""),
                column_type(declared or ""),
                bool(not_null),
                default is not None,
                int(pk),
            )
            for _, name, declared, not_null, default, pk in rows
        }

    def _create(
        self,
        connection: sqlite3.Connection,
        table: str,
        keys: list[_Field],
        fields: list[_Field],
    ) -> dict[str, _Column]:
        if not self._auto_create:
            raise ConnectException(
                f"Table {table!r} does not exist in database {self._path} and auto.create=false"
            )
        definitions = []
        for field in fields:
            ctype = column_type_for(field.schema)
            assert ctype is not None
            not_null = " NOT NULL" if field in keys or not field.schema.optional else ""
            definitions.append(f"{quote(field.name)} {ctype.declared()}{not_null}")
        if keys:
            definitions.append(f"PRIMARY KEY ({', '.join(quote(f.name) for f in keys)})")
        log.info("Creating table %s in %s", table, self._path)
        connection.execute(f"CREATE TABLE {quote(table)} ({', '.join(definitions)})")
        return self._columns(connection, table)

    def _evolve(
        self,
        connection: sqlite3.Connection,
        table: str,
        missing: list[_Field],
        key_names: set[str],
    ) -> dict[str, _Column]:
        for field in missing:
            if not self._auto_evolve:
                raise DataException(
                    f"table {table!r} has no column for field {field.name!r} and "
                    "auto.evolve=false (add the column, or set auto.evolve=true)",
                    field=field.name,
                )
            if field.name.casefold() in key_names:
                raise DataException(
                    f"table {table!r} has no column for the primary key field {field.name!r}; "
                    "a primary key cannot be added to an existing table",
                    field=field.name,
                )
            if not field.schema.optional:
                raise DataException(
                    f"field {field.name!r} is required (not optional), so it cannot be added "
                    f"to the existing table {table!r}: only optional fields can be",
                    field=field.name,
                )
            ctype = column_type_for(field.schema)
            assert ctype is not None
            log.info("Adding column %s %s to table %s", field.name, ctype.declared(), table)
            connection.execute(
                f"ALTER TABLE {quote(table)} ADD COLUMN {quote(field.name)} {ctype.declared()}"
            )
        return self._columns(connection, table)

    # -- deletes ----------------------------------------------------------------------------------
    def _delete(self, connection: sqlite3.Connection, table: str, record: SinkRecord) -> None:
        if not self._delete_enabled:
            raise DataException(
                f"{_coordinates(record)} has a null value (a tombstone). Set delete.enabled=true "
                "(with pk.mode=record_key) to delete rows, or drop tombstones before the sink"
            )
        try:
            keys = self._key_fields(record)
        except DataException as exc:
            raise DataException(f"{_coordinates(record)}: {exc}", field=exc.field) from exc
        columns = self._columns(connection, table)
        if not columns:
            return  # no table, no row to delete
        conditions, params = [], []
        for field in keys:
            column = columns.get(field.name.casefold())
            ctype = column.type if column else None
            if column is None or ctype is None or not ctype.accepts(field.schema):
                raise DataException(
                    f"{_coordinates(record)}: key field {field.name!r} "
                    f"({describe_schema(field.schema)}) does not match a column of table "
                    f"{table!r}",
                    field=field.name,
                )
            conditions.append(f"{quote(column.name)} = ?")
            params.append(ctype.to_sqlite(_extract(record, field)))
        connection.execute(
            f"DELETE FROM {quote(table)} WHERE {' AND '.join(conditions)}", tuple(params)
        )

    @override
    def stop(self) -> None:
        with self._lock:  # waits for a running put() to finish its transaction
            if self._connection is not None:
                self._connection.close()
                self._connection = None
