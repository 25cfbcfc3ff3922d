"""Property tests: JsonConverter round trips for any generated schema and value.

schemas.enable=true: the schema and the value come back equal (with replace.null.with.default=false,
so a None stays None; with the default true a None in a defaulted schema comes back as the
default).
schemas.enable=false: the value comes back as its schemaless inferred shape (see ``inferred``).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import decimal
import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk.converters import JsonConverter, _json_text
from cdk.converters._json_text import jackson_utf8, java_float, json_string
from cdk.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from cdk.errors import DataException
from harness.strategies import schema_and_value, schemas, values_for

TOPIC = "t"
SETTINGS = settings(
    max_examples=int(os.environ.get("JSON_PROP_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow],
)


def converter(use_orjson: bool = True, **configs: object) -> JsonConverter:
    conv = JsonConverter()
    conv.use_orjson = use_orjson
    conv.configure(configs, is_key=False)
    return conv


def with_defaults(schema: Schema | None, value: Any) -> Any:
    """What the converter reads back with replace.null.with.default=true."""
    if schema is None:
        return value
    if value is None:
        return schema.default_value
    if schema.type is SchemaType.STRUCT:
        out = Struct(schema)
        for f in schema.fields:
            out.put(f, with_defaults(f.schema, value.get_without_default(f.name)))
        return out
    if schema.type is SchemaType.ARRAY:
        return [with_defaults(schema.value_schema, v) for v in value]
    if schema.type is SchemaType.MAP:
        return {k: with_defaults(schema.value_schema, v) for k, v in value.items()}
    return value


def inferred(schema: Schema | None, value: Any, numeric: bool) -> Any:
    """The schemaless reading of a value: JSON shapes, integral -> int, others -> float.

    Structs and string-keyed maps become dicts, other maps lists of [key, value] pairs, bytes and
    BASE64 decimals base64 strings, NUMERIC decimals numbers, dates/times/timestamps their ints.
    """
    if value is None:
        value = schema.default_value if schema is not None else None
        if value is None:
            return None
    assert schema is not None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        if numeric:
            text = str(value)  # a JSON number: integral only without '.' or an exponent
            return float(text) if any(c in text for c in ".eE") else int(text)
        return base64.b64encode(Decimal.from_logical(schema, value)).decode()
    if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
        return {
            Date.LOGICAL_NAME: Date,
            Time.LOGICAL_NAME: Time,
            Timestamp.LOGICAL_NAME: Timestamp,
        }[name].from_logical(schema, value)
    stype = schema.type
    if stype is SchemaType.BYTES:
        return base64.b64encode(bytes(value)).decode()
    if stype is SchemaType.FLOAT32:
        return float(java_float(value))  # the 32-bit float's shortest text, read as a double
    if stype is SchemaType.FLOAT64:
        return float(value)
    if stype is SchemaType.ARRAY:
        return [inferred(schema.value_schema, v, numeric) for v in value]
    if stype is SchemaType.MAP:
        if schema.key_schema.type is SchemaType.STRING:
            return {k: inferred(schema.value_schema, v, numeric) for k, v in value.items()}
        return [
            [inferred(schema.key_schema, k, numeric), inferred(schema.value_schema, v, numeric)]
            for k, v in value.items()
        ]
    if stype is SchemaType.STRUCT:
        return {
            f.name: inferred(f.schema, value.get_without_default(f), numeric) for f in schema.fields
        }
    return value


def beyond_int64(value: Any) -> bool:
    if isinstance(value, list):
        return any(beyond_int64(v) for v in value)
    if isinstance(value, dict):
        return any(beyond_int64(v) for v in value.values())
    return type(value) is int and not -(2**63) <= value < 2**63


def same(a: Any, b: Any) -> bool:
    """Equal, with int/float kept apart (1 is not 1.0 in the inferred shape)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


