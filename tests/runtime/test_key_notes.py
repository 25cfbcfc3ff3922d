"""Kafka keys that differ in cdk: warned about or refused at start, and the guide's table."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cdk.errors import ConfigException
from cdk.runtime._key_notes import (
    CONNECTOR_KEY_NOTES,
    WORKER_KEY_NOTES,
    closest_key,
    key_notes_rst,
)
from cdk.runtime._worker_config import WorkerConfig
from cdk.runtime.distributed._config import DistributedConfig
from cdk.runtime.isolation._plugins import Plugins
from cdk.runtime.rest._config_infos import config_infos

BASE = {"key.converter": "JsonConverter", "value.converter": "StringConverter"}
DISTRIBUTED = {
    **BASE,
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
}
GUIDE = Path(__file__).parents[2] / "docs" / "guide" / "running.rst"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "cdk.runtime.config" and r.levelno == logging.WARNING
    ]


def test_a_misspelt_worker_key_is_warned_about_with_the_closest_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="cdk.runtime.config"):
        WorkerConfig(
            {
                **BASE,
                "listeners.https.ssl.client.authentication": "required",
                "offset.flush.interval.msec": "1000",
                "completely.unrelated.thing": "x",
                "producer.linger.ms": "5",  # a client key: handed on, not reported
                "config.providers": "env",
                "config.providers.env.class": "EnvVarConfigProvider",
                "listeners.https.ssl.client.auth": "required",  # known prefixed key
            }
        )
    assert _warnings(caplog) == [
        "The configuration 'completely.unrelated.thing' was supplied but isn't a known config.",
        "The configuration 'listeners.https.ssl.client.authentication' was supplied but isn't a "
        "known config; did you mean 'listeners.https.ssl.client.auth'?",
        "The configuration 'offset.flush.interval.msec' was supplied but isn't a known config; "
        "did you mean 'offset.flush.interval.ms'?",
    ]


def test_keys_without_effect_are_warned_about_once_each_naming_what_to_use(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="cdk.runtime.config"):
        DistributedConfig(
            {
                **DISTRIBUTED,
                "connect.protocol": "eager",
                "inter.worker.key.ttl.ms": "1000",
                "metric.reporters": "com.example.Reporter",
                "spark.master": "local[1]",  # the SparkSession's: handed on
            }
        )
    assert _warnings(caplog) == [
        "The configuration 'connect.protocol' has no effect in cdk distributed: "
        + WORKER_KEY_NOTES["connect.protocol"].note
        + ".",
        "The configuration 'inter.worker.key.ttl.ms' has no effect in cdk distributed: "
        + WORKER_KEY_NOTES["inter.worker.key.ttl.ms"].note
        + ".",
        "The configuration 'metric.reporters' has no effect in cdk distributed: "
        "cdk has no JMX or Java metrics reporters; scrape GET /metrics (Prometheus text format).",
    ]


def test_a_distributed_key_in_a_standalone_file_is_unknown_as_in_kafka(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="cdk.runtime.config"):
        WorkerConfig({**BASE, "connect.protocol": "eager", "group.id": "g"})
    assert _warnings(caplog) == [
        "The configuration 'connect.protocol' was supplied but isn't a known config.",
        "The configuration 'group.id' was supplied but isn't a known config.",
    ]


def test_a_key_whose_absence_would_be_unsafe_is_refused() -> None:
    with pytest.raises(ConfigException) as info:
        WorkerConfig({**BASE, "rest.extension.classes": "com.example.AuthExtension"})
    assert str(info.value).startswith(
        "The configuration 'rest.extension.classes' is not supported in cdk standalone: Java "
        "REST extensions cannot run in cdk; use rest.basic.auth.user"
    )


def test_a_connector_key_that_differs_is_reported_by_validate_in_its_mode() -> None:
    props = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "name": "f",
        "topic": "t",
        "file": "/dev/null",
        "offsets.storage.topic": "my-offsets",
    }
    plugins = Plugins()
    distributed = config_infos(plugins, DistributedConfig(DISTRIBUTED), props, dict)
    errors = {
        c["value"]["name"]: c["value"]["errors"] for c in distributed["configs"] if c["value"]
    }
    assert errors["offsets.storage.topic"] == [
        "The configuration 'offsets.storage.topic' is not supported in cdk distributed: "
        + CONNECTOR_KEY_NOTES["offsets.storage.topic"].note
        + "."
    ]
    standalone = config_infos(plugins, WorkerConfig(BASE), props, dict)
    errors = {c["value"]["name"]: c["value"]["errors"] for c in standalone["configs"] if c["value"]}
    assert errors["offsets.storage.topic"] == [
        "The configuration 'offsets.storage.topic' is not supported in cdk standalone: "
        + CONNECTOR_KEY_NOTES["offsets.storage.topic"].note
        + "."
    ]


def test_closest_key_only_suggests_likely_typos() -> None:
    assert closest_key("topik", ["topic", "tasks.max"]) == "topic"
    assert closest_key("bootstrap", ["topic", "tasks.max"]) is None


def test_the_running_guide_lists_every_key_that_differs_from_kafka() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    marker = "cdk.runtime._key_notes.key_notes_rst(); a test keeps it equal\n\n"
    assert marker in text
    rendered = key_notes_rst()
    assert text.split(marker, 1)[1].startswith(rendered), (
        "docs/guide/running.rst's table of keys that differ from Kafka is out of date: paste "
        "cdk.runtime._key_notes.key_notes_rst() after its marker"
    )
    for key in (*WORKER_KEY_NOTES, *CONNECTOR_KEY_NOTES):
        assert f"   * - ``{key}``\n" in rendered
