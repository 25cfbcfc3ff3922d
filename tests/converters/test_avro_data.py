"""Confluent's Connect<->Avro mapping, ported from AvroDataTest (schemas as JSON)."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from cdk.converters._avro_common import AvroDataConfig
from cdk.converters._avro_data import AvroData
from cdk.converters._avro_names import scrub_name
from cdk.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from cdk.errors import DataException
from tests.converters._avro_schemas import complex_builder

NS = "io.confluent.connect.avro"


@pytest.fixture
def avro_data() -> AvroData:
    return AvroData(AvroDataConfig(schemas_cache_size=2))


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (Schema.BOOLEAN_SCHEMA, "boolean"),
        (Schema.INT8_SCHEMA, {"type": "int", "connect.type": "int8"}),
        (Schema.INT16_SCHEMA, {"type": "int", "connect.type": "int16"}),
        (Schema.INT32_SCHEMA, "int"),
        (Schema.INT64_SCHEMA, "long"),
        (Schema.FLOAT32_SCHEMA, "float"),
        (Schema.FLOAT64_SCHEMA, "double"),
        (Schema.STRING_SCHEMA, "string"),
        (Schema.BYTES_SCHEMA, "bytes"),
        (Schema.OPTIONAL_STRING_SCHEMA, ["null", "string"]),
        (Schema.OPTIONAL_INT8_SCHEMA, ["null", {"type": "int", "connect.type": "int8"}]),
        (SchemaBuilder.array(Schema.STRING_SCHEMA).build(), {"type": "array", "items": "string"}),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
            {"type": "map", "values": "int"},
        ),
        (
            SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build(),
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "MapEntry",
                    "namespace": NS,
                    "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "int"}],
                },
            },
        ),
        (
            SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "MapEntry",
                    "namespace": NS,
                    "fields": [
                        {"name": "key", "type": ["null", "string"], "default": None},
                        {"name": "value", "type": "int"},
                    ],
                },
            },
        ),
        (
            Decimal.schema(2),
            {
                "type": "bytes",
                "scale": 2,
                "precision": 64,
                "connect.version": 1,
                "connect.parameters": {"scale": "2"},
                "connect.name": "org.apache.kafka.connect.data.Decimal",
                "logicalType": "decimal",
            },
        ),
        (
            Date.SCHEMA,
            {
                "type": "int",
                "connect.version": 1,
                "connect.name": "org.apache.kafka.connect.data.Date",
                "logicalType": "date",
            },
        ),
        (
            Time.SCHEMA,
            {
                "type": "int",
                "connect.version": 1,
                "connect.name": "org.apache.kafka.connect.data.Time",
                "logicalType": "time-millis",
            },
        ),
        (
            Timestamp.SCHEMA,
            {
                "type": "long",
                "connect.version": 1,
                "connect.name": "org.apache.kafka.connect.data.Timestamp",
                "logicalType": "timestamp-millis",
            },
        ),
    ],
    ids=lambda x: json.dumps(x) if isinstance(x, (str, list, dict)) else repr(x),
)
def test_from_connect_schema(avro_data: AvroData, schema: Schema, expected: object) -> None:
    assert avro_data.from_connect_schema(schema) == expected


def test_named_map_with_non_string_keys(avro_data: AvroData) -> None:
    schema = SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.INT32_SCHEMA).name("foo.bar")
    assert avro_data.from_connect_schema(schema.build()) == {
        "type": "array",
        "items": {
            "type": "record",
            "name": "bar",
            "namespace": "foo",
            "fields": [
                {"name": "key", "type": ["null", "string"], "default": None},
                {"name": "value", "type": "int"},
            ],
            "connect.internal.type": "MapEntry",
        },
        "connect.name": "foo.bar",
    }


def test_decimal_with_precision_parameter(avro_data: AvroData) -> None:
    schema = Decimal.builder(2).parameter("connect.decimal.precision", "10").build()
    avro = avro_data.from_connect_schema(schema)
    assert avro["precision"] == 10
    assert avro["logicalType"] == "decimal"
    back = avro_data.to_connect_schema(avro)
    assert back == schema


def test_complex_struct_schema(avro_data: AvroData) -> None:
    # AvroDataTest.testFromConnectComplex
    schema = complex_builder().build()
    assert avro_data.from_connect_schema(schema) == {
        "type": "record",
        "name": "ConnectDefault",
        "namespace": NS,
        "fields": [
            {
                "name": "int8",
                "type": {
                    "type": "int",
                    "connect.doc": "int8 field",
                    "connect.default": 2,
                    "connect.type": "int8",
                },
                "default": 2,
            },
            {"name": "int16", "type": {"type": "int", "connect.type": "int16"}},
            {"name": "int32", "type": "int"},
            {"name": "int64", "type": "long"},
            {"name": "float32", "type": "float"},
            {"name": "float64", "type": "double"},
            {"name": "boolean", "type": "boolean"},
            {"name": "string", "type": "string"},
            {"name": "bytes", "type": "bytes"},
            {"name": "array", "type": {"type": "array", "items": "string"}},
            {"name": "map", "type": {"type": "map", "values": "int"}},
            {
                "name": "mapNonStringKeys",
                "type": {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "MapEntry",
                        "fields": [
                            {"name": "key", "type": "int"},
                            {"name": "value", "type": "int"},
                        ],
                    },
                },
            },
        ],
    }


def test_defaults_schema(avro_data: AvroData) -> None:
    # AvroDataTest.testFromConnectComplexWithDefaults (a subset of the fields)
    date_def = Date.to_logical(Date.SCHEMA, 100)
    dec_def = decimal.Decimal("3.14159")
    schema = (
        SchemaBuilder.struct()
        .field("bytes", SchemaBuilder.bytes().default_value(b"foo").doc("bytes field").build())
        .field("date", Date.builder().default_value(date_def).doc("date field").build())
        .field("decimal", Decimal.builder(5).default_value(dec_def).build())
        .field(
            "mapNonStringKeys",
            SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA)
            .default_value({1: 1})
            .build(),
        )
        .field("opt", SchemaBuilder.string().optional().default_value("x").build())
        .build()
    )
    avro = avro_data.from_connect_schema(schema)
    fields = {f["name"]: f for f in avro["fields"]}
    assert fields["bytes"]["type"] == {
        "type": "bytes",
        "connect.doc": "bytes field",
        "connect.default": "foo",
    }
    assert fields["bytes"]["default"] == "foo"
    assert fields["date"]["type"]["connect.default"] == 100
    assert fields["date"]["default"] == 100
    unscaled = (314159).to_bytes(3, "big", signed=True).decode("latin-1")
    assert fields["decimal"]["type"]["connect.default"] == unscaled
    assert fields["decimal"]["default"] == unscaled
    # Confluent's non-string-key map default is [[k, v]], not valid as an Avro field default:
    # the field default is dropped, connect.default keeps it.
    assert fields["mapNonStringKeys"]["type"]["connect.default"] == [[1, 1]]
    assert "default" not in fields["mapNonStringKeys"]
    # optional with a default: the value type comes first in the union
    assert fields["opt"]["type"] == [{"type": "string", "connect.default": "x"}, "null"]
    assert fields["opt"]["default"] == "x"
    # and every default reads back
    back = avro_data.to_connect_schema(avro)
    assert back == schema


def test_struct_with_name_doc_version_params(avro_data: AvroData) -> None:
    schema = (
        SchemaBuilder.struct()
        .name("com.example.Rec")
        .version(3)
        .doc("a record")
        .parameter("p", "v")
        .field("a", Schema.STRING_SCHEMA)
        .build()
    )
    avro = avro_data.from_connect_schema(schema)
    assert avro == {
        "type": "record",
        "name": "Rec",
        "namespace": "com.example",
        "fields": [{"name": "a", "type": "string"}],
        "connect.doc": "a record",
        "connect.version": 3,
        "connect.parameters": {"p": "v"},
        "connect.name": "com.example.Rec",
    }
    assert avro_data.to_connect_schema(avro) == schema


def test_connect_meta_data_off() -> None:
    data = AvroData(AvroDataConfig(connect_meta_data=False))
    assert data.from_connect_schema(Schema.INT8_SCHEMA) == "int"
    assert data.from_connect_schema(Date.SCHEMA) == {"type": "int", "logicalType": "date"}
    assert data.from_connect_schema(Decimal.schema(3)) == {
        "type": "bytes",
        "scale": 3,
        "precision": 64,
        "logicalType": "decimal",
    }
    # int8 is lost without connect.type: it reads back as INT32
    assert data.to_connect_schema("int") == Schema.INT32_SCHEMA


def test_unnamed_structs_get_numbered_default_names(avro_data: AvroData) -> None:
    inner1 = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    inner2 = SchemaBuilder.struct().field("y", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("a", inner1).field("b", inner2).field("c", inner1).build()
    avro = avro_data.from_connect_schema(schema)
    assert avro["name"] == "ConnectDefault"
    assert avro["fields"][0]["type"]["name"] == "ConnectDefault2"
    assert avro["fields"][1]["type"]["name"] == "ConnectDefault3"
    # the same schema again is a reference to the type written before
    assert avro["fields"][2]["type"] == "ConnectDefault2"
    assert avro_data.to_connect_schema(avro) == schema


def test_same_name_for_different_structs_is_rejected(avro_data: AvroData) -> None:
    a = SchemaBuilder.struct().name("com.x.A").field("x", Schema.INT32_SCHEMA).build()
    b = SchemaBuilder.struct().name("com.x.A").field("y", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("a", a).field("b", b).build()
    with pytest.raises(DataException, match=r"com\.x\.A"):
        avro_data.from_connect_schema(schema)


def test_invalid_field_name_rejected_or_scrubbed(avro_data: AvroData) -> None:
    schema = SchemaBuilder.struct().name("my-ns.Rec$1").field("a b", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="not a valid Avro name"):
        avro_data.from_connect_schema(schema)
    flat = SchemaBuilder.struct().field("1a-b", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="1a-b") as info:
        avro_data.from_connect_schema(flat)
    assert info.value.field == "1a-b"
    scrubbing = AvroData(AvroDataConfig(scrub_invalid_names=True))
    avro = scrubbing.from_connect_schema(schema)
    assert avro["name"] == "Rec_241"
    assert avro["namespace"] == "my_ns"
    assert avro["fields"][0]["name"] == "a_b"


@pytest.mark.parametrize(
    ("name", "scrubbed"),
    [
        ("abc", "abc"),
        ("a_b9", "a_b9"),
        ("1abc", "x1abc"),
        ("a-b", "a_b"),
        ("a b", "a_b"),
        ("a.b", "a_b"),
        ("é", "_C3_A9"),
        ("9-x", "x9_x"),
    ],
)
def test_scrub_name(name: str, scrubbed: str) -> None:
    assert scrub_name(name) == scrubbed


# -- Avro -> Connect (schemas not written by Connect) --------------------------------------------
def test_plain_avro_record_to_connect(avro_data: AvroData) -> None:
    avro = {
        "type": "record",
        "name": "User",
        "namespace": "com.acme",
        "doc": "user doc",
        "fields": [
            {"name": "id", "type": "long", "doc": "the id"},
            {"name": "name", "type": ["null", "string"], "default": None},
            {"name": "count", "type": "int", "default": 7},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
            {
                "name": "u",
                "type": ["int", "string", {"type": "record", "name": "Sub", "fields": []}],
            },
            {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        ],
    }
    schema = avro_data.to_connect_schema(avro)
    assert schema.name == "com.acme.User"
    assert schema.parameters["io.confluent.connect.avro.record.doc"] == "user doc"
    assert schema.parameters["io.confluent.connect.avro.field.doc.id"] == "the id"
    assert schema.field("id").schema == Schema.INT64_SCHEMA
    assert schema.field("name").schema == Schema.OPTIONAL_STRING_SCHEMA
    count = schema.field("count").schema
    assert count.default_value == 7
    assert count.parameters == {"io.confluent.connect.avro.field.default": "true"}
    kind = schema.field("kind").schema
    assert kind.type.name == "STRING"
    assert kind.name == "com.acme.Kind"
    assert dict(kind.parameters) == {
        "io.confluent.connect.avro.Enum": "com.acme.Kind",
        "io.confluent.connect.avro.Enum.A": "A",
        "io.confluent.connect.avro.Enum.B": "B",
    }
    fixed = schema.field("hash").schema
    assert fixed.type.name == "BYTES"
    assert fixed.name == "com.acme.Hash"
    assert fixed.parameters == {"connect.fixed.size": "4"}
    union = schema.field("u").schema
    assert union.name == "io.confluent.connect.avro.Union"
    assert [f.name for f in union.fields] == ["int", "string", "Sub"]
    assert all(f.schema.optional for f in union.fields)
    assert schema.field("ts").schema == Timestamp.SCHEMA


def test_enhanced_support_uses_full_names_and_keeps_enums() -> None:
    data = AvroData(AvroDataConfig(enhanced_avro_schema_support=True))
    avro = {
        "type": "record",
        "name": "R",
        "namespace": "n",
        "fields": [
            {"name": "k", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "u", "type": ["string", {"type": "record", "name": "Sub", "fields": []}]},
        ],
    }
    schema = data.to_connect_schema(avro)
    assert [f.name for f in schema.field("u").schema.fields] == ["string", "n.Sub"]
    back = data.from_connect_schema(schema)
    kind = back["fields"][0]["type"]
    assert kind["type"] == "enum"
    assert kind["symbols"] == ["A", "B"]


def test_standalone_null_schema_rejected(avro_data: AvroData) -> None:
    with pytest.raises(DataException, match="Standalone null"):
        avro_data.to_connect_schema("null")


def test_recursive_avro_schema_rejected(avro_data: AvroData) -> None:
    avro = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "next", "type": ["null", "Node"]}],
    }
    with pytest.raises(DataException, match="recursive"):
        avro_data.to_connect_schema(avro)


# -- values -------------------------------------------------------------------------------------
def test_values_to_avro(avro_data: AvroData) -> None:
    from cdk.converters._avro_names import resolve_avro_schema

    schema = (
        SchemaBuilder.struct()
        .field("i8", Schema.INT8_SCHEMA)
        .field("dec", Decimal.schema(2))
        .field("date", Date.SCHEMA)
        .field("time", Time.SCHEMA)
        .field("ts", Timestamp.SCHEMA)
        .field("opt", Schema.OPTIONAL_STRING_SCHEMA)
        .field("m", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build())
        .build()
    )
    value = (
        Struct(schema)
        .put("i8", 12)
        .put("dec", decimal.Decimal("1.56"))
        .put("date", dt.date(1997, 5, 19))
        .put("time", dt.time(0, 0, 10))
        .put("ts", dt.datetime(1970, 1, 1, 0, 0, 10, tzinfo=dt.timezone.utc))
        .put("opt", "x")
        .put("m", {1: 2})
    )
    avro = resolve_avro_schema(avro_data.from_connect_schema(schema))
    assert avro_data.from_connect_data(schema, avro, value) == {
        "i8": 12,
        "dec": bytes([0, 156]),
        "date": 10000,
        "time": 10000,
        "ts": 10000,
        "opt": ("string", "x"),
        "m": [{"key": 1, "value": 2}],
    }
