"""TimestampRouter, ported from Kafka's TimestampRouterTest."""

from __future__ import annotations

import pytest

from cdk.api import SourceRecord
from cdk.errors import ConfigException, DataException
from cdk.transforms import TimestampRouter


def _record(topic: str = "test", timestamp: int | None = 1483425001864) -> SourceRecord:
    return SourceRecord(None, None, topic, 0, None, "k", None, "v", timestamp)


def _router(**config: str) -> TimestampRouter[SourceRecord]:
    xform: TimestampRouter[SourceRecord] = TimestampRouter()
    xform.configure({k.replace("_", "."): v for k, v in config.items()})
    return xform


def test_default_configuration() -> None:
    out = _router().apply(_record())
    assert out is not None
    assert out.topic == "test-20170103"
    assert (out.key, out.value, out.timestamp) == ("k", "v", 1483425001864)


def test_custom_formats() -> None:
    xform = _router(
        topic_format="${timestamp}_${topic}_${topic}", timestamp_format="yyyy-MM-dd'T'HH"
    )
    out = xform.apply(_record("orders"))
    assert out is not None
    assert out.topic == "2017-01-03T06_orders_orders"


def test_topic_is_substituted_before_timestamp() -> None:
    # Kafka replaces ${topic} first, so a topic containing "${timestamp}" is expanded too
    out = _router().apply(_record("a${timestamp}"))
    assert out is not None
    assert out.topic == "a20170103-20170103"


def test_missing_timestamp() -> None:
    with pytest.raises(DataException, match="Timestamp missing on record"):
        _router().apply(_record(timestamp=None))


def test_bad_timestamp_format_names_the_key() -> None:
    with pytest.raises(ConfigException, match="Illegal pattern character 'b'") as info:
        _router(timestamp_format="bad")
    assert info.value.name == "timestamp.format"


def test_config_defaults() -> None:
    defaults = TimestampRouter().config().default_values()
    assert defaults == {"topic.format": "${topic}-${timestamp}", "timestamp.format": "yyyyMMdd"}
