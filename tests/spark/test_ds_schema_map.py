"""Connect ⇄ Spark schema and value mapping (no JVM: PySpark's own Python conversions)."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import types as T

from cdk import DataException, Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from cdk.spark import connect_to_spark, spark_to_connect, to_connect_value, to_spark_value
from harness.strategies import schema_and_value, schemas


def _mappable(schema: Schema) -> bool:
    if schema.name == Decimal.LOGICAL_NAME:
        return Decimal.scale(schema) >= 0
    if schema.type.name == "STRUCT":
        return all(_mappable(f.schema) for f in schema.fields)
    if schema.type.name == "ARRAY":
        return _mappable(schema.value_schema)
    if schema.type.name == "MAP":
        return _mappable(schema.key_schema) and _mappable(schema.value_schema)
    return True


def _shape(schema: Schema) -> Any:
    """What the mapping keeps: types, optionality, field names, logical types."""
    logical = schema.name if schema.name and schema.name.startswith("org.apache") else None
    scale = Decimal.scale(schema) if logical == Decimal.LOGICAL_NAME else None
    head = (schema.type, schema.optional, logical, scale)
    if schema.type.name == "STRUCT":
        return (*head, tuple((f.name, _shape(f.schema)) for f in schema.fields))
    if schema.type.name == "ARRAY":
        return (*head, _shape(schema.value_schema))
    if schema.type.name == "MAP":
        return (*head, _shape(schema.key_schema), _shape(schema.value_schema))
    return head


def _plain(value: Any) -> Any:
    if isinstance(value, Struct):
        return {f.name: _plain(value.get(f)) for f in value.schema.fields}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, decimal.Decimal):
        return ("dec", value.normalize())
    return value


@given(schemas(3).filter(_mappable))
def test_every_connect_schema_maps_to_spark_and_back(schema: Schema) -> None:
    spark_type = connect_to_spark(schema)
    back = spark_to_connect(spark_type, optional=schema.optional)
    assert _shape(back) == _shape(schema)
    assert connect_to_spark(back) == spark_type


@given(schema_and_value(3, defaults=False).filter(lambda sv: _mappable(sv.schema)))
def test_every_connect_value_survives_the_round_trip_through_spark(sv: Any) -> None:
    spark_type = connect_to_spark(sv.schema)
    internal = spark_type.toInternal(to_spark_value(sv.schema, sv.value))
    back_schema = spark_to_connect(spark_type, optional=sv.schema.optional)
    back = to_connect_value(back_schema, spark_type.fromInternal(internal))
    assert _plain(back) == _plain(sv.value)


def test_the_mapping_table() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("i8", Schema.INT8_SCHEMA)
        .field("i16", Schema.OPTIONAL_INT16_SCHEMA)
        .field("i32", Schema.INT32_SCHEMA)
        .field("i64", Schema.INT64_SCHEMA)
        .field("f32", Schema.FLOAT32_SCHEMA)
        .field("f64", Schema.FLOAT64_SCHEMA)
        .field("b", Schema.BOOLEAN_SCHEMA)
        .field("s", Schema.STRING_SCHEMA)
        .field("raw", Schema.BYTES_SCHEMA)
        .field("amount", Decimal.schema(2))
        .field("day", Date.SCHEMA if hasattr(Date, "SCHEMA") else Date.builder().build())
        .field("at", Time.builder().build())
        .field("ts", Timestamp.builder().optional().build())
        .field("tags", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build())
        .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build())
        .build()
    )
    assert connect_to_spark(schema) == T.StructType(
        [
            T.StructField("i8", T.ByteType(), False),
            T.StructField("i16", T.ShortType(), True),
            T.StructField("i32", T.IntegerType(), False),
            T.StructField("i64", T.LongType(), False),
            T.StructField("f32", T.FloatType(), False),
            T.StructField("f64", T.DoubleType(), False),
            T.StructField("b", T.BooleanType(), False),
            T.StructField("s", T.StringType(), False),
            T.StructField("raw", T.BinaryType(), False),
            T.StructField("amount", T.DecimalType(38, 2), False),
            T.StructField("day", T.DateType(), False),
            T.StructField("at", T.TimeType(3), False),
            T.StructField("ts", T.TimestampType(), True),
            T.StructField("tags", T.ArrayType(T.StringType(), True), False),
            T.StructField("attrs", T.MapType(T.StringType(), T.LongType(), False), False),
        ]
    )


def test_decimal_precision_travels_in_a_parameter() -> None:
    schema = spark_to_connect(T.DecimalType(10, 3))
    assert Decimal.scale(schema) == 3
    assert schema.parameters["connect.decimal.precision"] == "10"
    assert connect_to_spark(schema) == T.DecimalType(10, 3)


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            SchemaBuilder.struct()
            .field("order", SchemaBuilder.struct().field("total", Decimal.schema(-2)).build())
            .build(),
            "field 'order.total'",
        ),
        (
            SchemaBuilder.struct().field("xs", SchemaBuilder.array(Decimal.schema(40)).build()),
            "field 'xs[]'",
        ),
    ],
)
def test_unmappable_connect_schemas_name_the_field(schema: Any, message: str) -> None:
    if isinstance(schema, SchemaBuilder):
        schema = schema.build()
    with pytest.raises(DataException, match=r"Cannot map " + message.replace("[", r"\[")):
        connect_to_spark(schema)


@pytest.mark.parametrize(
    "dtype",
    [T.NullType(), T.CalendarIntervalType(), T.DayTimeIntervalType(), T.VariantType()],
)
def test_unmappable_spark_types_name_the_field(dtype: Any) -> None:
    row = T.StructType([T.StructField("outer", T.StructType([T.StructField("bad", dtype)]))])
    with pytest.raises(DataException, match=r"field 'outer\.bad'") as info:
        spark_to_connect(row)
    assert info.value.field == "outer.bad"


def test_a_null_in_a_required_field_is_named() -> None:
    schema = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    with pytest.raises(DataException, match="Field 'id' is required"):
        to_connect_value(schema, (None,))


def test_a_decimal_too_wide_for_spark_is_named() -> None:
    schema = SchemaBuilder.struct().field("x", spark_to_connect(T.DecimalType(4, 2))).build()
    with pytest.raises(DataException, match="Field 'x'"):
        to_spark_value(schema, Struct(schema).put("x", decimal.Decimal("123.45")))


@given(st.datetimes(timezones=st.just(dt.timezone.utc)))
def test_timestamps_keep_milliseconds(value: dt.datetime) -> None:
    schema = Timestamp.builder().build()
    spark_type = connect_to_spark(schema)
    back = to_connect_value(schema, spark_type.fromInternal(spark_type.toInternal(value)))
    assert back == value.replace(microsecond=value.microsecond // 1000 * 1000)
