"""Schema, SchemaBuilder and validate_value: Kafka's SchemaBuilderTest and ConnectSchemaTest."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from cdk.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
    validate_value,
)
from cdk.errors import DataException, SchemaBuilderException

NAME = "name"
VERSION = 2
DOC = "doc"
NO_PARAMS: dict[str, str] = {}


def assert_schema(
    schema: Schema,
    stype: SchemaType,
    optional: bool,
    default: object,
    name: str | None = None,
    version: int | None = None,
    doc: str | None = None,
    params: dict[str, str] | None = None,
) -> None:
    assert schema.type is stype
    assert schema.optional is optional
    assert schema.default_value == default
    assert schema.name == name
    assert schema.version == version
    assert schema.doc == doc
    assert dict(schema.parameters) == (params or {})


PRIMITIVES = [
    (SchemaBuilder.int8, SchemaType.INT8, 12),
    (SchemaBuilder.int16, SchemaType.INT16, 12),
    (SchemaBuilder.int32, SchemaType.INT32, 12),
    (SchemaBuilder.int64, SchemaType.INT64, 12),
    (SchemaBuilder.float32, SchemaType.FLOAT32, 12.0),
    (SchemaBuilder.float64, SchemaType.FLOAT64, 12.0),
    (SchemaBuilder.boolean, SchemaType.BOOLEAN, True),
    (SchemaBuilder.string, SchemaType.STRING, "a default string"),
    (SchemaBuilder.bytes, SchemaType.BYTES, b"thebytes"),
]


@pytest.mark.parametrize(("factory", "stype", "default"), PRIMITIVES)
def test_primitive_builders(factory, stype: SchemaType, default: object) -> None:  # type: ignore[no-untyped-def]
    assert_schema(factory().build(), stype, False, None)
    schema = factory().name(NAME).optional().default_value(default).version(VERSION).doc(DOC)
    assert_schema(schema.build(), stype, True, default, NAME, VERSION, DOC)


@pytest.mark.parametrize(
    ("factory", "bad"),
    [
        (SchemaBuilder.int8, "a string"),
        (SchemaBuilder.int16, "a string"),
        (SchemaBuilder.int32, "a string"),
        (SchemaBuilder.int64, "a string"),
        (SchemaBuilder.float32, "a string"),
        (SchemaBuilder.float64, "a string"),
        (SchemaBuilder.boolean, 12),
        (SchemaBuilder.string, True),
        (SchemaBuilder.bytes, "a string"),
    ],
)
def test_invalid_defaults(factory, bad: object) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SchemaBuilderException, match="Invalid default value"):
        factory().default_value(bad)


def test_parameters() -> None:
    schema = SchemaBuilder.string().parameter("foo", "bar").parameters({"baz": "q"}).build()
    assert dict(schema.parameters) == {"foo": "bar", "baz": "q"}
    with pytest.raises(TypeError):
        schema.parameters["x"] = "y"  # type: ignore[index]


def test_struct_builder() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("field1", Schema.INT8_SCHEMA)
        .field("field2", Schema.INT8_SCHEMA)
        .build()
    )
    assert_schema(schema, SchemaType.STRUCT, False, None)
    assert [f.name for f in schema.fields] == ["field1", "field2"]
    assert schema.fields[1] == Field("field2", 1, Schema.INT8_SCHEMA)
    assert schema.field("field2") == Field("field2", 1, Schema.INT8_SCHEMA)
    assert schema.field("missing") is None


def test_struct_builder_errors() -> None:
    with pytest.raises(SchemaBuilderException, match="Cannot create fields on type INT8"):
        SchemaBuilder.int8().field("field", SchemaBuilder.int8())
    with pytest.raises(SchemaBuilderException, match=r"fieldName cannot be null\."):
        SchemaBuilder.struct().field(None, Schema.INT8_SCHEMA)  # type: ignore[arg-type]
    with pytest.raises(SchemaBuilderException, match=r"fieldSchema for field f cannot be null\."):
        SchemaBuilder.struct().field("f", None)  # type: ignore[arg-type]
    with pytest.raises(
        SchemaBuilderException, match="Cannot create field because of field name duplication id"
    ):
        SchemaBuilder.struct().field("id", Schema.STRING_SCHEMA).field("id", Schema.INT32_SCHEMA)
    with pytest.raises(DataException, match="Cannot list fields on non-struct type"):
        Schema.INT8_SCHEMA.fields  # noqa: B018
    with pytest.raises(DataException, match="Cannot look up fields on non-struct type"):
        Schema.INT8_SCHEMA.field("a")


def test_array_and_map_builders() -> None:
    array = SchemaBuilder.array(Schema.INT8_SCHEMA).build()
    assert_schema(array, SchemaType.ARRAY, False, None)
    assert array.value_schema == Schema.INT8_SCHEMA
    default = [1, 2]
    assert SchemaBuilder.array(Schema.INT8_SCHEMA).default_value(default).build().default_value == [
        1,
        2,
    ]
    with pytest.raises(SchemaBuilderException):
        SchemaBuilder.array(Schema.INT8_SCHEMA).default_value(["string"])
    with pytest.raises(SchemaBuilderException, match=r"valueSchema cannot be null\."):
        SchemaBuilder.array(None)  # type: ignore[arg-type]
    mapping = SchemaBuilder.map(Schema.INT8_SCHEMA, Schema.INT8_SCHEMA).build()
    assert mapping.key_schema == Schema.INT8_SCHEMA
    assert mapping.value_schema == Schema.INT8_SCHEMA
    with pytest.raises(SchemaBuilderException):
        SchemaBuilder.map(Schema.INT8_SCHEMA, Schema.INT8_SCHEMA).default_value({"a": 1})
    with pytest.raises(SchemaBuilderException, match=r"keySchema cannot be null\."):
        SchemaBuilder.map(None, Schema.INT8_SCHEMA)  # type: ignore[arg-type]
    with pytest.raises(DataException, match="Cannot look up key schema on non-map type"):
        array.key_schema  # noqa: B018
    with pytest.raises(DataException, match="non-array and non-map"):
        Schema.INT8_SCHEMA.value_schema  # noqa: B018


def test_same_value_can_be_set_again_but_not_another() -> None:
    builder = SchemaBuilder.string().name("testing").version(123).optional()
    builder.name("testing").version(123).optional()
    assert builder.build().name == "testing"
    with pytest.raises(SchemaBuilderException) as info:
        SchemaBuilder.string().name("testing").version(123).version(456)
    assert str(info.value) == "Invalid SchemaBuilder call: version has already been set."
    with pytest.raises(SchemaBuilderException, match="optional has already been set"):
        SchemaBuilder.string().optional().required()
    with pytest.raises(SchemaBuilderException, match="name has already been set"):
        SchemaBuilder.string().name("a").name("b")
    with pytest.raises(SchemaBuilderException, match="doc has already been set"):
        SchemaBuilder.string().doc("a").doc("b")
    with pytest.raises(SchemaBuilderException, match="default has already been set"):
        SchemaBuilder.string().default_value("a").default_value("b")


def test_builder_accepted_as_field_schema_and_schema_alias() -> None:
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.string().optional()).schema()
    assert schema.fields[0].schema == Schema.OPTIONAL_STRING_SCHEMA


def test_logical_builders() -> None:
    assert_schema(
        Decimal.schema(2),
        SchemaType.BYTES,
        False,
        None,
        Decimal.LOGICAL_NAME,
        1,
        None,
        {"scale": "2"},
    )
    assert_schema(Date.SCHEMA, SchemaType.INT32, False, None, Date.LOGICAL_NAME, 1)
    assert_schema(Time.SCHEMA, SchemaType.INT32, False, None, Time.LOGICAL_NAME, 1)
    assert_schema(Timestamp.SCHEMA, SchemaType.INT64, False, None, Timestamp.LOGICAL_NAME, 1)


# -- ConnectSchemaTest ---------------------------------------------------------------------------
MAP_INT_STRING = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build()
FLAT = SchemaBuilder.struct().field("field", Schema.INT32_SCHEMA).build()
ARRAY_INT8 = SchemaBuilder.array(Schema.INT8_SCHEMA).build()


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (Schema.INT8_SCHEMA, 1),
        (Schema.INT16_SCHEMA, 1),
        (Schema.INT32_SCHEMA, 1),
        (Schema.INT64_SCHEMA, 2**63 - 1),
        (Schema.FLOAT32_SCHEMA, 1.0),
        (Schema.FLOAT64_SCHEMA, 1.0),
        (Schema.FLOAT64_SCHEMA, 1),
        (Schema.BOOLEAN_SCHEMA, True),
        (Schema.STRING_SCHEMA, "a string"),
        (Schema.BYTES_SCHEMA, b"a byte array"),
        (Schema.BYTES_SCHEMA, bytearray(b"a byte array")),
        (Schema.BYTES_SCHEMA, memoryview(b"a byte array")),
        (ARRAY_INT8, [1, 2, 3]),
        (ARRAY_INT8, (1, 2, 3)),
        (MAP_INT_STRING, {1: "value"}),
        (FLAT, Struct(FLAT).put("field", 1)),
        (Decimal.schema(2), decimal.Decimal("1.00")),
        (Date.SCHEMA, dt.date(2020, 1, 1)),
        (Time.SCHEMA, dt.time(1, 2, 3)),
        (Timestamp.SCHEMA, dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)),
        (Timestamp.SCHEMA, dt.datetime(2020, 1, 1)),
        (Schema.OPTIONAL_INT32_SCHEMA, None),
    ],
)
def test_validate_value_matching_type(schema: Schema, value: object) -> None:
    validate_value(schema, value)
    schema.validate_value(value)


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        (
            Schema.INT8_SCHEMA,
            "x",
            "Invalid Python object for schema with type INT8: class str for value",
        ),
        (
            Schema.INT8_SCHEMA,
            True,
            "Invalid Python object for schema with type INT8: class bool for value",
        ),
        (
            Schema.INT8_SCHEMA,
            128,
            "Invalid Python object for schema with type INT8: class int "
            "(128 is out of range [-128, 127]) for value",
        ),
        (Schema.INT64_SCHEMA, 2**63, "out of range"),
        (Schema.FLOAT32_SCHEMA, "1", "with type FLOAT32: class str"),
        (Schema.BOOLEAN_SCHEMA, 1, "with type BOOLEAN: class int"),
        (Schema.STRING_SCHEMA, b"x", "with type STRING: class bytes"),
        (Schema.BYTES_SCHEMA, "x", "with type BYTES: class str"),
        (ARRAY_INT8, {1}, "with type ARRAY: class set"),
        (
            ARRAY_INT8,
            [1, "a"],
            "Invalid Python object for schema with type INT8: class str for element of array value",
        ),
        (
            MAP_INT_STRING,
            {"k": "v"},
            "Invalid Python object for schema with type INT32: class str for key of map value",
        ),
        (
            MAP_INT_STRING,
            {1: 2},
            "Invalid Python object for schema with type STRING: class int for value of map value",
        ),
        (
            FLAT,
            Struct(SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()),
            "Struct schemas do not match.",
        ),
        (
            FLAT,
            Struct(FLAT),
            'Invalid value: null used for required field: "field", schema type: INT32',
        ),
        (
            Decimal.schema(2),
            1.5,
            'Invalid Python object for schema "org.apache.kafka.connect.data.Decimal" with type '
            "BYTES: class float for value",
        ),
        (Date.SCHEMA, dt.datetime(2020, 1, 1), "a Date value must be a datetime.date"),
        (Date.SCHEMA, 5, "with type INT32: class int"),
        (Time.SCHEMA, dt.datetime(2020, 1, 1), "class datetime"),
        (Timestamp.SCHEMA, dt.date(2020, 1, 1), "class date"),
        (
            Schema.INT32_SCHEMA,
            None,
            "Invalid value: null used for required value, schema type: INT32",
        ),
    ],
)
def test_validate_value_mismatch(schema: Schema, value: object, message: str) -> None:
    with pytest.raises(DataException) as info:
        validate_value(schema, value)
    assert message in str(info.value)


def test_validate_value_names_the_field() -> None:
    with pytest.raises(DataException) as info:
        validate_value(Schema.INT32_SCHEMA, None, "f")
    assert str(info.value) == 'Invalid value: null used for required field: "f", schema type: INT32'
    assert info.value.field == "f"
    with pytest.raises(DataException) as info:
        validate_value(ARRAY_INT8, ["x"], "f")
    assert str(info.value).endswith('for element of array field: "f"')


def test_missing_element_schema_is_reported() -> None:
    no_element = Schema(SchemaType.ARRAY)
    with pytest.raises(DataException, match="No schema defined for element of array value"):
        validate_value(no_element, [])
    no_value = Schema(SchemaType.MAP, key_schema=Schema.STRING_SCHEMA)
    with pytest.raises(DataException, match="No schema defined for value of map value"):
        validate_value(no_value, {})


def test_equality_and_hash() -> None:
    s1 = SchemaBuilder.int8().name("name").version(2).doc("doc").build()
    s2 = SchemaBuilder.int8().name("name").version(2).doc("doc").build()
    assert s1 == s2
    assert hash(s1) == hash(s2)
    assert s1 != SchemaBuilder.int8().name("name").version(3).doc("doc").build()
    assert s1 != SchemaBuilder.int8().name("other").version(2).doc("doc").build()
    assert s1 != SchemaBuilder.int8().name("name").version(2).doc("other").build()
    assert s1 != SchemaBuilder.int16().name("name").version(2).doc("doc").build()
    assert Decimal.schema(2) != Decimal.schema(3)
    assert Schema.INT8_SCHEMA != Schema.OPTIONAL_INT8_SCHEMA
    assert (
        SchemaBuilder.array(Schema.INT8_SCHEMA).build()
        != SchemaBuilder.array(Schema.INT16_SCHEMA).build()
    )
    assert (
        SchemaBuilder.int8().default_value(1).build()
        != SchemaBuilder.int8().default_value(2).build()
    )
    assert (
        SchemaBuilder.bytes().default_value(b"a").build()
        == SchemaBuilder.bytes().default_value(b"a").build()
    )
    s3 = SchemaBuilder.struct().field("a", Schema.INT8_SCHEMA).build()
    s4 = SchemaBuilder.struct().field("b", Schema.INT8_SCHEMA).build()
    assert s3 != s4
    assert len({s1, s2, s3}) == 2
    assert Schema.INT8_SCHEMA != "INT8"


def test_repr_and_type_names() -> None:
    assert repr(Schema.INT8_SCHEMA) == "Schema{INT8}"
    assert repr(Date.SCHEMA) == "Schema{org.apache.kafka.connect.data.Date:INT32}"
    assert str(SchemaType.INT8) == "INT8"
    assert SchemaType.FLOAT64.value == "float64"
    assert SchemaType.STRING.is_primitive
    assert not SchemaType.STRUCT.is_primitive
    assert repr(Field("a", 0, Schema.INT8_SCHEMA)) == "Field{name=a, index=0, schema=Schema{INT8}}"


def test_predefined_schemas() -> None:
    for stype in SchemaType:
        if not stype.is_primitive:
            continue
        required = getattr(Schema, f"{stype.name}_SCHEMA")
        optional = getattr(Schema, f"OPTIONAL_{stype.name}_SCHEMA")
        assert required.type is stype
        assert not required.optional
        assert optional.type is stype
        assert optional.optional