@pytest.mark.parametrize("use_orjson", [True, False], ids=["orjson", "stdlib"])
@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
@SETTINGS
@given(sv=schema_and_value())
def test_round_trip_with_schemas(sv: SchemaAndValue, decimal_format: str, use_orjson: bool) -> None:
    exact = converter(
        use_orjson, **{"decimal.format": decimal_format, "replace.null.with.default": "false"}
    )
    data = exact.from_connect_data(TOPIC, sv.schema, sv.value)
    assert data is not None
    assert exact.to_connect_data(TOPIC, data) == sv
    assert exact.to_connect_data(TOPIC, data) == sv  # again, through the known-schema path
    assert exact.from_connect_data(TOPIC, sv.schema, sv.value) == data

    defaults = converter(use_orjson, **{"decimal.format": decimal_format})
    data = defaults.from_connect_data(TOPIC, sv.schema, sv.value)
    assert data is not None
    back = defaults.to_connect_data(TOPIC, data)
    # Defaults are written with nulls inside them replaced too (as Kafka does), so compare
    # against the schema as read back.
    assert back.schema == exact.to_connect_data(TOPIC, data).schema
    assert back.value == with_defaults(back.schema, sv.value)


@pytest.mark.parametrize("decimal_format", ["BASE64", "NUMERIC"])
@SETTINGS
@given(sv=schema_and_value())
def test_round_trip_without_schemas(sv: SchemaAndValue, decimal_format: str) -> None:
    conv = converter(**{"schemas.enable": "false", "decimal.format": decimal_format})
    data = conv.from_connect_data(TOPIC, sv.schema, sv.value)
    if data is None:
        return
    expected = inferred(sv.schema, sv.value, decimal_format == "NUMERIC")
    if beyond_int64(expected):  # a NUMERIC decimal too big for INT64 (Kafka would truncate it)
        with pytest.raises(DataException, match="does not fit in an INT64"):
            conv.to_connect_data(TOPIC, data)
        return
    back = conv.to_connect_data(TOPIC, data)
    assert back.schema is None
    assert same(back.value, expected), (back.value, expected)


@SETTINGS
@given(sv=schema_and_value(allow_nan=True, allow_infinity=True))
def test_orjson_and_stdlib_read_the_same(sv: SchemaAndValue) -> None:
    data = converter().from_connect_data(TOPIC, sv.schema, sv.value)
    assert data is not None
    results = []
    for flag in (True, False):
        conv = converter(flag)
        results.append(repr(conv.to_connect_data(TOPIC, data)))
    assert results[0] == results[1]


@SETTINGS
@given(schema=schemas(), other=schemas(), data=st.data())
def test_failures_are_data_exceptions(schema: Schema, other: Schema, data: st.DataObject) -> None:
    """Mismatched values and garbage bytes fail only with DataException."""
    value = data.draw(values_for(other))
    conv = converter()
    with contextlib.suppress(DataException):
        conv.from_connect_data(TOPIC, schema, value)
    blob = data.draw(st.binary(max_size=40) | st.just(b'{"schema":null,"payload":'))
    with contextlib.suppress(DataException):
        conv.to_connect_data(TOPIC, blob)
    payload = data.draw(st.sampled_from(["1", '"x"', "[1]", '{"a":1}', "null", "1.5", "true"]))
    text = conv.from_connect_data(TOPIC, schema, data.draw(values_for(schema)))
    assert text is not None
    head = text[: text.rindex(b',"payload":')]
    with contextlib.suppress(DataException):
        conv.to_connect_data(TOPIC, head + b',"payload":' + payload.encode() + b"}")


def test_time_and_timestamp_values_are_ms_precision() -> None:
    conv = converter()
    ts = dt.datetime(2024, 1, 2, 3, 4, 5, 678999, tzinfo=dt.timezone.utc)
    data = conv.from_connect_data(TOPIC, Timestamp.SCHEMA, ts)
    assert conv.to_connect_data(TOPIC, data).value == ts.replace(microsecond=678000)
    assert conv.to_connect_data(
        TOPIC, conv.from_connect_data(TOPIC, Decimal.schema(2), decimal.Decimal("-0.01"))
    ).value == decimal.Decimal("-0.01")


def java_utf8(text: str) -> bytes:
    """A JSON string as Jackson writes it, char by UTF-16 char (the model for ``jackson_utf8``)."""
    out = []
    for char in json_string(text):
        units = char.encode("utf-16-be", "surrogatepass")
        if len(units) == 4 or 0xD800 <= ord(char) <= 0xDFFF:
            for i in range(0, len(units), 2):
                out.append(b"\\u%04X" % int.from_bytes(units[i : i + 2], "big"))
        else:
            out.append(char.encode("utf-8"))
    return b"".join(out)


