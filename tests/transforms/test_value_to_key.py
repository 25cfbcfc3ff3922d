"""ValueToKey: Kafka's ValueToKeyTest cases."""

from __future__ import annotations

import pytest

from cdk.api import SinkRecord
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException
from cdk.transforms import ValueToKey


def xform(**configs: str) -> ValueToKey[SinkRecord]:
    x: ValueToKey[SinkRecord] = ValueToKey()
    x.configure({"fields": "a,b", **{k.replace("_", "."): v for k, v in configs.items()}})
    return x


def test_schemaless() -> None:
    value = {"a": 1, "b": 2, "c": 3}
    out = xform().apply(SinkRecord("", 0, None, None, None, value, 0))
    assert out.key_schema is None
    assert out.key == {"a": 1, "b": 2}
    assert out.value == value


def test_with_schema() -> None:
    value_schema = (
        SchemaBuilder.struct()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.INT32_SCHEMA)
        .field("c", Schema.INT32_SCHEMA)
        .build()
    )
    value = Struct(value_schema).put("a", 1).put("b", 2).put("c", 3)
    out = xform().apply(SinkRecord("", 0, None, None, value_schema, value, 0))
    expected_schema = (
        SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA)
    ).build()
    assert out.key_schema == expected_schema
    assert out.key == Struct(expected_schema).put("a", 1).put("b", 2)
    assert out.value is value


def test_non_existing_field() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    x: ValueToKey[SinkRecord] = ValueToKey()
    x.configure({"fields": "not_exist"})
    with pytest.raises(DataException, match=r"^Field does not exist: not_exist$"):
        x.apply(SinkRecord("", 0, None, None, schema, Struct(schema).put("a", 1), 0))


def test_replace_null_with_default() -> None:
    field = SchemaBuilder.int32().optional().default_value(5).build()
    schema = SchemaBuilder.struct().field("a", field).field("b", field).build()
    value = Struct(schema)
    record = SinkRecord("", 0, None, None, schema, value, 0)
    assert xform().apply(record).key.get_without_default("a") == 5
    off = xform(replace_null_with_default="false").apply(record)
    assert off.key.get_without_default("a") is None


def test_wrong_value_types() -> None:
    with pytest.raises(DataException, match=r"\[copying fields from value to key\], found: null"):
        xform().apply(SinkRecord("", 0, None, None, None, None, 0))
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"Only Struct objects supported"):
        xform().apply(SinkRecord("", 0, None, None, schema, {"a": 1}, 0))


def test_config() -> None:
    assert set(ValueToKey().config().names()) == {"fields", "replace.null.with.default"}
    with pytest.raises(ConfigException, match=r"configuration fields: Empty list"):
        ValueToKey().configure({"fields": ""})
    with pytest.raises(ConfigException, match=r"fields"):
        ValueToKey().configure({})
