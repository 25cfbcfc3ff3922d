"""Decimal, Date, Time, Timestamp: Kafka's DecimalTest/DateTest/TimeTest/TimestampTest."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdk.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp
from cdk.errors import DataException

UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


# -- Decimal -------------------------------------------------------------------------------------
def test_decimal_builder() -> None:
    plain = Decimal.builder(2).build()
    assert plain.name == Decimal.LOGICAL_NAME
    assert dict(plain.parameters) == {"scale": "2"}
    assert plain.version == 1
    assert Decimal.schema(2) == plain
    assert Decimal.builder(2).optional().build().optional


@pytest.mark.parametrize(
    ("value", "scale", "encoded"),
    [
        (decimal.Decimal("1.56"), 2, b"\x00\x9c"),
        (decimal.Decimal("-1.56"), 2, b"\xff\x64"),
        (decimal.Decimal("0"), 0, b"\x00"),
        (decimal.Decimal("127"), 0, b"\x7f"),
        (decimal.Decimal("128"), 0, b"\x00\x80"),
        (decimal.Decimal("-128"), 0, b"\x80"),
        (decimal.Decimal("-129"), 0, b"\xff\x7f"),
        (decimal.Decimal("1E+2"), -2, b"\x01"),
    ],
)
def test_decimal_encoding_matches_java_big_integer(
    value: decimal.Decimal, scale: int, encoded: bytes
) -> None:
    schema = Decimal.schema(scale)
    assert Decimal.from_logical(schema, value) == encoded
    assert Decimal.to_logical(schema, encoded) == value


def test_decimal_to_logical_accepts_bytearray_and_keeps_every_digit() -> None:
    schema = Decimal.schema(2)
    value = decimal.Decimal("1234567890123456789012345678901234.56")
    encoded = Decimal.from_logical(schema, value)
    assert Decimal.to_logical(schema, bytearray(encoded)) == value
    assert str(Decimal.to_logical(schema, encoded)) == "1234567890123456789012345678901234.56"


def test_decimal_rescale_and_errors() -> None:
    schema = Decimal.schema(2)
    assert Decimal.to_logical(schema, Decimal.from_logical(schema, decimal.Decimal("1.5"))) == (
        decimal.Decimal("1.50")
    )
    with pytest.raises(DataException, match="cannot be rescaled without losing digits"):
        Decimal.from_logical(schema, decimal.Decimal("1.555"))
    with pytest.raises(DataException, match="Invalid Decimal value"):
        Decimal.from_logical(schema, decimal.Decimal("NaN"))
    with pytest.raises(DataException, match="Invalid Decimal value"):
        Decimal.from_logical(schema, 1.5)  # type: ignore[arg-type]
    with pytest.raises(DataException, match="scale parameter not found"):
        Decimal.scale(Schema.BYTES_SCHEMA)
    bad = SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).parameter("scale", "x").build()
    with pytest.raises(DataException, match="Invalid scale parameter found in Decimal schema: x"):
        Decimal.scale(bad)
    with pytest.raises(DataException, match="not bytes"):
        Decimal.to_logical(schema, "AJw=")  # type: ignore[arg-type]


@given(st.decimals(allow_nan=False, allow_infinity=False))
def test_decimal_round_trip_at_its_own_scale(value: decimal.Decimal) -> None:
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    schema = Decimal.schema(-exponent)
    restored = Decimal.to_logical(schema, Decimal.from_logical(schema, value))
    assert restored == value
    assert restored.as_tuple().exponent == exponent


# -- Date ------------------------------------------------------------------------------------------
def test_date_builder() -> None:
    assert Date.SCHEMA.name == Date.LOGICAL_NAME
    assert Date.SCHEMA.version == 1
    assert Date.builder().build() == Date.SCHEMA


def test_date_conversions() -> None:
    assert Date.from_logical(Date.SCHEMA, dt.date(1970, 1, 1)) == 0
    assert Date.from_logical(Date.SCHEMA, dt.date(1970, 1, 11)) == 10
    assert Date.from_logical(Date.SCHEMA, dt.date(1969, 12, 31)) == -1
    assert Date.to_logical(Date.SCHEMA, 10000) == dt.date(1997, 5, 19)
    assert Date.from_logical(Date.SCHEMA, dt.datetime(1970, 1, 2)) == 1


def test_date_errors() -> None:
    with pytest.raises(DataException, match="should not have any time fields set to non-zero"):
        Date.from_logical(Date.SCHEMA, dt.datetime(1970, 1, 1, 0, 0, 1))
    with pytest.raises(DataException, match="Requested conversion of Date object but the schema"):
        Date.from_logical(Schema.INT32_SCHEMA, dt.date(1970, 1, 1))
    with pytest.raises(DataException, match="Requested conversion of Date object"):
        Date.to_logical(Schema.INT32_SCHEMA, 0)
    with pytest.raises(DataException, match="out of range"):
        Date.to_logical(Date.SCHEMA, 10**9)


@given(st.dates())
def test_date_round_trip(value: dt.date) -> None:
    assert Date.to_logical(Date.SCHEMA, Date.from_logical(Date.SCHEMA, value)) == value


# -- Time ------------------------------------------------------------------------------------------
def test_time_conversions() -> None:
    assert Time.from_logical(Time.SCHEMA, dt.time(0, 0)) == 0
    assert Time.from_logical(Time.SCHEMA, dt.time(0, 0, 10)) == 10000
    assert Time.from_logical(Time.SCHEMA, dt.time(0, 0, 0, 999)) == 0  # truncated, ms precision
    assert Time.to_logical(Time.SCHEMA, 10000) == dt.time(0, 0, 10)
    assert Time.to_logical(Time.SCHEMA, 86_399_999) == dt.time(23, 59, 59, 999000)


def test_time_errors() -> None:
    with pytest.raises(DataException, match="Requested conversion of Time object"):
        Time.from_logical(Schema.INT32_SCHEMA, dt.time(0))
    with pytest.raises(DataException, match="Requested conversion of Time object"):
        Time.to_logical(Date.SCHEMA, 0)
    for bad in (-1, 86_400_000):
        with pytest.raises(DataException) as info:
            Time.to_logical(Time.SCHEMA, bad)
        assert str(info.value) == (
            "Time values must use number of milliseconds greater than 0 and less than 86400000"
        )
    with pytest.raises(DataException, match="Invalid Time value"):
        Time.from_logical(Time.SCHEMA, 5)  # type: ignore[arg-type]


@given(st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)))
def test_time_round_trip_at_ms_precision(value: dt.time) -> None:
    assert Time.to_logical(Time.SCHEMA, Time.from_logical(Time.SCHEMA, value)) == value


# -- Timestamp ---------------------------------------------------------------------------------
def test_timestamp_conversions() -> None:
    assert Timestamp.from_logical(Timestamp.SCHEMA, EPOCH) == 0
    assert Timestamp.from_logical(Timestamp.SCHEMA, dt.datetime(1970, 1, 1, 0, 0, 10)) == 10000
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert (
        Timestamp.from_logical(Timestamp.SCHEMA, dt.datetime(1970, 1, 1, 2, tzinfo=plus_two)) == 0
    )
    assert (
        Timestamp.from_logical(Timestamp.SCHEMA, dt.datetime(1969, 12, 31, 23, 59, 59, 999999))
        == -1
    )
    restored = Timestamp.to_logical(Timestamp.SCHEMA, 10000)
    assert restored == dt.datetime(1970, 1, 1, 0, 0, 10, tzinfo=UTC)
    assert restored.tzinfo is UTC


def test_timestamp_errors() -> None:
    with pytest.raises(DataException, match="Requested conversion of Timestamp object"):
        Timestamp.from_logical(Schema.INT64_SCHEMA, EPOCH)
    with pytest.raises(DataException, match="Requested conversion of Timestamp object"):
        Timestamp.to_logical(Schema.INT64_SCHEMA, 0)
    with pytest.raises(DataException, match="Invalid Timestamp value"):
        Timestamp.from_logical(Timestamp.SCHEMA, dt.date(1970, 1, 1))  # type: ignore[arg-type]
    with pytest.raises(DataException, match="out of range"):
        Timestamp.to_logical(Timestamp.SCHEMA, 2**62)


@given(
    st.datetimes(
        min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30), timezones=st.just(UTC)
    ).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
)
def test_timestamp_round_trip_at_ms_precision(value: dt.datetime) -> None:
    millis = Timestamp.from_logical(Timestamp.SCHEMA, value)
    assert Timestamp.to_logical(Timestamp.SCHEMA, millis) == value
    assert Timestamp.from_logical(Timestamp.SCHEMA, value.replace(tzinfo=None)) == millis
