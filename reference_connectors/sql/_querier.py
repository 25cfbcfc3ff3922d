"""One source partition (a table, or the custom query): its query, schema and offset.

A querier reads its partition in *rounds*, as the JDBC source does: a round runs the mode's
query once, and its rows are handed out ``batch.max.rows`` per poll (the result is streamed
with a server-side cursor); when the result is exhausted the round ends and its transaction is
closed, and the next round starts ``poll.interval.ms`` later. The columns are read again at the
start of every round, so a table changed with ``ALTER TABLE`` gets a new Connect schema (with
the next version) from the next round on.

The queries, with ``ts`` the timestamp column (``COALESCE`` of several) and ``inc`` the
incrementing column, ``end`` the database's current time less ``timestamp.delay.interval.ms``:

- bulk: ``SELECT cols FROM t``
- incrementing: ``... WHERE inc > :last ORDER BY inc``
- timestamp: ``... WHERE ts > :last AND ts < :end ORDER BY ts``
- timestamp+incrementing: ``... WHERE ts < :end AND ((ts = :last_ts AND inc > :last_inc) OR
  ts > :last_ts) ORDER BY ts, inc``
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cdk import ConnectException, DataException, Schema, SchemaBuilder, SourceRecord, Struct
from reference_connectors.sql._cursors import close_cursor, execute, mysql_binary_flags
from reference_connectors.sql._reflect import Column, quote, reflect_columns, select_column
from reference_connectors.sql._types_in import (
    Kind,
    SqlType,
    UnsupportedColumnType,
    from_value,
)
from reference_connectors.sql._types_query import from_description

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = [
    "INCREMENTING_FIELD",
    "QUERY_FIELD",
    "TABLE_FIELD",
    "QuerierSettings",
    "TableGone",
    "TableQuerier",
    "parse_offset",
]

log = logging.getLogger(__name__)

TABLE_FIELD = "table"
QUERY_FIELD = "query"
INCREMENTING_FIELD = "incrementing"
TIMESTAMP_FIELD = "timestamp"
TIMESTAMP_NANOS_FIELD = "timestamp_nanos"
_UTC = dt.timezone.utc
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=_UTC)
_SQLITE_TS = "%Y-%m-%d %H:%M:%f"
_TIMESTAMP = SqlType(Kind.TIMESTAMP)


@dataclass(frozen=True)
class QuerierSettings:
    """The keys every querier of a task shares."""

    mode: str
    incrementing_column: str
    timestamp_columns: tuple[str, ...]
    timestamp_initial: int | None
    validate_non_null: bool
    numeric_mapping: str
    timezone: dt.tzinfo
    delay_ms: int
    batch_max_rows: int
    schema: str | None
    key_by_incrementing: bool = False

    @property
    def incrementing(self) -> bool:
        return self.mode.endswith("incrementing")

    @property
    def timestamp(self) -> bool:
        return self.mode.startswith("timestamp")


@dataclass
class _Offset:
    incrementing: int | None = None
    timestamp: dt.datetime | None = None  # aware, UTC

    def to_dict(self, mode: str) -> dict[str, Any] | None:
        if mode == "bulk":
            return None
        offset: dict[str, Any] = {}
        if mode.startswith("timestamp") and self.timestamp is not None:
            delta = self.timestamp - _EPOCH
            millis = delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000
            offset[TIMESTAMP_FIELD] = millis
            offset[TIMESTAMP_NANOS_FIELD] = self.timestamp.microsecond * 1000
        if mode.endswith("incrementing") and self.incrementing is not None:
            offset[INCREMENTING_FIELD] = self.incrementing
        return offset


def parse_offset(name: str, offset: Mapping[str, Any] | None) -> _Offset:
    """The position stored in ``offset`` (JDBC keys); ConnectException when malformed."""
    if not offset:
        return _Offset()
    result = _Offset()
    inc = offset.get(INCREMENTING_FIELD)
    if inc is not None:
        if not isinstance(inc, int) or isinstance(inc, bool):
            raise ConnectException(f"Offset {dict(offset)} of {name}: incrementing must be an int")
        result.incrementing = inc
    millis = offset.get(TIMESTAMP_FIELD)
    if millis is not None:
        nanos = offset.get(TIMESTAMP_NANOS_FIELD)
        if not isinstance(millis, int) or (nanos is not None and not isinstance(nanos, int)):
            raise ConnectException(
                f"Offset {dict(offset)} of {name}: timestamp (ms) and timestamp_nanos must be ints"
            )
        seconds, rest_ms = divmod(millis, 1000)
        micros = nanos // 1000 if nanos is not None else rest_ms * 1000
        result.timestamp = _EPOCH + dt.timedelta(seconds=seconds, microseconds=micros)
    return result


@dataclass
class _Shape:
    """The columns of the current schema, and how to turn a row into a Struct."""

    signature: tuple[Any, ...]
    schema: Schema
    converters: list[tuple[str, Callable[[Any], Any]]]
    inc_index: int = -1
    ts_indexes: list[int] = field(default_factory=list)
    functions: list[Callable[[Any], Any]] = field(init=False)  # the converters alone

    def __post_init__(self) -> None:
        self.functions = [convert for _, convert in self.converters]


class TableQuerier:
    """Reads one partition: a table (``table`` set) or the custom query (``query`` set)."""

    def __init__(
        self,
        settings: QuerierSettings,
        topic: str,
        *,
        table: str | None = None,
        query: str | None = None,
        offset: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.topic = topic
        self.table = table
        self.query = query
        self.name = f"table {table}" if table is not None else "the custom query"
        self.partition = {TABLE_FIELD: table} if table is not None else {QUERY_FIELD: QUERY_FIELD}
        self.offset = parse_offset(self.name, offset)
        self.next_round = 0.0  # time.monotonic() when the next round may start
        self.version = 0
        self._shape: _Shape | None = None
        self._cursor: Any = None  # the round's DB-API cursor (server-side on a server)
        self._inc_column = settings.incrementing_column

    @property
    def in_round(self) -> bool:
        return self._cursor is not None

    # ------------------------------------------------------------------ rounds
    def poll(self, connection: sa.Connection, poll_interval_s: float) -> list[SourceRecord]:
        """The next batch of rows; ends the round (and its transaction) when they run out."""
        if self._cursor is None:
            self._start_round(connection)
        assert self._cursor is not None
        rows = self._cursor.fetchmany(self.settings.batch_max_rows)
        if self._shape is None and rows:  # a SQLite query: typed from its first row
            self._shape = self._query_shape(rows[0])
        records = [self._record(row) for row in rows]
        if len(rows) < self.settings.batch_max_rows:
            self.end_round(connection)
            self.next_round = time.monotonic() + poll_interval_s
        return records

    def end_round(self, connection: sa.Connection | None) -> None:
        """Close the round's result and transaction.

        Args:
            connection: the connection to roll back; None after an error, when the connection
                is dropped: the result's cursor is then closed after its connection, so that a
                server-side cursor of a broken connection is released too.
        """
        cursor, self._cursor = self._cursor, None
        if cursor is None:
            return
        if connection is None:
            close_cursor(cursor, broken=True)
            return
        close_cursor(cursor, broken=False)
        if connection.in_transaction():
            connection.rollback()
        else:
            connection.connection.dbapi_connection.rollback()  # type: ignore[union-attr]

    def _start_round(self, connection: sa.Connection) -> None:

        if self.table is not None:
            self._refresh_table_shape(connection)
            assert self._shape is not None
            columns = ", ".join(
                select_column(connection, name, sql_type)
                for name, sql_type, _ in self._shape.signature
            )
            source = f"{quote(connection, self.table)}"
            if self.settings.schema and connection.dialect.name != "sqlite":
                source = f"{quote(connection, self.settings.schema)}.{source}"
            select = f"SELECT {columns} FROM {source}"
        else:
            select = f"SELECT * FROM ({self.query}) cdk_query"
        where, params = self._condition(connection)
        sql = f"{select}{where}"
        log.debug("%s: %s %s", self.name, sql, params)
        self._cursor = execute(connection, sql, params, self.settings.batch_max_rows)
        if self.table is None:
            self._check_query_shape(connection)

    # ------------------------------------------------------------------ conditions
    def _condition(self, connection: sa.Connection) -> tuple[str, dict[str, Any]]:
        settings = self.settings
        mode = settings.mode
        if mode == "bulk":
            return "", {}
        params: dict[str, Any] = {}
        inc = quote(connection, self._inc_column) if settings.incrementing else ""
        if mode == "incrementing":
            if self.offset.incrementing is None:
                return f" WHERE {inc} IS NOT NULL ORDER BY {inc} ASC", params
            params["last_inc"] = self.offset.incrementing
            return f" WHERE {inc} > :last_inc ORDER BY {inc} ASC", params
        ts = self._timestamp_expression(connection)
        params["end"] = self._bound(connection, self._end_time(connection))
        params["last_ts"] = self._bound(connection, self._last_time())
        if mode == "timestamp":
            return f" WHERE {ts} > :last_ts AND {ts} < :end ORDER BY {ts} ASC", params
        params["last_inc"] = (
            -(2**63) if self.offset.incrementing is None else self.offset.incrementing
        )
        if self.offset.timestamp is None:
            # No offset yet: every row up to the end, no row of the start time left out.
            del params["last_inc"]
            return (
                f" WHERE {ts} < :end AND {ts} >= :last_ts ORDER BY {ts}, {inc} ASC",
                params,
            )
        return (
            f" WHERE {ts} < :end AND (({ts} = :last_ts AND {inc} > :last_inc) OR "
            f"{ts} > :last_ts) ORDER BY {ts}, {inc} ASC",
            params,
        )

    def _timestamp_expression(self, connection: sa.Connection) -> str:
        columns = [quote(connection, c) for c in self.settings.timestamp_columns]
        expression = columns[0] if len(columns) == 1 else f"COALESCE({', '.join(columns)})"
        if connection.dialect.name == "sqlite":  # text timestamps compare as normalised text
            return f"strftime('{_SQLITE_TS}', {expression})"
        return expression

    def _last_time(self) -> dt.datetime:
        if self.offset.timestamp is not None:
            return self.offset.timestamp
        initial = self.settings.timestamp_initial
        if initial is None:
            return _EPOCH
        if initial == -1:
            return dt.datetime.now(_UTC)
        return _EPOCH + dt.timedelta(milliseconds=initial)

    def _end_time(self, connection: sa.Connection) -> dt.datetime:
        import sqlalchemy as sa

        name = connection.dialect.name
        if name == "postgresql":
            now = connection.execute(sa.text("SELECT CURRENT_TIMESTAMP")).scalar_one()
        elif name in ("mysql", "mariadb"):
            now = connection.execute(sa.text("SELECT UTC_TIMESTAMP(6)")).scalar_one()
            now = now.replace(tzinfo=_UTC)
        else:
            now = dt.datetime.now(_UTC)
        if now.tzinfo is None:
            now = now.replace(tzinfo=_UTC)
        result: dt.datetime = now - dt.timedelta(milliseconds=self.settings.delay_ms)
        return result

    def _bound(self, connection: sa.Connection, instant: dt.datetime) -> Any:
        """A time as a query parameter: naive, in ``db.timezone`` (text for SQLite)."""
        local = instant.astimezone(self.settings.timezone).replace(tzinfo=None)
        if connection.dialect.name == "sqlite":
            return local.strftime("%Y-%m-%d %H:%M:%S.") + f"{local.microsecond // 1000:03d}"
        return local

    # ------------------------------------------------------------------ schemas
    def _refresh_table_shape(self, connection: sa.Connection) -> None:
        assert self.table is not None
        columns = reflect_columns(connection, self.table, self.settings.schema)
        if not columns:
            raise TableGone(self.table)
        signature = tuple((c.name, c.sql_type, c.nullable) for c in columns)
        if self._shape is not None and self._shape.signature == signature:
            return
        self._shape = self._table_shape(columns, signature)
        log.info(
            "Schema of %s (version %d): %s",
            self.name,
            self.version,
            [f"{c.name} {c.type_text}" for c in columns],
        )

    def _table_shape(self, columns: list[Column], signature: tuple[Any, ...]) -> _Shape:
        assert self.table is not None
        settings = self.settings
        if settings.incrementing and not self._inc_column:
            auto = [c.name for c in columns if c.autoincrement]
            if len(auto) != 1:
                raise ConnectException(
                    f"Table {self.table} has {'no' if not auto else 'more than one'} "
                    "auto-increment column: set incrementing.column.name to its strictly "
                    "increasing integer column"
                )
            self._inc_column = auto[0]
        by_name = {c.name: c for c in columns}
        needed = []
        if settings.incrementing:
            needed.append(("incrementing.column.name", self._inc_column))
        if settings.timestamp:
            needed.extend(("timestamp.column.name", c) for c in settings.timestamp_columns)
        for key, name in needed:
            column = by_name.get(name)
            if column is None:
                raise ConnectException(
                    f"Table {self.table} has no column {name!r} ({key}); its columns are "
                    f"{sorted(by_name)}"
                )
            if key.startswith("timestamp") and column.sql_type.kind is not Kind.TIMESTAMP:
                raise ConnectException(
                    f"The timestamp column {self.table}.{name} is {column.type_text}, not a "
                    "timestamp column (timestamp.column.name)"
                )
            if key.startswith("incrementing") and not column.sql_type.is_integer:
                raise ConnectException(
                    f"The incrementing column {self.table}.{name} is {column.type_text}, not "
                    "an integer column (incrementing.column.name)"
                )
            if settings.validate_non_null and column.nullable:
                raise ConnectException(
                    f"Column {self.table}.{name} ({key}) is nullable: a row with NULL there "
                    "would never be copied. Declare it NOT NULL, or set validate.non.null=false"
                )
        builder = SchemaBuilder.struct().name(self.table)
        self.version += 1
        builder.version(self.version)
        converters = []
        for column in columns:
            mapped = column.sql_type.with_numeric_mapping(settings.numeric_mapping)
            builder.field(column.name, mapped.schema(optional=column.nullable))
            converters.append((column.name, mapped.converter(settings.timezone)))
        names = [c.name for c in columns]
        return _Shape(
            signature,
            builder.build(),
            converters,
            names.index(self._inc_column) if settings.incrementing else -1,
            [names.index(c) for c in settings.timestamp_columns] if settings.timestamp else [],
        )

    def _check_query_shape(self, connection: sa.Connection) -> None:
        cursor = self._cursor
        description = tuple(cursor.description or ())
        dialect = connection.dialect.name
        if dialect == "sqlite":
            names = tuple(d[0] for d in description)
            if self._shape is not None and self._shape.signature[0] != names:
                self._shape = None  # typed again from the first row
            return
        signature = tuple((d[0], d[1], d[4], d[5]) for d in description)
        if self._shape is not None and self._shape.signature == signature:
            return
        binary = mysql_binary_flags(cursor)
        types = []
        family = "mysql" if dialect in ("mysql", "mariadb") else "postgresql"
        for index, entry in enumerate(description):
            sql_type = from_description(family, tuple(entry), binary[index] if binary else None)
            if sql_type is None:
                raise UnsupportedColumnType("query", entry[0], f"type code {entry[1]}")
            types.append((entry[0], sql_type))
        self._shape = self._shape_of(signature, types)

    def _query_shape(self, row: Any) -> _Shape:
        names = tuple(d[0] for d in self._cursor.description or ())
        types = [(n, from_value(row[i])) for i, n in enumerate(names)]
        return self._shape_of((names,), types)

    def _shape_of(self, signature: tuple[Any, ...], types: list[tuple[str, SqlType]]) -> _Shape:
        settings = self.settings
        if settings.timestamp:  # SQLite text timestamps are typed from their value as text
            stamps = set(settings.timestamp_columns)
            types = [(n, _TIMESTAMP if n in stamps else t) for n, t in types]
        self.version += 1
        builder = SchemaBuilder.struct().name("query").version(self.version)
        converters = []
        for name, sql_type in types:
            mapped = sql_type.with_numeric_mapping(settings.numeric_mapping)
            builder.field(name, mapped.schema(optional=True))
            converters.append((name, mapped.converter(settings.timezone)))
        names = [n for n, _ in types]
        for column in ([self._inc_column] if settings.incrementing else []) + list(
            settings.timestamp_columns if settings.timestamp else []
        ):
            if column not in names:
                raise ConnectException(
                    f"The custom query has no column {column!r}; its columns are {names}"
                )
        return _Shape(
            signature,
            builder.build(),
            converters,
            names.index(self._inc_column) if settings.incrementing else -1,
            [names.index(c) for c in settings.timestamp_columns] if settings.timestamp else [],
        )

    # ------------------------------------------------------------------ records
    def _record(self, row: Any) -> SourceRecord:
        shape = self._shape
        assert shape is not None
        try:
            values = [convert(raw) for convert, raw in zip(shape.functions, row, strict=True)]
            struct = Struct.from_values(shape.schema, values)
        except (ValueError, TypeError, DataException):
            self._explain(row)
            raise
        offset = self.offset
        if shape.inc_index >= 0:
            inc = values[shape.inc_index]
            offset.incrementing = int(inc) if inc is not None else None
        for index in shape.ts_indexes:
            if values[index] is not None:  # the first non-null timestamp column (COALESCE)
                offset.timestamp = values[index]
                break
        keyed = self.settings.key_by_incrementing and shape.inc_index >= 0
        return SourceRecord(
            self.partition,
            offset.to_dict(self.settings.mode),
            self.topic,
            None,
            Schema.INT64_SCHEMA if keyed else None,
            offset.incrementing if keyed else None,
            shape.schema,
            struct,
        )

    def _explain(self, row: Any) -> None:
        """Raise the error of the first column of ``row`` that cannot be read or stored."""
        shape = self._shape
        assert shape is not None
        struct = Struct(shape.schema)
        for (name, convert), raw in zip(shape.converters, row, strict=True):
            try:
                struct.put(name, convert(raw))
            except (ValueError, TypeError, DataException) as exc:
                raise DataException(
                    f"Cannot read column {name!r} of a row of {self.name}: {exc}", field=name
                ) from exc


class TableGone(Exception):
    """The querier's table no longer exists."""

    def __init__(self, table: str) -> None:
        super().__init__(f"table {table} no longer exists")
        self.table = table
