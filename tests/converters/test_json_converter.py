"""JsonConverter: Kafka's JsonConverterTest cases, ported, plus byte-exact envelope checks."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from cdk.converters import JsonConverter
from cdk.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from cdk.errors import ConfigException, DataException

TOPIC = "topic"
UTC = dt.timezone.utc


@pytest.fixture(params=[True, False], ids=["orjson", "stdlib"])
def converter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> JsonConverter:
    monkeypatch.setattr(JsonConverter, "use_orjson", request.param)
    conv = JsonConverter()
    conv.configure({}, is_key=False)
    return conv


def make(**configs: object) -> JsonConverter:
    conv = JsonConverter()
    conv.configure(configs, is_key=False)
    return conv


def to_connect(conv: JsonConverter, text: str) -> SchemaAndValue:
    return conv.to_connect_data(TOPIC, text.encode())


def envelope(conv: JsonConverter, schema: Schema | None, value: object) -> dict:
    data = conv.from_connect_data(TOPIC, schema, value)
    assert data is not None
    parsed = json.loads(data)
    assert isinstance(parsed, dict)
    assert list(parsed) == ["schema", "payload"]
    return parsed


# -- config -------------------------------------------------------------------------------------
def test_config_def_keys_and_defaults() -> None:
    config = JsonConverter().config()
    defaults = config.default_values()
    assert defaults["schemas.enable"] is True
    assert defaults["schemas.cache.size"] == 1000
    assert defaults["decimal.format"] == "BASE64"
    assert defaults["replace.null.with.default"] is True
    assert "converter.type" in config.names()
    assert config.config_keys()["schemas.enable"].group == "Schemas"


def test_decimal_format_is_case_insensitive_and_validated() -> None:
    conv = make(**{"decimal.format": "numeric"})
    assert conv.from_connect_data(TOPIC, Decimal.schema(2), decimal.Decimal("1.56")).endswith(
        b'"payload":1.56}'
    )
    with pytest.raises(ConfigException):
        make(**{"decimal.format": "HEX"})


def test_unconfigured_converter_uses_defaults() -> None:
    assert JsonConverter().from_connect_data(TOPIC, Schema.INT8_SCHEMA, 1) == (
        b'{"schema":{"type":"int8","optional":false},"payload":1}'
    )


# -- schema metadata ----------------------------------------------------------------------------
def test_connect_schema_metadata_translation(converter: JsonConverter) -> None:
    assert to_connect(converter, '{ "schema": { "type": "boolean" }, "payload": true }') == (
        SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
    )
    assert to_connect(
        converter, '{ "schema": { "type": "boolean", "optional": true }, "payload": null }'
    ) == SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, None)
    assert to_connect(
        converter, '{ "schema": { "type": "boolean", "default": true }, "payload": null }'
    ) == SchemaAndValue(SchemaBuilder.boolean().default_value(True).build(), True)
    expected = (
        SchemaBuilder.boolean()
        .required()
        .name("bool")
        .version(2)
        .doc("the documentation")
        .parameter("foo", "bar")
        .build()
    )
    assert to_connect(
        converter,
        '{ "schema": { "type": "boolean", "optional": false, "name": "bool", "version": 2, '
        '"doc": "the documentation", "parameters": { "foo": "bar" }}, "payload": true }',
    ) == SchemaAndValue(expected, True)


def test_json_schema_metadata_translation_is_byte_exact(converter: JsonConverter) -> None:
    schema = (
        SchemaBuilder.boolean()
        .required()
        .name("bool")
        .version(3)
        .doc("the documentation")
        .parameter("foo", "bar")
        .default_value(True)
        .build()
    )
    assert converter.from_connect_data(TOPIC, schema, True) == (
        b'{"schema":{"type":"boolean","optional":false,"name":"bool","version":3,'
        b'"doc":"the documentation","parameters":{"foo":"bar"},"default":true},"payload":true}'
    )
    assert converter.from_connect_data(TOPIC, Schema.OPTIONAL_BOOLEAN_SCHEMA, None) == (
        b'{"schema":{"type":"boolean","optional":true},"payload":null}'
    )


# -- to Connect ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{ "schema": { "type": "boolean" }, "payload": false }', (Schema.BOOLEAN_SCHEMA, False)),
        ('{ "schema": { "type": "int8" }, "payload": 12 }', (Schema.INT8_SCHEMA, 12)),
        ('{ "schema": { "type": "int16" }, "payload": 12 }', (Schema.INT16_SCHEMA, 12)),
        ('{ "schema": { "type": "int32" }, "payload": 12 }', (Schema.INT32_SCHEMA, 12)),
        ('{ "schema": { "type": "int64" }, "payload": 12 }', (Schema.INT64_SCHEMA, 12)),
        (
            '{ "schema": { "type": "int64" }, "payload": 4398046511104 }',
            (Schema.INT64_SCHEMA, 4398046511104),
        ),
        ('{ "schema": { "type": "double" }, "payload": 12.34 }', (Schema.FLOAT64_SCHEMA, 12.34)),
        (
            '{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }',
            (Schema.STRING_SCHEMA, "foo-bar-baz"),
        ),
        (
            '{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }',
            (Schema.BYTES_SCHEMA, b"test-string"),
        ),
        (
            '{ "schema": { "type": "array", "items": { "type" : "int32" } }, '
            '"payload": [1, 2, 3] }',
            (SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, 2, 3]),
        ),
        (
            '{ "schema": { "type": "map", "keys": { "type" : "string" }, "values": { "type" : '
            '"int32" } }, "payload": { "key1": 12, "key2": 15} }',
            (
                SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
                {"key1": 12, "key2": 15},
            ),
        ),
        (
            '{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : '
            '"int32" } }, "payload": [ [1, 12], [2, 15] ] }',
            (SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build(), {1: 12, 2: 15}),
        ),
    ],
)
def test_primitives_and_containers_to_connect(
    converter: JsonConverter, text: str, expected: tuple[Schema, object]
) -> None:
    assert to_connect(converter, text) == SchemaAndValue(*expected)


def test_float_to_connect_rounds_to_32_bits(converter: JsonConverter) -> None:
    result = to_connect(converter, '{ "schema": { "type": "float" }, "payload": 12.34 }')
    assert result.schema == Schema.FLOAT32_SCHEMA
    assert result.value == pytest.approx(12.34, abs=1e-6)
    assert result.value != 12.34  # a 32-bit float, as Java's floatValue()


def test_struct_to_connect(converter: JsonConverter) -> None:
    text = (
        '{ "schema": { "type": "struct", "fields": [{ "field": "field1", "type": "boolean" }, '
        '{ "field": "field2", "type": "string" }] }, "payload": { "field1": true, '
        '"field2": "string" } }'
    )
    schema = (
        SchemaBuilder.struct()
        .field("field1", Schema.BOOLEAN_SCHEMA)
        .field("field2", Schema.STRING_SCHEMA)
        .build()
    )
    expected = Struct(schema).put("field1", True).put("field2", "string")
    assert to_connect(converter, text) == SchemaAndValue(schema, expected)


def test_struct_with_optional_field_to_connect(converter: JsonConverter) -> None:
    text = (
        '{ "schema": { "type": "struct", "fields": [{ "field":"optional", "type": "string", '
        '"optional": true }, {  "field": "required", "type": "string" }] }, "payload": '
        '{ "required": "required" } }'
    )
    schema = (
        SchemaBuilder.struct()
        .field("optional", Schema.OPTIONAL_STRING_SCHEMA)
        .field("required", Schema.STRING_SCHEMA)
        .build()
    )
    assert to_connect(converter, text) == SchemaAndValue(
        schema, Struct(schema).put("required", "required")
    )


def test_tombstones(converter: JsonConverter) -> None:
    assert converter.to_connect_data(TOPIC, None) == SchemaAndValue.NULL
    assert converter.from_connect_data(TOPIC, None, None) is None
    schemaless = make(**{"schemas.enable": "false"})
    assert schemaless.from_connect_data(TOPIC, None, None) is None
    assert schemaless.to_connect_data(TOPIC, b"") == SchemaAndValue.NULL


def test_schemaless_with_empty_field_value_to_connect() -> None:
    conv = make(**{"schemas.enable": False})
    assert conv.to_connect_data(TOPIC, b'{ "a": "", "b": null}') == SchemaAndValue(
        None, {"a": "", "b": None}
    )


def test_null_schema_primitive_to_connect(converter: JsonConverter) -> None:
    cases = {
        "null": None,
        "true": True,
        "12": 12,
        "12.24": 12.24,
        '"a string"': "a string",
        '[1, "2", 3]': [1, "2", 3],
        '{ "field1": 1, "field2": 2}': {"field1": 1, "field2": 2},
    }
    for payload, expected in cases.items():
        result = to_connect(converter, '{ "schema": null, "payload": ' + payload + " }")
        assert result == SchemaAndValue(None, expected)
        assert type(result.value) is type(expected)


@pytest.mark.parametrize(
    ("payload", "scale", "expected"),
    [
        ('"AJw="', 2, decimal.Decimal("1.56")),
        ("1.56", 2, decimal.Decimal("1.56")),
        ("1.5600", 4, decimal.Decimal("1.5600")),
        ("1.23456789123456789", 17, decimal.Decimal("1.23456789123456789")),
        ("156", 0, decimal.Decimal(156)),
    ],
)
def test_decimal_to_connect(
    converter: JsonConverter, payload: str, scale: int, expected: decimal.Decimal
) -> None:
    text = (
        '{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", '
        f'"version": 1, "parameters": {{ "scale": "{scale}" }} }}, "payload": {payload} }}'
    )
    for _ in range(2):  # second time through the known-schema fast path
        result = to_connect(converter, text)
        assert result.schema == Decimal.schema(scale)
        assert result.value == expected
        assert str(result.value) == str(expected)


def test_decimal_defaults_and_optional_to_connect(converter: JsonConverter) -> None:
    ref = decimal.Decimal("1.56")
    base = (
        '{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", '
        '"version": 1, %s "parameters": { "scale": "2" } }, "payload": null }'
    )
    optional = to_connect(converter, base % '"optional": true,')
    assert optional == SchemaAndValue(Decimal.builder(2).optional().build(), None)
    defaulted = to_connect(converter, base % '"default": "AJw=",')
    assert defaulted == SchemaAndValue(Decimal.builder(2).default_value(ref).build(), ref)


def test_temporal_to_connect(converter: JsonConverter) -> None:
    date = to_connect(
        converter,
        '{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Date", '
        '"version": 1 }, "payload": 10000 }',
    )
    assert date == SchemaAndValue(Date.SCHEMA, dt.date(1970, 1, 1) + dt.timedelta(days=10000))
    time = to_connect(
        converter,
        '{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Time", '
        '"version": 1 }, "payload": 14400000 }',
    )
    assert time == SchemaAndValue(Time.SCHEMA, dt.time(4, 0))
    ts = to_connect(
        converter,
        '{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", '
        '"version": 1 }, "payload": 4000000000 }',
    )
    assert ts == SchemaAndValue(
        Timestamp.SCHEMA, dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(seconds=4000000)
    )
    ts_default = to_connect(
        converter,
        '{ "schema": { "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", '
        '"version": 1,  "optional": true, "default": 42 }, "payload": null }',
    )
    expected_default = dt.datetime(1970, 1, 1, 0, 0, 0, 42000, tzinfo=UTC)
    assert ts_default == SchemaAndValue(
        Timestamp.builder().optional().default_value(expected_default).build(), expected_default
    )


def test_schema_to_connect_cache(converter: JsonConverter) -> None:
    assert converter._cache_sizes()[1] == 0
    converter.to_connect_data(TOPIC, b'{ "schema": { "type": "boolean" }, "payload": true }')
    assert converter._cache_sizes()[1] == 1
    converter.to_connect_data(TOPIC, b'{ "schema": { "type": "boolean" }, "payload": true }')
    assert converter._cache_sizes()[1] == 1
    converter.to_connect_data(
        TOPIC, b'{ "schema": { "type": "boolean", "optional": true }, "payload": true }'
    )
    assert converter._cache_sizes()[1] == 2
    converter.to_connect_data(
        TOPIC, b'{ "schema": { "type": "boolean", "optional": false }, "payload": true }'
    )
    assert converter._cache_sizes()[1] == 3


def test_schema_caches_are_bounded() -> None:
    conv = make(**{"schemas.cache.size": "2"})
    for i in range(5):
        conv.from_connect_data(TOPIC, SchemaBuilder.int32().version(i + 1).build(), 1)
    assert conv._cache_sizes()[0] == 2


def test_schema_from_connect_cache(converter: JsonConverter) -> None:
    converter.from_connect_data(TOPIC, SchemaBuilder.boolean().build(), True)
    converter.from_connect_data(TOPIC, SchemaBuilder.boolean().build(), True)
    assert converter._cache_sizes()[0] == 1
    converter.from_connect_data(TOPIC, SchemaBuilder.boolean().optional().build(), True)
    assert converter._cache_sizes()[0] == 2


# -- to JSON ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (Schema.BOOLEAN_SCHEMA, True, b'{"type":"boolean","optional":false},"payload":true}'),
        (Schema.INT8_SCHEMA, 12, b'{"type":"int8","optional":false},"payload":12}'),
        (Schema.INT16_SCHEMA, 12, b'{"type":"int16","optional":false},"payload":12}'),
        (Schema.INT32_SCHEMA, 12, b'{"type":"int32","optional":false},"payload":12}'),
        (
            Schema.INT64_SCHEMA,
            4398046511104,
            b'{"type":"int64","optional":false},"payload":4398046511104}',
        ),
        (Schema.FLOAT32_SCHEMA, 12.34, b'{"type":"float","optional":false},"payload":12.34}'),
        (Schema.FLOAT64_SCHEMA, 12.34, b'{"type":"double","optional":false},"payload":12.34}'),
        (Schema.FLOAT64_SCHEMA, 1e10, b'{"type":"double","optional":false},"payload":1.0E10}'),
        (Schema.FLOAT64_SCHEMA, 5, b'{"type":"double","optional":false},"payload":5.0}'),
        (
            Schema.FLOAT64_SCHEMA,
            float("nan"),
            b'{"type":"double","optional":false},"payload":"NaN"}',
        ),
        (
            Schema.BYTES_SCHEMA,
            b"test-string",
            b'{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="}',
        ),
        (
            Schema.STRING_SCHEMA,
            'a"\\\x01\n\u00e9',
            b'{"type":"string","optional":false},"payload":"a\\"\\\\\\u0001\\n\xc3\xa9"}',
        ),
        (
            SchemaBuilder.array(Schema.INT32_SCHEMA).build(),
            [1, 2, 3],
            b'{"type":"array","items":{"type":"int32","optional":false},"optional":false},'
            b'"payload":[1,2,3]}',
        ),
        (
            SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(),
            {"key1": 12, "key2": 15},
            b'{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32",'
            b'"optional":false},"optional":false},"payload":{"key1":12,"key2":15}}',
        ),
        (
            SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build(),
            {1: 12, 2: 15},
            b'{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"int32",'
            b'"optional":false},"optional":false},"payload":[[1,12],[2,15]]}',
        ),
        (
            Decimal.schema(2),
            decimal.Decimal("1.56"),
            b'{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal",'
            b'"version":1,"parameters":{"scale":"2"}},"payload":"AJw="}',
        ),
        (
            Date.SCHEMA,
            dt.date(1970, 1, 1) + dt.timedelta(days=10000),
            b'{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date",'
            b'"version":1},"payload":10000}',
        ),
        (
            Time.SCHEMA,
            dt.time(4, 0),
            b'{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time",'
            b'"version":1},"payload":14400000}',
        ),
        (
            Timestamp.SCHEMA,
            dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(seconds=4000000),
            b'{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp",'
            b'"version":1},"payload":4000000000}',
        ),
    ],
)
def test_to_json_is_byte_exact(
    converter: JsonConverter, schema: Schema, value: object, expected: bytes
) -> None:
    assert converter.from_connect_data(TOPIC, schema, value) == b'{"schema":' + expected


def test_struct_to_json_key_order() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("field1", Schema.BOOLEAN_SCHEMA)
        .field("field2", Schema.STRING_SCHEMA)
        .build()
    )
    data = make().from_connect_data(
        TOPIC, schema, Struct(schema).put("field1", True).put("field2", "x")
    )
    assert data == (
        b'{"schema":{"type":"struct","fields":[{"type":"boolean","optional":false,'
        b'"field":"field1"},{"type":"string","optional":false,"field":"field2"}],'
        b'"optional":false},"payload":{"field1":true,"field2":"x"}}'
    )


def test_struct_schema_identical_but_distinct_objects() -> None:
    def build() -> Schema:
        return SchemaBuilder.struct().field("a", Schema.BOOLEAN_SCHEMA).build()

    schema, other = build(), build()
    assert make().from_connect_data(TOPIC, schema, Struct(other).put("a", True)) is not None


def test_decimal_to_numeric_json() -> None:
    conv = make(**{"decimal.format": "NUMERIC"})
    assert envelope(conv, Decimal.schema(2), decimal.Decimal("1.56"))["payload"] == 1.56
    data = conv.from_connect_data(TOPIC, Decimal.schema(4), decimal.Decimal("1.5600"))
    assert data is not None
    assert data.endswith(b'"payload":1.5600}')
    assert conv.to_connect_data(TOPIC, data).value == decimal.Decimal("1.5600")


def test_decimal_without_schema_fails(converter: JsonConverter) -> None:
    with pytest.raises(DataException):
        converter.from_connect_data(TOPIC, None, decimal.Decimal("1.56"))


def test_null_schema_values_to_json(converter: JsonConverter) -> None:
    assert converter.from_connect_data(TOPIC, None, True) == b'{"schema":null,"payload":true}'
    assert converter.from_connect_data(TOPIC, None, [1, "string", True]) == (
        b'{"schema":null,"payload":[1,"string",true]}'
    )
    assert converter.from_connect_data(TOPIC, None, {"key1": 12, "key2": "s", "key3": True}) == (
        b'{"schema":null,"payload":{"key1":12,"key2":"s","key3":true}}'
    )
    mixed = envelope(converter, None, {"string": 12, 52: "string", False: True})["payload"]
    assert sorted(map(json.dumps, mixed)) == sorted(
        map(json.dumps, [["string", 12], [52, "string"], [False, True]])
    )


def test_schemaless_mode(converter: JsonConverter) -> None:
    conv = make(**{"schemas.enable": "false"})
    assert conv.to_connect_data(TOPIC, b"true") == SchemaAndValue(None, True)
    assert conv.from_connect_data(TOPIC, None, True) == b"true"
    assert conv.from_connect_data(TOPIC, Schema.INT32_SCHEMA, 5) == b"5"
    nested = conv.to_connect_data(TOPIC, b'{"a": [1, 2.5, {"b": null}], "c": "x"}')
    assert nested == SchemaAndValue(None, {"a": [1, 2.5, {"b": None}], "c": "x"})


def test_mismatched_schema_and_value(converter: JsonConverter) -> None:
    with pytest.raises(DataException, match="Invalid type for FLOAT64"):
        converter.from_connect_data(TOPIC, Schema.FLOAT64_SCHEMA, True)
    with pytest.raises(DataException):
        converter.from_connect_data(TOPIC, Schema.INT8_SCHEMA, 300)
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    other = SchemaBuilder.struct().field("b", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"Mismatching schema\."):
        converter.from_connect_data(TOPIC, schema, Struct(other).put("b", 1))


def test_required_null_without_default(converter: JsonConverter) -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(
        DataException,
        match="Conversion error: null value for field that is required and has no default value",
    ):
        converter.from_connect_data(TOPIC, schema, Struct(schema))


def test_replace_null_with_default() -> None:
    field_schema = SchemaBuilder.int32().optional().default_value(7).build()
    schema = SchemaBuilder.struct().field("a", field_schema).build()
    value = Struct(schema)
    replaced = envelope(make(), schema, value)["payload"]
    assert replaced == {"a": 7}
    kept = make(**{"replace.null.with.default": "false"})
    assert envelope(kept, schema, value)["payload"] == {"a": None}
    data = kept.from_connect_data(TOPIC, schema, value)
    assert kept.to_connect_data(TOPIC, data).value.get_without_default("a") is None
    assert make().to_connect_data(TOPIC, data).value.get_without_default("a") == 7


def test_envelope_required(converter: JsonConverter) -> None:
    message = (
        'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not '
        "contain additional fields. If you are trying to deserialize plain JSON data, set "
        "schemas.enable=false in your converter configuration."
    )
    for text in [b"true", b'{"payload": 1}', b'{"schema": null, "payload": 1, "x": 2}', b"[]", b""]:
        with pytest.raises(DataException) as info:
            converter.to_connect_data(TOPIC, text)
        if text:
            assert str(info.value) == message


def test_invalid_json(converter: JsonConverter) -> None:
    for text in [b"{", b"NaN", b'{"schema": null, "payload": NaN}', b"\xff\xfe\x00"]:
        with pytest.raises(
            DataException,
            match="Converting byte\\[\\] to Kafka Connect data failed due to serialization error",
        ):
            converter.to_connect_data(TOPIC, text)


def test_fast_path_falls_back_on_trailing_fields(converter: JsonConverter) -> None:
    data = converter.from_connect_data(TOPIC, Schema.INT32_SCHEMA, 1)
    assert data is not None
    assert converter.to_connect_data(TOPIC, data).value == 1
    converter.to_connect_data(TOPIC, data)  # now a known schema text
    crafted = data[:-1] + b',"extra":2}'
    with pytest.raises(DataException, match="may not contain additional fields"):
        converter.to_connect_data(TOPIC, crafted)


@pytest.mark.parametrize(
    ("schema_json", "message"),
    [
        ('{"optional": true}', "Schema must contain 'type' field"),
        ('"int32"', "Schema must contain 'type' field"),
        ('{"type": "uuid"}', "Unknown schema type: uuid"),
        ('{"type": "array"}', "Array schema did not specify the element type"),
        ('{"type": "map", "values": {"type": "int8"}}', "Map schema did not specify the key type"),
        ('{"type": "map", "keys": {"type": "int8"}}', "Map schema did not specify the value type"),
        ('{"type": "struct"}', 'Struct schema\'s "fields" argument is not an array.'),
        ('{"type": "struct", "fields": [{"type": "int8"}]}', "field name not specified properly"),
        ('{"type": "int8", "parameters": {"a": 1}}', "Schema parameters must have string values."),
    ],
)
def test_invalid_schemas(converter: JsonConverter, schema_json: str, message: str) -> None:
    with pytest.raises(DataException, match=message.replace("(", "\\(").replace(".", "\\.")):
        to_connect(converter, '{"schema": ' + schema_json + ', "payload": null}')


@pytest.mark.parametrize(
    ("schema_json", "payload"),
    [
        ('{"type": "int32"}', '"abc"'),
        ('{"type": "int8"}', "300"),
        ('{"type": "int64"}', "1.5"),
        ('{"type": "string"}', "5"),
        ('{"type": "boolean"}', "1"),
        ('{"type": "bytes"}', '"not base64!"'),
        ('{"type": "int32"}', "null"),
        ('{"type": "array", "items": {"type": "int32"}}', "{}"),
        ('{"type": "map", "keys": {"type": "int32"}, "values": {"type": "int32"}}', "[[1]]"),
        ('{"type": "map", "keys": {"type": "int32"}, "values": {"type": "int32"}}', "{}"),
        ('{"type": "struct", "fields": []}', "[]"),
        ('{"type": "int32", "name": "org.apache.kafka.connect.data.Date"}', '"x"'),
    ],
)
def test_payload_mismatch_is_data_exception(
    converter: JsonConverter, schema_json: str, payload: str
) -> None:
    with pytest.raises(DataException):
        to_connect(converter, '{"schema": ' + schema_json + ', "payload": ' + payload + "}")


def test_struct_field_error_names_the_field(converter: JsonConverter) -> None:
    text = (
        '{"schema": {"type": "struct", "fields": [{"field": "count", "type": "int32"}]}, '
        '"payload": {"count": "many"}}'
    )
    with pytest.raises(DataException) as info:
        to_connect(converter, text)
    assert info.value.field == "count"


def test_headers_delegate_to_data(converter: JsonConverter) -> None:
    data = converter.from_connect_header(TOPIC, "headerName", Schema.STRING_SCHEMA, "test-string")
    assert data == b'{"schema":{"type":"string","optional":false},"payload":"test-string"}'
    assert converter.to_connect_header(
        TOPIC, "headerName", b'{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }'
    ) == SchemaAndValue(Schema.STRING_SCHEMA, "foo-bar-baz")
    header_conv = JsonConverter()
    header_conv.configure({"schemas.enable": "false"})
    assert header_conv.from_connect_header(TOPIC, "h", None, {"a": 1}) == b'{"a":1}'


def test_java_number_formatting() -> None:
    conv = make(**{"schemas.enable": "false"})
    f32 = Schema.FLOAT32_SCHEMA
    f64 = Schema.FLOAT64_SCHEMA
    cases = [
        (f64, 1e-5, b"1.0E-5"),
        (f64, 0.001, b"0.001"),
        (f64, 1234567.0, b"1234567.0"),
        (f64, 12345678.9, b"1.23456789E7"),
        (f64, -0.0, b"-0.0"),
        (f64, 5e-324, b"4.9E-324"),
        (f64, float("inf"), b'"Infinity"'),
        (f64, float("-inf"), b'"-Infinity"'),
        (f32, 0.1, b"0.1"),
        (f32, 3.4028234663852886e38, b"3.4028235E38"),
        (f32, 1.4e-45, b"1.4E-45"),
        (f32, 1e10, b"1.0E10"),
    ]
    for schema, value, expected in cases:
        assert conv.from_connect_data(TOPIC, schema, value) == expected, value


def test_special_floats_read_back(converter: JsonConverter) -> None:
    data = converter.from_connect_data(TOPIC, Schema.FLOAT64_SCHEMA, float("-inf"))
    assert data is not None
    assert converter.to_connect_data(TOPIC, data).value == float("-inf")


def test_outputs_identical_with_and_without_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    numeric = (
        b'{"schema":{"type":"struct","fields":[{"type":"bytes","optional":false,'
        b'"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"3"},'
        b'"field":"d"},{"type":"double","optional":false,"field":"f"},{"type":"int64",'
        b'"optional":false,"field":"i"}],"optional":false},'
        b'"payload":{"d":12345678901234567.891,"f":0.1,"i":9223372036854775807}}'
    )
    results = []
    for flag in (True, False):
        monkeypatch.setattr(JsonConverter, "use_orjson", flag)
        conv = make()
        results.append([conv.to_connect_data(TOPIC, numeric) for _ in range(2)])
    assert results[0] == results[1]
    value = results[0][1].value
    assert value.get("d") == decimal.Decimal("12345678901234567.891")
    assert value.get("i") == 9223372036854775807
    schemaless = b'{"big": 123456789012345678901234567890, "f": 1.5}'
    for flag in (True, False):
        monkeypatch.setattr(JsonConverter, "use_orjson", flag)
        with pytest.raises(DataException):
            make(**{"schemas.enable": "false"}).to_connect_data(TOPIC, schemaless)


# -- Jackson parity: leading zeros on read, supplementary characters on write -------------------
@pytest.mark.parametrize(
    ("schema_json", "payload", "expected"),
    [
        ('{"type": "int8"}', "00012", SchemaAndValue(Schema.INT8_SCHEMA, 12)),
        ('{"type": "int16"}', "000123", SchemaAndValue(Schema.INT16_SCHEMA, 123)),
        ('{"type": "int32"}', "000012345", SchemaAndValue(Schema.INT32_SCHEMA, 12345)),
        ('{"type": "int64"}', "00000123456789", SchemaAndValue(Schema.INT64_SCHEMA, 123456789)),
        ('{"type": "int64"}', "-0042", SchemaAndValue(Schema.INT64_SCHEMA, -42)),
        ('{"type": "int32"}', "0000", SchemaAndValue(Schema.INT32_SCHEMA, 0)),
        ('{"type": "float"}', "0012.34", SchemaAndValue(Schema.FLOAT32_SCHEMA, 12.34)),
        ('{"type": "double"}', "000123.456", SchemaAndValue(Schema.FLOAT64_SCHEMA, 123.456)),
        ('{"type": "double"}', "-00.5e-005", SchemaAndValue(Schema.FLOAT64_SCHEMA, -0.5e-5)),
        (
            '{"type": "array", "items": {"type": "int32"}}',
            "[01, 002, 3, 0]",
            SchemaAndValue(SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, 2, 3, 0]),
        ),
    ],
)
def test_number_with_leading_zeros_to_connect(
    converter: JsonConverter, schema_json: str, payload: str, expected: SchemaAndValue
) -> None:
    """Kafka's JsonDeserializer enables Jackson's ALLOW_LEADING_ZEROS_FOR_NUMBERS (KAFKA-15012)."""
    text = '{ "schema": ' + schema_json + ', "payload": ' + payload + " }"
    result = to_connect(converter, text)
    if expected.schema == Schema.FLOAT32_SCHEMA:
        assert result.schema == expected.schema
        assert result.value == pytest.approx(expected.value, rel=1e-7)
    else:
        assert result == expected


def test_leading_zeros_in_containers_decimals_and_schemaless(converter: JsonConverter) -> None:
    text = (
        '{"schema": {"type": "struct", "fields": ['
        '{"field": "ids", "type": "array", "items": {"type": "int32"}},'
        '{"field": "code", "type": "string"},'
        '{"field": "price", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",'
        ' "version": 01, "parameters": {"scale": "2"}}]},'
        ' "payload": {"ids": [01, 0, 0010], "code": "007", "price": 00012.50}}'
    )
    value = to_connect(converter, text).value
    assert value.get("ids") == [1, 0, 10]
    assert value.get("code") == "007"  # strings are never touched
    assert value.get("price") == decimal.Decimal("12.50")
    assert str(value.get("price")) == "12.50"
    schemaless = make(**{"schemas.enable": "false"})
    for flag in (True, False):
        schemaless.use_orjson = flag
        assert schemaless.to_connect_data(TOPIC, b"00012") == SchemaAndValue(None, 12)
        assert schemaless.to_connect_data(
            TOPIC, b'{"a": -007, "b": "0012", "c": [00.25, 1e-005], "d": "say \\"00\\""}'
        ) == SchemaAndValue(None, {"a": -7, "b": "0012", "c": [0.25, 1e-5], "d": 'say "00"'})


def test_leading_zeros_on_the_known_schema_fast_path(converter: JsonConverter) -> None:
    data = converter.from_connect_data(TOPIC, Schema.INT32_SCHEMA, 1)
    assert data is not None
    assert data.endswith(b'"payload":1}')
    assert converter.to_connect_data(TOPIC, data).value == 1  # the schema text is now known
    assert converter.to_connect_data(TOPIC, data[:-2] + b"00012}").value == 12
    decimal_data = make(**{"decimal.format": "NUMERIC"}).from_connect_data(
        TOPIC, Decimal.schema(2), decimal.Decimal("1.50")
    )
    assert decimal_data is not None
    assert decimal_data.endswith(b'"payload":1.50}')
    for _ in range(2):
        read = converter.to_connect_data(TOPIC, decimal_data[:-5] + b"0001.50}")
        assert read.value == decimal.Decimal("1.50")


def test_leading_zeros_do_not_make_invalid_json_valid(converter: JsonConverter) -> None:
    for text in [b'{"schema": null, "payload": 00.}', b'{"schema": null, "payload": +0012}']:
        with pytest.raises(DataException, match="serialization error"):
            converter.to_connect_data(TOPIC, text)
    with pytest.raises(DataException) as info:
        converter.to_connect_data(TOPIC, b'{"schema": null, "payload": [0012 0013]}')
    assert "Expecting ',' delimiter" in str(info.value)  # the original text's error, not ours


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("😀", b'"\\uD83D\\uDE00"'),
        ("a😀b", b'"a\\uD83D\\uDE00b"'),
        ("café ☕", '"café ☕"'.encode()),  # BMP characters stay raw UTF-8
        ("é😀☕", '"é\\uD83D\\uDE00☕"'.encode()),
        ("\U00010000\U0010ffff", b'"\\uD800\\uDC00\\uDBFF\\uDFFF"'),
        ("\ud83d", b'"\\uD83D"'),  # a lone surrogate is escaped, as Jackson writes a lone char
        ("plain", b'"plain"'),
    ],
)
def test_supplementary_characters_written_as_escaped_surrogate_pairs(
    converter: JsonConverter, text: str, expected: bytes
) -> None:
    schemaless = make(**{"schemas.enable": "false"})
    assert schemaless.from_connect_data(TOPIC, Schema.STRING_SCHEMA, text) == expected
    data = converter.from_connect_data(TOPIC, Schema.STRING_SCHEMA, text)
    assert data == b'{"schema":{"type":"string","optional":false},"payload":' + expected + b"}"
    for _ in range(2):  # the full parse, then the known-schema path
        assert converter.to_connect_data(TOPIC, data) == SchemaAndValue(Schema.STRING_SCHEMA, text)


def test_kafka_quickstart_line_with_emoji_is_byte_identical(converter: JsonConverter) -> None:
    """The one record of the measured HoistField + InsertField run that differed from Java's."""
    schema = (
        SchemaBuilder.struct()
        .field("content", Schema.STRING_SCHEMA)
        .field("the_timestamp", Timestamp.builder().optional().build())
        .build()
    )
    value = Struct(schema).put("content", "smile 😀 é").put("the_timestamp", None)
    data = converter.from_connect_data(TOPIC, schema, value)
    assert data is not None
    assert data.endswith(
        '"payload":{"content":"smile \\uD83D\\uDE00 é","the_timestamp":null}}'.encode()
    )
    assert converter.to_connect_data(TOPIC, data).value == value


