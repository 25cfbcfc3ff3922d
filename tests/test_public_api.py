"""The public façade: what ``from cdk import ...`` offers is pinned here.

Changing this list is changing the public contract (../shared/DESIGN.md §2): do it on purpose.
"""

from __future__ import annotations

import importlib

import pytest

import cdk

EXPECTED_TOP_LEVEL = {
    "__version__",
    # connectors, tasks and coordinates
    "Connector",
    "ConnectorContext",
    "ConnectorTransactionBoundaries",
    "ErrantRecordReporter",
    "ExactlyOnceSupport",
    "OffsetAndMetadata",
    "OffsetStorageReader",
    "RecordMetadata",
    "SinkConnector",
    "SinkConnectorContext",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceConnectorContext",
    "SourceTask",
    "SourceTaskContext",
    "Task",
    "TopicPartition",
    "TransactionContext",
    "group_partitions",
    # config
    "AbstractConfig",
    "Config",
    "ConfigDef",
    "ConfigKey",
    "ConfigValue",
    "Importance",
    "NO_DEFAULT",
    "Password",
    "Recommender",
    "Type",
    "Width",
    # data
    "Date",
    "Decimal",
    "Field",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "SchemaProjector",
    "SchemaType",
    "Struct",
    "Time",
    "Timestamp",
    "Values",
    # records and headers
    "ConnectRecord",
    "Header",
    "Headers",
    "SinkRecord",
    "SourceRecord",
    "TimestampType",
    # errors
    "AlreadyExistsException",
    "ConfigException",
    "ConnectException",
    "DataException",
    "IllegalWorkerStateException",
    "MissingExtraError",
    "NotFoundException",
    "RetriableException",
    "SchemaBuilderException",
    "SchemaProjectorException",
}

# DESIGN §2 names.
DESIGN_CORE_NAMES = [
    "SourceConnector",
    "SinkConnector",
    "SourceTask",
    "SinkTask",
    "TopicPartition",
    "OffsetAndMetadata",
    "SourceRecord",
    "SinkRecord",
    "ConfigDef",
    "Type",
    "Importance",
    "Width",
    "NO_DEFAULT",
    "AbstractConfig",
    "ConfigValue",
    "Schema",
    "SchemaBuilder",
    "SchemaType",
    "Struct",
    "SchemaAndValue",
    "SchemaProjector",
    "Decimal",
    "Date",
    "Time",
    "Timestamp",
    "ConnectException",
    "RetriableException",
    "DataException",
    "ConfigException",
]


def test_all_is_pinned() -> None:
    assert set(cdk.__all__) == EXPECTED_TOP_LEVEL
    assert len(cdk.__all__) == len(set(cdk.__all__)), "duplicates in __all__"


@pytest.mark.parametrize("name", sorted(EXPECTED_TOP_LEVEL))
def test_every_exported_name_exists(name: str) -> None:
    assert getattr(cdk, name) is not None


@pytest.mark.parametrize("name", DESIGN_CORE_NAMES)
def test_design_names_import_from_cdk(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from cdk import {name}", namespace)
    assert name in namespace


@pytest.mark.parametrize(
    "module",
    [
        "cdk.config",
        "cdk.data",
        "cdk.api",
        "cdk.converters",
        "cdk.transforms",
        "cdk.errors",
        "cdk.kafka",
        "cdk.runtime",
        "cdk.runtime.distributed",
        "cdk.runtime.errors",
        "cdk.runtime.isolation",
        "cdk.runtime.metrics",
        "cdk.runtime.rest",
        "cdk.runtime.standalone",
        "cdk.runtime.storage",
        "cdk.runtime.util",
        "cdk.spark",
    ],
)
def test_subpackage_all_names_exist_and_are_public(module: str) -> None:
    mod = importlib.import_module(module)
    assert mod.__all__, f"{module} exports nothing"
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.__all__ names a missing {name}"
        obj = getattr(mod, name)
        owner = getattr(obj, "__module__", module) or module
        assert owner.startswith("cdk"), f"{module}.{name} comes from {owner}"


def test_facade_objects_are_the_subpackage_objects() -> None:
    from cdk import config, data

    assert cdk.ConfigDef is config.ConfigDef
    assert cdk.Struct is data.Struct


def test_kafka_aliases_resolve_to_shipped_plugins() -> None:
    from cdk._aliases import KAFKA_CLASS_ALIASES
    from cdk.config import load_class

    for alias in KAFKA_CLASS_ALIASES:
        cls = load_class(alias)
        assert isinstance(cls, type), alias


def test_the_harness_facade_is_pinned() -> None:
    # what a connector project's drivers and unit tests import from ``harness``
    import harness

    assert set(harness.__all__) == {
        "ConnectorDriver",
        "Delivery",
        "FakeOffsetStorageReader",
        "FakeSinkTaskContext",
        "FakeSourceTaskContext",
        "Limit",
        "SinkDriver",
        "SourceDriver",
        "SourceKind",
        "default_sink_value",
        "default_sink_value_schema",
        "read_topic",
    }
    for name in harness.__all__:
        assert getattr(harness, name) is not None
