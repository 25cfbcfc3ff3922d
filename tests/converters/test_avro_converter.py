"""AvroConverter: wire format, registry subjects, errors; ported from AvroConverterTest."""

from __future__ import annotations

import decimal
import itertools
import json
import struct
from collections.abc import Iterator

import pytest
from confluent_kafka.schema_registry import Schema as SRSchema
from confluent_kafka.schema_registry import SchemaRegistryClient, SchemaRegistryError

from cdk.converters import AvroConverter
from cdk.data import Date, Decimal, Schema, SchemaAndValue, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException, RetriableException
from tests.converters._avro_schemas import complex_builder

TOPIC = "topic"
_ids = itertools.count()


@pytest.fixture
def url() -> str:
    return f"mock://avro-test-{next(_ids)}"


@pytest.fixture
def registry(url: str) -> SchemaRegistryClient:
    return SchemaRegistryClient.new_client({"url": url})


@pytest.fixture
def converter(registry: SchemaRegistryClient) -> Iterator[AvroConverter]:
    c = AvroConverter(registry)
    c.configure({"schema.registry.url": "mock://unused"}, False)
    yield c
    c.close()


def _schema_id(data: bytes) -> int:
    assert data[0] == 0
    return int(struct.unpack(">I", data[1:5])[0])


def test_requires_schema_registry_url() -> None:
    with pytest.raises(ConfigException, match=r"schema\.registry\.url"):
        AvroConverter().configure({}, False)


def test_config_def_documents_keys() -> None:
    names = set(AvroConverter().config().names())
    assert {
        "schema.registry.url",
        "auto.register.schemas",
        "use.latest.version",
        "key.subject.name.strategy",
        "value.subject.name.strategy",
        "basic.auth.credentials.source",
        "basic.auth.user.info",
        "schemas.cache.config",
        "connect.meta.data",
        "enhanced.avro.schema.support",
        "scrub.invalid.names",
    } <= names


def test_invalid_strategy_rejected(url: str) -> None:
    with pytest.raises(ConfigException, match=r"value\.subject\.name\.strategy"):
        AvroConverter().configure(
            {"schema.registry.url": url, "value.subject.name.strategy": "Nope"}, False
        )


def test_primitive_round_trip_gets_registry_version(converter: AvroConverter) -> None:
    data = converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True)
    assert data is not None
    # Because of registration and lookup, the schema gains the registry version
    assert converter.to_connect_data(TOPIC, data) == SchemaAndValue(
        SchemaBuilder.boolean().version(1).build(), True
    )


def test_wire_format_header_and_registered_schema(
    converter: AvroConverter, registry: SchemaRegistryClient
) -> None:
    data = converter.from_connect_data(TOPIC, Schema.INT32_SCHEMA, 300)
    assert data is not None
    schema_id = _schema_id(data)
    registered = registry.get_latest_version(f"{TOPIC}-value")
    assert registered.schema_id == schema_id
    assert json.loads(registered.schema.schema_str) == "int"
    # zig-zag varint of 300 is 0xd8 0x04
    assert data == b"\x00" + schema_id.to_bytes(4, "big") + b"\xd8\x04"


def test_key_converter_uses_key_subject(registry: SchemaRegistryClient) -> None:
    c = AvroConverter(registry)
    c.configure({"schema.registry.url": "mock://x"}, True)
    data = c.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "k")
    assert data is not None
    assert registry.get_subjects() == [f"{TOPIC}-key"]
    assert c.to_connect_data(TOPIC, data).value == "k"


@pytest.mark.parametrize(
    ("strategy", "subject"),
    [
        ("io.confluent.kafka.serializers.subject.TopicNameStrategy", "topic-value"),
        ("io.confluent.kafka.serializers.subject.RecordNameStrategy", "com.example.Foo"),
        ("io.confluent.kafka.serializers.subject.TopicRecordNameStrategy", "topic-com.example.Foo"),
        ("RecordNameStrategy", "com.example.Foo"),
    ],
)
def test_subject_name_strategies(
    registry: SchemaRegistryClient, strategy: str, subject: str
) -> None:
    c = AvroConverter(registry)
    c.configure({"schema.registry.url": "mock://x", "value.subject.name.strategy": strategy}, False)
    schema = SchemaBuilder.struct().name("com.example.Foo").field("a", Schema.INT32_SCHEMA).build()
    data = c.from_connect_data(TOPIC, schema, Struct(schema).put("a", 1))
    assert data is not None
    assert registry.get_subjects() == [subject]
    assert registry.get_latest_version(subject).schema_id == _schema_id(data)
    back = c.to_connect_data(TOPIC, data)
    assert back.value.get("a") == 1
    assert back.schema.version == 1


