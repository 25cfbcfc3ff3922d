"""ProtobufConverter: Confluent's Protobuf wire format, proven against confluent-kafka's own
ProtobufSerializer/ProtobufDeserializer on a shared ``mock://`` registry; mapping; evolution."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from cdk.config import load_class
from cdk.converters import ProtobufConverter
from cdk.converters._protobuf import read_indexes, write_indexes
from cdk.data import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp
from cdk.errors import DataException
from tests.converters._registry_servers import answering_server

TOPIC = "orders"
_ids = itertools.count()
_F = descriptor_pb2.FieldDescriptorProto


@pytest.fixture
def registry() -> SchemaRegistryClient:
    return SchemaRegistryClient.new_client({"url": f"mock://protobuf-test-{next(_ids)}"})


@pytest.fixture
def converter(registry: SchemaRegistryClient) -> Iterator[ProtobufConverter]:
    c = ProtobufConverter(registry)
    c.configure({"schema.registry.url": "mock://unused"}, False)
    yield c
    c.close()


def _ctx() -> SerializationContext:
    return SerializationContext(TOPIC, MessageField.VALUE)


def _message_class() -> Any:
    """A class as protoc would generate it for:

    package shop; message Order { int64 id = 1; string item = 2; repeated string tags = 3;
    map<string, int32> counts = 4; Line line = 5; oneof pay { string card = 6; int64 cash = 7; }
    Kind kind = 8; message Line { int32 qty = 1; } enum Kind { NEW = 0; OLD = 1; } }
    """
    pool = descriptor_pool.DescriptorPool()
    fp = descriptor_pb2.FileDescriptorProto(
        name="shop/order.proto", package="shop", syntax="proto3"
    )
    msg = fp.message_type.add(name="Order")
    msg.field.add(name="id", number=1, type=_F.TYPE_INT64, label=_F.LABEL_OPTIONAL)
    msg.field.add(name="item", number=2, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    msg.field.add(name="tags", number=3, type=_F.TYPE_STRING, label=_F.LABEL_REPEATED)
    entry = msg.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=_F.TYPE_INT32, label=_F.LABEL_OPTIONAL)
    msg.field.add(
        name="counts",
        number=4,
        type=_F.TYPE_MESSAGE,
        type_name=".shop.Order.CountsEntry",
        label=_F.LABEL_REPEATED,
    )
    line = msg.nested_type.add(name="Line")
    line.field.add(name="qty", number=1, type=_F.TYPE_INT32, label=_F.LABEL_OPTIONAL)
    msg.field.add(
        name="line", number=5, type=_F.TYPE_MESSAGE, type_name=".shop.Order.Line", label=1
    )
    msg.oneof_decl.add(name="pay")
    msg.field.add(name="card", number=6, type=_F.TYPE_STRING, label=1, oneof_index=0)
    msg.field.add(name="cash", number=7, type=_F.TYPE_INT64, label=1, oneof_index=0)
    kind = msg.enum_type.add(name="Kind")
    kind.value.add(name="NEW", number=0)
    kind.value.add(name="OLD", number=1)
    msg.field.add(name="kind", number=8, type=_F.TYPE_ENUM, type_name=".shop.Order.Kind", label=1)
    pool.Add(fp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))


def test_alias_resolves() -> None:
    assert load_class("io.confluent.connect.protobuf.ProtobufConverter") is ProtobufConverter


@pytest.mark.parametrize("indexes", [[0], [1], [0, 2], [3, 0, 1], [200]])
def test_message_indexes_encoding(indexes: list[int]) -> None:
    data = write_indexes(indexes)
    if indexes == [0]:
        assert data == b"\x00"
    assert read_indexes(memoryview(data + b"rest")) == (indexes, len(data))


def test_converter_reads_what_confluent_serializer_writes(
    converter: ProtobufConverter, registry: SchemaRegistryClient
) -> None:
    cls = _message_class()
    serializer = ProtobufSerializer(cls, registry, {"use.deprecated.format": False})
    message = cls(id=7, item="book", tags=["a", "b"], line=cls.Line(qty=2), cash=5, kind=1)
    message.counts["x"] = 3
    data = serializer(message, _ctx())
    assert data[5] == 0  # message index [0] as the single byte 0
    result = converter.to_connect_data(TOPIC, data)
    assert result.schema.name == "Order"
    assert result.schema.version == 1
    value = result.value
    assert value.get("id") == 7
    assert value.get("item") == "book"
    assert value.get("tags") == ["a", "b"]
    assert value.get("counts") == {"x": 3}
    assert value.get("line").get("qty") == 2
    assert value.get("kind") == "OLD"
    union = value.get("pay_0")
    assert union.schema.name == "io.confluent.connect.protobuf.Union.pay"
    assert union.get("cash") == 5
    assert union.get("card") is None
    tag = result.schema.field("item").schema.parameters["io.confluent.connect.protobuf.Tag"]
    assert tag == "2"
    # written back, confluent-kafka's deserializer reads the same message
    again = converter.from_connect_data(TOPIC, result.schema, value)
    assert again is not None
    back = ProtobufDeserializer(cls, {"use.deprecated.format": False}, registry)(again, _ctx())
    assert back == message


def test_confluent_deserializer_reads_what_the_converter_writes(
    converter: ProtobufConverter, registry: SchemaRegistryClient
) -> None:
    schema = (
        SchemaBuilder.struct()
        .name("shop.Order")
        .field("id", Schema.INT64_SCHEMA)
        .field("item", Schema.STRING_SCHEMA)
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .build()
    )
    data = converter.from_connect_data(
        TOPIC, schema, Struct(schema).put("id", 9).put("item", "pen").put("tags", ["t"])
    )
    assert data is not None
    assert data[5] == 0
    registered = registry.get_latest_version(f"{TOPIC}-value")
    assert data[1:5] == registered.schema_id.to_bytes(4, "big")
    cls = _message_class()
    message = ProtobufDeserializer(cls, {"use.deprecated.format": False}, registry)(data, _ctx())
    assert (message.id, message.item, list(message.tags)) == (9, "pen", ["t"])


def test_logical_types_and_nested_round_trip(converter: ProtobufConverter) -> None:
    inner = SchemaBuilder.struct().name("Inner").field("x", Schema.INT16_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .name("com.example.L")
        .field("d", Decimal.schema(3))
        .field("date", Date.SCHEMA)
        .field("time", Time.SCHEMA)
        .field("ts", Timestamp.SCHEMA)
        .field("b", Schema.BYTES_SCHEMA)
        .field("i8", Schema.INT8_SCHEMA)
        .field("f32", Schema.FLOAT32_SCHEMA)
        .field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
        .field("mi", SchemaBuilder.map(Schema.INT32_SCHEMA, inner).build())
        .field("inner", inner)
        .field("items", SchemaBuilder.array(inner).build())
        .build()
    )
    value = (
        Struct(schema)
        .put("d", decimal.Decimal("-12.345"))
        .put("date", dt.date(2024, 2, 29))
        .put("time", dt.time(23, 59, 59, 999000))
        .put("ts", dt.datetime(2001, 9, 9, 1, 46, 40, 123000, tzinfo=dt.timezone.utc))
        .put("b", b"\x00\xff")
        .put("i8", -3)
        .put("f32", 0.5)
        .put("m", {"a": 1})
        .put("mi", {1: Struct(inner).put("x", 4)})
        .put("inner", Struct(inner).put("x", 5))
        .put("items", [Struct(inner).put("x", 6)])
    )
    data = converter.from_connect_data(TOPIC, schema, value)
    back = converter.to_connect_data(TOPIC, data)
    for name in ("d", "date", "time", "ts", "b", "i8", "f32", "m"):
        assert back.value.get(name) == value.get(name), name
    assert back.value.get("mi")[1].get("x") == 4
    assert back.value.get("inner").get("x") == 5
    assert back.value.get("items")[0].get("x") == 6
    assert back.schema.field("i8").schema.type.name == "INT8"
    assert back.schema.field("d").schema.parameters["scale"] == "3"


def test_root_primitive_is_a_wrapper(converter: ProtobufConverter) -> None:
    data = converter.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "hi")
    assert data is not None
    result = converter.to_connect_data(TOPIC, data)
    assert result.value == "hi"
    assert result.schema.type.name == "STRING"


def test_optional_for_nullables(registry: SchemaRegistryClient) -> None:
    c = ProtobufConverter(registry)
    c.configure({"schema.registry.url": "mock://x", "optional.for.nullables": "true"}, False)
    schema = SchemaBuilder.struct().name("N").field("a", Schema.OPTIONAL_INT32_SCHEMA).build()
    data = c.from_connect_data(TOPIC, schema, Struct(schema).put("a", 0))
    assert c.to_connect_data(TOPIC, data).value.get("a") == 0
    unset = c.from_connect_data(TOPIC, schema, Struct(schema))
    assert c.to_connect_data(TOPIC, unset).value.get("a") is None


def test_compatible_evolution_accepted_incompatible_refused(
    converter: ProtobufConverter,
) -> None:
    v1 = SchemaBuilder.struct().name("E").field("a", Schema.INT64_SCHEMA).build()
    converter.from_connect_data(TOPIC, v1, Struct(v1).put("a", 1))
    v2 = (
        SchemaBuilder.struct()
        .name("E")
        .field("a", Schema.INT64_SCHEMA)
        .field("b", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    data = converter.from_connect_data(TOPIC, v2, Struct(v2).put("a", 1).put("b", "x"))
    assert converter.to_connect_data(TOPIC, data).schema.version == 2
    # confluent-kafka's mock registry checks no compatibility: a local registry answers as
    # Confluent's does for an incompatible change (409 and its reason)
    v3 = SchemaBuilder.struct().name("E").field("a", Schema.STRING_SCHEMA).build()
    reason = "Schema being registered is incompatible with an earlier schema: FIELD_KIND_CHANGED"
    with answering_server(409, {"error_code": 409, "message": reason}) as url:
        strict = ProtobufConverter()
        strict.configure({"schema.registry.url": url}, False)
        try:
            with pytest.raises(DataException, match=r"subject orders-value.*incompatible") as info:
                strict.from_connect_data(TOPIC, v3, Struct(v3).put("a", "x"))
        finally:
            strict.close()
    assert "FIELD_KIND_CHANGED" in str(info.value)


def test_bad_payloads(converter: ProtobufConverter) -> None:
    schema = SchemaBuilder.struct().name("B").field("s", Schema.STRING_SCHEMA).build()
    data = converter.from_connect_data(TOPIC, schema, Struct(schema).put("s", "hello"))
    assert data is not None
    with pytest.raises(DataException, match="Unknown magic byte"):
        converter.to_connect_data(TOPIC, b"\x01" + data[1:])
    with pytest.raises(DataException, match="Error deserializing Protobuf"):
        converter.to_connect_data(TOPIC, data[:-2])
    with pytest.raises(DataException, match="message index"):
        converter.to_connect_data(TOPIC, data[:5] + b"\x02\x0a" + data[6:])
    with pytest.raises(DataException, match="Unsupported root schema"):
        converter.from_connect_data(TOPIC, SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1])
    with pytest.raises(DataException, match="needs a schema"):
        converter.from_connect_data(TOPIC, None, {"a": 1})
