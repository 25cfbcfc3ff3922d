"""Property: any generated Connect schema and value survives the Avro round trip."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk.converters import AvroConverter
from cdk.data import Field, Schema, SchemaAndValue, SchemaBuilder, SchemaType, Struct
from cdk.errors import DataException
from harness.strategies import schema_and_value

_topics = itertools.count()
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _converter(**extra: str) -> AvroConverter:
    c = AvroConverter()
    c.configure({"schema.registry.url": "mock://avro-properties", **extra}, False)
    return c


CONVERTER = _converter()


def _plain(schema: Schema, value: Any) -> Any:
    """The value as Confluent writes it: struct fields read with their defaults applied."""
    if value is None:
        return None
    if schema.type is SchemaType.STRUCT:
        return tuple(_plain(f.schema, value.get(f)) for f in schema.fields)
    if schema.type is SchemaType.ARRAY:
        return [_plain(schema.value_schema, v) for v in value]
    if schema.type is SchemaType.MAP:
        return {k: _plain(schema.value_schema, v) for k, v in value.items()}
    if schema.type is SchemaType.BYTES and not isinstance(value, (bytes, bytearray, memoryview)):
        return value  # Decimal
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def _with_version(schema: Schema, version: int) -> Schema:
    return Schema(
        schema.type,
        optional=schema.optional,
        default_value=schema.default_value,
        name=schema.name,
        version=version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=schema.fields if schema.type is SchemaType.STRUCT else None,
        key_schema=schema.key_schema if schema.type is SchemaType.MAP else None,
        value_schema=(
            schema.value_schema if schema.type in (SchemaType.ARRAY, SchemaType.MAP) else None
        ),
    )


def _confluent_schema(schema: Schema) -> Schema:
    """The schema as Confluent's mapping reads it back.

    Avro map keys are always plain strings, so the key schema of a map with required STRING keys
    comes back as ``Schema.STRING_SCHEMA`` (its name, doc, version, parameters and default are not
    representable in Avro and Confluent drops them). Everything else survives.
    """
    key = value = None
    fields = None
    changed = False
    if schema.type is SchemaType.MAP:
        key = schema.key_schema
        if key.type is SchemaType.STRING and not key.optional and key != Schema.STRING_SCHEMA:
            key = Schema.STRING_SCHEMA
            changed = True
        value = _confluent_schema(schema.value_schema)
        changed = changed or value is not schema.value_schema
    elif schema.type is SchemaType.ARRAY:
        value = _confluent_schema(schema.value_schema)
        changed = value is not schema.value_schema
    elif schema.type is SchemaType.STRUCT:
        fields = [Field(f.name, f.index, _confluent_schema(f.schema)) for f in schema.fields]
        changed = any(a.schema is not b.schema for a, b in zip(fields, schema.fields, strict=True))
    if not changed:
        return schema
    return Schema(
        schema.type,
        optional=schema.optional,
        default_value=schema.default_value,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=fields,
        key_schema=key,
        value_schema=value,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_and_value())
def test_avro_round_trip(sv: SchemaAndValue) -> None:
    schema, value = sv.schema, sv.value
    assert schema is not None
    topic = f"prop-{next(_topics)}"
    data = CONVERTER.from_connect_data(topic, schema, value)
    if value is None:
        assert data is None
        assert CONVERTER.to_connect_data(topic, data) == SchemaAndValue.NULL
        return
    assert data is not None
    assert data[0] == 0
    result = CONVERTER.to_connect_data(topic, data)
    expected = _confluent_schema(schema)
    if not schema.optional and schema.version is None:
        # registered under a fresh subject: the schema gains registry version 1
        expected = _with_version(expected, 1)
    _assert_same_schema(result.schema, expected)
    assert _plain(result.schema, result.value) == _plain(schema, value)


def _assert_same_schema(actual: Schema | None, expected: Schema) -> None:
    """Schema equality, with defaults compared as Confluent writes them (struct defaults applied).

    A Struct inside a default is written like any struct value: a null field that has a default
    comes back as that default, so defaults are compared through :func:`_plain`.
    """
    assert actual is not None
    attrs = ("type", "optional", "name", "version", "doc")
    assert [getattr(actual, a) for a in attrs] == [getattr(expected, a) for a in attrs], expected
    assert dict(actual.parameters) == dict(expected.parameters)
    assert _plain(actual, actual.default_value) == _plain(expected, expected.default_value)
    if expected.type is SchemaType.STRUCT:
        assert [f.name for f in actual.fields] == [f.name for f in expected.fields]
        for a, e in zip(actual.fields, expected.fields, strict=True):
            _assert_same_schema(a.schema, e.schema)
    if expected.type is SchemaType.MAP:
        _assert_same_schema(actual.key_schema, expected.key_schema)
    if expected.type in (SchemaType.MAP, SchemaType.ARRAY):
        _assert_same_schema(actual.value_schema, expected.value_schema)


@settings(max_examples=100, deadline=None)
@given(
    st.text(min_size=1, max_size=6),
    st.integers(min_value=-(2**31), max_value=2**31 - 1),
    st.booleans(),
)
def test_field_names_without_avro_form_fail_clearly_or_are_scrubbed(
    name: str, number: int, scrub: bool
) -> None:
    schema = SchemaBuilder.struct().field(name, Schema.INT32_SCHEMA).build()
    value = Struct(schema).put(name, number)
    converter = _converter(**{"scrub.invalid.names": str(scrub).lower()})
    topic = f"names-{next(_topics)}"
    if _AVRO_NAME.fullmatch(name):
        back = converter.to_connect_data(topic, converter.from_connect_data(topic, schema, value))
        assert back.value.get(name) == number
    elif scrub:
        back = converter.to_connect_data(topic, converter.from_connect_data(topic, schema, value))
        (field,) = back.schema.fields
        assert _AVRO_NAME.fullmatch(field.name)
        assert back.value.get(field) == number
    else:
        with pytest.raises(DataException, match="not a valid Avro name") as info:
            converter.from_connect_data(topic, schema, value)
        assert info.value.field == name