def test_record_name_strategy_needs_a_record(registry: SchemaRegistryClient) -> None:
    c = AvroConverter(registry)
    c.configure(
        {"schema.registry.url": "mock://x", "value.subject.name.strategy": "RecordNameStrategy"},
        False,
    )
    with pytest.raises(DataException, match="must only be a record schema"):
        c.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "x")


def test_complex_round_trip(converter: AvroConverter) -> None:
    builder = complex_builder()
    schema = builder.build()
    values = {
        "int8": 12,
        "int16": 12,
        "int32": 12,
        "int64": 12,
        "float32": 12.25,
        "float64": 12.2,
        "boolean": True,
        "string": "foo",
        "bytes": b"foo",
        "array": ["a", "b", "c"],
        "map": {"field": 1},
        "mapNonStringKeys": {1: 1},
    }
    original = Struct(schema)
    for k, v in values.items():
        original.put(k, v)
    expected_schema = builder.version(1).build()
    expected = Struct(expected_schema)
    for k, v in values.items():
        expected.put(k, v)
    data = converter.from_connect_data(TOPIC, schema, original)
    assert data is not None
    result = converter.to_connect_data(TOPIC, data)
    assert result.schema == expected_schema
    assert result.value == expected


def test_logical_types_round_trip(converter: AvroConverter) -> None:
    import datetime as dt

    from cdk.data import Time, Timestamp

    schema = (
        SchemaBuilder.struct()
        .name("com.example.L")
        .version(1)
        .field("d", Decimal.schema(3))
        .field("date", Date.SCHEMA)
        .field("time", Time.SCHEMA)
        .field("ts", Timestamp.SCHEMA)
        .field("od", Decimal.builder(0).optional().build())
        .build()
    )
    value = (
        Struct(schema)
        .put("d", decimal.Decimal("-123.456"))
        .put("date", dt.date(2024, 2, 29))
        .put("time", dt.time(23, 59, 59, 999000))
        .put("ts", dt.datetime(2001, 9, 9, 1, 46, 40, 123000, tzinfo=dt.timezone.utc))
    )
    data = converter.from_connect_data(TOPIC, schema, value)
    assert data is not None
    assert converter.to_connect_data(TOPIC, data) == SchemaAndValue(schema, value)


def test_null_is_a_tombstone_and_registers_nothing(
    converter: AvroConverter, registry: SchemaRegistryClient
) -> None:
    assert converter.from_connect_data(TOPIC, Schema.OPTIONAL_BOOLEAN_SCHEMA, None) is None
    assert converter.from_connect_data(TOPIC, None, None) is None
    assert registry.get_subjects() == []
    assert converter.to_connect_data(TOPIC, None) == SchemaAndValue.NULL


def test_null_for_required_schema_rejected(converter: AvroConverter) -> None:
    with pytest.raises(DataException, match="non-optional"):
        converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, None)


def test_optional_value_round_trip(converter: AvroConverter) -> None:
    data = converter.from_connect_data(TOPIC, Schema.OPTIONAL_STRING_SCHEMA, "x")
    assert data is not None
    result = converter.to_connect_data(TOPIC, data)
    assert result.value == "x"
    # as Confluent: a top-level union ["null", T] reads as optional T, without registry version
    assert result.schema == Schema.OPTIONAL_STRING_SCHEMA


def test_schemaless_value_rejected(converter: AvroConverter) -> None:
    with pytest.raises(DataException, match=r"topic topic.*needs a schema"):
        converter.from_connect_data(TOPIC, None, {"a": 1})


def test_value_not_matching_schema_rejected(converter: AvroConverter) -> None:
    with pytest.raises(DataException, match="topic topic"):
        converter.from_connect_data(TOPIC, Schema.INT32_SCHEMA, "not an int")


def test_version_maintained(converter: AvroConverter) -> None:
    newer = (
        SchemaBuilder.struct()
        .version(2)
        .field("orig", Schema.OPTIONAL_INT16_SCHEMA)
        .field("new", Schema.OPTIONAL_INT16_SCHEMA)
        .build()
    )
    newer_bytes = converter.from_connect_data(TOPIC, newer, Struct(newer))
    older = SchemaBuilder.struct().version(1).field("orig", Schema.OPTIONAL_INT16_SCHEMA).build()
    older_bytes = converter.from_connect_data(TOPIC, older, Struct(older))
    assert converter.to_connect_data(TOPIC, newer_bytes).schema.version == 2
    assert converter.to_connect_data(TOPIC, older_bytes).schema.version == 1


