"""The SQL sink in the connector project: aliases, drivers, README reference, certify drivers."""

from __future__ import annotations

import datetime as dt
import decimal
import re
from pathlib import Path

import pytest

import reference_connectors.sql as package
from cdk.runtime import Plugins
from harness import Delivery
from harness.certify import Project
from reference_connectors.sql import SINK_CONFIG_DEF, SqlSinkConnector
from reference_connectors.sql.certify import (
    MariadbSinkDriver,
    PostgresqlSinkDriver,
    SqliteSinkDriver,
    SqlSinkDriver,
)
from tests._contexts import StubSinkTaskContext
from tests.reference_connectors.sql._sink_support import SCHEMA, record

PROJECT = Path(package.__file__).parent


def test_sink_aliases_resolve_through_the_entry_points() -> None:
    plugins = Plugins()
    for alias in ("SqlSink", "JdbcSink", "io.confluent.connect.jdbc.JdbcSinkConnector"):
        assert plugins.connector_class(alias) is SqlSinkConnector


def test_the_project_lists_the_sink_driver_and_the_readme_its_reference() -> None:
    assert SqlSinkDriver in Project.load(PROJECT).drivers
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    generated = re.sub(r"^## ", "#### ", SINK_CONFIG_DEF.to_markdown().strip(), flags=re.M)
    assert generated in readme, "README's sink configuration reference is stale: regenerate it"
    for key in SINK_CONFIG_DEF.config_keys().values():
        assert key.documentation
        assert key.group
        assert key.display_name != key.name


def test_each_dialect_has_a_sink_driver_claiming_exactly_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CDK_SQL_DIALECT", "mariadb")
    assert SqlSinkDriver(tmp_path).database.dialect == "mariadb"
    assert SqliteSinkDriver(tmp_path).database.dialect == "sqlite"
    assert PostgresqlSinkDriver(tmp_path).database.dialect == "postgresql"
    assert MariadbSinkDriver(tmp_path).database.dialect == "mariadb"
    assert SqlSinkDriver.delivery is Delivery.EXACTLY_ONCE


@pytest.mark.parametrize(
    "driver_class", [SqliteSinkDriver, PostgresqlSinkDriver, MariadbSinkDriver]
)
def test_the_driver_reads_back_connect_values(
    driver_class: type[SqlSinkDriver], tmp_path: Path
) -> None:
    if driver_class is not SqliteSinkDriver:
        from tests.reference_connectors.sql._databases import make_database

        dialect = "postgresql" if driver_class is PostgresqlSinkDriver else "mariadb"
        databases = make_database(dialect, tmp_path)
        next(databases)  # skips with the variable to set when the server does not answer
        databases.close()
    driver = driver_class(tmp_path)
    driver.setup()
    try:
        connector = SqlSinkConnector()
        connector.start({"name": "driver-test", **driver.example_config("orders")})
        task = connector.task_class()()
        task.initialize(StubSinkTaskContext())
        task.start(connector.task_configs(1)[0])
        try:
            task.put([record(i) for i in range(1, 4)])
        finally:
            task.stop()
        assert sorted(driver.read_back()) == [1, 2, 3]  # type: ignore[type-var]
        value = driver.read_values()[2]
        assert value["amount"] == decimal.Decimal("0.15")
        assert value["created"] == dt.datetime(2026, 1, 1, 0, 2, 2, 2000, tzinfo=dt.timezone.utc)
        assert value["active"] is True
        assert set(value) == {f.name for f in SCHEMA.fields}
    finally:
        driver.teardown()
