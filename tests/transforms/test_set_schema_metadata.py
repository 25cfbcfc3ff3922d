"""SetSchemaMetadata, ported from Kafka's SetSchemaMetadataTest."""

from __future__ import annotations

from typing import Any

import pytest

from cdk.api import SinkRecord
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException
from cdk.transforms import SetSchemaMetadata
from cdk.transforms._set_schema_metadata import update_schema_in


def _xform(key: bool = False, **config: Any) -> SetSchemaMetadata[SinkRecord]:
    xform: SetSchemaMetadata[SinkRecord] = (
        SetSchemaMetadata.Key() if key else SetSchemaMetadata.Value()
    )
    xform.configure({k.replace("_", "."): v for k, v in config.items()})
    return xform


def _apply(xform: SetSchemaMetadata[SinkRecord], record: SinkRecord) -> SinkRecord:
    out = xform.apply(record)
    assert out is not None
    return out


def _value_record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("", 0, None, None, schema, value, 0)


def test_schema_name_update() -> None:
    out = _apply(_xform(schema_name="foo"), _value_record(SchemaBuilder.struct().build(), None))
    assert out.value_schema.name == "foo"


def test_schema_version_update() -> None:
    out = _apply(_xform(schema_version=42), _value_record(SchemaBuilder.struct().build(), None))
    assert out.value_schema.version == 42


def test_schema_name_and_version_update() -> None:
    xform = _xform(schema_name="foo", schema_version="42")
    out = _apply(xform, _value_record(SchemaBuilder.struct().build(), None))
    assert out.value_schema.name == "foo"
    assert out.value_schema.version == 42


def _struct_schema(name: str) -> Schema:
    return (
        SchemaBuilder.struct()
        .name(name)
        .field("f1", Schema.STRING_SCHEMA)
        .field("f2", Schema.INT32_SCHEMA)
        .build()
    )


def _assert_matching_schema(value: Struct, schema: Schema) -> None:
    assert value.schema is schema
    for field in schema.fields:
        found = value.schema.field(field.name)
        assert found is not None
        assert (found.name, found.index) == (field.name, field.index)
        assert found.schema is field.schema


def test_schema_name_and_version_update_with_struct() -> None:
    schema = _struct_schema("my.orig.SchemaDefn")
    value = Struct(schema).put("f1", "value1").put("f2", 1)
    out = _apply(_xform(schema_name="foo", schema_version="42"), _value_record(schema, value))
    assert out.value_schema.name == "foo"
    assert out.value_schema.version == 42
    _assert_matching_schema(out.value, out.value_schema)
    assert out.value.get("f1") == "value1"
    assert out.value.get("f2") == 1


def test_key_variant() -> None:
    schema = _struct_schema("k")
    key = Struct(schema).put("f1", "a").put("f2", 2)
    out = _apply(
        _xform(key=True, schema_name="renamed"), SinkRecord("t", 0, schema, key, None, "v", 0)
    )
    assert out.key_schema.name == "renamed"
    _assert_matching_schema(out.key, out.key_schema)
    assert out.value == "v"


def test_update_schema_of_struct() -> None:
    value = Struct(_struct_schema("my.orig.SchemaDefn")).put("f1", "value1").put("f2", 1)
    new_schema = _struct_schema("my.updated.SchemaDefn")
    _assert_matching_schema(update_schema_in(value, new_schema), new_schema)


def test_update_schema_of_non_struct() -> None:
    value = 1
    assert update_schema_in(value, Schema.INT32_SCHEMA) is value


def test_update_schema_of_null() -> None:
    assert update_schema_in(None, Schema.INT32_SCHEMA) is None


def test_value_schema_required() -> None:
    with pytest.raises(DataException, match=r"Schema required for \[updating schema metadata\]"):
        _xform(schema_name="foo").apply(_value_record(None, 42))


def test_ignore_record_with_null_value() -> None:
    record = _value_record(None, None)
    assert _xform(schema_name="foo").apply(record) is record


def test_keeps_other_schema_attributes() -> None:
    schema = (
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA)
        .optional()
        .doc("docs")
        .parameter("p", "v")
        .default_value({"a": 1})
        .build()
    )
    out = _apply(_xform(schema_name="m"), _value_record(schema, {"b": 2}))
    updated = out.value_schema
    assert (updated.name, updated.doc, dict(updated.parameters)) == ("m", "docs", {"p": "v"})
    assert updated.optional
    assert updated.default_value == {"a": 1}
    assert (updated.key_schema, updated.value_schema) == (Schema.STRING_SCHEMA, Schema.INT32_SCHEMA)
    assert out.value == {"b": 2}


def test_array_schema() -> None:
    schema = SchemaBuilder.array(Schema.STRING_SCHEMA).build()
    out = _apply(_xform(schema_version=3), _value_record(schema, ["x"]))
    assert out.value_schema.version == 3
    assert out.value_schema.value_schema == Schema.STRING_SCHEMA


@pytest.mark.parametrize(("replace", "expected"), [("true", "dflt"), ("false", None)])
def test_replace_null_with_default(replace: str, expected: str | None) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("f", SchemaBuilder.string().optional().default_value("dflt").build())
        .build()
    )
    xform = _xform(schema_name="n", replace_null_with_default=replace)
    out = _apply(xform, _value_record(schema, Struct(schema)))
    assert out.value.get_without_default("f") == expected


def test_neither_name_nor_version() -> None:
    with pytest.raises(ConfigException, match="Neither schema name nor version configured"):
        SetSchemaMetadata.Value().configure({})


def test_bad_version_names_the_key() -> None:
    with pytest.raises(ConfigException, match=r"configuration schema\.version") as info:
        SetSchemaMetadata.Value().configure({"schema.version": "two"})
    assert info.value.name == "schema.version"