def test_supplementary_characters_in_keys_and_schemas(converter: JsonConverter) -> None:
    schemaless = make(**{"schemas.enable": "false"})
    assert schemaless.from_connect_data(TOPIC, None, {"🔑": ["🎉", "ü"]}) == (
        '{"\\uD83D\\uDD11":["\\uD83C\\uDF89","ü"]}'.encode()
    )
    schema = (
        SchemaBuilder.struct()
        .name("rocket🚀")
        .doc("doc 📄")
        .field("f🙂", Schema.STRING_SCHEMA)
        .build()
    )
    data = converter.from_connect_data(TOPIC, schema, Struct(schema).put("f🙂", "x"))
    assert data is not None
    assert b'"name":"rocket\\uD83D\\uDE80"' in data
    assert b'"doc":"doc \\uD83D\\uDCC4"' in data
    assert b'"field":"f\\uD83D\\uDE42"' in data
    assert b'"payload":{"f\\uD83D\\uDE42":"x"}' in data
    assert not any(b >= 0xF0 for b in data)
    for _ in range(2):
        read = converter.to_connect_data(TOPIC, data)
        assert read.schema == schema
        assert read.value.get("f🙂") == "x"


def _read_all(conv: JsonConverter, inputs: list[bytes]) -> list[object]:
    out: list[object] = []
    for data in inputs:
        try:
            out.append(conv.to_connect_data(TOPIC, data))
        except DataException as exc:
            out.append(("error", str(exc)))
    return out


