"""HoistField: Kafka's HoistFieldTest cases."""

from __future__ import annotations

import pytest

from cdk.api import SinkRecord
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException
from cdk.transforms import HoistField


def key_xform(field: str = "magic") -> HoistField[SinkRecord]:
    x: HoistField[SinkRecord] = HoistField.Key()
    x.configure({"field": field})
    return x


def test_schemaless() -> None:
    out = key_xform().apply(SinkRecord("test", 0, None, 42, None, None, 0))
    assert out.key_schema is None
    assert out.key == {"magic": 42}


def test_with_schema() -> None:
    out = key_xform().apply(SinkRecord("test", 0, Schema.INT32_SCHEMA, 42, None, None, 0))
    expected = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    assert out.key_schema == expected
    assert out.key == Struct(expected).put("magic", 42)


def test_schemaless_map_is_mutable() -> None:
    out = key_xform().apply(SinkRecord("test", 0, None, 420, None, None, 0))
    out.key["k"] = "v"
    assert out.key == {"magic": 420, "k": "v"}


def test_value_variant_and_null() -> None:
    x: HoistField[SinkRecord] = HoistField.Value()
    x.configure({"field": "line"})
    out = x.apply(SinkRecord("test", 0, None, "k", None, None, 0))
    assert out.value == {"line": None}
    assert out.key == "k"
    optional = x.apply(SinkRecord("test", 0, None, None, Schema.OPTIONAL_STRING_SCHEMA, None, 0))
    assert optional.value.get("line") is None


def test_null_for_required_schema_is_rejected() -> None:
    x: HoistField[SinkRecord] = HoistField.Value()
    x.configure({"field": "line"})
    with pytest.raises(DataException, match=r"line"):
        x.apply(SinkRecord("test", 0, None, None, Schema.STRING_SCHEMA, None, 0))


def test_schema_is_cached() -> None:
    x = key_xform()
    first = x.apply(SinkRecord("t", 0, Schema.INT32_SCHEMA, 1, None, None, 0)).key_schema
    second = x.apply(SinkRecord("t", 0, Schema.INT32_SCHEMA, 2, None, None, 0)).key_schema
    assert first is second


def test_config() -> None:
    assert set(HoistField.Key().config().names()) == {"field"}
    with pytest.raises(ConfigException, match=r"field"):
        HoistField.Key().configure({})
