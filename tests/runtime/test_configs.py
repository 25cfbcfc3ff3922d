"""Worker and connector configurations: Kafka's keys, defaults, client settings and overrides."""

from __future__ import annotations

import pytest

from cdk.config import ConfigValue, Type
from cdk.converters import JsonConverter, SimpleHeaderConverter, StringConverter
from cdk.errors import ConfigException
from cdk.runtime._config_enrich import enrich
from cdk.runtime._connector_config import ConnectorConfig, validate_sink_topics
from cdk.runtime._connector_config_def import (
    connector_config_def,
    sink_connector_config_def,
    source_connector_config_def,
)
from cdk.runtime._worker_config import WORKER_CONFIG_DEF, WorkerConfig, check_client_override
from cdk.runtime.isolation._plugins import Plugins

BASE = {"key.converter": "JsonConverter", "value.converter": "StringConverter"}


def test_worker_defaults_match_kafka() -> None:
    config = WorkerConfig(BASE)
    assert config.bootstrap_servers == "localhost:9092"
    assert config.get_class("key.converter") is JsonConverter
    assert config.get_class("value.converter") is StringConverter
    assert config.get_class("header.converter") is SimpleHeaderConverter
    assert config.offset_flush_interval_ms == 60000
    assert config.offset_flush_timeout_ms == 5000
    assert config.task_shutdown_timeout_ms == 5000
    assert config.offset_file is None
    assert config.override_policy == "All"
    assert config.listener() == ("http", "127.0.0.1", 8083)
    assert config.basic_auth() is None
    assert config.metrics_window_ms == 30000  # metrics.sample.window.ms
    assert config.metrics_num_samples == 2  # metrics.num.samples
    doc = WORKER_CONFIG_DEF.find("offset.flush.interval.ms")
    assert doc is not None
    assert doc.documentation == "Interval at which to try committing offsets for tasks."


@pytest.mark.parametrize("missing", ["key.converter", "value.converter"])
def test_worker_requires_converters(missing: str) -> None:
    props = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ConfigException, match=f'"{missing}" which has no default value'):
        WorkerConfig(props)


def test_worker_rejects_bad_values_naming_the_key() -> None:
    with pytest.raises(ConfigException, match=r"offset.flush.interval.ms"):
        WorkerConfig({**BASE, "offset.flush.interval.ms": "soon"})
    with pytest.raises(ConfigException, match=r"connector.client.config.override.policy"):
        WorkerConfig({**BASE, "connector.client.config.override.policy": "Some"})
    with pytest.raises(ConfigException, match=r"listeners"):
        WorkerConfig({**BASE, "listeners": "ftp://host:21"})
    with pytest.raises(ConfigException, match=r"key.converter"):
        WorkerConfig({**BASE, "key.converter": "com.acme.NoSuchConverter"})


def test_client_settings_apply_kafka_prefixes() -> None:
    config = WorkerConfig(
        {
            **BASE,
            "bootstrap.servers": "a:1,b:2",
            "producer.linger.ms": "5",
            "consumer.max.poll.interval.ms": "1000",
            "consumer.session.timeout.ms": "10000",
            "admin.client.id": "adm",
        }
    )
    producer = config.producer_props()
    assert producer["bootstrap.servers"] == "a:1,b:2"
    assert producer["acks"] == "all"
    assert producer["linger.ms"] == "5"
    assert "max.poll.interval.ms" not in producer
    consumer = config.consumer_props("connect-x")
    assert consumer["group.id"] == "connect-x"
    assert consumer["enable.auto.commit"] is False
    assert consumer["auto.offset.reset"] == "earliest"
    assert consumer["max.poll.interval.ms"] == "1000"
    assert consumer["session.timeout.ms"] == "10000"
    assert consumer["heartbeat.interval.ms"] == 500
    assert config.admin_props() == {"bootstrap.servers": "a:1,b:2", "client.id": "adm"}


def test_client_overrides_follow_the_policy() -> None:
    connector = {
        "producer.override.linger.ms": "7",
        "producer.override.sasl.mechanism": "PLAIN",
        "consumer.override.fetch.min.bytes": "2",
    }
    assert WorkerConfig(BASE).client_overrides(connector, "producer") == {
        "linger.ms": "7",
        "sasl.mechanism": "PLAIN",
    }
    principal = WorkerConfig({**BASE, "connector.client.config.override.policy": "Principal"})
    with pytest.raises(ConfigException) as info:
        principal.client_overrides(connector, "producer")
    assert info.value.name == "producer.override.linger.ms"
    assert "The 'Principal' policy does not allow 'linger.ms' to be overridden" in str(info.value)
    assert principal.client_overrides({"producer.override.sasl.mechanism": "X"}, "producer") == {
        "sasl.mechanism": "X"
    }
    none = WorkerConfig(
        {
            **BASE,
            "connector.client.config.override.policy": (
                "org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy"
            ),
        }
    )
    assert none.override_policy == "None"
    with pytest.raises(ConfigException, match=r"consumer.override.fetch.min.bytes"):
        none.client_overrides(connector, "consumer")
    assert none.client_overrides({}, "admin") == {}
    assert check_client_override("All", "admin", "anything") is None


