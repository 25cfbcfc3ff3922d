"""StringConverter, ByteArrayConverter and the number/boolean converters (Kafka's tests, ported)."""

from __future__ import annotations

import struct

import pytest

from cdk.converters import (
    BooleanConverter,
    ByteArrayConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
    StringConverter,
)
from cdk.data import Schema, SchemaAndValue, SchemaBuilder
from cdk.errors import ConfigException, DataException

TOPIC = "topic"
SAMPLE = "a string"


# -- StringConverter ----------------------------------------------------------------------------
def test_string_to_bytes() -> None:
    conv = StringConverter()
    assert conv.from_connect_data(TOPIC, Schema.STRING_SCHEMA, SAMPLE) == SAMPLE.encode()


def test_non_string_to_bytes() -> None:
    conv = StringConverter()
    assert conv.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True) == b"true"
    assert conv.from_connect_data(TOPIC, Schema.INT32_SCHEMA, 12) == b"12"


def test_null_to_bytes() -> None:
    assert StringConverter().from_connect_data(TOPIC, Schema.OPTIONAL_STRING_SCHEMA, None) is None


def test_string_to_connect() -> None:
    conv = StringConverter()
    assert conv.to_connect_data(TOPIC, SAMPLE.encode()) == SchemaAndValue(
        Schema.OPTIONAL_STRING_SCHEMA, SAMPLE
    )
    assert conv.to_connect_data(TOPIC, None) == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)


def test_string_encoding_config() -> None:
    conv = StringConverter()
    conv.configure({"converter.encoding": "UTF-16BE"}, is_key=True)
    assert conv.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "é") == "é".encode("utf-16-be")
    assert conv.to_connect_data(TOPIC, "é".encode("utf-16-be")).value == "é"
    latin = StringConverter()
    latin.configure({"converter.encoding": "ISO-8859-1"}, is_key=False)
    assert latin.from_connect_data(TOPIC, None, "€") == b"?"  # unmappable, as Java replaces it
    with pytest.raises(ConfigException, match=r"converter\.encoding"):
        StringConverter().configure({"converter.encoding": "no-such-charset"}, is_key=False)


def test_string_config_def() -> None:
    config = StringConverter().config()
    assert config.default_values()["converter.encoding"] == "UTF-8"
    assert "converter.type" in config.names()
    with pytest.raises(ConfigException):
        StringConverter().configure({"converter.type": "bogus"})


def test_string_headers() -> None:
    conv = StringConverter()
    conv.configure({})
    assert conv.from_connect_header(TOPIC, "h", Schema.STRING_SCHEMA, SAMPLE) == SAMPLE.encode()
    assert conv.to_connect_header(TOPIC, "h", SAMPLE.encode()) == SchemaAndValue(
        Schema.OPTIONAL_STRING_SCHEMA, SAMPLE
    )


def test_invalid_utf8_is_replaced() -> None:
    assert StringConverter().to_connect_data(TOPIC, b"a\xffb").value == "a\ufffdb"


# -- ByteArrayConverter -------------------------------------------------------------------------
def test_bytes_round_trip() -> None:
    conv = ByteArrayConverter()
    conv.configure({}, is_key=False)
    assert conv.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, b"\x00\x01") == b"\x00\x01"
    assert conv.from_connect_data(TOPIC, None, bytearray(b"xy")) == b"xy"
    assert conv.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, None) is None
    assert conv.to_connect_data(TOPIC, b"\x00\x01") == SchemaAndValue(
        Schema.OPTIONAL_BYTES_SCHEMA, b"\x00\x01"
    )
    assert conv.to_connect_data(TOPIC, None) == SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, None)


def test_bytes_invalid_schema_and_value() -> None:
    conv = ByteArrayConverter()
    with pytest.raises(DataException, match="Invalid schema type for ByteArrayConverter: INT32"):
        conv.from_connect_data(TOPIC, Schema.INT32_SCHEMA, b"x")
    with pytest.raises(DataException, match="not compatible with objects of type"):
        conv.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, "a string")


def test_bytes_headers() -> None:
    conv = ByteArrayConverter()
    assert conv.from_connect_header(TOPIC, "h", None, b"x") == b"x"
    assert conv.to_connect_header(TOPIC, "h", b"x").value == b"x"


