"""HeaderFrom, ported from Kafka's HeaderFromTest."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from cdk.api import Headers, SourceRecord
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException
from cdk.transforms import HeaderFrom

STRING = Schema.STRING_SCHEMA
NESTED_SCHEMA = SchemaBuilder.struct().field("foo", STRING).build()
NESTED = Struct(NESTED_SCHEMA).put("foo", "foo-value")


@dataclass
class RecordBuilder:
    fields: list[tuple[str, Schema, Any]] = field(default_factory=list)
    headers: list[tuple[str, Schema, Any]] = field(default_factory=list)

    def with_field(self, name: str, schema: Schema, value: Any) -> RecordBuilder:
        self.fields.append((name, schema, value))
        return self

    def add_header(self, name: str, schema: Schema, value: Any) -> RecordBuilder:
        self.headers.append((name, schema, value))
        return self

    def schemaless(self, key: bool) -> SourceRecord:
        value = {name: v for name, _, v in self.fields}
        # a schemaless transformation writes headers without schemas
        headers = Headers()
        for name, _, v in self.headers:
            headers.add(name, v, None)
        return self._record(key, None, value, headers)

    def with_schema(self, key: bool) -> SourceRecord:
        builder = SchemaBuilder.struct()
        for name, schema, _ in self.fields:
            builder.field(name, schema)
        schema = builder.build()
        struct = Struct(schema)
        for name, _, v in self.fields:
            struct.put(name, v)
        headers = Headers()
        for name, s, v in self.headers:
            headers.add(name, v, s)
        return self._record(key, schema, struct, headers)

    @staticmethod
    def _record(key: bool, schema: Schema | None, value: Any, headers: Headers) -> SourceRecord:
        return SourceRecord(
            {"foo": "bar"},
            {"baz": "quxx"},
            "topic",
            0,
            schema if key else None,
            value if key else "key",
            None if key else schema,
            "value" if key else value,
            0,
            headers,
        )


def _cases() -> list[Any]:
    cases = []
    for key in (True, False):
        side = "key" if key else "value"
        cases += [
            pytest.param(
                key,
                RecordBuilder()
                .with_field("field1", STRING, "field1-value")
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value"),
                ["field1"],
                ["inserted1"],
                "copy",
                RecordBuilder()
                .with_field("field1", STRING, "field1-value")
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value")
                .add_header("inserted1", STRING, "field1-value"),
                id=f"basic copy ({side})",
            ),
            pytest.param(
                key,
                RecordBuilder()
                .with_field("field1", STRING, "field1-value")
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value"),
                ["field1"],
                ["inserted1"],
                "move",
                RecordBuilder()
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value")
                .add_header("inserted1", STRING, "field1-value"),
                id=f"basic move ({side})",
            ),
            pytest.param(
                key,
                RecordBuilder()
                .with_field("field1", STRING, "field1-value")
                .with_field("field2", STRING, "field2-value")
                .add_header("inserted1", STRING, "existing-value"),
                ["field1"],
                ["inserted1"],
                "copy",
                RecordBuilder()
                .with_field("field1", STRING, "field1-value")
                .with_field("field2", STRING, "field2-value")
                .add_header("inserted1", STRING, "existing-value")
                .add_header("inserted1", STRING, "field1-value"),
                id=f"copy with preexisting header ({side})",
            ),
            pytest.param(
                key,
                RecordBuilder()
                .with_field("field1", STRING, "field1-value")
                .with_field("field2", STRING, "field2-value")
                .add_header("inserted1", STRING, "existing-value"),
                ["field1"],
                ["inserted1"],
                "move",
                RecordBuilder()
                .with_field("field2", STRING, "field2-value")
                .add_header("inserted1", STRING, "existing-value")
                .add_header("inserted1", STRING, "field1-value"),
                id=f"move with preexisting header ({side})",
            ),
            pytest.param(
                key,
                RecordBuilder()
                .with_field("field1", NESTED_SCHEMA, NESTED)
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value"),
                ["field1"],
                ["inserted1"],
                "copy",
                RecordBuilder()
                .with_field("field1", NESTED_SCHEMA, NESTED)
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value")
                .add_header("inserted1", NESTED_SCHEMA, NESTED),
                id=f"copy with struct value ({side})",
            ),
            pytest.param(
                key,
                RecordBuilder()
                .with_field("field1", NESTED_SCHEMA, NESTED)
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value"),
                ["field1"],
                ["inserted1"],
                "move",
                RecordBuilder()
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value")
                .add_header("inserted1", NESTED_SCHEMA, NESTED),
                id=f"move with struct value ({side})",
            ),
            pytest.param(
                key,
                RecordBuilder()
                .with_field("field1", STRING, "field1-value")
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value"),
                ["field1", "field1"],
                ["inserted1", "inserted2"],
                "move",
                RecordBuilder()
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value")
                .add_header("inserted1", STRING, "field1-value")
                .add_header("inserted2", STRING, "field1-value"),
                id=f"two headers from same field ({side})",
            ),
            pytest.param(
                key,
                RecordBuilder()
                .with_field("field1", STRING, "field1-value")
                .with_field("field2", STRING, "field2-value")
                .add_header("header1", STRING, "existing-value"),
                ["field1", "field2"],
                ["inserted1", "inserted1"],
                "move",
                RecordBuilder()
                .add_header("header1", STRING, "existing-value")
                .add_header("inserted1", STRING, "field1-value")
                .add_header("inserted1", STRING, "field2-value"),
                id=f"two fields to same header ({side})",
            ),
        ]
    return cases


def _xform(key: bool, fields: list[str], headers: list[str], operation: str) -> HeaderFrom[Any]:
    xform: HeaderFrom[Any] = HeaderFrom.Key() if key else HeaderFrom.Value()
    xform.configure({"fields": fields, "headers": headers, "operation": operation})
    return xform


def _assert_same_record(expected: SourceRecord, actual: SourceRecord | None) -> None:
    assert actual is not None
    assert actual.source_partition == expected.source_partition
    assert actual.source_offset == expected.source_offset
    assert actual.topic == expected.topic
    assert actual.kafka_partition == expected.kafka_partition
    assert actual.key_schema == expected.key_schema
    assert actual.key == expected.key
    assert actual.value_schema == expected.value_schema
    assert actual.value == expected.value
    assert actual.timestamp == expected.timestamp
    assert actual.headers == expected.headers


@pytest.mark.parametrize(
    ("key", "original", "fields", "headers", "operation", "expected"), _cases()
)
def test_schemaless(
    key: bool,
    original: RecordBuilder,
    fields: list[str],
    headers: list[str],
    operation: str,
    expected: RecordBuilder,
) -> None:
    xform = _xform(key, fields, headers, operation)
    _assert_same_record(expected.schemaless(key), xform.apply(original.schemaless(key)))


@pytest.mark.parametrize(
    ("key", "original", "fields", "headers", "operation", "expected"), _cases()
)
def test_with_schema(
    key: bool,
    original: RecordBuilder,
    fields: list[str],
    headers: list[str],
    operation: str,
    expected: RecordBuilder,
) -> None:
    xform = _xform(key, fields, headers, operation)
    source = original.with_schema(key)
    before = source.headers.duplicate()
    _assert_same_record(expected.with_schema(key), xform.apply(source))
    assert source.headers == before  # the input record's headers are left alone


@pytest.mark.parametrize("key", [True, False])
@pytest.mark.parametrize(
    ("fields", "headers"),
    [(["foo", "bar"], ["foo"]), (["foo"], ["foo", "bar"]), ([], []), ("", "")],
)
def test_invalid_config(key: bool, fields: Any, headers: Any) -> None:
    xform: HeaderFrom[Any] = HeaderFrom.Key() if key else HeaderFrom.Value()
    with pytest.raises(ConfigException):
        xform.configure({"fields": fields, "headers": headers, "operation": "copy"})


def test_invalid_operation_names_the_key() -> None:
    with pytest.raises(ConfigException, match="configuration operation") as info:
        HeaderFrom.Value().configure({"fields": "a", "headers": "b", "operation": "steal"})
    assert info.value.name == "operation"


def test_comma_separated_strings() -> None:
    xform = _xform(False, ["a"], ["h"], "copy")
    xform.configure({"fields": "a, b", "headers": "x,y", "operation": "copy"})
    out = xform.apply(SourceRecord(None, None, "t", 0, None, None, None, {"a": 1, "b": 2}))
    assert out is not None
    assert [(h.key, h.value, h.schema) for h in out.headers] == [("x", 1, None), ("y", 2, None)]


def test_schemaless_requires_a_map() -> None:
    xform = _xform(False, ["a"], ["h"], "move")
    with pytest.raises(DataException, match=r"Only Map objects supported .*\[header move\]"):
        xform.apply(SourceRecord(None, None, "t", 0, None, None, None, "text"))


def test_with_schema_requires_a_struct() -> None:
    xform = _xform(False, ["a"], ["h"], "copy")
    with pytest.raises(DataException, match=r"Only Struct objects supported .*\[header copy\]"):
        xform.apply(SourceRecord(None, None, "t", 0, None, None, STRING, "text"))


def test_field_missing_from_schema_names_the_field() -> None:
    schema = SchemaBuilder.struct().field("a", STRING).build()
    xform = _xform(False, ["nope"], ["h"], "copy")
    with pytest.raises(DataException, match="nope") as info:
        xform.apply(
            SourceRecord(None, None, "t", 0, None, None, schema, Struct(schema).put("a", "x"))
        )
    assert info.value.field == "nope"


@pytest.mark.parametrize(("replace", "expected"), [("true", "dflt"), ("false", None)])
def test_replace_null_with_default(replace: str, expected: str | None) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("a", SchemaBuilder.string().optional().default_value("dflt").build())
        .field("b", SchemaBuilder.string().optional().default_value("other").build())
        .build()
    )
    xform: HeaderFrom[Any] = HeaderFrom.Value()
    xform.configure(
        {"fields": "a", "headers": "h", "operation": "move", "replace.null.with.default": replace}
    )
    out = xform.apply(SourceRecord(None, None, "t", 0, None, None, schema, Struct(schema)))
    assert out is not None
    header = out.headers.last_with_name("h")
    assert header is not None
    assert header.value == expected
    assert out.value.get_without_default("b") == (None if expected is None else "other")


def test_move_schema_is_cached() -> None:
    schema = SchemaBuilder.struct().field("a", STRING).field("b", STRING).build()
    xform = _xform(False, ["a"], ["h"], "move")
    first = xform.apply(
        SourceRecord(
            None, None, "t", 0, None, None, schema, Struct(schema).put("a", "1").put("b", "2")
        )
    )
    second = xform.apply(
        SourceRecord(
            None, None, "t", 0, None, None, schema, Struct(schema).put("a", "3").put("b", "4")
        )
    )
    assert first is not None
    assert second is not None
    assert first.value_schema is second.value_schema
    assert second.value.get("b") == "4"
