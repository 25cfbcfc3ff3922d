"""The SQLite connectors as a connector project: drivers, packaging metadata, README, plugins."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import pytest

import tests.certify.broken._sqlite_base as package
from cdk import Schema, SchemaAndValue, SinkRecord, SourceRecord, Struct
from cdk.api import OffsetStorageReader, SinkTaskContext, SourceConnectorContext, SourceTaskContext
from cdk.converters import JsonConverter
from cdk.runtime import Plugins
from harness import SinkDriver, SourceDriver
from harness.certify import Project
from tests.certify.broken._sqlite_base import (
    SINK_CONFIG_DEF,
    SOURCE_CONFIG_DEF,
    SqliteSinkConnector,
    SqliteSinkTask,
    SqliteSourceConnector,
    SqliteSourceTask,
)
from tests.certify.broken._sqlite_base.certify import SqliteSinkDriver, SqliteSourceDriver

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PROJECT = Path(package.__file__).parent
ROOT = PROJECT.parents[1]


def _stored(driver: SqliteSinkDriver) -> list[int]:
    """The ids in the sink's database, sorted (with duplicates)."""
    return sorted(cast(int, i) for i in driver.read_back())


def _pyproject(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))
    return data


def test_public_names() -> None:
    assert package.__all__ == [
        "__version__",
        "SqliteSourceConnector",
        "SqliteSourceTask",
        "SqliteSinkConnector",
        "SqliteSinkTask",
        "SOURCE_CONFIG_DEF",
        "SINK_CONFIG_DEF",
    ]


def test_project_metadata_declares_plugins_drivers_and_license() -> None:
    data = _pyproject(PROJECT)
    project = data["project"]
    assert project["name"] == "cdk-sqlite-connector"
    assert project["version"] == package.__version__ == _pyproject(ROOT)["project"]["version"]
    assert project["dependencies"] == ["connect-cdk"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    plugins = project["entry-points"]["cdk.plugins"]
    assert plugins == {
        "SqliteSource": "tests.certify.broken._sqlite_base:SqliteSourceConnector",
        "SqliteSink": "tests.certify.broken._sqlite_base:SqliteSinkConnector",
    }
    root_plugins = _pyproject(ROOT)["project"]["entry-points"]["cdk.plugins"]
    # The kit's SqliteSource alias runs the SQL source with the SQLite defaults.
    assert root_plugins["SqliteSource"] == "reference_connectors.sql:SqliteSourceConnector"
    assert root_plugins["SqliteSink"] == plugins["SqliteSink"]
    assert data["tool"]["setuptools"]["packages"] == ["tests.certify.broken._sqlite_base"]
    assert set(data["tool"]) == {"setuptools", "cdk"}  # no lint/test config of its own
    assert (PROJECT / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


def test_harness_loads_the_project_and_its_drivers() -> None:
    project = Project.load(PROJECT)
    assert project.name == "cdk-sqlite-connector"
    assert project.drivers == [SqliteSourceDriver, SqliteSinkDriver]
    assert issubclass(SqliteSourceDriver, SourceDriver)
    assert issubclass(SqliteSinkDriver, SinkDriver)


def test_aliases_resolve_through_the_entry_points() -> None:
    from reference_connectors.sql import SqliteSourceConnector as SqlSqliteSource

    plugins = Plugins()
    assert plugins.connector_class("SqliteSource") is SqlSqliteSource
    assert plugins.connector_class("SqliteSink") is SqliteSinkConnector


def test_readme_has_the_review_sections_and_the_generated_reference() -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", readme, flags=re.MULTILINE)
    assert headings == [
        "Description",
        "Data model",
        "Delivery semantics",
        "Quickstart",
        "Configuration reference",
        "License",
    ]
    for config_def in (SOURCE_CONFIG_DEF, SINK_CONFIG_DEF):
        generated = re.sub(r"^## ", "#### ", config_def.to_markdown().strip(), flags=re.M)
        assert generated in readme, "README's configuration reference is stale: regenerate it"
        for key in config_def.config_keys().values():
            assert key.documentation
            assert key.group
            assert key.display_name != key.name


# ---------------------------------------------------------------------------------------------
# Driver round trips: what a driver writes, the connector reads, and the other way round.


class _Offsets(OffsetStorageReader):
    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return None

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), None) for p in partitions]


