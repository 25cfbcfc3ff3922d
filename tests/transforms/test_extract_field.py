"""ExtractField: Kafka's ExtractFieldTest cases, nested paths (KIP-821) and null handling."""

from __future__ import annotations

import pytest

from cdk.api import SinkRecord
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException
from cdk.transforms import ExtractField
from cdk.transforms._field_path import FieldSyntaxVersion, SingleFieldPath


def key_record(key_schema: Schema | None, key: object) -> SinkRecord:
    return SinkRecord("test", 0, key_schema, key, None, None, 0)


def xform(**configs: str) -> ExtractField[SinkRecord]:
    x: ExtractField[SinkRecord] = ExtractField.Key()
    x.configure({k.replace("_", "."): v for k, v in configs.items()})
    return x


def test_schemaless() -> None:
    out = xform(field="magic").apply(key_record(None, {"magic": 42}))
    assert out.key_schema is None
    assert out.key == 42


def test_schemaless_nested_path() -> None:
    out = xform(field="magic.foo", field_syntax_version="V2").apply(
        key_record(None, {"magic": {"foo": 42}})
    )
    assert out.key == 42


def test_null_schemaless() -> None:
    out = xform(field="magic").apply(key_record(None, None))
    assert out.key_schema is None
    assert out.key is None


def test_with_schema() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    out = xform(field="magic").apply(key_record(schema, Struct(schema).put("magic", 42)))
    assert out.key_schema == Schema.INT32_SCHEMA
    assert out.key == 42


def test_with_schema_nested_path() -> None:
    foo = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("magic", foo).build()
    key = Struct(schema).put("magic", Struct(foo).put("foo", 42))
    out = xform(field="magic.foo", field_syntax_version="v2").apply(key_record(schema, key))
    assert out.key_schema == Schema.INT32_SCHEMA
    assert out.key == 42


def test_null_with_schema_keeps_field_schema() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).optional().build()
    out = xform(field="magic").apply(key_record(schema, None))
    assert out.key_schema == Schema.INT32_SCHEMA
    assert out.key is None


def test_non_existent_field_schemaless_is_null() -> None:
    assert xform(field="nonexistent").apply(key_record(None, {"magic": 42})).key is None


def test_non_existent_nested_field_schemaless_is_null() -> None:
    out = xform(field="magic.nonexistent").apply(key_record(None, {"magic": {"foo": 42}}))
    assert out.key is None
    out = xform(field="magic.nonexistent", field_syntax_version="V2").apply(
        key_record(None, {"magic": {"foo": 42}})
    )
    assert out.key is None


def test_non_existent_field_with_schema_fails() -> None:
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"^Unknown field: nonexistent$"):
        xform(field="nonexistent").apply(key_record(schema, Struct(schema).put("magic", 42)))


def test_non_existent_nested_field_with_schema_fails() -> None:
    foo = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("magic", foo).build()
    key = Struct(schema).put("magic", Struct(foo).put("foo", 42))
    with pytest.raises(DataException, match=r"^Unknown field: magic.nonexistent$"):
        xform(field="magic.nonexistent").apply(key_record(schema, key))


def test_value_variant() -> None:
    x: ExtractField[SinkRecord] = ExtractField.Value()
    x.configure({"field": "magic"})
    record = SinkRecord("test", 0, None, "k", None, {"magic": "v"}, 0)
    out = x.apply(record)
    assert (out.key, out.value) == ("k", "v")


def test_replace_null_with_default() -> None:
    field_schema = SchemaBuilder.int32().optional().default_value(7).build()
    schema = SchemaBuilder.struct().field("magic", field_schema).build()
    key = Struct(schema).put("magic", None)
    assert xform(field="magic").apply(key_record(schema, key)).key == 7
    off = xform(field="magic", replace_null_with_default="false")
    assert off.apply(key_record(schema, key)).key is None


def test_wrong_type_is_reported() -> None:
    with pytest.raises(DataException, match=r"Only Map objects .*\[field extraction\], found: int"):
        xform(field="magic").apply(key_record(None, 42))
    schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"Only Struct objects .*found: str"):
        xform(field="magic").apply(key_record(schema, "nope"))


def test_config() -> None:
    names = set(ExtractField.Value().config().names())
    assert names == {"field", "field.syntax.version", "replace.null.with.default"}
    with pytest.raises(ConfigException, match=r"field"):
        xform()
    with pytest.raises(ConfigException, match=r"field.syntax.version"):
        xform(field="a", field_syntax_version="V3")
    with pytest.raises(ConfigException, match=r"configuration field: Incomplete backtick pair"):
        xform(field="`foo.bar", field_syntax_version="V2")


# -- SingleFieldPath (Kafka's SingleFieldPathTest) --------------------------------------------
@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("foo.bar.baz", ["foo.bar.baz"]),
        ("foo.`bar.baz`", ["foo.`bar.baz`"]),
    ],
)
def test_v1_paths(path: str, steps: list[str]) -> None:
    assert list(SingleFieldPath(path, FieldSyntaxVersion.V1).steps) == steps


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("", [""]),
        ("foobarbaz", ["foobarbaz"]),
        ("foo.bar.baz", ["foo", "bar", "baz"]),
        ("foo`bar`.baz", ["foo`bar`", "baz"]),
        ("foo.`bar.baz`", ["foo", "bar.baz"]),
        ("foo.`bar.baz`.qux", ["foo", "bar.baz", "qux"]),
        ("`foo.bar`.baz", ["foo.bar", "baz"]),
        ("foo.``bar.baz`", ["foo", "`bar.baz"]),
        ("foo.`bar\\`.baz`", ["foo", "bar`.baz"]),
        ("foo.`bar\\`.baz`.qux", ["foo", "bar`.baz", "qux"]),
        ("foo.", ["foo", ""]),
        ("foo..bar", ["foo", "", "bar"]),
        ("`foo`", ["foo"]),
    ],
)
def test_v2_paths(path: str, steps: list[str]) -> None:
    assert list(SingleFieldPath(path, FieldSyntaxVersion.V2).steps) == steps


@pytest.mark.parametrize(("path", "position"), [("`foo.bar.baz", 0), ("foo.`bar.baz", 4)])
def test_v2_incomplete_backticks(path: str, position: int) -> None:
    with pytest.raises(ConfigException, match=f"at position {position} to escape it"):
        SingleFieldPath(path, FieldSyntaxVersion.V2)


def test_v2_escaped_closing_backtick_at_end_fails() -> None:
    with pytest.raises(ConfigException, match=r"Incomplete backtick pair"):
        SingleFieldPath("foo.`bar\\`", FieldSyntaxVersion.V2)


def test_field_path_through_non_struct_is_missing() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    path = SingleFieldPath("a.b", FieldSyntaxVersion.V2)
    assert path.field_from(schema) is None
    assert path.value_from_map({"a": None}) is None
    with pytest.raises(DataException, match=r"nested field access"):
        path.value_from_map({"a": 1})
