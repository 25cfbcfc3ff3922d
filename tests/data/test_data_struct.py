"""Struct and SchemaAndValue: Kafka's StructTest plus Python-specific behaviour."""

from __future__ import annotations

import pytest

from cdk.data import Field, Schema, SchemaAndValue, SchemaBuilder, Struct
from cdk.errors import DataException

FLAT = (
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
ARRAY = SchemaBuilder.array(Schema.INT8_SCHEMA).build()
MAP = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build()
CHILD = SchemaBuilder.struct().field("int8", Schema.INT8_SCHEMA).build()
NESTED = (
    SchemaBuilder.struct().field("array", ARRAY).field("map", MAP).field("nested", CHILD).build()
)
DEFAULT_FIELD = SchemaBuilder.int8().default_value(0).build()


def flat(string: str = "foobar", data: bytes | bytearray = b"foobar") -> Struct:
    return (
        Struct(FLAT)
        .put("int8", 12)
        .put("int16", 12)
        .put("int32", 12)
        .put("int64", 12)
        .put("float32", 12.0)
        .put("float64", 12.0)
        .put("boolean", True)
        .put("string", string)
        .put("bytes", data)
    )


def test_flat_struct() -> None:
    struct = flat()
    assert struct.get_int8("int8") == 12
    assert struct.get_int16("int16") == 12
    assert struct.get_int32("int32") == 12
    assert struct.get_int64("int64") == 12
    assert struct.get_float32("float32") == 12.0
    assert struct.get_float64("float64") == 12.0
    assert struct.get_boolean("boolean") is True
    assert struct.get_string("string") == "foobar"
    assert struct.get_bytes("bytes") == b"foobar"
    struct.validate()


def test_complex_struct() -> None:
    struct = (
        Struct(NESTED)
        .put("array", [1, 2])
        .put("map", {1: "string"})
        .put("nested", Struct(CHILD).put("int8", 12))
    )
    assert struct.get_array("array") == [1, 2]
    assert struct.get_map("map") == {1: "string"}
    nested = struct.get_struct("nested")
    assert nested is not None
    assert nested.get("int8") == 12
    struct.validate()
    assert struct.to_dict() == {"array": [1, 2], "map": {1: "string"}, "nested": {"int8": 12}}


def test_typed_getter_on_wrong_type() -> None:
    with pytest.raises(DataException) as info:
        flat().get_string("int8")
    assert str(info.value) == "Field 'int8' is not of type STRING"
    assert info.value.field == "int8"


@pytest.mark.parametrize(
    ("schema", "field", "value"),
    [
        (FLAT, "int8", "should fail because this is a string, not int8"),
        (NESTED, "array", ["should fail since elements should be int8s"]),
        (NESTED, "map", {"should fail because keys should be int32s": "x"}),
        (NESTED, "nested", Struct(SchemaBuilder.struct().field("x", Schema.INT8_SCHEMA).build())),
        (NESTED, "nested", Struct(CHILD)),
    ],
)
def test_invalid_puts(schema: Schema, field: str, value: object) -> None:
    with pytest.raises(DataException):
        Struct(schema).put(field, value)


def test_missing_field_validation() -> None:
    required = SchemaBuilder.struct().field("field", Schema.INT8_SCHEMA).build()
    with pytest.raises(DataException):
        Struct(required).validate()
    Struct(SchemaBuilder.struct().field("field", Schema.OPTIONAL_INT8_SCHEMA).build()).validate()
    defaulted = SchemaBuilder.struct().field("field", DEFAULT_FIELD).build()
    Struct(defaulted).validate()
    assert Struct(defaulted).get("field") == 0
    assert Struct(defaulted).get_without_default("field") is None
    assert Struct(required).get("field") is None


def test_validate_struct_with_null_value_message() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("one", Schema.STRING_SCHEMA)
        .field("two", Schema.STRING_SCHEMA)
        .build()
    )
    with pytest.raises(DataException) as info:
        Struct(schema).validate()
    assert (
        str(info.value) == 'Invalid value: null used for required field: "one", schema type: STRING'
    )