def test_repeated_schema_text_reads_as_the_stdlib_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path for the previous envelope's schema text gives what a full parse gives."""
    struct = (
        b'{"schema":{"type":"struct","fields":[{"type":"double","optional":true,"field":"f"},'
        b'{"type":"int64","optional":true,"field":"i"},{"type":"string","optional":true,'
        b'"field":"s"}],"optional":false},"payload":'
    )
    string = b'{"schema":{"type":"string","optional":false},"payload":'
    inputs = [
        struct + b'{"f":1.5,"i":7,"s":"a"}}',
        struct + b'{"f":1.5,"i":8,"s":"b"}}',
        struct + b'{"f":123456789012345678901234,"i":9,"s":"c"}}',  # a float beyond 64-bit ints
        struct + b'{"f":1,"i":18446744073709551616,"s":"d"}}',  # out of INT64's range
        struct + b'{"f":1,"i":1,"s":"12345678901234567890123"}}',  # digits in a string
        struct + b'{"f":1,"i":1,"s":"x","payload":2}}',  # an extra payload key: invalid
        struct + b'{"f":1,"i":1,"s":"x"}',  # the payload's closing brace missing
        struct + b'{"f":1,"i":1,"s":"x"}} ',  # trailing space: a plain envelope still
        string + b'"first"}',
        string + b'"second"}',
        string + b"12345678901234567890123}",  # wrong type, a big number
        string + b'"\\ud83d\\ude00"}',
        string + b"null}",
        struct + b'{"f":2.5,"i":10,"s":"e"}}',  # back to the first schema
        string + b'"third"}',
        string + b'"third"},"payload":1}',
    ]
    results = []
    for flag in (True, False):
        monkeypatch.setattr(JsonConverter, "use_orjson", flag)
        conv = make()
        results.append(_read_all(conv, inputs + inputs))  # twice: every schema text is known
    assert results[0] == results[1]
    assert results[0][2] == results[0][len(inputs) + 2]
    assert isinstance(results[0][1], SchemaAndValue)
    assert results[0][1].value.get("i") == 8
    assert results[0][9] == SchemaAndValue(Schema.STRING_SCHEMA, "second")
    assert results[0][10][0] == "error"  # type: ignore[index]
    assert results[0][15][0] == "error"  # type: ignore[index]


