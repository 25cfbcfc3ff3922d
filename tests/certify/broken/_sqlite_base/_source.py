"""SqliteSourceConnector: new rows of SQLite tables become records (incrementing mode).

As Confluent's JDBC source in ``incrementing`` mode: every table has a strictly increasing
INTEGER column (``incrementing.column.name``); a task reads the rows above the last value it
emitted, in that column's order, and stores that value as the table's source offset
(``{"table": name} -> {"incrementing": last}``), so a restarted task resumes exactly after the
last row Kafka acknowledged. The connector splits the tables across tasks and watches the
database for new or removed tables.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typing_extensions import override

from cdk import (
    AbstractConfig,
    ConfigDef,
    ConfigException,
    ConnectException,
    DataException,
    RetriableException,
    Schema,
    SchemaBuilder,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Struct,
    group_partitions,
)
from tests.certify.broken._sqlite_base._config import (
    BATCH_MAX_ROWS,
    CONNECTION_URL,
    INCREMENTING_COLUMN,
    POLL_INTERVAL_MS,
    SOURCE_CONFIG_DEF,
    SOURCE_TASK_CONFIG_DEF,
    TABLE_POLL_INTERVAL_MS,
    TABLE_WHITELIST,
    TASK_TABLES,
    TOPIC_PREFIX,
    VERSION,
    connect,
    database_path,
    list_tables,
    quote,
    translate_error,
)
from tests.certify.broken._sqlite_base._types import ColumnType, Kind, column_type

__all__ = ["SqliteSourceConnector", "SqliteSourceTask"]

log = logging.getLogger(__name__)

TABLE_FIELD = "table"
INCREMENTING_FIELD = "incrementing"


def _find_tables(path: Path, whitelist: list[str]) -> list[str]:
    """The tables to copy: the database's user tables, restricted to the whitelist if any."""
    try:
        connection = connect(path, create=False)
        try:
            tables = list_tables(connection)
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise translate_error(exc, "listing the tables", path) from exc
    if whitelist:
        wanted = set(whitelist)
        tables = [table for table in tables if table in wanted]
    return tables


