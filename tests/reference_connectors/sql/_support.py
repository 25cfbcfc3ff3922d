"""Helpers of the SQL source tests: contexts for a task driven directly, portable DDL."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterable, Mapping
from typing import Any

from cdk import SourceRecord
from cdk.api import OffsetStorageReader, SourceConnectorContext, SourceTaskContext
from reference_connectors.sql import SqlSourceConnector, SqlSourceTask
from tests.reference_connectors.sql._databases import TestDatabase

UTC = dt.timezone.utc


class Offsets(OffsetStorageReader):
    def __init__(self, stored: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.stored = dict(stored or {})

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.stored.get(str(partition.get("table", partition.get("query"))))

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.offset(p)) for p in partitions]


class TaskContext(SourceTaskContext):
    def __init__(self, offsets: Offsets) -> None:
        self.offsets = offsets

    def configs(self) -> dict[str, str]:
        return {}

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.offsets


class ConnectorContext(SourceConnectorContext):
    def __init__(self) -> None:
        self.reconfigurations = 0
        self.errors: list[BaseException] = []

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return Offsets()


def ddl(db: TestDatabase, table: str, *, extra: str = "") -> str:
    """A table with an id, a name, an amount, an update time, a day and a time of day."""
    ts = {"sqlite": "TIMESTAMP", "postgresql": "TIMESTAMP(3)", "mariadb": "DATETIME(3)"}
    amount = "DECIMAL_TEXT(2)" if db.dialect == "sqlite" else "DECIMAL(10,2)"
    return (
        f"CREATE TABLE {db.quote(table)} (id INTEGER NOT NULL PRIMARY KEY, "
        f"name VARCHAR(40) NOT NULL, amount {amount}, updated {ts[db.dialect]} NOT NULL, "
        f"day DATE, at TIME{extra})"
    )


def insert(db: TestDatabase, table: str, rows: list[tuple[int, str, str, dt.datetime]]) -> None:
    """Insert ``(id, name, amount, updated)`` rows (updated: a naive UTC datetime)."""
    for rid, name, amount, updated in rows:
        stamp: Any = updated
        if db.dialect == "sqlite":
            stamp = updated.strftime("%Y-%m-%d %H:%M:%S.") + f"{updated.microsecond // 1000:03d}"
        db.execute(
            f"INSERT INTO {db.quote(table)} (id, name, amount, updated, day, at) "
            "VALUES (:id, :name, :amount, :updated, :day, :at)",
            id=rid,
            name=name,
            amount=amount if db.dialect == "sqlite" else decimal.Decimal(amount),
            updated=stamp,
            day=dt.date(2026, 1, rid % 28 + 1)
            if db.dialect != "sqlite"
            else f"2026-01-{rid % 28 + 1:02d}",
            at=dt.time(10, rid % 60) if db.dialect != "sqlite" else f"10:{rid % 60:02d}:00",
        )


def source_config(db: TestDatabase, **extra: str) -> dict[str, str]:
    return {
        **db.config(),
        "topic.prefix": "db-",
        "poll.interval.ms": "10",
        "connection.attempts": "1",
        **extra,
    }


def start_task(
    db: TestDatabase,
    tables: list[str],
    stored: Mapping[str, dict[str, Any]] | None = None,
    **extra: str,
) -> SqlSourceTask:
    task = SqlSourceTask()
    task.initialize(TaskContext(Offsets(stored)))
    task.start({**source_config(db, **extra), "tables": json.dumps(tables)})
    return task


def start_connector(db: TestDatabase, **extra: str) -> tuple[SqlSourceConnector, ConnectorContext]:
    connector = SqlSourceConnector()
    context = ConnectorContext()
    connector.initialize(context)
    connector.start(source_config(db, **extra))
    return connector, context


def drain(task: SqlSourceTask, polls: int = 50) -> list[SourceRecord]:
    """Poll until a poll returns nothing after some records came (or ``polls`` polls)."""
    records: list[SourceRecord] = []
    for _ in range(polls):
        batch = task.poll()
        if not batch:
            if records:
                break
            continue
        records.extend(batch)
    return records
