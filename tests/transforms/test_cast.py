"""Cast: Kafka's CastTest cases (config, whole-value and per-field casts, logical types)."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from cdk.api import SourceRecord
from cdk.data import Date, Decimal, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.errors import ConfigException, DataException
from cdk.transforms import Cast
from cdk.transforms._cast import java_double_text

MILLIS_PER_DAY = 86_400_000
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def value_xform(spec: str, **extra: str) -> Cast[SourceRecord]:
    x: Cast[SourceRecord] = Cast.Value()
    x.configure({"spec": spec, **{k.replace("_", "."): v for k, v in extra.items()}})
    return x


def key_xform(spec: str) -> Cast[SourceRecord]:
    x: Cast[SourceRecord] = Cast.Key()
    x.configure({"spec": spec})
    return x


def value_record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, value_schema=schema, value=value)


# -- config ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "Must specify at least one field to cast."),
        ("foo:faketype", "Invalid type found in casting spec: faketype"),
        ("foo:array", "does not support casting to ARRAY"),
        ("array", "does not support casting to ARRAY"),
        ("foo:bytes", "does not support casting to BYTES"),
        ("foo:int8:extra", "Invalid cast mapping: foo:int8:extra"),
        ("foo:int8,int32", "may ony specify a single cast"),
    ],
)
def test_invalid_config(spec: str, message: str) -> None:
    with pytest.raises(ConfigException, match=r"configuration spec") as info:
        value_xform(spec)
    assert message in str(info.value)
    assert info.value.name == "spec"


def test_config_def() -> None:
    config = Cast.Key().config()
    assert set(config.names()) == {"spec", "replace.null.with.default"}


# -- nulls -----------------------------------------------------------------------------------------
def test_null_values_pass_through() -> None:
    record = value_record(Schema.OPTIONAL_INT32_SCHEMA, None)
    assert value_xform("int8").apply(record) is record
    record = value_record(None, None)
    assert value_xform("foo:int8").apply(record) is record
    key_record = SourceRecord(None, None, "topic", 0, Schema.OPTIONAL_INT32_SCHEMA, None)
    assert key_xform("int8").apply(key_record) is key_record


# -- whole value -----------------------------------------------------------------------------------
def test_whole_record_key_with_schema() -> None:
    record = SourceRecord(
        None, None, "topic", 0, Schema.INT32_SCHEMA, 42, Schema.STRING_SCHEMA, "v"
    )
    out = key_xform("int8").apply(record)
    assert out.key_schema is not None
    assert out.key_schema.type is SchemaType.INT8
    assert out.key == 42
    assert out.value == "v"


@pytest.mark.parametrize(
    ("spec", "expected_type", "expected"),
    [
        ("int8", SchemaType.INT8, 42),
        ("int16", SchemaType.INT16, 42),
        ("int32", SchemaType.INT32, 42),
        ("int64", SchemaType.INT64, 42),
        ("float32", SchemaType.FLOAT32, 42.0),
        ("float64", SchemaType.FLOAT64, 42.0),
        ("boolean", SchemaType.BOOLEAN, True),
        ("string", SchemaType.STRING, "42"),
    ],
)
def test_whole_value_with_schema(spec: str, expected_type: SchemaType, expected: Any) -> None:
    out = value_xform(spec).apply(value_record(Schema.INT32_SCHEMA, 42))
    assert out.value_schema is not None
    assert out.value_schema.type is expected_type
    assert out.value == expected
    assert type(out.value) is type(expected)


def test_whole_value_boolean_false() -> None:
    out = value_xform("boolean").apply(value_record(Schema.INT32_SCHEMA, 0))
    assert out.value is False


def test_whole_big_decimal_to_string() -> None:
    schema = Decimal.schema(0)
    out = value_xform("string").apply(value_record(schema, decimal.Decimal(42)))
    assert out.value == "42"
    assert out.value_schema is not None
    assert out.value_schema.type is SchemaType.STRING
    assert out.value_schema.name is None  # not mislabelled as a Decimal
    out.value_schema.validate_value(out.value)


def test_whole_timestamp_to_string() -> None:
    value = EPOCH + dt.timedelta(milliseconds=MILLIS_PER_DAY + 1)
    out = value_xform("string").apply(value_record(Timestamp.SCHEMA, value))
    assert out.value == "1970-01-02T00:00:00.001Z"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("int8", 42),
        ("int16", 42),
        ("int32", 42),
        ("int64", 42),
        ("float32", 42.0),
        ("float64", 42.0),
        ("boolean", True),
        ("string", "42"),
    ],
)
def test_whole_value_schemaless(spec: str, expected: Any) -> None:
    out = value_xform(spec).apply(value_record(None, 42))
    assert out.value_schema is None
    assert out.value == expected
    assert type(out.value) is type(expected)


def test_whole_value_schemaless_boolean_false() -> None:
    assert value_xform("boolean").apply(value_record(None, 0)).value is False


def test_whole_value_default_is_cast() -> None:
    schema = SchemaBuilder.float32().default_value(-42.125).build()
    out = value_xform("int32").apply(value_record(schema, 42.125))
    assert out.value == 42
    assert out.value_schema is not None
    assert out.value_schema.default_value == -42


def test_whole_value_schemaless_unsupported_type() -> None:
    with pytest.raises(DataException, match=r"was passed a value of type class object"):
        value_xform("int8").apply(value_record(None, object()))


def test_whole_value_unsupported_input_schema() -> None:
    schema = SchemaBuilder.array(Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"does not support casting from ARRAY; supported"):
        value_xform("int8").apply(value_record(schema, [1]))


# -- Java conversions ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "source", "value", "expected"),
    [
        ("int8", Schema.INT32_SCHEMA, 300, 44),  # low bits kept
        ("int8", Schema.INT64_SCHEMA, -129, 127),
        ("int16", Schema.INT64_SCHEMA, 70000, 4464),
        ("int32", Schema.FLOAT64_SCHEMA, 1e20, 2**31 - 1),  # saturates
        ("int32", Schema.FLOAT64_SCHEMA, -3.9, -3),  # truncates
        ("int8", Schema.FLOAT64_SCHEMA, 1000.0, -24),  # (byte)(int) 1000
        ("int64", Schema.FLOAT64_SCHEMA, float("nan"), 0),
        ("int64", Schema.FLOAT64_SCHEMA, float("inf"), 2**63 - 1),
        ("boolean", Schema.FLOAT64_SCHEMA, 0.5, False),
        ("boolean", Schema.STRING_SCHEMA, "TRUE", True),
        ("boolean", Schema.STRING_SCHEMA, "yes", False),
        ("int8", Schema.BOOLEAN_SCHEMA, True, 1),
        ("float64", Schema.STRING_SCHEMA, "1.5e3", 1500.0),
        ("int32", Schema.STRING_SCHEMA, "-42", -42),
        ("string", Schema.FLOAT64_SCHEMA, 1e10, "1.0E10"),
        ("string", Schema.FLOAT64_SCHEMA, 0.0001, "1.0E-4"),
        ("string", Schema.FLOAT64_SCHEMA, -64.0, "-64.0"),
        ("string", Schema.FLOAT32_SCHEMA, 0.10000000149011612, "0.1"),
        ("string", Schema.BOOLEAN_SCHEMA, False, "false"),
        ("float32", Schema.FLOAT64_SCHEMA, 0.1, 0.10000000149011612),
    ],
)
def test_java_conversions(spec: str, source: Schema, value: Any, expected: Any) -> None:
    assert value_xform(spec).apply(value_record(source, value)).value == expected


@pytest.mark.parametrize(("spec", "text"), [("int8", "300"), ("int32", "4.5"), ("int64", "x")])
def test_unparseable_strings(spec: str, text: str) -> None:
    with pytest.raises(DataException, match=rf"^Value \({text}\) was out of range"):
        value_xform(spec).apply(value_record(Schema.STRING_SCHEMA, text))


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1.0"), (1234567.0, "1234567.0"), (12345678.0, "1.2345678E7"), (0.001, "0.001")],
)
def test_java_double_text(value: float, text: str) -> None:
    assert java_double_text(value) == text


# -- fields ----------------------------------------------------------------------------------------
def test_cast_fields_with_schema() -> None:
    spec = (
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,"
        "boolean:int8,string:int32,bigdecimal:string,date:string,optional:int32,bytes:string"
    )
    builder = SchemaBuilder.struct()
    builder.field("int8", SchemaBuilder.int8().default_value(2).build())
    builder.field("int16", Schema.OPTIONAL_INT16_SCHEMA)
    builder.field("int32", SchemaBuilder.int32().optional().default_value(2).build())
    builder.field("int64", Schema.INT64_SCHEMA)
    builder.field("float32", Schema.FLOAT32_SCHEMA)
    builder.field("float64", SchemaBuilder.float64().optional().default_value(-1.125).build())
    builder.field("boolean", Schema.BOOLEAN_SCHEMA)
    builder.field("string", Schema.STRING_SCHEMA)
    builder.field("bigdecimal", Decimal.schema(0))
    builder.field("date", Date.SCHEMA)
    builder.field("optional", Schema.OPTIONAL_FLOAT32_SCHEMA)
    builder.field("timestamp", Timestamp.SCHEMA)
    builder.field("bytes", Schema.BYTES_SCHEMA)
    schema = builder.build()
    value = (
        Struct(schema)
        .put("int8", 8)
        .put("int16", 16)
        .put("int32", 32)
        .put("int64", 64)
        .put("float32", 32.0)
        .put("float64", -64.0)
        .put("boolean", True)
        .put("bigdecimal", decimal.Decimal(42))
        .put("date", dt.date(1970, 1, 2))
        .put("string", "42")
        .put("timestamp", EPOCH)
        .put("bytes", bytes([0xFE, 0xDC, 0xBA, 0x98]))
    )
    out = value_xform(spec).apply(value_record(schema, value))
    result = out.value
    assert isinstance(result, Struct)
    expected = {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": True,
        "float32": 32.0,
        "float64": True,
        "boolean": 1,
        "string": 42,
        "bigdecimal": "42",
        "date": "1970-01-02",
        "optional": None,
        "timestamp": EPOCH,
        "bytes": "/ty6mA==",
    }
    assert {f.name: result.get(f) for f in result.schema.fields} == expected
    new = out.value_schema
    assert new is not None
    types = {f.name: f.schema.type for f in new.fields}
    assert types["int8"] is SchemaType.INT16
    assert types["int16"] is SchemaType.INT32
    assert types["int64"] is SchemaType.BOOLEAN
    assert types["boolean"] is SchemaType.INT8
    assert types["bytes"] is SchemaType.STRING
    assert new.field("timestamp") is not None
    assert new.field("timestamp").schema == Timestamp.SCHEMA  # type: ignore[union-attr]
    int8 = new.field("int8")
    assert int8 is not None
    assert int8.schema.default_value == 2
    assert not int8.schema.optional
    int32 = new.field("int32")
    assert int32 is not None
    assert int32.schema.optional
    assert int32.schema.default_value == 2
    f64 = new.field("float64")
    assert f64 is not None
    assert f64.schema.default_value is True
    # the same input schema reuses the cached output schema
    again = value_xform(spec)
    first = again.apply(value_record(schema, value)).value_schema
    assert again.apply(value_record(schema, value)).value_schema is first


def test_cast_fields_schemaless() -> None:
    spec = (
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,"
        "boolean:int8,string:int32"
    )
    value = {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": 64,
        "float32": 32.0,
        "float64": -64.0,
        "boolean": True,
        "string": "42",
        "other": "kept",
    }
    out = value_xform(spec).apply(value_record(None, value))
    assert out.value_schema is None
    assert out.value == {
        "int8": 8,
        "int16": 16,
        "int32": 32,
        "int64": True,
        "float32": 32.0,
        "float64": True,
        "boolean": 1,
        "string": 42,
        "other": "kept",
    }


def test_cast_logical_to_primitive() -> None:
    spec = (
        "date_to_int32:int32,timestamp_to_int64:int64,time_to_int64:int64,"
        "decimal_to_int32:int32,timestamp_to_float64:float64,null_timestamp_to_int32:int32"
    )
    schema = (
        SchemaBuilder.struct()
        .field("date_to_int32", Date.SCHEMA)
        .field("timestamp_to_int64", Timestamp.SCHEMA)
        .field("time_to_int64", Time.SCHEMA)
        .field("decimal_to_int32", Decimal.schema(0))
        .field("timestamp_to_float64", Timestamp.SCHEMA)
        .field("null_timestamp_to_int32", Timestamp.builder().optional().build())
        .build()
    )
    value = (
        Struct(schema)
        .put("date_to_int32", dt.date(1970, 1, 2))
        .put("timestamp_to_int64", EPOCH)
        .put("time_to_int64", dt.time(0, 0, 0, 1000))
        .put("decimal_to_int32", decimal.Decimal(2**31))
        .put("timestamp_to_float64", EPOCH + dt.timedelta(milliseconds=2**53 // 1024))
        .put("null_timestamp_to_int32", None)
    )
    result = value_xform(spec).apply(value_record(schema, value)).value
    assert result.get("date_to_int32") == 1
    assert result.get("timestamp_to_int64") == 0
    assert result.get("time_to_int64") == 1
    assert result.get("decimal_to_int32") == -(2**31)  # low 32 bits, as Java's intValue
    assert result.get("timestamp_to_float64") == float(2**53 // 1024)
    assert result.get("null_timestamp_to_int32") is None


def test_cast_logical_to_string() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("date", Date.SCHEMA)
        .field("time", Time.SCHEMA)
        .field("timestamp", Timestamp.SCHEMA)
        .field("decimal", Decimal.schema(2))
        .build()
    )
    value = (
        Struct(schema)
        .put("date", dt.date(1970, 1, 2))
        .put("time", dt.time(1, 0))
        .put("timestamp", dt.datetime(2021, 3, 4, 5, 6, 7, 89000, tzinfo=dt.timezone.utc))
        .put("decimal", decimal.Decimal("1982.50"))
    )
    result = value_xform("date:string,time:string,timestamp:string,decimal:string").apply(
        value_record(schema, value)
    )
    assert result.value.to_dict() == {
        "date": "1970-01-02",
        "time": "01:00:00.000Z",
        "timestamp": "2021-03-04T05:06:07.089Z",
        "decimal": "1982.50",
    }


def test_replace_null_with_default() -> None:
    field = SchemaBuilder.float32().optional().default_value(-42.125).build()
    schema = SchemaBuilder.struct().field("magic", field).build()
    value = Struct(schema).put("magic", None)
    assert value_xform("magic:int32").apply(value_record(schema, value)).value.get("magic") == -42
    off = value_xform("magic:int32", replace_null_with_default="false")
    result = off.apply(value_record(schema, value)).value
    assert result.get_without_default("magic") is None


def test_field_cast_needs_struct() -> None:
    with pytest.raises(DataException, match=r"Only Map objects supported .*\[cast types\]"):
        value_xform("foo:int8").apply(value_record(None, 42))
    schema = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"Only Struct objects supported for \[cast types\]"):
        value_xform("foo:int8").apply(value_record(schema, {"foo": 1}))


def test_bytes_field_to_number_is_rejected() -> None:
    schema = SchemaBuilder.struct().field("b", Schema.BYTES_SCHEMA).build()
    with pytest.raises(DataException, match=r"Unexpected type in Cast transformation: class bytes"):
        value_xform("b:int32").apply(value_record(schema, Struct(schema).put("b", b"x")))


# -- variants --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "Cast$Key",
        "Cast$Value",
        "ExtractField$Key",
        "ExtractField$Value",
        "Flatten$Key",
        "Flatten$Value",
        "HoistField$Key",
        "HoistField$Value",
        "InsertField$Key",
        "InsertField$Value",
        "MaskField$Key",
        "MaskField$Value",
        "ReplaceField$Key",
        "ReplaceField$Value",
        "ValueToKey",
    ],
)
def test_kafka_names_resolve_and_instances_pickle(name: str) -> None:
    import pickle

    from cdk.config import load_class

    cls = load_class(f"org.apache.kafka.connect.transforms.{name}")
    assert cls.__qualname__ == name.replace("$", ".")
    assert load_class(name) is cls
    instance = cls()
    assert type(pickle.loads(pickle.dumps(instance))) is cls
