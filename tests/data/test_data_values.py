"""Values: conversions and the string syntax, ported from Kafka's ValuesTest."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

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
    Values,
)
from cdk.errors import DataException

UTC = dt.timezone.utc
WHITESPACE = "\n \t \t\n"
STRING_MAP = {"foo": "123", "bar": "baz"}
STRING_SHORT_MAP = {"foo": 12345, "bar": 0, "baz": -4321}
STRING_INT_MAP = {"foo": 1234567890, "bar": 0, "baz": -987654321}


def parse(text: str | None) -> SchemaAndValue:
    return Values.parse_string(text)


@pytest.mark.parametrize(
    "text",
    [
        "\uffff",
        "{foo: 3}",
        "{3: foo}",
        "[foo]",
        "null=",
        "true}",
        "false]",
        "{6:9 4:20}",
        "[0 1 2]",
        "{null: 3}",
        "[1, 2, 3,,,]",
        "1,2",
        "[1, 2] and more",
        '"quoted"',
        ".5",
        "NaN",
        "-Infinity",
        "2019-02-30",
        "  ",
        "",
        "simple string",
        "si\\{mple",
        "'simple' string",
    ],
)
def test_strings_that_are_nothing_else_stay_strings(text: str) -> None:
    assert parse(text) == SchemaAndValue(Schema.STRING_SCHEMA, text)


def test_literals() -> None:
    assert parse(WHITESPACE + "true" + WHITESPACE) == SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
    assert parse(WHITESPACE + "false" + WHITESPACE) == SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
    assert parse(WHITESPACE + "null" + WHITESPACE) is SchemaAndValue.NULL
    assert parse("null") is SchemaAndValue.NULL
    assert parse(None) is SchemaAndValue.NULL


def test_boolean_literals_in_array_and_map() -> None:
    result = parse("[true, false]")
    assert result.schema == SchemaBuilder.array(Schema.BOOLEAN_SCHEMA).build()
    assert result.value == [True, False]
    result = parse("{true: false, false: true}")
    assert result.schema is not None
    assert result.schema.key_schema.type is SchemaType.BOOLEAN
    assert result.schema.value_schema.type is SchemaType.BOOLEAN
    assert result.value == {True: False, False: True}


def test_empty_containers_have_no_element_schema() -> None:
    cases: list[tuple[str, SchemaType, Any]] = [
        ("{}", SchemaType.MAP, {}),
        ("[]", SchemaType.ARRAY, []),
    ]
    for text, stype, value in cases:
        result = parse(text)
        assert result.schema is not None
        assert result.schema.type is stype
        assert result.value == value
        with pytest.raises(DataException, match="No schema defined"):
            result.schema.value_schema  # noqa: B018


def test_null_elements() -> None:
    result = parse("{3: null}")
    assert result.schema is not None
    assert result.schema.key_schema.type is SchemaType.INT8
    assert result.value == {3: None}
    result = parse("[null]")
    assert result.schema is not None
    assert result.schema.type is SchemaType.ARRAY
    assert result.value == [None]
    result = parse("[1, null]")
    assert result.schema == SchemaBuilder.array(Schema.OPTIONAL_INT8_SCHEMA).build()
    assert result.value == [1, None]


def test_numeric_elements_widen_to_the_largest_type() -> None:
    result = parse(f"[1, 2, {2**15}]")
    assert result.schema == SchemaBuilder.array(Schema.INT32_SCHEMA).build()
    assert result.value == [1, 2, 32768]
    result = parse("[1, 2.5]")
    assert result.schema == SchemaBuilder.array(Schema.FLOAT32_SCHEMA).build()
    assert result.value == [1.0, 2.5]
    assert isinstance(result.value[0], float)
    result = parse("[[1], [300]]")
    inner = SchemaBuilder.array(Schema.INT16_SCHEMA).build()
    assert result.schema == SchemaBuilder.array(inner).build()


def test_mixed_elements_have_no_common_schema() -> None:
    assert Values.convert_to_list(Schema.STRING_SCHEMA, '[1, 2, "three"]') == [1, 2, "three"]
    result = parse('[1, 2, 3, "four"]')
    assert result.schema is not None
    assert result.schema.type is SchemaType.ARRAY
    assert result.value == [1, 2, 3, "four"]
    with pytest.raises(DataException):
        result.schema.value_schema  # noqa: B018


def test_escape_and_quoted_strings() -> None:
    assert Values.convert_to_string(None, ['three"blind\\"mice']) == '["three\\"blind\\\\\\"mice"]'
    original = ["a, b", ' x " y ', "\\", "{}[]:,"]
    assert parse(Values.convert_to_string(None, original)).value == original


@pytest.mark.parametrize(
    "value", ["null", "simple", "", 'three"blind\\"mice', "string with delimiters: <>?,./\\=+-!@#"]
)
def test_top_level_strings_are_written_as_is(value: str) -> None:
    assert Values.convert_to_string(Schema.STRING_SCHEMA, value) == value
    assert Values.convert_to_string(Schema.STRING_SCHEMA, None) is None


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build(), STRING_MAP),
        (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT16_SCHEMA).build(), STRING_SHORT_MAP),
        (SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), STRING_INT_MAP),
        (SchemaBuilder.array(Schema.STRING_SCHEMA).build(), ["foo", "bar"]),
        (SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1234567890, -987654321]),
    ],
)
def test_round_trip_containers(schema: Schema, value: Any) -> None:
    text = Values.convert_to_string(schema, value)
    assert text is not None
    result = parse(text)
    assert result == SchemaAndValue(schema, value)
    if schema.type is SchemaType.MAP:
        assert Values.convert_to_map(Schema.STRING_SCHEMA, text) == value
    else:
        assert Values.convert_to_list(Schema.STRING_SCHEMA, text) == value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"foo":"123","bar":"baz"}', STRING_MAP),
        ('{ "foo" : "123", \n"bar" : "baz" } ', STRING_MAP),
        ('{"foo":12345,"bar":0,"baz":-4321}', STRING_SHORT_MAP),
        (' { "foo" :  12345 , "bar" : 0,  "baz" : -4321 }  ', STRING_SHORT_MAP),
        (' { "foo" :  1234567890 , "bar" : 0,  "baz" : -987654321 }  ', STRING_INT_MAP),
    ],
)
def test_parse_maps(text: str, expected: dict[str, Any]) -> None:
    assert parse(text).value == expected
    assert Values.convert_to_map(None, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        ' { "foo" :  1234567890 ,, "bar" : 0,  "baz" : -987654321 }  ',
        ' { "foo" :  1234567890 , "a", "bar" : 0,  "baz" : -987654321 }  ',
        " { ,,  , , }  ",
        ' { "foo" :  "1234567890" ,, "bar" : "0",  "baz" : "boz" }  ',
    ],
)
def test_malformed_maps_fail_to_convert(text: str) -> None:
    with pytest.raises(DataException, match="Unable to convert"):
        Values.convert_to_map(Schema.STRING_SCHEMA, text)


@pytest.mark.parametrize("text", ["[1, 2, 3,,,]", '[1, 2, 3, "four",,,]'])
def test_malformed_lists_fail_to_convert(text: str) -> None:
    with pytest.raises(DataException, match=r"Unable to convert .* to Schema\{ARRAY\}"):
        Values.convert_to_list(Schema.STRING_SCHEMA, text)


def test_temporal_strings() -> None:
    stamp = dt.datetime(2019, 8, 23, 14, 34, 54, 346000, tzinfo=UTC)
    assert parse("2019-08-23T14:34:54.346Z") == SchemaAndValue(Timestamp.SCHEMA, stamp)
    assert parse("2019-08-23T14\\:34\\:54.346Z") == SchemaAndValue(Timestamp.SCHEMA, stamp)
    assert parse("2019-08-23") == SchemaAndValue(Date.SCHEMA, dt.date(2019, 8, 23))
    time = dt.time(14, 34, 54, 346000)
    assert parse("14:34:54.346Z") == SchemaAndValue(Time.SCHEMA, time)
    assert parse("14\\:34\\:54.346Z") == SchemaAndValue(Time.SCHEMA, time)


def test_temporal_strings_in_containers() -> None:
    assert parse("[2019-08-23]") == SchemaAndValue(
        SchemaBuilder.array(Date.SCHEMA).build(), [dt.date(2019, 8, 23)]
    )
    assert parse("[14:34:54.346Z]").value == [dt.time(14, 34, 54, 346000)]
    many = parse("[2019-08-23T14:34:54.346Z,2019-01-23T15:12:34.567Z,   2019-04-23T19:12:34.567Z]")
    assert many.schema == SchemaBuilder.array(Timestamp.SCHEMA).build()
    assert many.value[1] == dt.datetime(2019, 1, 23, 15, 12, 34, 567000, tzinfo=UTC)
    for text in ['{"k1":"14:34:54.346Z"}', '{"k1":14:34:54.346Z}']:
        result = parse(text)
        assert result.schema == SchemaBuilder.map(Schema.STRING_SCHEMA, Time.SCHEMA).build()
        assert result.value == {"k1": dt.time(14, 34, 54, 346000)}


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("127", Schema.INT8_SCHEMA, 127),
        ("-128", Schema.INT8_SCHEMA, -128),
        ("32767", Schema.INT16_SCHEMA, 32767),
        ("-32768", Schema.INT16_SCHEMA, -32768),
        ("2147483647", Schema.INT32_SCHEMA, 2**31 - 1),
        ("-2147483648", Schema.INT32_SCHEMA, -(2**31)),
        ("9223372036854775807", Schema.INT64_SCHEMA, 2**63 - 1),
        ("-9223372036854775808", Schema.INT64_SCHEMA, -(2**63)),
        ("+5", Schema.INT8_SCHEMA, 5),
        ("1.0", Schema.INT8_SCHEMA, 1),
        ("1.5", Schema.FLOAT32_SCHEMA, 1.5),
        ("3.4028235E38", Schema.FLOAT32_SCHEMA, 3.4028235e38),
        ("-3.4028235E38", Schema.FLOAT32_SCHEMA, -3.4028235e38),
        ("1.7976931348623157E308", Schema.FLOAT64_SCHEMA, 1.7976931348623157e308),
        ("-1.7976931348623157E308", Schema.FLOAT64_SCHEMA, -1.7976931348623157e308),
    ],
)
def test_numbers_take_the_narrowest_type(text: str, schema: Schema, value: Any) -> None:
    result = parse(text)
    assert result.schema == schema
    assert result.value == value
    assert type(result.value) is type(value)


def test_big_integers_become_decimals_of_scale_zero() -> None:
    for number in (2**63, -(2**63) - 1):
        result = parse(str(number))
        assert result.schema == Decimal.schema(0)
        assert result.value == decimal.Decimal(number)


def test_huge_exponents_do_not_hang() -> None:
    result = parse("1e999999999")
    assert result.schema is not None
    assert result.schema.name == Decimal.LOGICAL_NAME
    with pytest.raises(DataException):
        Values.convert_to_long(None, "1e999999999")


def test_convert_booleans() -> None:
    assert Values.convert_to_boolean(Schema.STRING_SCHEMA, "true") is True
    assert Values.convert_to_boolean(Schema.STRING_SCHEMA, "false") is False
    assert Values.convert_to_boolean(None, 0) is False
    assert Values.convert_to_boolean(None, 12) is True
    assert Values.convert_to_boolean(None, "0") is False
    assert Values.convert_to_boolean(None, None) is None
    with pytest.raises(DataException) as info:
        Values.convert_to_boolean(Schema.STRING_SCHEMA, '"green"')
    assert str(info.value) == 'Unable to convert "green" (class str) to Schema{BOOLEAN}'


def test_convert_integers() -> None:
    assert Values.convert_to_byte(None, "12") == 12
    assert Values.convert_to_short(None, 12.9) == 12
    assert Values.convert_to_integer(None, decimal.Decimal("-7.9")) == -7
    assert Values.convert_to_long(None, "1.9e3") == 1900
    assert Values.convert_to_long(Date.SCHEMA, dt.date(1970, 1, 11)) == 10
    assert Values.convert_to_long(Time.SCHEMA, dt.time(0, 0, 1)) == 1000
    stamp = dt.datetime(1970, 1, 1, 0, 0, 2, tzinfo=UTC)
    assert Values.convert_to_long(Timestamp.SCHEMA, stamp) == 2000
    with pytest.raises(DataException) as info:
        Values.convert_to_byte(None, 300)
    assert str(info.value) == (
        "Unable to convert 300 (class int) to Schema{INT8}: 300 is out of range [-128, 127]"
    )
    with pytest.raises(
        DataException, match=r"Unable to convert abc \(class str\) to Schema\{INT32"
    ):
        Values.convert_to_integer(None, "abc")
    with pytest.raises(DataException, match="class bool"):
        Values.convert_to_long(None, True)
    with pytest.raises(DataException):
        Values.convert_to_long(None, math.nan)
    with pytest.raises(DataException):
        Values.convert_to_long(None, [1])


def test_convert_floats() -> None:
    assert Values.convert_to_float(None, "1.5") == 1.5
    assert Values.convert_to_double(None, 3) == 3.0
    assert isinstance(Values.convert_to_double(None, 3), float)
    assert Values.convert_to_double(None, decimal.Decimal("2.5")) == 2.5
    assert Values.convert_to_double(Date.SCHEMA, dt.date(1970, 1, 3)) == 2.0
    with pytest.raises(DataException):
        Values.convert_to_double(None, "NaN")


def test_convert_decimal() -> None:
    assert Values.convert_to_decimal(None, b"\x00\x9c", 2) == decimal.Decimal("1.56")
    assert Values.convert_to_decimal(None, "1.56", 2) == decimal.Decimal("1.56")
    assert Values.convert_to_decimal(None, 1.5, 1) == decimal.Decimal("1.5")
    assert Values.convert_to_decimal(None, 7, 0) == decimal.Decimal(7)
    with pytest.raises(DataException):
        Values.convert_to_decimal(None, "x", 2)


def test_convert_time_values() -> None:
    now = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    millis = ((7 * 60 + 8) * 60 + 9) * 1000 + 123
    assert Values.convert_to_time(Time.SCHEMA, now.time()) == now.time()
    assert Values.convert_to_time(Timestamp.SCHEMA, now) == now.time()
    assert Values.convert_to_time(Time.SCHEMA, str(millis)) == now.time()
    assert Values.convert_to_time(Time.SCHEMA, millis) == now.time()
    assert Values.convert_to_time(None, "07:08:09.123Z") == now.time()
    with pytest.raises(DataException):
        Values.convert_to_time(None, dt.date(2024, 1, 1))


def test_convert_date_values() -> None:
    now = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    days = (now.date() - dt.date(1970, 1, 1)).days
    assert Values.convert_to_date(Date.SCHEMA, now.date()) == now.date()
    assert Values.convert_to_date(Timestamp.SCHEMA, now) == now.date()
    assert Values.convert_to_date(Date.SCHEMA, str(days)) == now.date()
    assert Values.convert_to_date(Date.SCHEMA, days) == now.date()
    assert Values.convert_to_date(None, "2024-05-06") == now.date()


def test_convert_timestamp_values() -> None:
    now = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    millis = 1714979289123
    assert Values.convert_to_timestamp(Timestamp.SCHEMA, now) == now
    midnight = dt.datetime(2024, 5, 6, tzinfo=UTC)
    assert Values.convert_to_timestamp(Date.SCHEMA, now.date()) == midnight
    assert Values.convert_to_timestamp(Time.SCHEMA, dt.time(0, 0, 1)) == dt.datetime(
        1970, 1, 1, 0, 0, 1, tzinfo=UTC
    )
    assert Values.convert_to_timestamp(Timestamp.SCHEMA, str(millis)) == now
    assert Values.convert_to_timestamp(Timestamp.SCHEMA, millis) == now
    assert Values.convert_to_timestamp(None, "2024-05-06T07:08:09.123Z") == now


def test_convert_struct_list_map() -> None:
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    struct = Struct(schema).put("a", 1)
    assert Values.convert_to_struct(schema, struct) is struct
    with pytest.raises(DataException, match=r"to Schema\{STRUCT\}"):
        Values.convert_to_struct(None, "{}")
    assert Values.convert_to_string(schema, struct) == '{"a":1}'
    assert Values.convert_to_list(None, (1, 2)) == [1, 2]
    with pytest.raises(DataException, match=r"to Schema\{MAP\}"):
        Values.convert_to_map(None, 5)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (1234567.0, "1234567.0"),
        (1e7, "1.0E7"),
        (1.5e-5, "1.5E-5"),
        (-2.5e300, "-2.5E300"),
        (-0.0, "-0.0"),
        (math.inf, "Infinity"),
        (math.nan, "NaN"),
        (True, "true"),
        (12, "12"),
        (decimal.Decimal("1.56"), "1.56"),
        (b"\x00\x9c", "AJw="),
        ([b"\x00\x9c", None], '["AJw=",null]'),
        ({"a": [1, 2]}, '{"a":[1,2]}'),
        (dt.date(2019, 8, 23), "2019-08-23"),
        (dt.time(14, 34, 54, 346999), "14:34:54.346Z"),
        (dt.datetime(2019, 8, 23, 14, 34, 54, 346000, tzinfo=UTC), "2019-08-23T14:34:54.346Z"),
        (dt.datetime(2019, 8, 23, 14, 34, 54), "2019-08-23T14:34:54.000Z"),
        (
            dt.datetime(2019, 8, 23, 16, 34, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "2019-08-23T14:34:00.000Z",
        ),
    ],
)
def test_convert_to_string_formats(value: Any, text: str) -> None:
    assert Values.convert_to_string(None, value) == text


def test_convert_to_string_rejects_unknown_types() -> None:
    with pytest.raises(DataException, match="Failed to serialize unexpected value type object"):
        Values.convert_to_string(None, object())


def test_infer_schema() -> None:
    assert Values.infer_schema("a") == Schema.STRING_SCHEMA
    assert Values.infer_schema(True) == Schema.BOOLEAN_SCHEMA
    assert Values.infer_schema(5) == Schema.INT64_SCHEMA
    assert Values.infer_schema(2**64) is None
    assert Values.infer_schema(5.0) == Schema.FLOAT64_SCHEMA
    assert Values.infer_schema(bytearray(b"x")) == Schema.BYTES_SCHEMA
    assert Values.infer_schema(decimal.Decimal("1.50")) == Decimal.schema(2)
    assert Values.infer_schema(dt.date(2020, 1, 1)) == Date.SCHEMA
    assert Values.infer_schema(dt.time(1, 2)) == Time.SCHEMA
    assert Values.infer_schema(dt.datetime(2020, 1, 1)) == Timestamp.SCHEMA
    assert Values.infer_schema([]) is None
    assert Values.infer_schema([None]) is None
    assert Values.infer_schema([1, "a"]) is None
    assert (
        Values.infer_schema([1, None]) == SchemaBuilder.array(Schema.OPTIONAL_INT64_SCHEMA).build()
    )
    assert Values.infer_schema({"a": dt.date(2020, 1, 1)}) == (
        SchemaBuilder.map(Schema.STRING_SCHEMA, Date.SCHEMA).build()
    )
    assert Values.infer_schema({}) is None
    assert Values.infer_schema(object()) is None
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    assert Values.infer_schema(Struct(schema)) is schema


# -- properties --------------------------------------------------------------------------------
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
millis = st.integers(min_value=0, max_value=999).map(lambda ms: ms * 1000)
dates = st.dates()
times = st.builds(
    dt.time,
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    millis,
)
stamps = st.builds(
    lambda d, t: dt.datetime.combine(d, t, tzinfo=UTC),
    st.dates(min_value=dt.date(1, 1, 2), max_value=dt.date(9999, 12, 30)),
    times,
)
scalars = st.one_of(st.booleans(), ints, finite_floats, dates, times, stamps)


def _plain_text(text: str) -> bool:
    return Values.parse_string(text).schema not in (Date.SCHEMA, Time.SCHEMA, Timestamp.SCHEMA)


embedded_strings = st.text().filter(_plain_text)


@given(scalars)
def test_scalar_round_trip(value: Any) -> None:
    text = Values.convert_to_string(None, value)
    assert text is not None
    result = Values.parse_string(text)
    assert result.value == value
    assert result.schema is not None


@given(
    st.one_of(
        st.lists(ints),
        st.lists(finite_floats),
        # Mixed lists widen to floats, so only exactly representable integers keep their value.
        st.lists(st.one_of(st.integers(-(2**53), 2**53), finite_floats)),
    )
)
def test_numeric_list_round_trip(value: list[Any]) -> None:
    result = Values.parse_string(Values.convert_to_string(None, value))
    assert result.value == value
    assert result.schema is not None


@given(st.lists(st.one_of(embedded_strings, st.none())))
def test_string_list_round_trip(value: list[Any]) -> None:
    result = Values.parse_string(Values.convert_to_string(None, value))
    assert result.value == value


# A map whose values mix integers and floats gets FLOAT64 values, as Kafka's Values widens them:
# its integers round-trip only where a double holds them exactly (|n| <= 2**53).
exact_ints = st.integers(min_value=-(2**53), max_value=2**53)
map_values = st.one_of(st.booleans(), exact_ints, finite_floats, dates, times, stamps)


@given(st.dictionaries(embedded_strings, st.one_of(map_values, embedded_strings, st.none())))
def test_string_keyed_map_round_trip(value: dict[str, Any]) -> None:
    result = Values.parse_string(Values.convert_to_string(None, value))
    assert result.value == value


@given(st.lists(st.lists(ints, min_size=1), min_size=1))
def test_nested_list_round_trip(value: list[list[int]]) -> None:
    result = Values.parse_string(Values.convert_to_string(None, value))
    assert result.value == value
    assert result.schema is not None


@given(st.text())
def test_top_level_words_stay_strings(text: str) -> None:
    stripped = text.strip()
    assume(stripped and stripped[0].isalpha() and stripped not in ("true", "false", "null"))
    assert Values.parse_string(text) == SchemaAndValue(Schema.STRING_SCHEMA, text)


@given(st.text())
def test_parse_string_never_raises(text: str) -> None:
    assert isinstance(Values.parse_string(text), SchemaAndValue)
