"""MaskField: Kafka's MaskFieldTest cases (empty values per type, custom replacements)."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from cdk.api import SinkRecord
from cdk.data import Date as DateType
from cdk.data import Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from cdk.errors import ConfigException, DataException
from cdk.transforms import MaskField

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
NOW = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)

SCHEMA = (
    SchemaBuilder.struct()
    .field("magic", Schema.INT32_SCHEMA)
    .field("bool", Schema.BOOLEAN_SCHEMA)
    .field("byte", Schema.INT8_SCHEMA)
    .field("short", Schema.INT16_SCHEMA)
    .field("int", Schema.INT32_SCHEMA)
    .field("long", Schema.INT64_SCHEMA)
    .field("float", Schema.FLOAT32_SCHEMA)
    .field("double", Schema.FLOAT64_SCHEMA)
    .field("string", Schema.STRING_SCHEMA)
    .field("date", DateType.SCHEMA)
    .field("time", Time.SCHEMA)
    .field("timestamp", Timestamp.SCHEMA)
    .field("decimal", Decimal.schema(0))
    .field("array", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
    .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("withDefault", SchemaBuilder.string().optional().default_value("default").build())
    .build()
)
VALUES: dict[str, Any] = {
    "magic": 42,
    "bool": True,
    "byte": 42,
    "short": 42,
    "int": 42,
    "long": 42,
    "float": 42.0,
    "double": 42.0,
    "string": "55.121.20.20",
    "date": dt.date(2024, 5, 6),
    "time": dt.time(7, 8, 9),
    "timestamp": NOW,
    "decimal": decimal.Decimal(42),
    "array": [1, 2, 3],
    "map": {"what": "what"},
}
STRUCT = Struct(SCHEMA)
for _k, _v in VALUES.items():
    STRUCT.put(_k, _v)


def xform(fields: list[str], replacement: str | None = None, **extra: str) -> MaskField[Any]:
    x: MaskField[Any] = MaskField.Value()
    configs = {"fields": ",".join(fields), **{k.replace("_", "."): v for k, v in extra.items()}}
    if replacement is not None:
        configs["replacement"] = replacement
    x.configure(configs)
    return x


def record(schema: Schema | None, value: Any) -> SinkRecord:
    return SinkRecord("", 0, None, None, schema, value, 0)


MASKABLE = [k for k in VALUES if k != "magic"]


def test_schemaless() -> None:
    out = xform(MASKABLE).apply(record(None, dict(VALUES))).value
    assert out == {
        "magic": 42,
        "bool": False,
        "byte": 0,
        "short": 0,
        "int": 0,
        "long": 0,
        "float": 0.0,
        "double": 0.0,
        "string": "",
        "date": dt.date(1970, 1, 1),
        "time": dt.time(0),
        "timestamp": EPOCH,
        "decimal": decimal.Decimal(0),
        "array": [],
        "map": {},
    }


def test_with_schema() -> None:
    out = xform([*MASKABLE, "withDefault"]).apply(record(SCHEMA, STRUCT))
    result = out.value
    assert out.value_schema is SCHEMA
    assert result.get("magic") == 42
    assert result.get("bool") is False
    assert result.get("byte") == 0
    assert result.get("float") == 0.0
    assert result.get("string") == ""
    assert result.get("date") == dt.date(1970, 1, 1)
    assert result.get("time") == dt.time(0)
    assert result.get("timestamp") == EPOCH
    assert result.get("decimal") == decimal.Decimal(0)
    assert result.get("array") == []
    assert result.get("map") == {}
    assert result.get_without_default("withDefault") == ""  # the default was masked


def test_replace_null_with_default_false_keeps_null() -> None:
    out = xform(["withDefault"], replace_null_with_default="false").apply(record(SCHEMA, STRUCT))
    assert out.value.get_without_default("withDefault") is None


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        ("byte", "123", 123),
        ("short", "123", 123),
        ("int", "123", 123),
        ("long", "123", 123),
        ("float", "123.0", 123.0),
        ("double", "123.0", 123.0),
        ("string", "***", "***"),
        ("decimal", "123.0", decimal.Decimal("123.0")),
        ("int", "-7.9", -7),
    ],
)
def test_custom_replacement_with_schema(field: str, replacement: str, expected: Any) -> None:
    out = xform([field], replacement).apply(record(SCHEMA, STRUCT)).value
    assert out.get(field) == expected


def test_custom_replacement_schemaless() -> None:
    out = xform(["int", "double", "string"], "123").apply(record(None, dict(VALUES))).value
    assert (out["int"], out["double"], out["string"]) == (123, 123.0, "123")


@pytest.mark.parametrize("field", ["bool", "date", "time", "timestamp", "array", "map"])
def test_unsupported_replacement_type(field: str) -> None:
    with pytest.raises(DataException, match=r"with custom replacement.$"):
        xform([field], "123").apply(record(SCHEMA, STRUCT))


def test_replacement_type_mismatch() -> None:
    with pytest.raises(DataException, match=r"^Unable to convert foo \(class str\) to number$"):
        xform(["byte"], "foo").apply(record(SCHEMA, STRUCT))
    with pytest.raises(DataException, match=r"Unable to convert 300"):
        xform(["byte"], "300").apply(record(SCHEMA, STRUCT))
    with pytest.raises(DataException, match=r"Unable to convert foo"):
        xform(["double"], "foo").apply(record(SCHEMA, STRUCT))
    with pytest.raises(DataException, match=r"Unable to convert foo"):
        xform(["decimal"], "foo").apply(record(SCHEMA, STRUCT))


def test_empty_replacement_is_rejected() -> None:
    with pytest.raises(ConfigException, match=r"configuration replacement: String must be"):
        xform(["short"], "")


def test_empty_fields_are_rejected() -> None:
    with pytest.raises(ConfigException, match=r"configuration fields: Empty list"):
        xform([])


def test_null_list_and_map_replacements_are_mutable() -> None:
    out = xform(["array", "map"]).apply(record(None, dict(VALUES))).value
    out["array"].append(1)
    out["map"]["k"] = "v"
    assert out["array"] == [1]
    # each apply gets fresh containers
    again = xform(["array", "map"]).apply(record(None, dict(VALUES))).value
    assert again["array"] == []
    assert again["map"] == {}


def test_unmaskable_type() -> None:
    with pytest.raises(DataException, match=r"^Cannot mask value of type: class bytes$"):
        xform(["b"]).apply(record(None, {"b": b"x"}))


def test_null_values_stay_null() -> None:
    assert xform(["a"]).apply(record(None, {"a": None})).value == {"a": None}
    assert xform(["a"]).apply(record(None, {})).value == {"a": None}


def test_config() -> None:
    names = set(MaskField.Key().config().names())
    assert names == {"fields", "replacement", "replace.null.with.default"}
