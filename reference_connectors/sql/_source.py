"""The SQL source connector and its task: tables (or a custom query) to topics, JDBC-style."""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time
import zoneinfo
from typing import TYPE_CHECKING, Any, ClassVar

from typing_extensions import override

from cdk import (
    AbstractConfig,
    ConfigDef,
    ConfigException,
    ConnectException,
    ExactlyOnceSupport,
    RetriableException,
    SourceConnector,
    SourceRecord,
    SourceTask,
    group_partitions,
)
from cdk.config import Config
from reference_connectors.sql._connection import (
    CONNECTION_ATTEMPTS,
    CONNECTION_BACKOFF_MS,
    ConnectionSettings,
    missing_table,
    translate_error,
)
from reference_connectors.sql._monitor import TableFilter, TableMonitor, find_tables
from reference_connectors.sql._querier import (
    QUERY_FIELD,
    TABLE_FIELD,
    QuerierSettings,
    TableGone,
    TableQuerier,
    parse_offset,
)
from reference_connectors.sql._reflect import table_exists
from reference_connectors.sql._source_config import (
    BATCH_MAX_ROWS,
    DB_TIMEZONE,
    INCREMENTING_COLUMN,
    MODE,
    NUMERIC_MAPPING,
    POLL_INTERVAL_MS,
    QUERY,
    SCHEMA_PATTERN,
    SOURCE_CONFIG_DEF,
    SOURCE_TASK_CONFIG_DEF,
    TABLE_BLACKLIST,
    TABLE_POLL_INTERVAL_MS,
    TABLE_TYPES,
    TABLE_WHITELIST,
    TASK_TABLES,
    TIMESTAMP_COLUMN,
    TIMESTAMP_DELAY_MS,
    TIMESTAMP_INITIAL,
    TOPIC_PREFIX,
    VALIDATE_NON_NULL,
    VERSION,
    source_config_problems,
)
from reference_connectors.sql._validate import validate_source

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["SqlSourceConnector", "SqlSourceTask", "querier_settings"]

log = logging.getLogger(__name__)


def querier_settings(config: AbstractConfig, key_by_incrementing: bool = False) -> QuerierSettings:
    """The settings every querier of a task shares, from the parsed config."""
    return QuerierSettings(
        key_by_incrementing=key_by_incrementing,
        mode=config.get_string(MODE).lower(),
        incrementing_column=config.get_string(INCREMENTING_COLUMN) or "",
        timestamp_columns=tuple(c.strip() for c in config.get_list(TIMESTAMP_COLUMN) if c.strip()),
        timestamp_initial=config.get(TIMESTAMP_INITIAL),
        validate_non_null=config.get_boolean(VALIDATE_NON_NULL),
        numeric_mapping=config.get_string(NUMERIC_MAPPING).lower(),
        timezone=_zone(config.get_string(DB_TIMEZONE)),
        delay_ms=config.get_long(TIMESTAMP_DELAY_MS),
        batch_max_rows=config.get_int(BATCH_MAX_ROWS),
        schema=config.get(SCHEMA_PATTERN) or None,
    )


def _zone(name: str) -> dt.tzinfo:
    """The time zone called ``name`` (UTC as :data:`datetime.timezone.utc`)."""
    if name.strip().upper() in ("UTC", "Z", "ETC/UTC", "GMT"):
        return dt.timezone.utc
    return zoneinfo.ZoneInfo(name)


def _parse(definition: ConfigDef, props: dict[str, str]) -> AbstractConfig:
    config = AbstractConfig(definition, props)
    problems = source_config_problems(config.values())
    if problems:
        key, message = problems[0]
        raise ConfigException(key, props.get(key), message)
    return config


def _settings(config: AbstractConfig) -> ConnectionSettings:
    return ConnectionSettings.from_values(config.values())


def _with_attempts(config: AbstractConfig, what: Any) -> Any:
    """Run ``what()``, trying again on RetriableException (``connection.attempts``)."""
    attempts = config.get_int(CONNECTION_ATTEMPTS)
    backoff_s = config.get_long(CONNECTION_BACKOFF_MS) / 1000
    for attempt in range(1, attempts + 1):
        try:
            return what()
        except RetriableException as exc:
            if attempt == attempts:
                raise ConnectException(f"{exc} (after {attempts} attempts)") from exc
            log.info("%s; attempt %d of %d, trying again", exc, attempt, attempts)
            time.sleep(backoff_s)
    raise AssertionError("unreachable")  # pragma: no cover


