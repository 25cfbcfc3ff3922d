"""ReplaceField: Kafka's ReplaceFieldTest cases."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from cdk.api import SinkRecord
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException
from cdk.transforms import ReplaceField


def xform(key: bool = False, **configs: str) -> ReplaceField[SinkRecord]:
    x: ReplaceField[SinkRecord] = ReplaceField.Key() if key else ReplaceField.Value()
    x.configure({k.replace("_", "."): v for k, v in configs.items()})
    return x


def record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("test", 0, None, None, schema, value, 0)


def test_tombstone_schemaless() -> None:
    r = record(None, None)
    assert xform(include="abc,foo", renames="abc:xyz,foo:bar").apply(r) is r


def test_tombstone_with_schema() -> None:
    schema = SchemaBuilder.struct().field("dont", Schema.OPTIONAL_STRING_SCHEMA).build()
    out = xform(include="abc,foo", renames="abc:xyz,foo:bar").apply(record(schema, None))
    assert out.value_schema is schema
    assert out.value is None


def test_schemaless() -> None:
    value = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}
    out = xform(exclude="dont", renames="abc:xyz,foo:bar").apply(record(None, value))
    assert out.value == {"xyz": 42, "bar": True, "etc": "etc"}


def test_with_schema() -> None:
    schema = (
        SchemaBuilder.struct()
        .name("n")
        .version(2)
        .field("dont", Schema.STRING_SCHEMA)
        .field("abc", Schema.INT32_SCHEMA)
        .field("foo", Schema.BOOLEAN_SCHEMA)
        .field("etc", Schema.STRING_SCHEMA)
        .build()
    )
    value = Struct(schema).put("dont", "whatever").put("abc", 42).put("foo", True).put("etc", "etc")
    x = xform(include="abc,foo", renames="abc:xyz,foo:bar")
    out = x.apply(record(schema, value))
    new = out.value_schema
    assert new is not None
    assert (new.name, new.version) == ("n", 2)
    assert [(f.name, f.schema) for f in new.fields] == [
        ("xyz", Schema.INT32_SCHEMA),
        ("bar", Schema.BOOLEAN_SCHEMA),
    ]
    assert out.value.get("xyz") == 42
    assert out.value.get("bar") is True
    assert x.apply(record(schema, value)).value_schema is new


def test_exclude_wins_over_include() -> None:
    out = xform(include="a,b", exclude="b").apply(record(None, {"a": 1, "b": 2, "c": 3}))
    assert out.value == {"a": 1}


def test_key_variant() -> None:
    r = SinkRecord("test", 0, None, {"a": 1, "b": 2}, None, "v", 0)
    out = xform(key=True, exclude="b").apply(r)
    assert out.key == {"a": 1}
    assert out.value == "v"


def test_replace_null_with_default() -> None:
    field = SchemaBuilder.int32().optional().default_value(9).build()
    schema = SchemaBuilder.struct().field("a", field).build()
    r = record(schema, Struct(schema))
    assert xform(renames="a:b").apply(r).value.get_without_default("b") == 9
    off = xform(renames="a:b", replace_null_with_default="false").apply(r)
    assert off.value.get_without_default("b") is None


def test_invalid_renames() -> None:
    with pytest.raises(
        ConfigException,
        match=r"^Invalid value \[foo:bar:baz\] for configuration renames: Invalid rename mapping",
    ):
        xform(renames="foo:bar:baz")
    with pytest.raises(ConfigException, match=r"Invalid rename mapping: foo"):
        xform(renames="foo")


def test_removed_legacy_keys_warn(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        x = xform(blacklist="a")
    assert "'blacklist'" in caplog.text
    assert "'exclude'" in caplog.text
    assert x.apply(record(None, {"a": 1})).value == {"a": 1}


def test_wrong_value_type() -> None:
    with pytest.raises(DataException, match=r"Only Map .*\[field replacement\], found: int"):
        xform().apply(record(None, 5))


def test_config() -> None:
    config = ReplaceField.Value().config()
    assert set(config.names()) == {"exclude", "include", "renames", "replace.null.with.default"}