def test_switching_to_the_stdlib_after_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    conv = make()
    data = conv.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "a")
    assert data is not None
    for _ in range(3):
        assert conv.to_connect_data(TOPIC, data).value == "a"
    monkeypatch.setattr(JsonConverter, "use_orjson", False)
    calls = []
    real = json.JSONDecoder.decode
    monkeypatch.setattr(
        json.JSONDecoder, "decode", lambda self, s: calls.append(s) or real(self, s)
    )
    assert conv.to_connect_data(TOPIC, data).value == "a"
    assert calls == ['"a"']  # parsed by the stdlib


def test_writing_alternating_schemas() -> None:
    conv = make()
    optional = SchemaBuilder.string().optional().build()
    for _ in range(2):
        assert conv.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "a") == (
            b'{"schema":{"type":"string","optional":false},"payload":"a"}'
        )
        assert conv.from_connect_data(TOPIC, optional, None) == (
            b'{"schema":{"type":"string","optional":true},"payload":null}'
        )
        assert conv.from_connect_data(TOPIC, Schema.INT32_SCHEMA, 1) == (
            b'{"schema":{"type":"int32","optional":false},"payload":1}'
        )
    conv.configure({"schemas.enable": "false"}, is_key=False)  # forgets the schema just used
    assert conv.from_connect_data(TOPIC, Schema.INT32_SCHEMA, 1) == b"1"