class SqliteSourceConnector(SourceConnector):
    """Copies SQLite tables to topics ``<topic.prefix><table>``; tables are split across tasks.

    A monitor thread lists the tables every ``table.poll.interval.ms`` and asks the framework to
    reconfigure the tasks when the list changes.
    """

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._path = Path()
        self._whitelist: list[str] = []
        self._tables: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None

    @override
    def version(self) -> str:
        return VERSION

    @override
    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    @override
    def task_class(self) -> type[SourceTask]:
        return SqliteSourceTask

    @override
    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SOURCE_CONFIG_DEF, props)  # ConfigException naming the key
        self._props = dict(props)
        self._path = database_path(config.get_string(CONNECTION_URL))
        self._whitelist = [str(table) for table in config.get_list(TABLE_WHITELIST)]
        interval_s = config.get_long(TABLE_POLL_INTERVAL_MS) / 1000
        try:
            tables = _find_tables(self._path, self._whitelist)
        except RetriableException as exc:
            log.warning("%s; the table monitor will list the tables again", exc)
            tables = []
        with self._lock:
            self._tables = tables
        log.info("Copying tables %s of SQLite database %s", tables, self._path)
        self._stop.clear()
        self._monitor = threading.Thread(
            target=self._watch,
            args=(interval_s,),
            name=f"sqlite-table-monitor-{props.get('name', '')}",
            daemon=True,
        )
        self._monitor.start()

    def _watch(self, interval_s: float) -> None:
        """Re-list the tables until stopped; reconfigure when they change, fail when broken."""
        while not self._stop.wait(interval_s):
            try:
                tables = _find_tables(self._path, self._whitelist)
            except RetriableException as exc:
                log.info("%s", exc)
                continue
            except ConnectException as exc:
                if not self._stop.is_set():
                    log.error("SQLite table monitor failed: %s", exc)
                    self.context.raise_error(exc)
                return
            with self._lock:
                changed = tables != self._tables
                self._tables = tables
            if changed and not self._stop.is_set():
                log.info("Tables of %s changed to %s: reconfiguring the tasks", self._path, tables)
                self.context.request_task_reconfiguration()

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        with self._lock:
            tables = list(self._tables)
        if not tables:
            # Nothing to copy yet: one idle task; the monitor reconfigures once tables appear.
            return [{**self._props, TASK_TABLES: "[]"}]
        groups = group_partitions(tables, min(max_tasks, len(tables)))
        return [{**self._props, TASK_TABLES: json.dumps(group)} for group in groups]

    @override
    def stop(self) -> None:
        self._stop.set()
        monitor, self._monitor = self._monitor, None
        if monitor is not None and monitor is not threading.current_thread():
            monitor.join(5.0)

    @override
    def alter_offsets(
        self,
        props: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        for partition, offset in offsets:
            if set(partition) != {TABLE_FIELD} or not isinstance(partition[TABLE_FIELD], str):
                raise ConnectException(
                    f"Partition {partition} must be {{{TABLE_FIELD!r}: <table name>}}"
                )
            if offset is not None:
                _last_value(partition[TABLE_FIELD], offset)
        return True


def _last_value(table: str, offset: dict[str, Any] | None) -> int | None:
    """The incrementing value stored in ``offset`` (None: start from the first row)."""
    if offset is None:
        return None
    value = offset.get(INCREMENTING_FIELD)
    if set(offset) != {INCREMENTING_FIELD} or not isinstance(value, int) or isinstance(value, bool):
        raise ConnectException(
            f"Offset {offset} of table {table!r} must be {{{INCREMENTING_FIELD!r}: <integer>}}"
        )
    return value


def _end_read(connection: sqlite3.Connection) -> None:
    """End a read transaction (releasing its lock) without masking the error being raised."""
    if connection.in_transaction:
        try:
            connection.execute("ROLLBACK")
        except sqlite3.Error as exc:
            log.debug("ending a read transaction failed: %s", exc)


def _task_tables(raw: str) -> list[str]:
    try:
        tables = json.loads(raw)
    except ValueError:
        tables = None
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise ConfigException(TASK_TABLES, raw, "expected a JSON array of table names")
    return tables


@dataclass
class _Table:
    """What a task knows about one table: its offset and the schema of its rows."""

    name: str
    topic: str
    last: int | None
    schema_version: int = -1
    columns: tuple[str, ...] = ()
    schema: Schema | None = None
    fields: list[tuple[int, str, ColumnType]] = field(default_factory=list)
    key_index: int = -1


class SqliteSourceTask(SourceTask):
    """Reads the rows above each table's last incrementing value, ``batch.max.rows`` at a time.

    ``stop()`` may run on another thread while ``poll()`` queries: it interrupts the query and
    the connection is closed by whichever of the two finishes last.
    """

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._in_poll = False
        self._connection: sqlite3.Connection | None = None
        self._path = Path()
        self._column = "id"
        self._batch = 100
        self._interval_s = 1.0
        self._tables: list[_Table] = []

    @override
    def version(self) -> str:
        return VERSION

    @override
    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(SOURCE_TASK_CONFIG_DEF, props)
        self._path = database_path(config.get_string(CONNECTION_URL))
        self._column = config.get_string(INCREMENTING_COLUMN)
        self._batch = config.get_int(BATCH_MAX_ROWS)
        self._interval_s = config.get_int(POLL_INTERVAL_MS) / 1000
        prefix = config.get_string(TOPIC_PREFIX)
        names = _task_tables(config.get_string(TASK_TABLES))
        stored = self.context.offset_storage_reader.offsets([{TABLE_FIELD: n} for n in names])
        offsets = {str(partition.get(TABLE_FIELD)): offset for partition, offset in stored}
        self._tables = [
            _Table(name, prefix + name, _last_value(name, offsets.get(name))) for name in names
        ]
        for table in self._tables:
            where = (
                "from the first row" if table.last is None else f"after {self._column}={table.last}"
            )
            log.info("Copying table %s of %s %s", table.name, self._path, where)
        try:
            connection = connect(self._path, create=False)
        except sqlite3.Error as exc:
            raise translate_error(exc, "opening the database", self._path) from exc
        with self._lock:
            self._connection = connection

    @override
    def poll(self) -> list[SourceRecord] | None:
        with self._lock:
            connection = self._connection
            if connection is None or self._stopping.is_set():
                return None
            self._in_poll = True
        try:
            records: list[SourceRecord] = []
            for table in list(self._tables):
                try:
                    records.extend(self._poll_table(connection, table))
                except RetriableException:
                    if records:
                        break  # hand over what was read; this table is read again next time
                    raise
        finally:
            with self._lock:
                self._in_poll = False
                if self._stopping.is_set():
                    self._close()
        if records:
            return records
        self._stopping.wait(self._interval_s)  # stop() interrupts the wait
        return None

    def _poll_table(self, connection: sqlite3.Connection, table: _Table) -> list[SourceRecord]:
        column = quote(self._column)
        select = f"SELECT * FROM {quote(table.name)}"
        if table.last is None:
            sql = f"{select} WHERE {column} IS NOT NULL ORDER BY {column} LIMIT ?"
            params: tuple[int, ...] = (self._batch,)
        else:
            sql = f"{select} WHERE {column} > ? ORDER BY {column} LIMIT ?"
            params = (table.last, self._batch)
        try:
            rows = self._read(connection, table, sql, params)
        except sqlite3.Error as exc:
            if self._stopping.is_set():
                return []  # interrupted by stop()
            raise translate_error(
                exc, f"reading table {quote(table.name)} (incrementing column {column})", self._path
            ) from exc
        records = [self._record(table, row) for row in rows]
        if records:
            table.last = records[-1].key
        return records

    def _read(
        self, connection: sqlite3.Connection, table: _Table, sql: str, params: tuple[int, ...]
    ) -> list[tuple[Any, ...]]:
        """The next rows, read in one transaction with the table's schema (same snapshot)."""
        connection.execute("BEGIN")
        try:
            version = int(connection.execute("PRAGMA schema_version").fetchone()[0])
            if version != table.schema_version or table.schema is None:
                if not self._load_schema(connection, table):
                    return []
                table.schema_version = version
            cursor = connection.execute(sql, params)
            rows: list[tuple[Any, ...]] = cursor.fetchall()
            # Columns that changed under an unchanged schema version are read again.
            changed = tuple(d[0] for d in cursor.description) != table.columns
            if changed and not self._load_schema(connection, table):
                return []
            return rows
        finally:
            _end_read(connection)

    def _load_schema(self, connection: sqlite3.Connection, table: _Table) -> bool:
        """Read the table's columns into its schema; False when the table no longer exists."""
        info = connection.execute(f"PRAGMA table_info({quote(table.name)})").fetchall()
        if not info:
            log.warning(
                "Table %s was removed from %s: no longer copied (the connector reconfigures "
                "the tasks)",
                table.name,
                self._path,
            )
            self._tables.remove(table)
            return False
        primary_keys = sum(1 for row in info if row[5])
        builder = SchemaBuilder.struct().name(table.name)
        fields: list[tuple[int, str, ColumnType]] = []
        key_index = -1
        for index, (_, name, declared, not_null, _, pk) in enumerate(info):
            ctype = column_type(declared or "")
            if name.casefold() == self._column.casefold():
                key_index = index
                if ctype is None or ctype.kind is not Kind.INT64:
                    raise ConnectException(
                        f"The incrementing column {name!r} of table {table.name!r} in database "
                        f"{self._path} is declared {declared or 'without a type'!r}; it must be "
                        f"an INTEGER column ({INCREMENTING_COLUMN})"
                    )
            if ctype is None:
                log.warning(
                    "Column %r of table %s has the declared type %r, which has no Connect type: "
                    "it is left out of the records",
                    name,
                    table.name,
                    declared,
                )
                continue
            # A single INTEGER PRIMARY KEY is the rowid: never NULL even without NOT NULL.
            rowid = bool(pk) and primary_keys == 1 and str(declared).upper() == "INTEGER"
            builder.field(name, ctype.schema(optional=not (not_null or rowid)))
            fields.append((index, name, ctype))
        if key_index < 0:
            raise ConnectException(
                f"Table {table.name!r} in database {self._path} has no column {self._column!r}; "
                f"set {INCREMENTING_COLUMN} to its strictly increasing INTEGER column, or "
                f"leave the table out with {TABLE_WHITELIST}"
            )
        table.columns = tuple(str(row[1]) for row in info)
        table.schema = builder.build()
        table.fields = fields
        table.key_index = key_index
        log.info("Schema of table %s: %s", table.name, [f.name for f in table.schema.fields])
        return True

    def _record(self, table: _Table, row: tuple[Any, ...]) -> SourceRecord:
        assert table.schema is not None
        key = row[table.key_index]
        if not isinstance(key, int):
            raise DataException(
                f"Table {table.name!r} in database {self._path}: the incrementing column "
                f"{self._column!r} holds {key!r}, not an integer",
                field=self._column,
            )
        value = Struct(table.schema)
        for index, name, ctype in table.fields:
            try:
                value.put(name, ctype.to_connect(row[index]))
            except (ValueError, DataException) as exc:
                raise DataException(
                    f"Cannot read row {self._column}={key} of table {table.name!r} in database "
                    f"{self._path}: column {name!r} ({ctype}): {exc}",
                    field=name,
                ) from exc
        return SourceRecord(
            {TABLE_FIELD: table.name},
            {INCREMENTING_FIELD: key},
            table.topic,
            None,
            Schema.INT64_SCHEMA,
            key,
            table.schema,
            value,
        )

    @override
    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            if self._connection is None:
                return
            if self._in_poll:
                self._connection.interrupt()  # poll() closes the connection on its way out
            else:
                self._close()

    def _close(self) -> None:
        """Close the connection (the caller holds the lock)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
