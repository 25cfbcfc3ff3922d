"""SimpleHeaderConverter: Kafka's SimpleHeaderConverterTest cases."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from cdk.converters import HeaderConverter, SimpleHeaderConverter
from cdk.data import Date, Decimal, Schema, SchemaAndValue, SchemaBuilder, Time, Timestamp

UTC = dt.timezone.utc
TOPIC = "topic"
HEADER = "header"


@pytest.fixture
def converter() -> SimpleHeaderConverter:
    conv = SimpleHeaderConverter()
    conv.configure({})
    return conv


def round_trip(conv: SimpleHeaderConverter, schema: Schema | None, value: Any) -> SchemaAndValue:
    data = conv.from_connect_header(TOPIC, HEADER, schema, value)
    return conv.to_connect_header(TOPIC, HEADER, data)


def test_is_a_header_converter_with_empty_config(converter: SimpleHeaderConverter) -> None:
    assert isinstance(converter, HeaderConverter)
    assert not list(converter.config().names())
    converter.close()


def test_null(converter: SimpleHeaderConverter) -> None:
    assert converter.from_connect_header(TOPIC, HEADER, Schema.OPTIONAL_STRING_SCHEMA, None) is None
    assert converter.to_connect_header(TOPIC, HEADER, None) == SchemaAndValue.NULL


@pytest.mark.parametrize(
    ("schema", "value", "expected_schema"),
    [
        (Schema.STRING_SCHEMA, "a string", Schema.STRING_SCHEMA),
        (Schema.STRING_SCHEMA, "", Schema.STRING_SCHEMA),
        (Schema.BOOLEAN_SCHEMA, True, Schema.BOOLEAN_SCHEMA),
        (Schema.BOOLEAN_SCHEMA, False, Schema.BOOLEAN_SCHEMA),
        (Schema.INT8_SCHEMA, 127, Schema.INT8_SCHEMA),
        (Schema.INT16_SCHEMA, 32767, Schema.INT16_SCHEMA),
        (Schema.INT32_SCHEMA, 2**31 - 1, Schema.INT32_SCHEMA),
        (Schema.INT64_SCHEMA, 2**63 - 1, Schema.INT64_SCHEMA),
        (Schema.FLOAT64_SCHEMA, 1.5, Schema.FLOAT32_SCHEMA),
        (Schema.FLOAT64_SCHEMA, 1.7976931348623157e308, Schema.FLOAT64_SCHEMA),
        (Date.SCHEMA, dt.date(2019, 8, 23), Date.SCHEMA),
        (Time.SCHEMA, dt.time(14, 34, 54, 346000), Time.SCHEMA),
        (
            Timestamp.SCHEMA,
            dt.datetime(2019, 8, 23, 14, 34, 54, 346000, tzinfo=UTC),
            Timestamp.SCHEMA,
        ),
        (Decimal.schema(0), decimal.Decimal(2**64), Decimal.schema(0)),
        (
            SchemaBuilder.array(Schema.STRING_SCHEMA).build(),
            ["foo", "bar"],
            SchemaBuilder.array(Schema.STRING_SCHEMA).build(),
        ),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
            {"foo": 1234567890, "bar": 0},
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
        ),
    ],
)
def test_round_trips(
    converter: SimpleHeaderConverter, schema: Schema, value: Any, expected_schema: Schema
) -> None:
    result = round_trip(converter, schema, value)
    assert result.schema == expected_schema
    assert result.value == value


def test_wire_format_is_utf8_text(converter: SimpleHeaderConverter) -> None:
    assert converter.from_connect_header(TOPIC, HEADER, None, "héllo") == "héllo".encode()
    assert converter.from_connect_header(TOPIC, HEADER, None, [1, "a"]) == b'[1,"a"]'
    assert converter.from_connect_header(TOPIC, HEADER, None, 1e10) == b"1.0E10"
    assert converter.from_connect_header(TOPIC, HEADER, None, b"\x00\x9c") == b"AJw="
    assert converter.to_connect_header(TOPIC, HEADER, "héllo".encode()) == SchemaAndValue(
        Schema.STRING_SCHEMA, "héllo"
    )


def test_empty_bytes_are_an_empty_string(converter: SimpleHeaderConverter) -> None:
    assert converter.to_connect_header(TOPIC, HEADER, b"") == SchemaAndValue(
        Schema.STRING_SCHEMA, ""
    )


def test_text_null_is_null(converter: SimpleHeaderConverter) -> None:
    assert converter.to_connect_header(TOPIC, HEADER, b"null") == SchemaAndValue.NULL


def test_invalid_utf8_comes_back_as_bytes(
    converter: SimpleHeaderConverter, caplog: pytest.LogCaptureFixture
) -> None:
    result = converter.to_connect_header(TOPIC, HEADER, b"\xff\xfe")
    assert result == SchemaAndValue(Schema.BYTES_SCHEMA, b"\xff\xfe")
    assert "Failed to deserialize value for header 'header' on topic 'topic'" in caplog.text


def test_alias_resolves() -> None:
    import importlib

    from cdk._aliases import KAFKA_CLASS_ALIASES

    target = KAFKA_CLASS_ALIASES["org.apache.kafka.connect.storage.SimpleHeaderConverter"]
    module, _, name = target.partition(":")
    assert getattr(importlib.import_module(module), name) is SimpleHeaderConverter
