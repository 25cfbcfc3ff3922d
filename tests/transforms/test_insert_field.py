"""InsertField: Kafka's InsertFieldTest cases."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from cdk.api import SinkRecord, SourceRecord
from cdk.data import Schema, SchemaBuilder, Struct, Timestamp
from cdk.errors import ConfigException, DataException
from cdk.transforms import InsertField

CONFIGS = {
    "topic.field": "topic_field!",
    "partition.field": "partition_field",
    "timestamp.field": "timestamp_field?",
    "static.field": "instance_id",
    "static.value": "my-instance-id",
}


def value_xform(configs: dict[str, str] = CONFIGS) -> InsertField[Any]:
    x: InsertField[Any] = InsertField.Value()
    x.configure(configs)
    return x


def test_top_level_struct_required() -> None:
    x = value_xform({"topic.field": "topic_field"})
    with pytest.raises(
        DataException, match=r"Only Struct objects supported for \[field insertion\]"
    ):
        x.apply(SourceRecord(None, None, "", 0, value_schema=Schema.INT32_SCHEMA, value=42))


def test_copy_schema_and_insert_configured_fields() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("name")
        .version(1)
        .doc("doc")
        .field("magic", Schema.OPTIONAL_INT64_SCHEMA)
        .build()
    )
    value = Struct(schema).put("magic", 42)
    record = SourceRecord(None, None, "test", 0, None, None, schema, value, 789)
    x = value_xform()
    out = x.apply(record)
    new = out.value_schema
    assert (new.name, new.version, new.doc) == ("name", 1, "doc")
    fields = {f.name: f.schema for f in new.fields}
    assert fields == {
        "magic": Schema.OPTIONAL_INT64_SCHEMA,
        "topic_field": Schema.STRING_SCHEMA,
        "partition_field": Schema.OPTIONAL_INT32_SCHEMA,
        "timestamp_field": Timestamp.builder().optional().build(),
        "instance_id": Schema.OPTIONAL_STRING_SCHEMA,
    }
    result = out.value
    assert result.get_int64("magic") == 42
    assert result.get("topic_field") == "test"
    assert result.get("partition_field") == 0
    assert result.get("timestamp_field") == dt.datetime(
        1970, 1, 1, 0, 0, 0, 789000, tzinfo=dt.timezone.utc
    )
    assert result.get("instance_id") == "my-instance-id"
    # the cached schema is reused
    assert x.apply(record).value_schema is new


def test_schemaless_insert_configured_fields() -> None:
    record = SourceRecord(None, None, "test", 0, None, None, None, {"magic": 42}, 123)
    out = value_xform().apply(record)
    assert out.value == {
        "magic": 42,
        "topic_field": "test",
        "partition_field": 0,
        "timestamp_field": 123,
        "instance_id": "my-instance-id",
    }


def test_tombstones_pass_through() -> None:
    record = SourceRecord(None, None, "test", 0, None, None, None, None, 123)
    assert value_xform().apply(record) is record
    schema = SchemaBuilder.struct().optional().build()
    record = SourceRecord(None, None, "test", 0, None, None, schema, None, 123)
    out = value_xform().apply(record)
    assert out.value is None
    assert out.value_schema is schema


def test_insert_key_fields_into_tombstone_event() -> None:
    x: InsertField[Any] = InsertField.Key()
    x.configure(CONFIGS)
    record = SourceRecord(None, None, "test", 0, None, {"dummy": "dummy"}, None, None, 123)
    out = x.apply(record)
    assert out.key == {
        "dummy": "dummy",
        "topic_field": "test",
        "partition_field": 0,
        "timestamp_field": 123,
        "instance_id": "my-instance-id",
    }
    assert out.value is None


def test_insert_into_null_key_leaves_record_unchanged() -> None:
    x: InsertField[Any] = InsertField.Key()
    x.configure(CONFIGS)
    record = SourceRecord(None, None, "test", 0, None, None, None, {"v": 1}, 123)
    assert x.apply(record) is record


def test_offset_field() -> None:
    x = value_xform({"offset.field": "off!"})
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    out = x.apply(SinkRecord("t", 1, None, None, schema, Struct(schema).put("a", 1), 77))
    assert out.value.get("off") == 77
    off_field = out.value_schema.field("off")
    assert off_field is not None
    assert off_field.schema == Schema.INT64_SCHEMA
    assert x.apply(SinkRecord("t", 1, None, None, None, {}, 5)).value == {"off": 5}
    with pytest.raises(DataException, match=r"Only SinkRecord supported for \[field insertion\]"):
        x.apply(SourceRecord(None, None, "t", 0, None, None, None, {}))


def test_missing_partition_and_timestamp_are_skipped() -> None:
    x = value_xform({"partition.field": "p", "timestamp.field": "ts"})
    out = x.apply(SourceRecord(None, None, "t", None, None, None, None, {"a": 1}))
    assert out.value == {"a": 1}


def test_replace_null_with_default() -> None:
    field = SchemaBuilder.string().optional().default_value("dflt").build()
    schema = SchemaBuilder.struct().field("s", field).build()
    record = SourceRecord(None, None, "t", 0, value_schema=schema, value=Struct(schema))
    assert value_xform({"topic.field": "tp"}).apply(record).value.get_without_default("s") == "dflt"
    off = value_xform({"topic.field": "tp", "replace.null.with.default": "false"})
    assert off.apply(record).value.get_without_default("s") is None


def test_config_errors() -> None:
    with pytest.raises(ConfigException, match=r"^No field insertion configured$"):
        value_xform({})
    with pytest.raises(
        ConfigException,
        match=(
            r"^Invalid value null for configuration static.value: "
            r"No value specified for static field: instance_id$"
        ),
    ):
        value_xform({"static.field": "instance_id"})
    names = set(InsertField.Value().config().names())
    assert names == {
        "topic.field",
        "partition.field",
        "offset.field",
        "timestamp.field",
        "static.field",
        "static.value",
        "replace.null.with.default",
    }
