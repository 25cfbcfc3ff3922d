"""JsonSchemaConverter: Confluent's JSON Schema wire format, proven against confluent-kafka's
own JSONSerializer/JSONDeserializer on a shared ``mock://`` registry; mapping; evolution."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import json
from collections.abc import Iterator

import pytest
from confluent_kafka.schema_registry import Schema as SRSchema
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from cdk.config import load_class
from cdk.converters import JsonSchemaConverter
from cdk.data import Date, Decimal, Schema, SchemaBuilder, Struct, Timestamp
from cdk.errors import DataException
from tests.converters._registry_servers import answering_server

TOPIC = "users"
_ids = itertools.count()

USER = (
    SchemaBuilder.struct()
    .name("com.example.User")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.STRING_SCHEMA)
    .field("email", Schema.OPTIONAL_STRING_SCHEMA)
    .field("score", Schema.FLOAT64_SCHEMA)
    .field("active", Schema.BOOLEAN_SCHEMA)
    .build()
)


@pytest.fixture
def url() -> str:
    return f"mock://json-schema-test-{next(_ids)}"


@pytest.fixture
def registry(url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient.new_client({"url": url})


@pytest.fixture
def converter(url: str, registry: SchemaRegistryClient) -> Iterator[JsonSchemaConverter]:
    c = JsonSchemaConverter(registry)
    c.configure({"schema.registry.url": url}, False)
    yield c
    c.close()


def _ctx() -> SerializationContext:
    return SerializationContext(TOPIC, MessageField.VALUE)


def _user(**over: object) -> Struct:
    values = {"id": 7, "name": "ada", "email": None, "score": 1.5, "active": True, **over}
    s = Struct(USER)
    for k, v in values.items():
        if v is not None:
            s.put(k, v)
    return s


def test_alias_resolves() -> None:
    assert load_class("io.confluent.connect.json.JsonSchemaConverter") is JsonSchemaConverter


def test_wire_format_and_registered_schema(
    converter: JsonSchemaConverter, registry: SchemaRegistryClient
) -> None:
    data = converter.from_connect_data(TOPIC, USER, _user())
    assert data is not None
    registered = registry.get_latest_version(f"{TOPIC}-value")
    assert data[:5] == b"\x00" + registered.schema_id.to_bytes(4, "big")
    assert json.loads(data[5:]) == {"id": 7, "name": "ada", "score": 1.5, "active": True}
    js = json.loads(registered.schema.schema_str)
    assert js["type"] == "object"
    assert js["title"] == "com.example.User"
    assert js["properties"]["id"] == {
        "type": "integer",
        "connect.type": "int64",
        "connect.index": 0,
    }
    assert js["properties"]["email"] == {
        "oneOf": [{"type": "null"}, {"type": "string"}],
        "connect.index": 2,
    }


def test_confluent_deserializer_reads_what_the_converter_writes(
    converter: JsonSchemaConverter, registry: SchemaRegistryClient
) -> None:
    data = converter.from_connect_data(TOPIC, USER, _user(email="a@b.c"))
    deserializer = JSONDeserializer(None, schema_registry_client=registry)
    assert deserializer(data, _ctx()) == {
        "id": 7,
        "name": "ada",
        "email": "a@b.c",
        "score": 1.5,
        "active": True,
    }


def test_converter_reads_what_confluent_serializer_writes(
    converter: JsonSchemaConverter, registry: SchemaRegistryClient
) -> None:
    schema_str = json.dumps(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "Reading",
            "type": "object",
            "properties": {
                "sensor": {"type": "string"},
                "value": {"type": "number"},
                "count": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "unit": {"oneOf": [{"type": "null"}, {"type": "string"}]},
                "attrs": {"type": "object", "properties": {"a": {"type": "boolean"}}},
            },
            "required": ["sensor", "value"],
        }
    )
    serializer = JSONSerializer(schema_str, registry)
    message = {
        "sensor": "t1",
        "value": 21.5,
        "count": 3,
        "tags": ["x"],
        "unit": None,
        "attrs": {"a": True},
    }
    data = serializer(message, _ctx())
    result = converter.to_connect_data(TOPIC, data)
    assert result.schema.name == "Reading"
    assert result.schema.version == 1
    assert [f.name for f in result.schema.fields] == list(message)
    assert result.schema.field("count").schema.type.name == "INT64"
    assert result.schema.field("unit").schema.optional
    value = result.value
    assert value.get("sensor") == "t1"
    assert value.get("value") == 21.5
    assert value.get("tags") == ["x"]
    assert value.get("attrs").get("a") is True
    # and written back under the same subject, confluent-kafka reads it again
    again = converter.from_connect_data(TOPIC, result.schema, value)
    assert JSONDeserializer(None, schema_registry_client=registry)(again, _ctx()) == {
        k: v for k, v in message.items() if v is not None
    }


def test_logical_types_maps_and_arrays_round_trip(converter: JsonSchemaConverter) -> None:
    schema = (
        SchemaBuilder.struct()
        .name("com.example.L")
        .field("d", Decimal.schema(3))
        .field("date", Date.SCHEMA)
        .field("ts", Timestamp.SCHEMA)
        .field("b", Schema.BYTES_SCHEMA)
        .field("i8", Schema.INT8_SCHEMA)
        .field("f32", Schema.FLOAT32_SCHEMA)
        .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
        .field("mi", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
        .field("a", SchemaBuilder.array(Schema.INT16_SCHEMA).build())
        .field(
            "inner",
            SchemaBuilder.struct().name("Inner").field("x", Schema.INT32_SCHEMA).optional().build(),
        )
        .build()
    )
    inner = Struct(schema.field("inner").schema).put("x", 5)
    value = (
        Struct(schema)
        .put("d", decimal.Decimal("-12.345"))
        .put("date", dt.date(2024, 2, 29))
        .put("ts", dt.datetime(2001, 9, 9, 1, 46, 40, 123000, tzinfo=dt.timezone.utc))
        .put("b", b"\x00\xff")
        .put("i8", -3)
        .put("f32", 0.5)
        .put("m", {"a": 1})
        .put("mi", {1: "one"})
        .put("a", [1, 2])
        .put("inner", inner)
    )
    data = converter.from_connect_data(TOPIC, schema, value)
    back = converter.to_connect_data(TOPIC, data)
    for f in schema.fields:
        got = back.value.get(f.name)
        if f.name == "inner":
            assert got.get("x") == 5
        else:
            assert got == value.get(f.name), f.name
    assert back.schema.field("i8").schema.type.name == "INT8"
    assert back.schema.field("d").schema.parameters["scale"] == "3"


def test_numeric_decimals_and_validation(url: str, registry: SchemaRegistryClient) -> None:
    c = JsonSchemaConverter(registry)
    c.configure(
        {
            "schema.registry.url": url,
            "decimal.format": "NUMERIC",
            "json.fail.invalid.schema": "true",
        },
        False,
    )
    schema = SchemaBuilder.struct().field("d", Decimal.schema(2)).build()
    data = c.from_connect_data(TOPIC, schema, Struct(schema).put("d", decimal.Decimal("0.10")))
    assert data is not None
    assert data[5:] == b'{"d":0.10}'
    assert c.to_connect_data(TOPIC, data).value.get("d") == decimal.Decimal("0.10")
    with pytest.raises(DataException, match=r"does not match the JSON Schema"):
        c.to_connect_data(TOPIC, data[:5] + b'{"d":"text"}')


def test_union_one_of(converter: JsonSchemaConverter, registry: SchemaRegistryClient) -> None:
    js = {
        "type": "object",
        "title": "U",
        "properties": {"u": {"oneOf": [{"type": "integer"}, {"type": "string"}]}},
    }
    schema_id = registry.register_schema(f"{TOPIC}-value", SRSchema(json.dumps(js), "JSON"))
    header = b"\x00" + schema_id.to_bytes(4, "big")
    union = converter.to_connect_data(TOPIC, header + b'{"u":"s"}').value.get("u")
    assert union.schema.name == "io.confluent.connect.json.OneOf"
    assert union.get("io.confluent.connect.json.OneOf.field.1") == "s"
    number = converter.to_connect_data(TOPIC, header + b'{"u":3}').value.get("u")
    assert number.get("io.confluent.connect.json.OneOf.field.0") == 3


def test_additional_properties_false(url: str, registry: SchemaRegistryClient) -> None:
    c = JsonSchemaConverter(registry)
    c.configure({"schema.registry.url": url, "object.additional.properties": "false"}, False)
    c.from_connect_data(TOPIC, USER, _user())
    js = json.loads(registry.get_latest_version(f"{TOPIC}-value").schema.schema_str)
    assert js["additionalProperties"] is False


def test_compatible_evolution_accepted_incompatible_refused(
    converter: JsonSchemaConverter, registry: SchemaRegistryClient
) -> None:
    registry.set_config(f"{TOPIC}-value", {"compatibility": "BACKWARD"})
    v1 = SchemaBuilder.struct().name("E").field("a", Schema.INT64_SCHEMA).build()
    converter.from_connect_data(TOPIC, v1, Struct(v1).put("a", 1))
    # adding an optional field is backward compatible for JSON Schema (open content model)
    v2 = (
        SchemaBuilder.struct()
        .name("E")
        .field("a", Schema.INT64_SCHEMA)
        .field("b", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    data = converter.from_connect_data(TOPIC, v2, Struct(v2).put("a", 1).put("b", "x"))
    assert converter.to_connect_data(TOPIC, data).schema.version == 2
    # changing a field's type is not
    # changing a field's type is not: confluent-kafka's mock registry checks no compatibility,
    # so a local registry answers as Confluent's does (409 and its reason)
    v3 = SchemaBuilder.struct().name("E").field("a", Schema.STRING_SCHEMA).build()
    reason = "Schema being registered is incompatible with an earlier schema: TYPE_MISMATCH"
    with answering_server(409, {"error_code": 409, "message": reason}) as http_url:
        strict = JsonSchemaConverter()
        strict.configure({"schema.registry.url": http_url}, False)
        try:
            with pytest.raises(DataException, match=r"subject users-value.*incompatible") as info:
                strict.from_connect_data(TOPIC, v3, Struct(v3).put("a", "x"))
        finally:
            strict.close()
    assert "TYPE_MISMATCH" in str(info.value)


def test_schemaless_and_bad_payloads(converter: JsonSchemaConverter) -> None:
    with pytest.raises(DataException, match="needs a schema"):
        converter.from_connect_data(TOPIC, None, {"a": 1})
    with pytest.raises(DataException, match="Unknown magic byte"):
        converter.to_connect_data(TOPIC, b"\x01\x00\x00\x00\x01{}")
    data = converter.from_connect_data(TOPIC, USER, _user())
    with pytest.raises(DataException, match="not valid JSON"):
        converter.to_connect_data(TOPIC, data[:-3])
    assert converter.from_connect_data(TOPIC, None, None) is None