def _register(registry: SchemaRegistryClient, subject: str, avro: object) -> int:
    return int(registry.register_schema(subject, SRSchema(json.dumps(avro), "AVRO")))


def test_version_extracted_for_data_not_written_by_connect(
    converter: AvroConverter, registry: SchemaRegistryClient
) -> None:
    s1 = {"type": "record", "name": "Foo", "fields": [{"name": "key", "type": "int"}]}
    s2 = {
        "type": "record",
        "name": "Foo",
        "fields": [{"name": "key", "type": "int"}, {"name": "value", "type": "string"}],
    }
    id1 = _register(registry, f"{TOPIC}-value", s1)
    id2 = _register(registry, f"{TOPIC}-value", s2)
    # 15 -> zigzag 30 (0x1e); "bar" -> length 3 (0x06) + bytes
    r1 = converter.to_connect_data(TOPIC, b"\x00" + id1.to_bytes(4, "big") + b"\x1e")
    r2 = converter.to_connect_data(TOPIC, b"\x00" + id2.to_bytes(4, "big") + b"\x1e\x06bar")
    assert r1.schema.version == 1
    assert r2.schema.version == 2
    assert r2.schema.name == "Foo"
    assert r2.value.get("value") == "bar"


def test_union_of_several_types_round_trip(
    converter: AvroConverter, registry: SchemaRegistryClient
) -> None:
    avro = {
        "type": "record",
        "name": "U",
        "fields": [
            {
                "name": "u",
                "type": [
                    "null",
                    "int",
                    "string",
                    {"type": "record", "name": "R", "fields": [{"name": "x", "type": "long"}]},
                ],
            }
        ],
    }
    schema_id = _register(registry, f"{TOPIC}-value", avro)
    # union index 3 (zigzag 6) -> record R with x=5 (zigzag 10)
    payload = b"\x00" + schema_id.to_bytes(4, "big") + b"\x06\x0a"
    result = converter.to_connect_data(TOPIC, payload)
    union = result.value.get("u")
    assert union.schema.name == "io.confluent.connect.avro.Union"
    assert union.get("R").get("x") == 5
    assert union.get("int") is None
    # written back, it has the same encoding
    again = converter.from_connect_data(TOPIC, result.schema, result.value)
    assert again is not None
    assert again[5:] == payload[5:]
    # and the string member
    payload2 = b"\x00" + schema_id.to_bytes(4, "big") + b"\x04\x02a"
    union2 = converter.to_connect_data(TOPIC, payload2).value.get("u")
    assert union2.get("string") == "a"


def test_plain_avro_enum_and_fixed_read(
    converter: AvroConverter, registry: SchemaRegistryClient
) -> None:
    avro = {
        "type": "record",
        "name": "E",
        "fields": [
            {"name": "k", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
            {"name": "f", "type": {"type": "fixed", "name": "F2", "size": 2}},
        ],
    }
    schema_id = _register(registry, f"{TOPIC}-value", avro)
    result = converter.to_connect_data(TOPIC, b"\x00" + schema_id.to_bytes(4, "big") + b"\x02hi")
    assert result.value.get("k") == "B"
    assert result.value.get("f") == b"hi"


def test_unknown_magic_byte(converter: AvroConverter) -> None:
    with pytest.raises(DataException, match=r"topic topic.*Unknown magic byte!"):
        converter.to_connect_data(TOPIC, b"\x01\x00\x00\x00\x01\x02")


@pytest.mark.parametrize("payload", [b"", b"\x00", b"\x00\x00\x00\x01"])
def test_short_payload(converter: AvroConverter, payload: bytes) -> None:
    with pytest.raises(DataException, match="topic topic"):
        converter.to_connect_data(TOPIC, payload)


def test_unknown_schema_id(converter: AvroConverter) -> None:
    with pytest.raises(DataException, match=r"topic topic.*schema for id 4242"):
        converter.to_connect_data(TOPIC, b"\x00" + (4242).to_bytes(4, "big") + b"\x02")


def test_corrupt_body(converter: AvroConverter) -> None:
    data = converter.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "hello")
    assert data is not None
    with pytest.raises(DataException, match=r"topic topic.*Error deserializing"):
        converter.to_connect_data(TOPIC, data[:-2])
    with pytest.raises(DataException, match="trailing bytes"):
        converter.to_connect_data(TOPIC, data + b"\x00")