# -- number converters --------------------------------------------------------------------------
NUMBERS = [
    (ShortConverter, Schema.OPTIONAL_INT16_SCHEMA, ">h", [-32768, -1, 0, 1, 32767], 2),
    (IntegerConverter, Schema.OPTIONAL_INT32_SCHEMA, ">i", [-(2**31), -1, 0, 1, 2**31 - 1], 4),
    (LongConverter, Schema.OPTIONAL_INT64_SCHEMA, ">q", [-(2**63), -1, 0, 2**63 - 1], 8),
    (FloatConverter, Schema.OPTIONAL_FLOAT32_SCHEMA, ">f", [-1.5, 0.0, 3.25, float("inf")], 4),
    (DoubleConverter, Schema.OPTIONAL_FLOAT64_SCHEMA, ">d", [-1.5, 0.1, 1e300], 8),
]


@pytest.mark.parametrize(("cls", "schema", "fmt", "values", "size"), NUMBERS)
def test_number_round_trip(
    cls: type, schema: Schema, fmt: str, values: list[float], size: int
) -> None:
    conv = cls()
    conv.configure({}, is_key=False)
    for value in values:
        data = conv.from_connect_data(TOPIC, schema, value)
        assert data == struct.pack(fmt, value)  # big-endian, as Kafka's serializers
        assert len(data) == size
        assert conv.to_connect_data(TOPIC, data) == SchemaAndValue(schema, value)
        assert conv.from_connect_header(TOPIC, "h", schema, value) == data
        assert conv.to_connect_header(TOPIC, "h", data) == SchemaAndValue(schema, value)
    assert conv.from_connect_data(TOPIC, schema, None) is None
    assert conv.to_connect_data(TOPIC, None) == SchemaAndValue(schema, None)
    assert conv.config().names() == {"converter.type"}


def test_integer_bytes_are_big_endian() -> None:
    assert IntegerConverter().from_connect_data(TOPIC, None, 1) == b"\x00\x00\x00\x01"
    assert LongConverter().to_connect_data(TOPIC, b"\xff" * 8).value == -1


@pytest.mark.parametrize(("cls", "schema", "fmt", "values", "size"), NUMBERS)
def test_number_wrong_type_and_length(
    cls: type, schema: Schema, fmt: str, values: list[float], size: int
) -> None:
    conv = cls()
    with pytest.raises(DataException, match="Failed to serialize to"):
        conv.from_connect_data(TOPIC, schema, "not a number")
    with pytest.raises(DataException, match="Failed to serialize to"):
        conv.from_connect_data(TOPIC, schema, True)
    with pytest.raises(DataException, match=f"is not {size}"):
        conv.to_connect_data(TOPIC, b"\x00" * (size + 1))


def test_integer_out_of_range() -> None:
    with pytest.raises(DataException, match="Failed to serialize to short"):
        ShortConverter().from_connect_data(TOPIC, None, 40000)
    with pytest.raises(DataException, match="Failed to serialize to integer"):
        IntegerConverter().from_connect_data(TOPIC, None, 2**31)
    with pytest.raises(DataException, match="Failed to serialize to float"):
        FloatConverter().from_connect_data(TOPIC, None, 1e300)


def test_float_reads_32_bits() -> None:
    conv = FloatConverter()
    value = conv.to_connect_data(TOPIC, conv.from_connect_data(TOPIC, None, 0.1)).value
    assert value == struct.unpack(">f", struct.pack(">f", 0.1))[0]


# -- BooleanConverter ---------------------------------------------------------------------------
def test_boolean_round_trip() -> None:
    conv = BooleanConverter()
    conv.configure({}, is_key=True)
    assert conv.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True) == b"\x01"
    assert conv.from_connect_data(TOPIC, None, False) == b"\x00"
    assert conv.from_connect_data(TOPIC, Schema.OPTIONAL_BOOLEAN_SCHEMA, None) is None
    assert conv.to_connect_data(TOPIC, b"\x01") == SchemaAndValue(
        Schema.OPTIONAL_BOOLEAN_SCHEMA, True
    )
    assert conv.to_connect_data(TOPIC, b"\x00").value is False
    assert conv.to_connect_data(TOPIC, None) == SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, None)


def test_boolean_errors() -> None:
    conv = BooleanConverter()
    with pytest.raises(DataException, match="Invalid schema type for BooleanConverter: INT32"):
        conv.from_connect_data(TOPIC, Schema.INT32_SCHEMA, True)
    with pytest.raises(DataException, match="not compatible with objects of type"):
        conv.from_connect_data(TOPIC, SchemaBuilder.boolean().build(), 1)
    with pytest.raises(
        DataException, match="Size of data received by BooleanDeserializer is not 1"
    ):
        conv.to_connect_data(TOPIC, b"\x00\x01")
    with pytest.raises(DataException, match="Unexpected byte received by BooleanDeserializer: -1"):
        conv.to_connect_data(TOPIC, b"\xff")