class SqlSourceConnector(SourceConnector):
    """Copies database tables (or a custom query) to Kafka, as the JDBC source connector does.

    One source partition per table (``{"table": name}``) or for the query
    (``{"query": "query"}``); the tables are divided over the tasks, and a monitor thread
    reconfigures the tasks when tables are created or dropped.
    """

    def __init__(self) -> None:
        self._props: dict[str, str] = {}
        self._query = ""
        self._monitor: TableMonitor | None = None
        self._tables: list[str] = []

    @override
    def version(self) -> str:
        return VERSION

    @override
    def config(self) -> ConfigDef:
        return SOURCE_CONFIG_DEF

    @override
    def task_class(self) -> type[SqlSourceTask]:
        return SqlSourceTask

    @override
    def validate(self, props: dict[str, str]) -> Config:
        config = super().validate(props)
        validate_source(self.config(), props, config.config_values)
        return config

    @override
    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        """SUPPORTED in ``incrementing`` and ``timestamp+incrementing`` modes.

        There each record's offset is its own row's position (the incrementing value, with the
        timestamp), and a task resumes strictly after it, so a task restarted from the last
        committed offset reads exactly the rows after it. ``bulk`` re-reads whole tables and
        ``timestamp`` alone cannot tell apart two rows with the same timestamp: UNSUPPORTED.
        """
        mode = str(props.get(MODE, "")).strip().lower()
        if mode in ("incrementing", "timestamp+incrementing"):
            return ExactlyOnceSupport.SUPPORTED
        return ExactlyOnceSupport.UNSUPPORTED

    @override
    def start(self, props: dict[str, str]) -> None:
        config = _parse(self.config(), props)
        self._props = dict(props)
        self._query = config.get_string(QUERY).strip()
        settings = _settings(config)
        if self._query:
            log.info("Copying a custom query of %s", settings.describe())
            return
        schema = config.get(SCHEMA_PATTERN) or None
        types = list(config.get_list(TABLE_TYPES))
        keep = TableFilter(config.get_list(TABLE_WHITELIST), config.get_list(TABLE_BLACKLIST))

        def lister() -> list[str]:
            return find_tables(settings, schema, types, keep)

        self._tables = _with_attempts(config, lister)
        log.info("Copying tables %s of %s", self._tables, settings.describe())
        self._monitor = TableMonitor(
            lister,
            self._tables,
            config.get_long(TABLE_POLL_INTERVAL_MS) / 1000,
            self.context.request_task_reconfiguration,
            self.context.raise_error,
            f"sql-table-monitor-{props.get('name', '')}",
        )
        self._monitor.start()

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self._query:
            return [{**self._props, TASK_TABLES: "[]"}]
        tables = self._monitor.tables if self._monitor is not None else list(self._tables)
        if not tables:
            # Nothing to copy yet: one idle task; the monitor reconfigures once tables appear.
            return [{**self._props, TASK_TABLES: "[]"}]
        groups = group_partitions(tables, min(max_tasks, len(tables)))
        return [{**self._props, TASK_TABLES: json.dumps(group)} for group in groups]

    @override
    def stop(self) -> None:
        monitor, self._monitor = self._monitor, None
        if monitor is not None:
            monitor.stop()

    @override
    def alter_offsets(
        self,
        props: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        for partition, offset in offsets:
            valid = (
                set(partition) == {TABLE_FIELD} and isinstance(partition[TABLE_FIELD], str)
            ) or (partition == {QUERY_FIELD: QUERY_FIELD})
            if not valid:
                raise ConnectException(
                    f"Partition {partition} must be {{{TABLE_FIELD!r}: <table name>}} or "
                    f'{{"query": "query"}}'
                )
            parse_offset(str(partition), offset)
        return True


class SqlSourceTask(SourceTask):
    """Reads its tables (or the query) round by round, ``batch.max.rows`` rows per poll.

    Attributes:
        config_def: the task's configuration.
        key_by_incrementing: key each record by its incrementing value (INT64) instead of null.
    """

    config_def: ClassVar[ConfigDef] = SOURCE_TASK_CONFIG_DEF
    key_by_incrementing: ClassVar[bool] = False

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._settings: ConnectionSettings | None = None
        self._engine: sa.Engine | None = None
        self._connection: sa.Connection | None = None
        self._queriers: list[TableQuerier] = []
        self._interval_s = 5.0
        self._schema: str | None = None
        self._in_poll = False

    @override
    def version(self) -> str:
        return VERSION

    @override
    def start(self, props: dict[str, str]) -> None:
        config = _parse(self.config_def, props)
        self._settings = _settings(config)
        self._interval_s = config.get_int(POLL_INTERVAL_MS) / 1000
        self._schema = config.get(SCHEMA_PATTERN) or None
        settings = querier_settings(config, self.key_by_incrementing)
        prefix = config.get_string(TOPIC_PREFIX)
        query = config.get_string(QUERY).strip()
        if query:
            stored = self.context.offset_storage_reader.offset({QUERY_FIELD: QUERY_FIELD})
            self._queriers = [TableQuerier(settings, prefix, query=query, offset=stored)]
        else:
            tables = _task_tables(config.get_string(TASK_TABLES))
            partitions = [{TABLE_FIELD: t} for t in tables]
            stored_pairs = self.context.offset_storage_reader.offsets(partitions)
            stored = {str(p.get(TABLE_FIELD)): o for p, o in stored_pairs}
            self._queriers = [
                TableQuerier(settings, prefix + t, table=t, offset=stored.get(t)) for t in tables
            ]
        for querier in self._queriers:
            stored = querier.offset.to_dict(settings.mode)
            log.info("Copying %s from %s", querier.name, stored or "its first row")
        self._engine = self._settings.create_engine()
        _with_attempts(config, self._connect)

    def _connect(self) -> sa.Connection:
        assert self._settings is not None
        assert self._engine is not None
        missing = self._settings.missing_database_file()
        if missing:
            raise ConnectException(f"Opening {self._settings.describe()}: {missing}")
        with self._lock:
            if self._connection is None:
                try:
                    self._connection = self._engine.connect()
                except Exception as exc:  # noqa: BLE001 - every driver error is translated
                    raise translate_error(exc, "connecting", self._settings) from None
            return self._connection

    @override
    def poll(self) -> list[SourceRecord] | None:
        with self._lock:
            if self._stopping.is_set():
                return None
            self._in_poll = True
        try:
            return self._poll()
        finally:
            with self._lock:
                self._in_poll = False
                closing = self._stopping.is_set()
            if closing:
                self._close()

    def _poll(self) -> list[SourceRecord] | None:
        if not self._queriers:
            self._stopping.wait(self._interval_s)
            return None
        now = time.monotonic()
        ready = [q for q in self._queriers if q.in_round] or [
            q for q in self._queriers if q.next_round <= now
        ]
        if not ready:
            wait = min(q.next_round for q in self._queriers) - now
            self._stopping.wait(max(0.0, wait))
            return None
        querier = min(ready, key=lambda q: q.next_round)
        connection = self._connect()
        try:
            records = querier.poll(connection, self._interval_s)
        except TableGone:
            querier.end_round(None)
            self._reset()
            self._confirm_gone(querier, None)
            return None
        except ConnectException:
            querier.end_round(None)
            self._reset()
            raise
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            querier.end_round(None)
            self._reset()
            assert self._settings is not None
            error = translate_error(exc, f"reading {querier.name}", self._settings)
            if querier.table is None or not missing_table(exc):
                raise error from None
            self._confirm_gone(querier, error)
            return None
        return records or None

    def _confirm_gone(self, querier: TableQuerier, error: Exception | None) -> None:
        """Stop copying a table that was dropped, once a fresh connection confirms it.

        Raises:
            Exception: ``error`` (or a ConnectException) when the table is still there, the
                database's own error when it does not answer (a dropped database fails the
                task; an outage is retried).
        """
        assert self._settings is not None
        assert querier.table is not None
        with self._settings.connect(f"checking table {querier.table}") as connection:
            exists = table_exists(connection, querier.table, self._schema)
        if exists:
            raise error or ConnectException(
                f"Reading {querier.name} of {self._settings.describe()}: its columns could not "
                "be read"
            )
        self._drop(querier, None)

    def _drop(self, querier: TableQuerier, connection: sa.Connection | None) -> None:
        querier.end_round(connection)
        log.warning(
            "%s was dropped: no longer copied (the connector reconfigures the tasks)",
            querier.name.capitalize(),
        )
        self._queriers.remove(querier)

    def _reset(self) -> None:
        """Drop the connection (after an error); the next poll connects again."""
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.invalidate()
                connection.close()
            except Exception as exc:  # noqa: BLE001 - closing a broken connection
                log.debug("closing the connection failed: %s", exc)

    @override
    def stop(self) -> None:
        with self._lock:
            self._stopping.set()
            in_poll = self._in_poll
        if not in_poll:
            self._close()  # else poll() closes on its way out

    def _close(self) -> None:
        for querier in self._queriers:
            querier.end_round(None)
        self._reset()
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.dispose()


def _task_tables(raw: str) -> list[str]:
    try:
        tables = json.loads(raw)
    except ValueError:
        tables = None
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise ConfigException(TASK_TABLES, raw, "expected a JSON array of table names")
    return tables
