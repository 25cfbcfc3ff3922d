"""The certification drivers on each dialect, with the source task driven directly.

What ``cdk certify`` relies on: the values written come back as expected, an outage is a
RetriableException that loses nothing, a broken database a ConnectException that says so, and an
added column shows in the records.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdk import ConnectException, RetriableException, SourceRecord
from reference_connectors.sql import SqlSourceTask
from reference_connectors.sql.certify import SqlSourceDriver
from tests.reference_connectors.sql._databases import DIALECTS, make_database
from tests.reference_connectors.sql._support import Offsets, TaskContext


@pytest.fixture(params=DIALECTS)
def driver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlSourceDriver]:
    dialect = request.param
    if dialect != "sqlite":  # skip with the variable to set when the server does not answer
        probe = make_database(dialect, tmp_path)
        next(probe)
        probe.close()
    cls = type("Driver", (SqlSourceDriver,), {"dialect": dialect})
    d = cls(tmp_path)
    d.setup()
    yield d
    d.teardown()


def _task(driver: SqlSourceDriver, tables: list[str]) -> SqlSourceTask:
    task = SqlSourceTask()
    task.initialize(TaskContext(Offsets()))
    config = {**driver.example_config("db-"), "poll.interval.ms": "10", "connection.attempts": "1"}
    task.start({**config, "tables": json.dumps(tables)})
    return task


def _read(task: SqlSourceTask, count: int) -> list[SourceRecord]:
    records: list[SourceRecord] = []
    for _ in range(200):
        records.extend(task.poll() or [])
        if len(records) >= count:
            break
    return records


def _poll_until_error(task: SqlSourceTask) -> None:
    for _ in range(200):
        task.poll()


def _poll_until_fatal(task: SqlSourceTask) -> None:
    """Poll until a non-retriable error (retriable ones may come first: the server went away)."""
    for _ in range(200):
        try:
            task.poll()
        except RetriableException:
            continue


def test_values_outage_evolution_and_break(driver: SqlSourceDriver) -> None:
    driver.write_records([1, 2, 3])
    task = _task(driver, ["t0"])
    try:
        records = _read(task, 3)
        assert [r.value.get("id") for r in records] == [1, 2, 3]
        for record in records:
            record.value.validate()
            expected = driver.expected_value(record.value.get("id"))
            assert {
                f.name: record.value.get(f.name) for f in record.value_schema.fields
            } == expected
        with driver.outage():
            driver.write_records([4, 5])
            with pytest.raises(RetriableException):
                _poll_until_error(task)
        column = driver.evolve_schema()
        driver.write_records([6])
        records = _read(task, 3)
        assert [r.value.get("id") for r in records] == [4, 5, 6]
        assert records[-1].value.get(column) == f"{column}-6"
        assert records[-1].value_schema.version == 2
        driver.break_external_system()
        with pytest.raises(ConnectException) as caught:
            _poll_until_fatal(task)
        assert not isinstance(caught.value, RetriableException)
    finally:
        task.stop()
