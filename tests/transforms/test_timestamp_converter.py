"""TimestampConverter, ported from Kafka's TimestampConverterTest, and SimpleDateFormat."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdk.api import SourceRecord
from cdk.data import Date, Schema, SchemaBuilder, Struct, Time, Timestamp
from cdk.errors import ConfigException, ConnectException, DataException
from cdk.transforms import TimestampConverter
from cdk.transforms._date_format import SimpleDateFormat
from cdk.transforms._timestamp_converter import (
    OPTIONAL_DATE_SCHEMA,
    OPTIONAL_TIME_SCHEMA,
    OPTIONAL_TIMESTAMP_SCHEMA,
)

UTC = dt.timezone.utc
TIME = dt.time(0, 0, 1, 234000)
DATE = dt.date(1970, 1, 2)
DATE_PLUS_TIME = dt.datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=UTC)
DATE_PLUS_TIME_UNIX = 86_401_234
DATE_PLUS_TIME_UNIX_MICROS = DATE_PLUS_TIME_UNIX * 1000 + 123
DATE_PLUS_TIME_UNIX_NANOS = DATE_PLUS_TIME_UNIX_MICROS * 1000 + 456
DATE_PLUS_TIME_UNIX_SECONDS = 86_401
STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"


def value_xform(**config: Any) -> TimestampConverter[SourceRecord]:
    xform: TimestampConverter[SourceRecord] = TimestampConverter.Value()
    xform.configure({k.replace("_", "."): v for k, v in config.items()})
    return xform


def record(schema: Schema | None, value: Any) -> SourceRecord:
    return SourceRecord(None, None, "topic", 0, None, None, schema, value)


def convert(value: Any, schema: Schema | None = None, **config: Any) -> SourceRecord:
    out = value_xform(**config).apply(record(schema, value))
    assert out is not None
    return out


# -- configuration ---------------------------------------------------------------------------------
def test_config_no_target_type() -> None:
    with pytest.raises(ConfigException, match=r"target\.type"):
        TimestampConverter.Value().configure({})


def test_config_invalid_target_type() -> None:
    with pytest.raises(ConfigException, match=r"target\.type"):
        TimestampConverter.Value().configure({"target.type": "invalid"})


def test_config_invalid_unix_precision() -> None:
    with pytest.raises(ConfigException, match=r"unix\.precision"):
        TimestampConverter.Value().configure({"target.type": "unix", "unix.precision": "invalid"})


def test_config_valid_unix_precision() -> None:
    TimestampConverter.Value().configure({"target.type": "unix", "unix.precision": "seconds"})


def test_config_missing_format() -> None:
    with pytest.raises(ConfigException, match="requires format option") as info:
        TimestampConverter.Value().configure({"target.type": "string"})
    assert info.value.name == "format"


@pytest.mark.parametrize("pattern", ["bad-format", "yyyy 'unterminated", "XXXX"])
def test_config_invalid_format(pattern: str) -> None:
    with pytest.raises(ConfigException, match="SimpleDateFormat-compatible pattern") as info:
        TimestampConverter.Value().configure({"target.type": "string", "format": pattern})
    assert info.value.name == "format"


@pytest.mark.parametrize("letter", ["Y", "w", "W", "F"])
def test_config_unsupported_pattern_letter(letter: str) -> None:
    with pytest.raises(ConfigException, match=f"'{letter}'.*not supported") as info:
        TimestampConverter.Value().configure({"target.type": "string", "format": f"yyyy {letter}"})
    assert info.value.name == "format"


def test_config_def_keys() -> None:
    keys = TimestampConverter.Value().config().config_keys()
    assert list(keys) == [
        "field",
        "target.type",
        "format",
        "unix.precision",
        "replace.null.with.default",
    ]


# -- schemaless: Timestamp -> other types ----------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("Timestamp", DATE_PLUS_TIME),
        ("Date", DATE),
        ("Time", TIME),
        ("unix", DATE_PLUS_TIME_UNIX),
    ],
)
def test_schemaless_timestamp_to(target: str, expected: Any) -> None:
    out = convert(DATE_PLUS_TIME, target_type=target)
    assert out.value_schema is None
    assert out.value == expected
    assert type(out.value) is type(expected)


def test_schemaless_timestamp_to_string() -> None:
    out = convert(DATE_PLUS_TIME, target_type="string", format=STRING_DATE_FMT)
    assert out.value_schema is None
    assert out.value == DATE_PLUS_TIME_STRING


# -- schemaless: core types -> Timestamp -----------------------------------------------------------
def test_schemaless_date_to_timestamp() -> None:
    assert convert(DATE, target_type="Timestamp").value == dt.datetime(1970, 1, 2, tzinfo=UTC)


def test_schemaless_time_to_timestamp() -> None:
    expected = dt.datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC)
    assert convert(TIME, target_type="Timestamp").value == expected


def test_schemaless_unix_to_timestamp() -> None:
    assert convert(DATE_PLUS_TIME_UNIX, target_type="Timestamp").value == DATE_PLUS_TIME


def test_schemaless_string_to_timestamp() -> None:
    out = convert(DATE_PLUS_TIME_STRING, target_type="Timestamp", format=STRING_DATE_FMT)
    assert out.value == DATE_PLUS_TIME


# -- with schema: Timestamp -> other types ---------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "schema", "expected"),
    [
        ("Timestamp", Timestamp.SCHEMA, DATE_PLUS_TIME),
        ("Date", Date.SCHEMA, DATE),
        ("Time", Time.SCHEMA, TIME),
        ("unix", Schema.INT64_SCHEMA, DATE_PLUS_TIME_UNIX),
    ],
)
def test_with_schema_timestamp_to(target: str, schema: Schema, expected: Any) -> None:
    out = convert(DATE_PLUS_TIME, Timestamp.SCHEMA, target_type=target)
    assert out.value_schema == schema
    assert out.value == expected


def test_with_schema_timestamp_to_string() -> None:
    out = convert(DATE_PLUS_TIME, Timestamp.SCHEMA, target_type="string", format=STRING_DATE_FMT)
    assert out.value_schema == Schema.STRING_SCHEMA
    assert out.value == DATE_PLUS_TIME_STRING


# -- with schema: core types -> Timestamp ----------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (Date.SCHEMA, DATE, dt.datetime(1970, 1, 2, tzinfo=UTC)),
        (Time.SCHEMA, TIME, dt.datetime(1970, 1, 1, 0, 0, 1, 234000, tzinfo=UTC)),
        (Schema.INT64_SCHEMA, DATE_PLUS_TIME_UNIX, DATE_PLUS_TIME),
    ],
)
def test_with_schema_to_timestamp(schema: Schema, value: Any, expected: dt.datetime) -> None:
    out = convert(value, schema, target_type="Timestamp")
    assert out.value_schema == Timestamp.SCHEMA
    assert out.value == expected


def test_with_schema_string_to_timestamp() -> None:
    out = convert(
        DATE_PLUS_TIME_STRING, Schema.STRING_SCHEMA, target_type="Timestamp", format=STRING_DATE_FMT
    )
    assert out.value_schema == Timestamp.SCHEMA
    assert out.value == DATE_PLUS_TIME


# -- null values -----------------------------------------------------------------------------------
TARGETS = ["string", "unix", "Date", "Time", "Timestamp"]
OPTIONAL_SOURCES = [
    Schema.OPTIONAL_INT64_SCHEMA,
    OPTIONAL_TIME_SCHEMA,
    OPTIONAL_DATE_SCHEMA,
    Schema.OPTIONAL_STRING_SCHEMA,
    OPTIONAL_TIMESTAMP_SCHEMA,
]
EXPECTED_OPTIONAL = {
    "string": Schema.OPTIONAL_STRING_SCHEMA,
    "unix": Schema.OPTIONAL_INT64_SCHEMA,
    "Date": OPTIONAL_DATE_SCHEMA,
    "Time": OPTIONAL_TIME_SCHEMA,
    "Timestamp": OPTIONAL_TIMESTAMP_SCHEMA,
}


@pytest.mark.parametrize("target", TARGETS)
def test_schemaless_null_value_and_field(target: str) -> None:
    for extra in ({}, {"field": "ts"}):
        out = convert(None, None, target_type=target, format=STRING_DATE_FMT, **extra)
        assert out.value_schema is None
        assert out.value is None


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", OPTIONAL_SOURCES, ids=repr)
def test_with_schema_null_value(target: str, source: Schema) -> None:
    out = convert(None, source, target_type=target, format=STRING_DATE_FMT)
    assert out.value_schema == EXPECTED_OPTIONAL[target]
    assert out.value is None


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", OPTIONAL_SOURCES, ids=repr)
def test_with_schema_null_field(target: str, source: Schema) -> None:
    xform = value_xform(target_type=target, format=STRING_DATE_FMT, field="ts")
    struct_schema = SchemaBuilder.struct().field("ts", source).field("other", Schema.STRING_SCHEMA)
    expected = (
        SchemaBuilder.struct()
        .field("ts", EXPECTED_OPTIONAL[target])
        .field("other", Schema.STRING_SCHEMA)
    )
    original = Struct(struct_schema.build()).put("ts", None).put("other", "test")
    out = xform.apply(record(struct_schema.build(), original))
    assert out is not None
    assert out.value_schema == expected.build()
    assert out.value.get("ts") is None
    # the whole struct is null
    out = xform.apply(record(struct_schema.optional().build(), None))
    assert out is not None
    assert out.value_schema == expected.optional().build()
    assert out.value is None


# -- converting a field ----------------------------------------------------------------------------
def test_schemaless_field_conversion() -> None:
    out = convert({"ts": DATE_PLUS_TIME}, target_type="Date", field="ts")
    assert out.value_schema is None
    assert out.value == {"ts": DATE}


def test_schemaless_missing_field_becomes_null() -> None:
    out = convert({"other": 1}, target_type="Date", field="ts")
    assert out.value == {"other": 1, "ts": None}


def test_schemaless_field_needs_a_map() -> None:
    with pytest.raises(DataException, match=r"Only Map objects supported .*converting timestamp"):
        convert(42, target_type="Date", field="ts")


def test_with_schema_field_conversion() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("ts", Schema.INT64_SCHEMA)
        .field("other", Schema.STRING_SCHEMA)
        .build()
    )
    original = Struct(schema).put("ts", DATE_PLUS_TIME_UNIX).put("other", "test")
    out = convert(original, schema, target_type="Timestamp", field="ts")
    expected = (
        SchemaBuilder.struct()
        .field("ts", Timestamp.SCHEMA)
        .field("other", Schema.STRING_SCHEMA)
        .build()
    )
    assert out.value_schema == expected
    assert out.value.get("ts") == DATE_PLUS_TIME
    assert out.value.get("other") == "test"


@pytest.mark.parametrize(
    ("precision", "raw", "expected"),
    [
        ("microseconds", DATE_PLUS_TIME_UNIX_MICROS, DATE_PLUS_TIME),
        ("nanoseconds", DATE_PLUS_TIME_UNIX_NANOS, DATE_PLUS_TIME),
        ("seconds", DATE_PLUS_TIME_UNIX_SECONDS, dt.datetime(1970, 1, 2, 0, 0, 1, tzinfo=UTC)),
    ],
)
def test_with_schema_field_conversion_precision(
    precision: str, raw: int, expected: dt.datetime
) -> None:
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).build()
    out = convert(
        Struct(schema).put("ts", raw),
        schema,
        target_type="Timestamp",
        field="ts",
        unix_precision=precision,
    )
    assert out.value_schema == SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).build()
    assert out.value.get("ts") == expected


@pytest.mark.parametrize(
    ("precision", "expected"),
    [
        ("microseconds", 86_401_234_000),
        ("nanoseconds", 86_401_234_000_000),
        ("seconds", DATE_PLUS_TIME_UNIX_SECONDS),
        ("milliseconds", DATE_PLUS_TIME_UNIX),
    ],
)
def test_schemaless_string_to_unix_precision(precision: str, expected: int) -> None:
    out = convert(
        DATE_PLUS_TIME_STRING, target_type="unix", unix_precision=precision, format=STRING_DATE_FMT
    )
    assert out.value == expected


def test_negative_unix_values_truncate_toward_zero() -> None:
    out = convert(-1500, target_type="unix", unix_precision="microseconds")
    assert out.value == -1000  # -1500 us is -1 ms (Java truncation), written back as us


def test_key() -> None:
    xform: TimestampConverter[SourceRecord] = TimestampConverter.Key()
    xform.configure({"target.type": "Timestamp"})
    out = xform.apply(SourceRecord(None, None, "topic", 0, None, DATE_PLUS_TIME, None, None))
    assert out is not None
    assert out.key_schema is None
    assert out.key == DATE_PLUS_TIME
    assert out.value is None


# -- replace.null.with.default ---------------------------------------------------------------------
@pytest.mark.parametrize(("replace", "expected"), [(True, DATE_PLUS_TIME), (False, None)])
def test_replace_null_with_default(replace: bool, expected: dt.datetime | None) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("ts", SchemaBuilder.int64().optional().default_value(DATE_PLUS_TIME_UNIX))
        .field("n", SchemaBuilder.int32().optional().default_value(7))
        .build()
    )
    out = convert(
        Struct(schema),
        schema,
        target_type="Timestamp",
        field="ts",
        replace_null_with_default=str(replace).lower(),
    )
    assert out.value.get_without_default("ts") == expected
    assert out.value.get_without_default("n") == (7 if replace else None)


def test_struct_default_value_is_converted() -> None:
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).optional().build()
    # a struct default must be a Struct of the schema itself, so it is attached after building
    schema.default_value = Struct(schema).put("ts", DATE_PLUS_TIME_UNIX)
    out = convert(None, schema, target_type="Timestamp", field="ts")
    assert out.value_schema.optional
    assert out.value_schema.default_value.get("ts") == DATE_PLUS_TIME
    assert out.value is None


# -- errors ----------------------------------------------------------------------------------------
def test_unparseable_string() -> None:
    with pytest.raises(DataException, match=r"Could not parse timestamp: value \(nope\)"):
        convert("nope", target_type="Timestamp", format="yyyy-MM-dd")


def test_string_input_without_format() -> None:
    with pytest.raises(DataException, match="format"):
        convert("2020-01-01", target_type="Timestamp")


def test_unsupported_schemaless_type() -> None:
    with pytest.raises(DataException, match="does not support class float objects"):
        convert(1.5, target_type="Timestamp")


def test_schema_of_unknown_timestamp_type() -> None:
    with pytest.raises(ConnectException, match=r"Schema\{INT32\} does not correspond"):
        convert(5, Schema.INT32_SCHEMA, target_type="Timestamp")


def test_wrong_python_type_for_schema() -> None:
    with pytest.raises(DataException, match="Expected Unix timestamp to be a Long"):
        convert("x", Schema.OPTIONAL_INT64_SCHEMA, target_type="Timestamp", field="")


def test_schema_cache_reuses_derived_schema() -> None:
    xform = value_xform(target_type="unix", field="ts")
    schema = SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).build()
    first = xform.apply(record(schema, Struct(schema).put("ts", DATE_PLUS_TIME)))
    second = xform.apply(record(schema, Struct(schema).put("ts", DATE_PLUS_TIME)))
    assert first is not None
    assert second is not None
    assert first.value_schema is second.value_schema
    assert second.value.get("ts") == DATE_PLUS_TIME_UNIX


# -- SimpleDateFormat ------------------------------------------------------------------------------
MOMENT = dt.datetime(2017, 1, 3, 6, 30, 1, 864000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("yyyyMMdd", "20170103"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2017-01-03T06:30:01.864Z"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2017-01-03T06:30:01.864+0000"),
        ("yy/M/d", "17/1/3"),
        ("EEE, d MMM yyyy HH:mm:ss z", "Tue, 3 Jan 2017 06:30:01 UTC"),
        ("EEEE MMMM dd G", "Tuesday January 03 AD"),
        ("h:mm a, k K", "6:30 AM, 6 6"),
        ("D u", "3 2"),
        ("'o''clock' ''", "o'clock '"),
        ("zzzz", "Coordinated Universal Time"),
    ],
)
def test_simple_date_format_format(pattern: str, expected: str) -> None:
    assert SimpleDateFormat(pattern).format(MOMENT) == expected


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyyMMdd", "20170103", dt.datetime(2017, 1, 3, tzinfo=UTC)),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2017-01-03T06:30:01.864Z", MOMENT),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2017-01-03T08:30:01.864+02:00", MOMENT),
        ("yyyy-MM-dd HH:mm:ss Z", "2017-01-03 01:30:01 -0500", MOMENT.replace(microsecond=0)),
        ("dd MMM yyyy", "03 jan 2017", dt.datetime(2017, 1, 3, tzinfo=UTC)),
        ("dd MMMM yyyy", "03 January 2017", dt.datetime(2017, 1, 3, tzinfo=UTC)),
        ("hh:mm a", "06:30 PM", dt.datetime(1970, 1, 1, 18, 30, tzinfo=UTC)),
        ("hh:mm a", "12:15 AM", dt.datetime(1970, 1, 1, 0, 15, tzinfo=UTC)),
        ("yyyy-MM-dd", "2021-02-30", dt.datetime(2021, 3, 2, tzinfo=UTC)),  # lenient roll-over
        ("yyyy-MM-dd", "2021-02-03 trailing", dt.datetime(2021, 2, 3, tzinfo=UTC)),
        ("yyyy D", "2020 60", dt.datetime(2020, 2, 29, tzinfo=UTC)),
        ("HH:mm z", "10:00 GMT+01:00", dt.datetime(1970, 1, 1, 9, 0, tzinfo=UTC)),
    ],
)
def test_simple_date_format_parse(pattern: str, text: str, expected: dt.datetime) -> None:
    assert SimpleDateFormat(pattern).parse(text) == expected


def test_simple_date_format_two_digit_year_window() -> None:
    this_year = dt.datetime.now(UTC).year
    parsed = SimpleDateFormat("yy").parse(f"{(this_year + 1) % 100:02d}")
    assert parsed.year == this_year + 1
    parsed = SimpleDateFormat("yy").parse(f"{(this_year - 50) % 100:02d}")
    assert parsed.year == this_year - 50


@pytest.mark.parametrize("text", ["", "2017", "x20170103"])
def test_simple_date_format_parse_errors(text: str) -> None:
    with pytest.raises(ValueError, match="Unparseable date"):
        SimpleDateFormat("yyyyMMdd").parse(text)


def test_simple_date_format_illegal_letter() -> None:
    with pytest.raises(ValueError, match="Illegal pattern character 'b'"):
        SimpleDateFormat("bad")


@given(
    st.datetimes(
        min_value=dt.datetime(1000, 1, 1),
        max_value=dt.datetime(9999, 12, 31),
        timezones=st.just(UTC),
    )
)
def test_simple_date_format_round_trip(moment: dt.datetime) -> None:
    moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    fmt = SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
    assert fmt.parse(fmt.format(moment)) == moment


@given(st.integers(min_value=-(2**40), max_value=2**40))
def test_unix_millis_round_trip_through_string(millis: int) -> None:
    to_string = value_xform(target_type="string", format="yyyy-MM-dd HH:mm:ss.SSS")
    back = value_xform(target_type="unix", format="yyyy-MM-dd HH:mm:ss.SSS")
    text = to_string.apply(record(None, millis))
    assert text is not None
    out = back.apply(record(None, text.value))
    assert out is not None
    assert out.value == millis