class _SourceContext(SourceConnectorContext, SourceTaskContext):
    def request_task_reconfiguration(self) -> None:
        pass

    def raise_error(self, error: BaseException) -> None:
        raise AssertionError(f"unexpected connector error: {error}")

    def configs(self) -> dict[str, str]:
        return {}

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _Offsets()


def _json_round_trip(topic: str, schema: Schema | None, value: Any) -> Any:
    converter = JsonConverter()
    converter.configure({}, is_key=False)
    back: SchemaAndValue = converter.to_connect_data(
        topic, converter.from_connect_data(topic, schema, value)
    )
    return back.value


def test_source_driver_records_are_read_back_by_the_connector(tmp_path: Path) -> None:
    driver = SqliteSourceDriver(tmp_path)
    driver.setup()
    try:
        driver.write_records([1, 2], stream=0)
        driver.write_records([3], stream=3)
        column = driver.evolve_schema(stream=0)
        driver.write_records([4, 5], stream=0)
        context = _SourceContext()
        connector = SqliteSourceConnector()
        connector.initialize(context)
        connector.start(driver.example_config("rt-"))
        try:
            configs = connector.task_configs(4)
        finally:
            connector.stop()
        assert [json.loads(c["tables"]) for c in configs] == [["t0"], ["t3"]]
        records: list[SourceRecord] = []
        for config in configs:
            task = SqliteSourceTask()
            task.initialize(context)
            task.start(config)
            while batch := task.poll():
                records.extend(batch)
            task.stop()
        ids: dict[int, Struct] = {}
        for record in records:
            assert record.topic.startswith("rt-")
            assert isinstance(record.value, Struct)
            record.value.validate()
            key = _json_round_trip(record.topic, record.key_schema, record.key)
            value = _json_round_trip(record.topic, record.value_schema, record.value)
            ids[cast(int, driver.record_id(key, value))] = value
        assert sorted(ids) == [1, 2, 3, 4, 5]
        assert ids[4].get(column) == f"{column}-4"
        assert ids[1].get(column) is None
    finally:
        driver.teardown()


class _SinkContext(SinkTaskContext):
    def configs(self) -> dict[str, str]:
        return {}

    def offset(self, *args: Any) -> None:
        pass

    def timeout(self, timeout_ms: int) -> None:
        pass

    def assignment(self) -> set[Any]:
        return set()

    def pause(self, *partitions: Any) -> None:
        pass

    def resume(self, *partitions: Any) -> None:
        pass

    def request_commit(self) -> None:
        pass

    def errant_record_reporter(self) -> None:
        return None


@pytest.mark.parametrize("topics", ["rt-sink", "rt.sink-2"])
def test_sink_driver_reads_back_what_the_connector_wrote(tmp_path: Path, topics: str) -> None:
    driver = SqliteSinkDriver(tmp_path)
    driver.setup()
    try:
        connector = SqliteSinkConnector()
        connector.start(driver.example_config(topics))
        task = SqliteSinkTask()
        task.initialize(_SinkContext())
        (config,) = connector.task_configs(1)
        task.start(config)
        schema = driver.value_schema()
        sent = {i: driver.value(i, schema) for i in range(1, 11)}
        records = [
            SinkRecord(topics, 0, driver.key_schema(), driver.key(i), schema, value, i)
            for i, value in sent.items()
        ]
        task.put(records)
        task.put(records[:3])  # redelivered: upserts keep one copy
        task.stop()
        assert _stored(driver) == list(range(1, 11))
        stored = driver.read_values()
        for record_id, value in sent.items():
            assert dict(stored[record_id]) == value.to_dict()
    finally:
        driver.teardown()
