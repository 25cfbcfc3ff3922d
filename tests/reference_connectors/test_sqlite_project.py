"""The SQLite aliases: ``SqliteSource``/``SqliteSink`` are the SQL connectors with the old defaults.

The kit's former SQLite-only project (``reference_connectors/sqlite``) is gone; its entry point
names now resolve to :mod:`reference_connectors.sql`, in the kit and in the SQL project, and a
sink config written for it (a bare file path, nothing about keys or DDL) still creates the table,
upserts on ``id`` and adds columns for new optional fields.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, cast

import pytest

import reference_connectors.sql as package
from cdk import Schema, SchemaBuilder, SinkRecord
from cdk.runtime import Plugins
from harness import default_sink_value, default_sink_value_schema
from reference_connectors.sql import (
    SINK_CONFIG_DEF,
    SQLITE_SINK_CONFIG_DEF,
    SqliteSinkConnector,
    SqliteSinkTask,
    SqliteSourceConnector,
)
from reference_connectors.sql.certify import SqliteSinkDriver
from tests._contexts import StubSinkTaskContext

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PROJECT = Path(package.__file__).parent
ROOT = PROJECT.parents[1]
ALIASES = {
    "SqliteSource": "reference_connectors.sql:SqliteSourceConnector",
    "SqliteSink": "reference_connectors.sql:SqliteSinkConnector",
}


def _plugins(path: Path) -> dict[str, str]:
    data: dict[str, Any] = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))
    return cast(dict[str, str], data["project"]["entry-points"]["cdk.plugins"])


def test_the_kit_and_the_sql_project_declare_the_aliases() -> None:
    for path in (ROOT, PROJECT):
        plugins = _plugins(path)
        assert {name: plugins.get(name) for name in ALIASES} == ALIASES, path


def test_the_aliases_resolve_through_the_entry_points() -> None:
    plugins = Plugins()
    assert plugins.connector_class("SqliteSource") is SqliteSourceConnector
    assert plugins.connector_class("SqliteSink") is SqliteSinkConnector


def test_the_old_package_is_gone() -> None:
    assert not (ROOT / "reference_connectors" / "sqlite").exists()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("reference_connectors.sqlite")


def test_the_sink_alias_changes_only_the_old_sinks_defaults() -> None:
    changed = {
        name: key.default_value
        for name, key in SQLITE_SINK_CONFIG_DEF.config_keys().items()
        if key.default_value != SINK_CONFIG_DEF.config_keys()[name].default_value
    }
    assert changed == {
        "insert.mode": "upsert",
        "pk.mode": "record_value",
        "pk.fields": ["id"],
        "auto.create": True,
        "auto.evolve": True,
    }
    assert set(SQLITE_SINK_CONFIG_DEF.config_keys()) == set(SINK_CONFIG_DEF.config_keys())
    assert SqliteSinkConnector().config() is SQLITE_SINK_CONFIG_DEF


def _records(topic: str, schema: Schema, ids: range, first_offset: int) -> list[SinkRecord]:
    return [
        SinkRecord(
            topic,
            0,
            Schema.INT64_SCHEMA,
            i,
            schema,
            default_sink_value(i, schema),
            first_offset + n,
        )
        for n, i in enumerate(ids)
    ]


def test_an_old_sink_config_creates_upserts_on_id_and_evolves(tmp_path: Path) -> None:
    driver = SqliteSinkDriver(tmp_path)
    driver.setup()
    try:
        topic = "shop-orders"
        props = {"connection.url": str(driver.database.path), "topics": topic}  # old keys
        connector = SqliteSinkConnector()
        config = connector.validate(props)
        assert [v.error_messages for v in config.config_values if v.error_messages] == []
        connector.start(props)
        (task_props,) = connector.task_configs(1)
        connector.stop()
        task = connector.task_class()()
        assert isinstance(task, SqliteSinkTask)
        task.initialize(StubSinkTaskContext(None))
        task.start(task_props)
        try:
            schema = default_sink_value_schema()
            task.put(_records(topic, schema, range(1, 6), 0))
            task.put(_records(topic, schema, range(1, 4), 0))  # redelivered: upserted
            builder = SchemaBuilder.struct().name(schema.name)
            for field in schema.fields:
                builder.field(field.name, field.schema)
            newer = builder.field("note", Schema.OPTIONAL_STRING_SCHEMA).build()
            newer_value = default_sink_value(6, newer)
            newer_value.put("note", "new column")
            task.put([SinkRecord(topic, 0, Schema.INT64_SCHEMA, 6, newer, newer_value, 5)])
        finally:
            task.stop()
        assert sorted(cast(int, i) for i in driver.read_back()) == [1, 2, 3, 4, 5, 6]
        values = driver.read_values()
        assert values[6]["note"] == "new column"
        assert values[1]["note"] is None
        assert values[2]["name"] == default_sink_value(2, schema).get("name")
    finally:
        driver.teardown()