def test_listener_and_basic_auth() -> None:
    config = WorkerConfig(
        {
            **BASE,
            "listeners": "http://0.0.0.0:0",
            "rest.basic.auth.user": "admin",
            "rest.basic.auth.password": "s3cret",
        }
    )
    assert config.listener() == ("http", "0.0.0.0", 0)
    assert config.basic_auth() == ("admin", "s3cret")
    assert "s3cret" not in repr(config)
    with pytest.raises(ConfigException, match=r"rest.basic.auth.password"):
        WorkerConfig({**BASE, "rest.basic.auth.user": "admin"}).basic_auth()


def test_connector_config_defs_have_kafka_keys_and_groups() -> None:
    common = connector_config_def()
    assert [k.name for k in common.sorted_keys()][:4] == [
        "name",
        "connector.class",
        "tasks.max",
        "tasks.max.enforce",
    ]
    assert common.groups() == ["Common", "Transforms", "Predicates", "Error Handling"]
    defaults = common.default_values()
    assert defaults["tasks.max"] == 1
    assert defaults["tasks.max.enforce"] is True
    assert defaults["errors.tolerance"] == "none"
    assert defaults["errors.retry.timeout"] == 0
    assert defaults["errors.retry.delay.max.ms"] == 60000
    assert defaults["key.converter"] is None
    assert defaults["header.converter"] is None
    sink = sink_connector_config_def()
    assert {"topics", "topics.regex", "errors.deadletterqueue.topic.name"} <= sink.names()
    assert sink.default_values()["errors.deadletterqueue.topic.replication.factor"] == 3
    source = source_connector_config_def()
    assert {"topic.creation.groups", "exactly.once.support", "transaction.boundary"} <= (
        source.names()
    )
    assert "topics" not in source.names()
    assert "``tasks.max``" in sink.to_rst()


def test_enrich_adds_transform_predicate_and_topic_creation_keys() -> None:
    plugins = Plugins()
    props = {
        "transforms": "add",
        "transforms.add.type": "InsertField$Value",
        "transforms.add.predicate": "tomb",
        "predicates": "tomb",
        "predicates.tomb.type": "RecordIsTombstone",
        "topic.creation.default.replication.factor": "1",
        "topic.creation.default.partitions": "3",
        "topic.creation.groups": "big",
        "topic.creation.big.include": "big.*",
    }
    definition = enrich(plugins, source_connector_config_def(), props, True, kind="source")
    names = definition.names()
    assert {"transforms.add.type", "transforms.add.static.field", "transforms.add.negate"} <= names
    assert "predicates.tomb.type" in names
    assert "topic.creation.default.partitions" in names
    assert "topic.creation.big.partitions" in names
    assert definition.find("transforms.add.type") is not None
    assert definition.find("transforms.add.type").type is Type.CLASS  # type: ignore[union-attr]
    assert "Transforms: add" in definition.groups()
    big = definition.find("topic.creation.big.partitions")
    assert big is not None
    assert big.default_value == 3
    values = definition.validate_all({**props, "name": "n", "connector.class": "C"})
    assert not [v for v in values.values() if v.error_messages]


def test_enrich_reports_bad_transforms() -> None:
    plugins = Plugins()
    props = {
        "transforms": "a,b",
        "transforms.a.type": "com.acme.Nope",
        "transforms.b.type": "cdk.transforms.InsertField",
        "transforms.b.negate": "true",
    }
    with pytest.raises(ConfigException, match=r"transforms.a.type"):
        enrich(plugins, sink_connector_config_def(), props, True)
    definition = enrich(plugins, sink_connector_config_def(), props, False)
    values = definition.validate_all(props)
    assert values["transforms.a.type"].error_messages == [
        "Invalid value com.acme.Nope for configuration transforms.a.type: "
        "Class com.acme.Nope could not be found."
    ]
    (b_error,) = values["transforms.b.type"].error_messages
    assert "Config 'transforms.b.negate' was provided but there is no config" in b_error
    del props["transforms.b.negate"]
    values = enrich(plugins, sink_connector_config_def(), props, False).validate_all(props)
    (b_error,) = values["transforms.b.type"].error_messages
    assert "Transformation is abstract and cannot be created. Did you mean" in b_error
    assert "InsertField.Value" in b_error


def test_connector_config_parses_and_builds_the_chain() -> None:
    config = ConnectorConfig(
        {
            "name": "c",
            "connector.class": "FileStreamSink",
            "topics": "t",
            "tasks.max": "2",
            "transforms": "route",
            "transforms.route.type": "RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "x-$1",
        },
        kind="sink",
    )
    assert config.get_int("tasks.max") == 2
    chain = config.transformation_chain()
    assert [stage.alias for stage in chain] == ["route"]
    with pytest.raises(ConfigException, match=r"tasks.max"):
        ConnectorConfig({"name": "c", "connector.class": "X", "tasks.max": "0"})


def test_sink_topic_rules() -> None:
    values: dict[str, ConfigValue] = {}
    validate_sink_topics({}, values)
    assert values["topics"].error_messages == ["Must configure one of topics or topics.regex"]
    assert values["topics.regex"].error_messages == ["Must configure one of topics or topics.regex"]
    values = {}
    validate_sink_topics({"topics": "a", "topics.regex": "a.*"}, values)
    assert "mutually exclusive" in values["topics"].error_messages[0]
    values = {}
    validate_sink_topics({"topics": "a,dlq", "errors.deadletterqueue.topic.name": "dlq"}, values)
    assert (
        "The DLQ topic 'dlq' may not be included"
        in (values["errors.deadletterqueue.topic.name"].error_messages[0])
    )
