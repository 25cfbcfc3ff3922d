"""The SQL connectors as a connector project: drivers, packaging metadata, README, aliases."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

import reference_connectors.sql as package
from cdk.runtime import Plugins
from harness.certify import Project
from reference_connectors.sql import SINK_CONFIG_DEF, SOURCE_CONFIG_DEF, SqlSourceConnector
from reference_connectors.sql.certify import (
    MariadbSourceDriver,
    PostgresqlSourceDriver,
    SqliteSourceDriver,
    SqlSourceDriver,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PROJECT = Path(package.__file__).parent


def _pyproject(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))
    return data


def test_aliases_resolve_through_the_entry_points() -> None:
    plugins = Plugins()
    for alias in ("SqlSource", "JdbcSource", "io.confluent.connect.jdbc.JdbcSourceConnector"):
        assert plugins.connector_class(alias) is SqlSourceConnector


def test_the_project_and_the_kit_declare_the_same_entry_points() -> None:
    project = _pyproject(PROJECT)["project"]["entry-points"]["cdk.plugins"]
    kit = _pyproject(PROJECT.parents[1])["project"]["entry-points"]["cdk.plugins"]
    for name, target in project.items():
        assert kit.get(name) == target, name


def test_the_project_lists_the_drivers() -> None:
    project = Project.load(PROJECT)
    assert SqlSourceDriver in project.drivers


def test_the_dialect_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CDK_SQL_DIALECT", "postgresql")
    assert SqlSourceDriver(tmp_path).database.dialect == "postgresql"
    assert SqliteSourceDriver(tmp_path).database.dialect == "sqlite"
    assert MariadbSourceDriver(tmp_path).database.dialect == "mariadb"
    assert PostgresqlSourceDriver(tmp_path).database.dialect == "postgresql"
    monkeypatch.setenv("CDK_SQL_DIALECT", "oracle")
    with pytest.raises(ValueError, match="CDK_SQL_DIALECT"):
        SqlSourceDriver(tmp_path)


def test_readme_has_the_review_sections_and_the_generated_reference() -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", readme, flags=re.MULTILINE)
    for section in ("Description", "Data model", "Delivery semantics", "Quickstart", "License"):
        assert section in headings
    assert "Configuration reference" in headings
    for config_def in (SOURCE_CONFIG_DEF, SINK_CONFIG_DEF):
        generated = re.sub(r"^## ", "#### ", config_def.to_markdown().strip(), flags=re.M)
        assert generated in readme, "README's configuration reference is stale: regenerate it"
    for key in SOURCE_CONFIG_DEF.config_keys().values():
        assert key.documentation
        assert key.group
        assert key.display_name != key.name


def test_the_sqlite_alias_keeps_the_sqlite_sources_defaults(tmp_path: Path) -> None:
    import json
    import sqlite3

    from cdk import Schema
    from reference_connectors.sql import SqliteSourceConnector, SqliteSourceTask
    from tests.reference_connectors.sql._support import Offsets, TaskContext

    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)")
        db.execute("INSERT INTO orders (item) VALUES ('tea'), ('cake')")
    props = {"connection.url": str(path), "topic.prefix": "shop-"}  # the old quickstart's keys
    config = SqliteSourceConnector().validate(props)
    assert [v.error_messages for v in config.config_values if v.error_messages] == []
    task = SqliteSourceTask()
    task.initialize(TaskContext(Offsets()))
    task.start({**props, "tables": json.dumps(["orders"])})
    try:
        records = task.poll() or []
    finally:
        task.stop()
    assert [r.key for r in records] == [1, 2]
    assert records[0].key_schema == Schema.INT64_SCHEMA
    assert records[1].source_offset == {"incrementing": 2}
    assert records[0].topic == "shop-orders"
    assert not records[0].value_schema.field("id").schema.optional