def test_auto_register_off_requires_registered_schema(registry: SchemaRegistryClient) -> None:
    c = AvroConverter(registry)
    c.configure({"schema.registry.url": "mock://x", "auto.register.schemas": "false"}, False)
    with pytest.raises(DataException, match=r"subject topic-value"):
        c.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "x")
    schema_id = _register(registry, f"{TOPIC}-value", "string")
    data = c.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "x")
    assert data is not None
    assert _schema_id(data) == schema_id


def test_use_latest_version(registry: SchemaRegistryClient) -> None:
    latest = {
        "type": "record",
        "name": "Foo",
        "namespace": "com.example",
        "fields": [
            {"name": "a", "type": "int"},
            {"name": "b", "type": "string", "default": "dflt"},
        ],
    }
    latest_id = _register(registry, f"{TOPIC}-value", latest)
    c = AvroConverter(registry)
    c.configure(
        {
            "schema.registry.url": "mock://x",
            "auto.register.schemas": "false",
            "use.latest.version": "true",
        },
        False,
    )
    schema = SchemaBuilder.struct().name("com.example.Foo").field("a", Schema.INT32_SCHEMA).build()
    data = c.from_connect_data(TOPIC, schema, Struct(schema).put("a", 1))
    assert data is not None
    assert _schema_id(data) == latest_id
    back = c.to_connect_data(TOPIC, data)
    assert back.value.get("a") == 1
    assert back.value.get("b") == "dflt"


class _FailingRegistry:
    def __init__(self, status: int) -> None:
        self.status = status

    def register_schema(self, subject: str, schema: object) -> int:
        raise SchemaRegistryError(self.status, self.status * 100, "boom")

    def get_schema(self, schema_id: int) -> object:
        raise SchemaRegistryError(self.status, self.status * 100, "boom")


def test_registry_failures_map_to_connect_exceptions() -> None:
    server_error = AvroConverter(_FailingRegistry(503))
    server_error.configure({"schema.registry.url": "mock://x"}, False)
    with pytest.raises(RetriableException, match="topic topic"):
        server_error.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "x")
    with pytest.raises(RetriableException, match="topic topic"):
        server_error.to_connect_data(TOPIC, b"\x00\x00\x00\x00\x01\x00")
    client_error = AvroConverter(_FailingRegistry(409))
    client_error.configure({"schema.registry.url": "mock://x"}, False)
    with pytest.raises(DataException, match="topic topic"):
        client_error.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "x")


def test_mock_urls_share_one_registry(url: str) -> None:
    writer = AvroConverter()
    writer.configure({"schema.registry.url": url}, False)
    reader = AvroConverter()
    reader.configure({"schema.registry.url": url}, False)
    data = writer.from_connect_data(TOPIC, Schema.INT64_SCHEMA, 7)
    assert reader.to_connect_data(TOPIC, data).value == 7


def test_user_info_passed_to_client() -> None:
    c = AvroConverter()
    c.configure(
        {
            "schema.registry.url": "http://localhost:1",
            "basic.auth.credentials.source": "USER_INFO",
            "basic.auth.user.info": "user:secret",
        },
        False,
    )
    assert c._registry is not None
    assert c._registry.client.config()["basic.auth.user.info"] == "user:secret"
    c.close()


def test_invalid_names_rejected_or_scrubbed(registry: SchemaRegistryClient) -> None:
    schema = SchemaBuilder.struct().field("bad name", Schema.INT32_SCHEMA).build()
    value = Struct(schema).put("bad name", 1)
    c = AvroConverter(registry)
    c.configure({"schema.registry.url": "mock://x"}, False)
    with pytest.raises(DataException, match=r"topic topic.*'bad name'.*scrub\.invalid\.names"):
        c.from_connect_data(TOPIC, schema, value)
    scrub = AvroConverter(registry)
    scrub.configure({"schema.registry.url": "mock://x", "scrub.invalid.names": "true"}, False)
    data = scrub.from_connect_data(TOPIC, schema, value)
    assert scrub.to_connect_data(TOPIC, data).value.get("bad_name") == 1


def test_unconfigured_converter_fails_clearly() -> None:
    with pytest.raises(DataException, match="configure"):
        AvroConverter().from_connect_data(TOPIC, Schema.INT32_SCHEMA, 1)


def test_missing_fastavro_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from cdk.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "fastavro", None)
    with pytest.raises(MissingExtraError, match=r"connect-cdk\[avro\]"):
        AvroConverter().configure({"schema.registry.url": "mock://x"}, False)
