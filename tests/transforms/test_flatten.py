"""Flatten: Kafka's FlattenTest cases."""

from __future__ import annotations

from typing import Any

import pytest

from cdk.api import SourceRecord
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import DataException
from cdk.transforms import Flatten


def xform(key: bool = False, **configs: str) -> Flatten[SourceRecord]:
    x: Flatten[SourceRecord] = Flatten.Key() if key else Flatten.Value()
    x.configure(configs)
    return x


def value_record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, value_schema=schema, value=value)


def test_top_level_struct_required() -> None:
    with pytest.raises(DataException, match=r"Only Struct objects supported for \[flattening\]"):
        xform().apply(value_record(Schema.INT32_SCHEMA, 42))


def test_top_level_map_required() -> None:
    with pytest.raises(DataException, match=r"Only Map objects supported .*\[flattening\]"):
        xform().apply(value_record(None, 42))


def _supported_types() -> tuple[Schema, Struct]:
    schema = (
        SchemaBuilder.struct()
        .field("int8", Schema.INT8_SCHEMA)
        .field("int16", Schema.INT16_SCHEMA)
        .field("int32", Schema.INT32_SCHEMA)
        .field("int64", Schema.INT64_SCHEMA)
        .field("float32", Schema.FLOAT32_SCHEMA)
        .field("float64", Schema.FLOAT64_SCHEMA)
        .field("boolean", Schema.BOOLEAN_SCHEMA)
        .field("string", Schema.STRING_SCHEMA)
        .field("bytes", Schema.BYTES_SCHEMA)
        .build()
    )
    value = (
        Struct(schema)
        .put("int8", 8)
        .put("int16", 16)
        .put("int32", 32)
        .put("int64", 64)
        .put("float32", 32.0)
        .put("float64", 64.0)
        .put("boolean", True)
        .put("string", "stringy")
        .put("bytes", b"bytes")
    )
    return schema, value


def test_nested_struct() -> None:
    inner_schema, inner = _supported_types()
    one_schema = SchemaBuilder.struct().field("A", inner_schema).build()
    two_schema = SchemaBuilder.struct().field("B", one_schema).build()
    value = Struct(two_schema).put("B", Struct(one_schema).put("A", inner))
    out = xform().apply(value_record(two_schema, value))
    result = out.value
    assert isinstance(result, Struct)
    assert len(result.schema.fields) == 9
    assert result.get_int8("B.A.int8") == 8
    assert result.get_int16("B.A.int16") == 16
    assert result.get_int32("B.A.int32") == 32
    assert result.get_int64("B.A.int64") == 64
    assert result.get_float32("B.A.float32") == 32.0
    assert result.get_float64("B.A.float64") == 64.0
    assert result.get_boolean("B.A.boolean") is True
    assert result.get_string("B.A.string") == "stringy"
    assert result.get_bytes("B.A.bytes") == b"bytes"


def test_nested_map_with_delimiter() -> None:
    supported = {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": 64,
        "float32": 32.0,
        "float64": 64.0,
        "boolean": True,
        "string": "stringy",
        "bytes": b"bytes",
    }
    out = xform(delimiter="#").apply(value_record(None, {"A": {"B": supported}}))
    assert out.value_schema is None
    assert out.value == {f"A#B#{k}": v for k, v in supported.items()}


def test_optional_field_struct() -> None:
    inner = SchemaBuilder.struct().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("B", inner).build()
    value = Struct(outer).put("B", Struct(inner).put("opt_int32", None))
    result = xform().apply(value_record(outer, value)).value
    field = result.schema.field("B.opt_int32")
    assert field is not None
    assert field.schema == Schema.OPTIONAL_INT32_SCHEMA
    assert result.get("B.opt_int32") is None


def test_optional_struct() -> None:
    schema = SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA)
    built = schema.build()
    out = xform().apply(value_record(built, None))
    assert out.value_schema == built
    assert out.value is None


def test_optional_nested_struct() -> None:
    inner = (
        SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    )
    outer = SchemaBuilder.struct().field("B", inner).build()
    result = xform().apply(value_record(outer, Struct(outer).put("B", None))).value
    assert result.get("B.opt_int32") is None


def test_fields_under_optional_struct_become_optional() -> None:
    inner = SchemaBuilder.struct().optional().field("req", Schema.INT32_SCHEMA).build()
    outer = SchemaBuilder.struct().field("B", inner).build()
    result = xform().apply(value_record(outer, Struct(outer).put("B", None))).value
    field = result.schema.field("B.req")
    assert field is not None
    assert field.schema == Schema.OPTIONAL_INT32_SCHEMA
    assert result.get("B.req") is None


def test_field_defaults_and_metadata_are_kept() -> None:
    field_schema = SchemaBuilder.string().optional().default_value("dflt").doc("d").build()
    inner = SchemaBuilder.struct().field("s", field_schema).build()
    outer = SchemaBuilder.struct().name("Outer").version(3).doc("top").field("B", inner).build()
    out = xform().apply(value_record(outer, Struct(outer).put("B", Struct(inner))))
    schema = out.value_schema
    assert schema is not None
    assert (schema.name, schema.version, schema.doc) == ("Outer", 3, "top")
    flat = schema.field("B.s")
    assert flat is not None
    assert flat.schema == field_schema
    assert out.value.get("B.s") == "dflt"


def test_optional_field_map() -> None:
    out = xform().apply(value_record(None, {"B": {"opt_int32": None}}))
    assert out.value == {"B.opt_int32": None}


def test_key() -> None:
    record = SourceRecord(None, None, "topic", 0, None, {"A": {"B": 12}}, None, None)
    out = xform(key=True).apply(record)
    assert out.key == {"A.B": 12}


def test_schemaless_array() -> None:
    value = {"foo": [1, 2, 3]}
    assert xform().apply(value_record(None, value)).value == value


def test_array_and_map_with_schema() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("arr", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
        .build()
    )
    value = Struct(schema).put("arr", ["a"]).put("map", {"k": 1})
    out = xform().apply(value_record(schema, value))
    assert out.value.get("arr") == ["a"]
    assert out.value.get("map") == {"k": 1}


def test_unsupported_type_in_map() -> None:
    with pytest.raises(DataException, match=r"was passed a value of type class object"):
        xform().apply(value_record(None, {"foo": object()}))
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"does not support class Struct .*field foo\.bar"):
        xform().apply(value_record(None, {"foo": {"bar": Struct(schema).put("a", 1)}}))


def test_tombstone_passes_through() -> None:
    record = value_record(None, None)
    assert xform().apply(record) is record


def test_schema_is_cached() -> None:
    schema, value = _supported_types()
    outer = SchemaBuilder.struct().field("A", schema).build()
    x = xform()
    first = x.apply(value_record(outer, Struct(outer).put("A", value))).value_schema
    second = x.apply(value_record(outer, Struct(outer).put("A", value))).value_schema
    assert first is second


def test_config() -> None:
    config = Flatten.Value().config()
    assert set(config.names()) == {"delimiter"}
    assert config.default_values() == {"delimiter": "."}