ANY_CHARS = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)


@pytest.mark.parametrize("kind_check", [True, False], ids=["kind-check", "byte-scan"])
@SETTINGS
@given(text=ANY_CHARS)
def test_strings_are_written_as_jackson_writes_them(text: str, kind_check: bool) -> None:
    expected = java_utf8(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_json_text, "_KIND_CHECK", kind_check)
        assert jackson_utf8(json_string(text)) == expected
        data = converter(**{"schemas.enable": "false"}).from_connect_data(
            TOPIC, Schema.STRING_SCHEMA, text
        )
    assert data == expected
    assert not any(b >= 0xF0 for b in data)  # no 4-byte UTF-8 sequence is ever written
    for flag in (True, False):
        back = converter(flag, **{"schemas.enable": "false"}).to_connect_data(TOPIC, data).value
        # Java strings are UTF-16: a surrogate pair comes back as the character it encodes.
        assert back == text.encode("utf-16-be", "surrogatepass").decode(
            "utf-16-be", "surrogatepass"
        )


@SETTINGS
@given(
    number=st.integers(-(2**63), 2**63 - 1)
    | st.decimals(-(10**9), 10**9, allow_nan=False, allow_infinity=False, places=3),
    zeros=st.integers(1, 5),
)
def test_leading_zeros_read_as_the_number(number: int | decimal.Decimal, zeros: int) -> None:
    text = str(number) if isinstance(number, int) else f"{number:f}"
    negative = text.startswith("-")
    padded = ("-" if negative else "") + "0" * zeros + text.lstrip("-")
    expected = json.loads(text, parse_float=float)
    for flag in (True, False):
        conv = converter(flag, **{"schemas.enable": "false"})
        doc = '{"n": ' + padded + ', "s": "' + padded + '"}'
        assert conv.to_connect_data(TOPIC, doc.encode()).value == {"n": expected, "s": padded}


_ZONES = st.sampled_from(
    [
        None,
        dt.timezone.utc,
        dt.timezone(dt.timedelta(hours=5, minutes=30)),
        dt.timezone(-dt.timedelta(hours=8)),
    ]
)


@SETTINGS
@given(
    st.integers(0, 12).flatmap(
        lambda scale: st.tuples(
            st.just(scale),
            st.one_of(
                st.integers(-(10**40), 10**40).map(
                    lambda n: decimal.Decimal(n).scaleb(-scale, decimal.Context(prec=100))
                ),
                st.decimals(allow_nan=False, allow_infinity=False, places=scale),
            ),
        )
    ),
    st.datetimes(
        min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30), timezones=_ZONES
    ),
    st.dates(),
)
def test_logical_values_are_encoded_as_the_logical_types_encode_them(
    decimal_case: tuple[int, decimal.Decimal], instant: dt.datetime, day: dt.date
) -> None:
    """The inlined encoders (per schema, in the struct encoder too) give exactly
    ``Decimal.from_logical``/``Timestamp.from_logical``/``Date.from_logical``'s values."""
    scale, amount = decimal_case
    schema = (
        SchemaBuilder.struct()
        .field("amount", Decimal.schema(scale))
        .field("at", Timestamp.SCHEMA)
        .field("day", Date.SCHEMA)
        .build()
    )
    conv = converter(**{"schemas.enable": "false"})
    value = Struct(schema).put("amount", amount).put("at", instant).put("day", day)
    expected = {
        "amount": base64.b64encode(
            Decimal.from_logical(schema.field("amount").schema, amount)
        ).decode(),
        "at": Timestamp.from_logical(Timestamp.SCHEMA, instant),
        "day": Date.from_logical(Date.SCHEMA, day),
    }
    assert json.loads(conv.from_connect_data(TOPIC, schema, value)) == expected
    for name in ("amount", "at", "day"):
        field_schema = schema.field(name).schema
        single = conv.from_connect_data(TOPIC, field_schema, value.get(name))
        assert json.loads(single) == expected[name]
