"""SchemaProjector, ported from Kafka's SchemaProjectorTest plus the exact error texts."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from cdk.data import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaProjector,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from cdk.errors import DataException, SchemaProjectorException

project = SchemaProjector.project

NUMERIC = [
    Schema.INT8_SCHEMA,
    Schema.INT16_SCHEMA,
    Schema.INT32_SCHEMA,
    Schema.INT64_SCHEMA,
    Schema.FLOAT32_SCHEMA,
    Schema.FLOAT64_SCHEMA,
]
OPTIONAL_NUMERIC = [
    Schema.OPTIONAL_INT8_SCHEMA,
    Schema.OPTIONAL_INT16_SCHEMA,
    Schema.OPTIONAL_INT32_SCHEMA,
    Schema.OPTIONAL_INT64_SCHEMA,
    Schema.OPTIONAL_FLOAT32_SCHEMA,
    Schema.OPTIONAL_FLOAT64_SCHEMA,
]
VALUES = [127, 255, 32767, 327890, 1.2, 1.2345]
EXPECTED = {
    0: [127, 127, 127, 127, 127.0, 127.0],
    1: [255, 255, 255, 255.0, 255.0],
    2: [32767, 32767, 32767.0, 32767.0],
    3: [327890, 327890.0, 327890.0],
    4: [1.2, 1.2],
    5: [1.2345],
}


def test_primitive_type_projection() -> None:
    assert project(Schema.BOOLEAN_SCHEMA, False, Schema.BOOLEAN_SCHEMA) is False
    assert project(Schema.BYTES_SCHEMA, b"\x01\x02", Schema.BYTES_SCHEMA) == b"\x01\x02"
    assert project(Schema.STRING_SCHEMA, "abc", Schema.STRING_SCHEMA) == "abc"
    assert project(Schema.BOOLEAN_SCHEMA, False, Schema.OPTIONAL_BOOLEAN_SCHEMA) is False
    assert project(Schema.BYTES_SCHEMA, b"\x01", Schema.OPTIONAL_BYTES_SCHEMA) == b"\x01"
    assert project(Schema.STRING_SCHEMA, "abc", Schema.OPTIONAL_STRING_SCHEMA) == "abc"
    for source, value, target in [
        (Schema.OPTIONAL_BOOLEAN_SCHEMA, False, Schema.BOOLEAN_SCHEMA),
        (Schema.OPTIONAL_BYTES_SCHEMA, b"\x01", Schema.BYTES_SCHEMA),
        (Schema.OPTIONAL_STRING_SCHEMA, "abc", Schema.STRING_SCHEMA),
    ]:
        with pytest.raises(SchemaProjectorException) as info:
            project(source, value, target)
        assert str(info.value) == (
            "Writer schema is optional, however, target schema does not provide a default value."
        )


@pytest.mark.parametrize("i", range(6))
def test_numeric_type_projection(i: int) -> None:
    for j in range(i, 6):
        for target in (NUMERIC[j], OPTIONAL_NUMERIC[j]):
            projected = project(NUMERIC[i], VALUES[i], target)
            expected = EXPECTED[i][j - i]
            if target.type in (SchemaType.FLOAT32, SchemaType.FLOAT64):
                assert isinstance(projected, float)
                assert projected == pytest.approx(expected, rel=1e-6)
            else:
                assert type(projected) is int
                assert projected == expected


@pytest.mark.parametrize("source", NUMERIC)
@pytest.mark.parametrize(
    "target", [Schema.BOOLEAN_SCHEMA, Schema.BYTES_SCHEMA, Schema.STRING_SCHEMA]
)
def test_numeric_not_promotable_to_non_numeric(source: Schema, target: Schema) -> None:
    with pytest.raises(SchemaProjectorException) as info:
        project(source, object(), target)
    assert str(info.value) == (
        f"Schema type mismatch. source type: {source.type.name} and target type: {target.type.name}"
    )


def test_narrowing_is_not_allowed() -> None:
    with pytest.raises(SchemaProjectorException, match="Schema type mismatch"):
        project(Schema.INT64_SCHEMA, 1, Schema.INT32_SCHEMA)
    with pytest.raises(SchemaProjectorException, match="Schema type mismatch"):
        project(Schema.FLOAT32_SCHEMA, 1.0, Schema.INT64_SCHEMA)


def test_wide_integer_to_float32_loses_precision_like_java() -> None:
    assert project(Schema.INT64_SCHEMA, 2**60 + 1, Schema.FLOAT32_SCHEMA) == float(2**60)
    assert project(Schema.INT64_SCHEMA, 2**60 + 1, Schema.FLOAT64_SCHEMA) == float(2**60 + 1)


def test_non_number_value_for_numeric_schema_is_a_clear_error() -> None:
    with pytest.raises(SchemaProjectorException, match="not a number"):
        project(Schema.INT32_SCHEMA, "12", Schema.FLOAT64_SCHEMA)


OPTIONAL_CASES = [
    (Schema.OPTIONAL_BOOLEAN_SCHEMA, SchemaType.BOOLEAN, False, True, False),
    (Schema.OPTIONAL_BYTES_SCHEMA, SchemaType.BYTES, b"\x01\x02", b"\x03\x04", b"\x01\x02"),
    (Schema.OPTIONAL_STRING_SCHEMA, SchemaType.STRING, "abc", "def", "abc"),
    (Schema.OPTIONAL_INT8_SCHEMA, SchemaType.INT8, 12, 127, 12),
    (Schema.OPTIONAL_INT8_SCHEMA, SchemaType.INT16, 12, 127, 12),
    (Schema.OPTIONAL_INT8_SCHEMA, SchemaType.INT32, 12, 12789, 12),
    (Schema.OPTIONAL_INT8_SCHEMA, SchemaType.INT64, 12, 127890, 12),
    (Schema.OPTIONAL_INT8_SCHEMA, SchemaType.FLOAT32, 12, 3.45, 12.0),
    (Schema.OPTIONAL_INT8_SCHEMA, SchemaType.FLOAT64, 12, 3.4567, 12.0),
    (Schema.OPTIONAL_INT16_SCHEMA, SchemaType.INT32, 12, 12789, 12),
    (Schema.OPTIONAL_INT16_SCHEMA, SchemaType.FLOAT64, 12, 3.4567, 12.0),
    (Schema.OPTIONAL_INT32_SCHEMA, SchemaType.INT64, 12, 127890, 12),
    (Schema.OPTIONAL_INT32_SCHEMA, SchemaType.FLOAT32, 12, 3.45, 12.0),
    (Schema.OPTIONAL_INT64_SCHEMA, SchemaType.FLOAT64, 12, 3.4567, 12.0),
    (Schema.OPTIONAL_FLOAT32_SCHEMA, SchemaType.FLOAT32, 12.345, 3.45, 12.345),
    (Schema.OPTIONAL_FLOAT32_SCHEMA, SchemaType.FLOAT64, 12.345, 3.4567, 12.345),
]


@pytest.mark.parametrize(("source", "target_type", "value", "default", "expected"), OPTIONAL_CASES)
@pytest.mark.parametrize("optional", [True, False])
def test_primitive_optional_projection(
    source: Schema,
    target_type: SchemaType,
    value: object,
    default: object,
    expected: object,
    optional: bool,
) -> None:
    builder = SchemaBuilder.type(target_type)
    if optional:
        builder.optional()
    target = builder.default_value(default).build()
    assert (
        project(source, value, target) == pytest.approx(expected)
        if isinstance(expected, float)
        else project(source, value, target) == expected
    )
    assert project(source, None, target) == (None if optional else default)


def test_struct_add_field() -> None:
    source = SchemaBuilder.struct().field("field", Schema.INT32_SCHEMA).build()
    source_struct = Struct(source).put("field", 1)
    target = (
        SchemaBuilder.struct()
        .field("field", Schema.INT32_SCHEMA)
        .field("field2", SchemaBuilder.int32().default_value(123).build())
        .build()
    )
    projected = project(source, source_struct, target)
    assert projected.get_int32("field") == 1
    assert projected.get_int32("field2") == 123
    incompatible = (
        SchemaBuilder.struct()
        .field("field", Schema.INT32_SCHEMA)
        .field("field2", Schema.INT32_SCHEMA)
        .build()
    )
    with pytest.raises(SchemaProjectorException) as info:
        project(source, source_struct, incompatible)
    assert (
        str(info.value) == "Required field `field2` is missing from source schema: Schema{STRUCT}"
    )
    assert info.value.field == "field2"


def test_struct_remove_field() -> None:
    source = (
        SchemaBuilder.struct()
        .field("field", Schema.INT32_SCHEMA)
        .field("field2", Schema.INT32_SCHEMA)
        .build()
    )
    source_struct = Struct(source).put("field", 1).put("field2", 234)
    target = SchemaBuilder.struct().field("field", Schema.INT32_SCHEMA).build()
    projected = project(source, source_struct, target)
    assert projected.get("field") == 1
    with pytest.raises(DataException, match="field2 is not a valid field name"):
        projected.get("field2")


def test_struct_default_value() -> None:
    source = (
        SchemaBuilder.struct()
        .optional()
        .field("field", Schema.INT32_SCHEMA)
        .field("field2", Schema.INT32_SCHEMA)
        .build()
    )
    builder = (
        SchemaBuilder.struct()
        .field("field", Schema.INT32_SCHEMA)
        .field("field2", Schema.INT32_SCHEMA)
    )
    default_struct = Struct(builder.build()).put("field", 12).put("field2", 345)
    builder.default_value(default_struct)
    target = builder.build()
    assert project(source, None, target) == default_struct
    source_struct = Struct(source).put("field", 45).put("field2", 678)
    projected = project(source, source_struct, target)
    assert projected.get("field") == 45
    assert projected.get("field2") == 678
    assert projected.schema == target


def test_nested_schema_projection() -> None:
    source_flat = SchemaBuilder.struct().field("field", Schema.INT32_SCHEMA).build()
    target_flat = (
        SchemaBuilder.struct()
        .field("field", Schema.INT32_SCHEMA)
        .field("field2", SchemaBuilder.int32().default_value(123).build())
        .build()
    )

    def nested(flat: Schema) -> Schema:
        return (
            SchemaBuilder.struct()
            .field("first", Schema.INT32_SCHEMA)
            .field("second", Schema.STRING_SCHEMA)
            .field("array", SchemaBuilder.array(Schema.INT32_SCHEMA).build())
            .field("map", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
            .field("nested", flat)
            .build()
        )

    source_nested, target_nested = nested(source_flat), nested(target_flat)
    source_struct = (
        Struct(source_nested)
        .put("first", 1)
        .put("second", "abc")
        .put("array", [1, 2])
        .put("map", {5: "def"})
        .put("nested", Struct(source_flat).put("field", 113))
    )
    projected = project(source_nested, source_struct, target_nested)
    assert projected.get("first") == 1
    assert projected.get("second") == "abc"
    assert projected.get("array") == [1, 2]
    assert projected.get("map") == {5: "def"}
    inner = projected.get("nested")
    assert inner.get("field") == 113
    assert inner.get("field2") == 123
    projected.validate()


def test_nested_error_is_wrapped_with_the_field_name() -> None:
    source = SchemaBuilder.struct().field("a", Schema.OPTIONAL_INT32_SCHEMA).build()
    target = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(SchemaProjectorException) as info:
        project(source, Struct(source).put("a", 1), target)
    assert str(info.value) == "Error projecting a"
    assert isinstance(info.value.__cause__, SchemaProjectorException)
    assert "does not provide a default value" in str(info.value.__cause__)


def test_logical_type_projection() -> None:
    value = decimal.Decimal("1.56")
    assert project(Decimal.schema(2), value, Decimal.schema(2)) == value
    assert project(Date.SCHEMA, dt.date(1972, 9, 27), Date.SCHEMA) == dt.date(1972, 9, 27)
    assert project(Time.SCHEMA, dt.time(0, 0, 0, 231000), Time.SCHEMA) == dt.time(0, 0, 0, 231000)
    now = dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc)
    assert project(Timestamp.SCHEMA, now, Timestamp.SCHEMA) == now
    named = SchemaBuilder.int32().name("invalidLogicalTypeName").build()
    for logical in (Decimal.schema(2), Date.SCHEMA, Time.SCHEMA, Timestamp.SCHEMA):
        with pytest.raises(SchemaProjectorException):
            project(logical, None, Schema.BOOLEAN_SCHEMA)
        with pytest.raises(SchemaProjectorException):
            project(logical, None, named)
        with pytest.raises(SchemaProjectorException):
            project(Schema.BOOLEAN_SCHEMA, None, logical)


def test_decimal_scale_mismatch_is_a_parameters_error() -> None:
    with pytest.raises(SchemaProjectorException) as info:
        project(Decimal.schema(2), decimal.Decimal("1.00"), Decimal.schema(3))
    assert str(info.value) == (
        "Schema parameters not equal. source parameters: {scale=2} and target parameters: {scale=3}"
    )


def test_array_projection() -> None:
    source = SchemaBuilder.array(Schema.INT32_SCHEMA).build()
    assert project(source, [1, 2, 3], source) == [1, 2, 3]
    optional_source = SchemaBuilder.array(Schema.INT32_SCHEMA).optional().build()
    target = SchemaBuilder.array(Schema.INT32_SCHEMA).default_value([1, 2, 3]).build()
    assert project(optional_source, [4, 5], target) == [4, 5]
    assert project(optional_source, None, target) == [1, 2, 3]
    promoted = SchemaBuilder.array(Schema.INT64_SCHEMA).default_value([1, 2, 3]).build()
    assert project(optional_source, [4, 5], promoted) == [4, 5]
    no_default = SchemaBuilder.array(Schema.INT32_SCHEMA).build()
    with pytest.raises(SchemaProjectorException):
        project(optional_source, None, no_default)
    floats = SchemaBuilder.array(Schema.FLOAT64_SCHEMA).build()
    out = project(source, [4, 5], floats)
    assert out == [4.0, 5.0]
    assert all(isinstance(v, float) for v in out)
    with pytest.raises(SchemaProjectorException, match="type mismatch"):
        project(source, [True], SchemaBuilder.array(Schema.BOOLEAN_SCHEMA).build())


def test_map_projection() -> None:
    source = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).optional().build()
    target = (
        SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).default_value({1: 2}).build()
    )
    assert project(source, {3: 4}, target) == {3: 4}
    assert project(source, None, target) == {1: 2}
    promoted = (
        SchemaBuilder.map(Schema.INT64_SCHEMA, Schema.FLOAT32_SCHEMA)
        .default_value({3: 4.5})
        .build()
    )
    out = project(source, {3: 4}, promoted)
    assert out == {3: 4.0}
    assert isinstance(out[3], float)
    assert project(source, None, promoted) == {3: 4.5}
    no_default = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build()
    with pytest.raises(SchemaProjectorException):
        project(source, None, no_default)
    with pytest.raises(SchemaProjectorException):
        project(
            source, None, SchemaBuilder.map(Schema.BOOLEAN_SCHEMA, Schema.STRING_SCHEMA).build()
        )


def test_maybe_compatible_messages() -> None:
    source = SchemaBuilder.int32().name("source").build()
    target = SchemaBuilder.int32().name("target").build()
    with pytest.raises(SchemaProjectorException) as info:
        project(source, 12, target)
    assert str(info.value) == "Schema name mismatch. source name: source and target name: target"
    with pytest.raises(SchemaProjectorException) as info:
        project(Schema.INT32_SCHEMA, 12, target)
    assert str(info.value) == "Schema name mismatch. source name: null and target name: target"
    with_params = SchemaBuilder.int32().parameters({"key": "value"}).build()
    with pytest.raises(SchemaProjectorException) as info:
        project(Schema.INT32_SCHEMA, 34, with_params)
    assert str(info.value) == (
        "Schema parameters not equal. source parameters: null and target parameters: {key=value}"
    )


def test_version_is_not_compared() -> None:
    source = SchemaBuilder.int32().version(1).build()
    target = SchemaBuilder.int32().version(2).build()
    assert project(source, 5, target) == 5


def test_missing_fields() -> None:
    source = SchemaBuilder.struct().build()
    defaulted = (
        SchemaBuilder.struct().field("id", SchemaBuilder.int64().default_value(42).build()).build()
    )
    assert project(source, Struct(source), defaulted).get_int64("id") == 42
    optional = SchemaBuilder.struct().field("id", Schema.OPTIONAL_INT64_SCHEMA).build()
    assert project(source, Struct(source), optional).get_int64("id") is None
    required = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    with pytest.raises(SchemaProjectorException):
        project(source, Struct(source), required)


def test_wrong_container_values_are_clear_errors() -> None:
    array = SchemaBuilder.array(Schema.INT32_SCHEMA).build()
    with pytest.raises(SchemaProjectorException, match="not a list"):
        project(array, "nope", array)
    struct = SchemaBuilder.struct().build()
    with pytest.raises(SchemaProjectorException, match="not a Struct"):
        project(struct, {"a": 1}, struct)
