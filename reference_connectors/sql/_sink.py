"""The SQL sink connector and its task: records become rows, JDBC-style, exactly once.

Each ``put()`` is written in two steps. First every record is checked and planned (see
:mod:`._writer`): tables are created or evolved there, in transactions of their own. Then the
rows, deletes and the records' offsets (:mod:`._eos`) are written in one transaction, in
statement batches of ``batch.size`` rows (one ``executemany`` each), and committed before
``put()`` returns.

Errors: a transient database error (unreachable, locked, deadlock, the server went away) raises
a :class:`~cdk.RetriableException` after ``context.timeout(retry.backoff.ms)``, so the framework
redelivers the batch; after ``max.retries`` in a row the task fails. A record that cannot be
written (its schema does not fit the table, a value the database refuses) raises a
:class:`~cdk.DataException` naming the record, the field and the table, unless an errant record
reporter is configured (``errors.tolerance=all`` with a dead letter queue or error log): then
the record is reported, its offset recorded, and the rest of the batch written.
"""

from __future__ import annotations

import logging
import threading
import zoneinfo
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from typing_extensions import override

from cdk import (
    AbstractConfig,
    ConfigDef,
    ConfigException,
    ConnectException,
    DataException,
    RetriableException,
    SchemaProjector,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from cdk.config import Config
from reference_connectors.sql._connection import ConnectionSettings, translate_error
from reference_connectors.sql._dialects import Dialect
from reference_connectors.sql._eos import OffsetsTable
from reference_connectors.sql._sink_config import (
    AUTO_CREATE,
    AUTO_EVOLVE,
    BATCH_SIZE,
    DB_TIMEZONE,
    DELETE_ENABLED,
    FIELDS_WHITELIST,
    INSERT_MODE,
    MAX_RETRIES,
    PK_FIELDS,
    PK_MODE,
    RETRY_BACKOFF_MS,
    SINK_CONFIG_DEF,
    TABLE_NAME_FORMAT,
    sink_config_problems,
)
from reference_connectors.sql._sink_validate import connect_engine, validate_sink
from reference_connectors.sql._source_config import VERSION
from reference_connectors.sql._writer import Plan, PlanBuilder, WriteSettings, coordinates

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["SqlSinkConnector", "SqlSinkTask"]

log = logging.getLogger(__name__)
#: How long a put() waits for the errant record reporter to persist a record (seconds).
_REPORT_TIMEOUT_S = 60.0


def _parse(props: dict[str, str], config_def: ConfigDef = SINK_CONFIG_DEF) -> AbstractConfig:
    config = AbstractConfig(config_def, props)
    for key, message in sink_config_problems(config.values()):
        raise ConfigException(key, config.get(key), message)
    return config


class SqlSinkConnector(SinkConnector):
    """Writes records to tables of a SQL database; every task gets the same config."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    @override
    def version(self) -> str:
        return VERSION

    @override
    def config(self) -> ConfigDef:
        return self.task_class().config_def

    @override
    def validate(self, props: dict[str, str]) -> Config:
        config = super().validate(props)
        validate_sink(props, config.config_values)
        return config

    @override
    def start(self, props: dict[str, str]) -> None:
        _parse(props, self.config())
        self._props = dict(props)

    @override
    def task_class(self) -> type[SqlSinkTask]:
        return SqlSinkTask

    @override
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    @override
    def stop(self) -> None:
        """Nothing to release: the tasks own their engines."""

    @override
    def alter_offsets(
        self, props: dict[str, str], offsets: dict[TopicPartition, int | None]
    ) -> bool:
        # The offsets in the database win over the consumer group's at the next start: change
        # them too (the framework changes the group's), so that both say the same.
        config = _parse(props, self.config())
        settings = ConnectionSettings.from_values(config.values())
        engine = connect_engine(settings, config)
        table = OffsetsTable(Dialect.of(engine), props.get("name", ""))
        try:
            with engine.connect() as connection:
                table.create(connection)
            with engine.begin() as connection:
                table.alter(connection, offsets)
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            raise translate_error(exc, "changing the offsets table", settings) from None
        finally:
            engine.dispose()
        return True


class SqlSinkTask(SinkTask):
    """Writes each batch and its offsets in one transaction: all of it, or none of it.

    Attributes:
        config_def: the task's configuration (a subclass may change defaults).
    """

    config_def: ClassVar[ConfigDef] = SINK_CONFIG_DEF

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engine: sa.Engine | None = None
        self._retries = 0
        self._latest: dict[tuple[str, str], Any] = {}
        # The next offset of each partition that the database is known to hold; re-read after
        # a failed write (a commit whose answer was lost may have happened).
        self._stored: dict[TopicPartition, int] = {}
        self._tables: dict[str, str] = {}
        self._conn: sa.Connection | None = None
        self._in_doubt = True

    @override
    def version(self) -> str:
        return VERSION

    @override
    def start(self, props: dict[str, str]) -> None:
        config = _parse(props, self.config_def)
        self._settings = ConnectionSettings.from_values(config.values())
        self._table_format = config.get_string(TABLE_NAME_FORMAT)
        self._batch_size = config.get_int(BATCH_SIZE)
        self._delete_enabled = config.get_boolean(DELETE_ENABLED)
        self._max_retries = config.get_int(MAX_RETRIES)
        self._backoff_ms = config.get_int(RETRY_BACKOFF_MS)
        write = WriteSettings(
            insert_mode=config.get_string(INSERT_MODE).lower(),
            pk_mode=config.get_string(PK_MODE).lower(),
            pk_fields=tuple(str(f).strip() for f in config.get_list(PK_FIELDS) if str(f).strip()),
            fields_whitelist=frozenset(
                str(f).strip() for f in config.get_list(FIELDS_WHITELIST) if str(f).strip()
            ),
            auto_create=config.get_boolean(AUTO_CREATE),
            auto_evolve=config.get_boolean(AUTO_EVOLVE),
            timezone=zoneinfo.ZoneInfo(config.get_string(DB_TIMEZONE)),
        )
        engine = connect_engine(self._settings, config)
        dialect = Dialect.of(engine)
        self._offsets = OffsetsTable(dialect, props.get("name", ""))
        try:
            with engine.connect() as connection:
                self._offsets.create(connection)
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            engine.dispose()
            raise translate_error(exc, "creating the offsets table", self._settings) from None
        self._plans = PlanBuilder(engine, dialect, write)
        with self._lock:
            self._engine = engine

    # -- partitions: seed the consumer from the offsets in the database -----------------------
    @override
    def open(self, partitions: Collection[TopicPartition]) -> None:
        engine = self._engine
        if engine is None or not partitions:
            return
        try:
            with engine.connect() as connection:
                stored = self._offsets.read(connection, partitions)
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            raise translate_error(exc, "reading the offsets table", self._settings) from None
        self._stored.update(stored)
        if stored:
            log.info("Resuming from the offsets stored in the database: %s", stored)
            self.context.offset(stored)

    @override
    def close(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            self._stored.pop(tp, None)

    def _unwritten(self, engine: sa.Engine, records: Sequence[SinkRecord]) -> list[SinkRecord]:
        """The records whose offsets the database does not hold yet (redeliveries dropped)."""
        if self._in_doubt:
            partitions = {
                TopicPartition(r.original_topic, r.original_kafka_partition or 0) for r in records
            }
            try:
                with engine.connect() as connection:
                    self._stored.update(self._offsets.read(connection, partitions))
            except Exception as exc:  # noqa: BLE001 - every driver error is translated
                raise translate_error(exc, "reading the offsets table", self._settings) from None
            self._in_doubt = False
        if not self._stored:
            return list(records)
        stored = {(tp.topic, tp.partition): offset for tp, offset in self._stored.items()}
        kept = [
            r
            for r in records
            if r.original_kafka_offset
            >= stored.get((r.original_topic, r.original_kafka_partition or 0), -1)
        ]
        if len(kept) < len(records):
            log.info("Skipping %d records the database holds already", len(records) - len(kept))
        return kept

    # -- writing ------------------------------------------------------------------------------
    @override
    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        with self._lock:
            engine = self._engine
            if engine is None:
                raise ConnectException("SqlSinkTask.put() called on a stopped task")
            try:
                unwritten = self._unwritten(engine, records)
                if unwritten:
                    self._put(engine, unwritten)
            except RetriableException as exc:
                self._retries += 1
                self._plans.forget()
                if self._retries > self._max_retries:
                    raise ConnectException(
                        f"{exc} (gave up after max.retries={self._max_retries} retries)"
                    ) from exc
                log.warning(
                    "%s; retry %d of %d in %d ms",
                    exc,
                    self._retries,
                    self._max_retries,
                    self._backoff_ms,
                )
                self.context.timeout(self._backoff_ms)
                raise
            self._retries = 0

    def _table(self, record: SinkRecord) -> str:
        table = self._tables.get(record.topic)
        if table is None:
            table = self._tables[record.topic] = self._table_format.replace(
                "${topic}", record.topic
            )
        return table

    def _put(self, engine: sa.Engine, records: Sequence[SinkRecord]) -> None:
        reporter = self.context.errant_record_reporter()
        steps: list[tuple[Plan, SinkRecord]] = []
        reports = []
        for record in records:
            try:
                plan, record = self._plan(record)
            except DataException as exc:
                error = DataException(f"{coordinates(record)}: {exc}", field=exc.field)
                if reporter is None:
                    raise error from exc
                reports.append(reporter.report(record, error))
                continue
            except ConnectException:
                raise
            except Exception as exc:  # noqa: BLE001 - DDL and reflection errors are translated
                self._plans.forget()
                raise translate_error(exc, "preparing the tables", self._settings) from None
            if plan is not None and plan.sql is not None:
                steps.append((plan, record))
        offsets = _next_offsets(records)
        try:
            self._write(engine, steps, offsets, reporter, reports)
            self._stored.update(offsets)
            return
        except ConnectException:
            self._in_doubt = True
            self._drop_connection()
            raise
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            self._in_doubt = True
            self._drop_connection()
            self._plans.forget()
            failure = translate_error(exc, f"writing to {_tables(steps)}", self._settings)
            if isinstance(failure, RetriableException) or reporter is None:
                raise failure from None
            # Find the records the database refuses, report them, write the others.
            self._write_one_by_one(engine, steps, offsets, reporter, reports)
            self._stored.update(offsets)
            self._in_doubt = False

    def _plan(self, record: SinkRecord) -> tuple[Plan | None, SinkRecord]:
        """The plan of a record, and the record to write (projected to a newer schema)."""
        table = self._table(record)
        if record.value is None:
            if not self._delete_enabled:
                log.debug("Skipping the tombstone %s (delete.enabled=false)", coordinates(record))
                return None, record
            return self._plans.delete_plan(table, record), record
        record = self._projected(table, record)
        return self._plans.plan(table, record), record

    def _projected(self, table: str, record: SinkRecord) -> SinkRecord:
        """The record in the newest version of its schema seen for the table."""
        schema = record.value_schema
        if schema is None or schema.name is None or schema.version is None:
            return record
        key = (table, schema.name)
        latest = self._latest.get(key)
        if latest is None or (latest.version or 0) < schema.version:
            self._latest[key] = schema
            return record
        if latest.version == schema.version:
            return record
        value = SchemaProjector.project(schema, record.value, latest)
        return record.new_record(value_schema=latest, value=value)

    def _connection(self, engine: sa.Engine) -> sa.Connection:
        """The task's connection, kept across puts (no pool checkout or ping per batch)."""
        if self._conn is None or self._conn.closed or self._conn.invalidated:
            self._conn = engine.connect()
        return self._conn

    def _drop_connection(self) -> None:
        """Forget the connection after a failure: the next put connects afresh."""
        connection, self._conn = self._conn, None
        if connection is not None:
            try:
                connection.invalidate()
                connection.close()
            except Exception as exc:  # noqa: BLE001 - it is being discarded anyway
                log.debug("Closing a failed connection: %s", exc)

    def _write(
        self,
        engine: sa.Engine,
        steps: list[tuple[Plan, SinkRecord]],
        offsets: dict[TopicPartition, int],
        reporter: Any,
        reports: list[Any],
    ) -> None:
        connection = self._connection(engine)
        with connection.begin():
            plan: Plan | None = None
            rows: list[tuple[Any, ...]] = []
            for current, record in steps:
                if current is not plan or len(rows) >= self._batch_size:
                    _execute(connection, plan, rows)
                    plan, rows = current, []
                try:
                    rows.append(current.params(record))
                except (TypeError, ValueError, AttributeError) as exc:
                    error = DataException(
                        f"{coordinates(record)}: a value cannot be written to table "
                        f"{current.table!r}: {exc}"
                    )
                    if reporter is None:
                        raise error from exc
                    reports.append(reporter.report(record, error))
            _execute(connection, plan, rows)
            _wait(reports)  # reported records are persisted before their offsets are
            self._offsets.write(connection, offsets)

    def _write_one_by_one(
        self,
        engine: sa.Engine,
        steps: list[tuple[Plan, SinkRecord]],
        offsets: dict[TopicPartition, int],
        reporter: Any,
        reports: list[Any],
    ) -> None:
        import sqlalchemy as sa

        try:
            with engine.begin() as connection:
                for plan, record in steps:
                    try:
                        with connection.begin_nested():
                            _execute(connection, plan, [plan.params(record)])
                    except (sa.exc.DBAPIError, TypeError, ValueError, AttributeError) as exc:
                        error: Exception = exc
                        if isinstance(exc, sa.exc.DBAPIError):
                            error = translate_error(
                                exc, f"writing to table {plan.table!r}", self._settings
                            )
                            if isinstance(error, RetriableException):
                                raise error from None
                        message = f"{coordinates(record)}: cannot be written: {error}"
                        reports.append(reporter.report(record, DataException(message)))
                _wait(reports)
                self._offsets.write(connection, offsets)
        except ConnectException:
            raise
        except Exception as exc:  # noqa: BLE001 - every driver error is translated
            raise translate_error(exc, f"writing to {_tables(steps)}", self._settings) from None

    @override
    def stop(self) -> None:
        with self._lock:  # waits for a running put() to finish its transaction
            self._drop_connection()
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None


def _execute(connection: sa.Connection, plan: Plan | None, rows: list[tuple[Any, ...]]) -> None:
    if plan is not None and plan.sql is not None and rows:
        connection.exec_driver_sql(plan.sql, rows if len(rows) > 1 else rows[0])


def _next_offsets(records: Sequence[SinkRecord]) -> dict[TopicPartition, int]:
    offsets: dict[tuple[str, int], int] = {}
    for record in records:
        # where the consumer read it (KIP-793): a RegexRouter may have renamed the topic
        key = (record.original_topic, record.original_kafka_partition or 0)
        if offsets.get(key, -1) <= record.original_kafka_offset:
            offsets[key] = record.original_kafka_offset + 1
    return {TopicPartition(topic, partition): o for (topic, partition), o in offsets.items()}


def _tables(steps: list[tuple[Plan, SinkRecord]]) -> str:
    names = sorted({plan.table for plan, _ in steps})
    return "table " + ", ".join(repr(n) for n in names) if names else "the database"


def _wait(reports: list[Any]) -> None:
    for future in reports:
        future.result(timeout=_REPORT_TIMEOUT_S)