def test_invalid_put_includes_field_name() -> None:
    schema = SchemaBuilder.struct().field("fieldName", Schema.STRING_SCHEMA).build()
    with pytest.raises(DataException) as info:
        Struct(schema).put("fieldName", None)
    assert str(info.value) == (
        'Invalid value: null used for required field: "fieldName", schema type: STRING'
    )
    with pytest.raises(DataException) as info:
        Struct(schema).put("fieldName", 5)
    assert str(info.value) == (
        'Invalid Python object for schema with type STRING: class int for field: "fieldName"'
    )


def test_unknown_fields() -> None:
    struct = flat()
    with pytest.raises(DataException, match="nope is not a valid field name"):
        struct.get("nope")
    with pytest.raises(DataException, match="nope is not a valid field name"):
        struct.put("nope", 1)
    foreign = Field("int8", 0, Schema.INT16_SCHEMA)
    with pytest.raises(DataException, match="int8 is not a valid field name"):
        struct.put(foreign, 1)


def test_put_and_get_by_field() -> None:
    field = FLAT.field("int32")
    assert field is not None
    struct = flat().put(field, 99)
    assert struct.get(field) == 99


def test_struct_needs_struct_schema() -> None:
    with pytest.raises(DataException, match="Not a struct schema"):
        Struct(Schema.INT8_SCHEMA)


def test_equality_and_hash() -> None:
    assert flat() == flat()
    assert hash(flat()) == hash(flat())
    assert flat() != flat(string="mismatching string")
    assert flat(data=b"x") == flat(data=bytearray(b"x"))
    assert hash(flat(data=b"x")) == hash(flat(data=bytearray(b"x")))
    assert flat() != flat(data=b"mismatching_string")
    s1 = Struct(NESTED).put("array", [1, 2]).put("map", {1: "string"})
    s2 = Struct(NESTED).put("array", [1, 2]).put("map", {1: "string"})
    s3 = Struct(NESTED).put("array", [1, 2, 3]).put("map", {2: "string"})
    assert s1 == s2
    assert hash(s1) == hash(s2)
    assert s1 != s3
    assert flat() != "struct"


def test_repr_is_java_like() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.OPTIONAL_STRING_SCHEMA)
        .field("c", Schema.BOOLEAN_SCHEMA)
        .build()
    )
    assert repr(Struct(schema).put("a", 1).put("c", False)) == "Struct{a=1,c=false}"


def test_schema_and_value() -> None:
    sv = SchemaAndValue(Schema.INT32_SCHEMA, 5)
    schema, value = sv
    assert schema == Schema.INT32_SCHEMA
    assert value == 5
    assert sv == SchemaAndValue(Schema.INT32_SCHEMA, 5)
    assert sv != SchemaAndValue(Schema.INT64_SCHEMA, 5)
    assert hash(SchemaAndValue(None, [1, {"a": b"x"}])) == hash(
        SchemaAndValue(None, [1, {"a": b"x"}])
    )
    assert SchemaAndValue(None, None) == SchemaAndValue.NULL
    assert repr(sv) == "SchemaAndValue{schema=Schema{INT32}, value=5}"


def test_a_struct_schema_can_have_a_struct_default() -> None:
    builder = SchemaBuilder.struct().name("Point").field("x", Schema.INT32_SCHEMA).optional()
    default = Struct(builder.build()).put("x", 0)
    schema = builder.default_value(default).build()
    assert schema.default_value == default
    outer = SchemaBuilder.struct().field("p", schema).build()
    assert Struct(outer).get("p") == default
    other = SchemaBuilder.struct().name("Other").field("x", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="Struct schemas do not match"):
        Struct(outer).put("p", Struct(other).put("x", 1))
