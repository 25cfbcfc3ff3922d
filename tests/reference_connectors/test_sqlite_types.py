from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pytest

from cdk import ConfigException, Date, Decimal, Schema, SchemaBuilder, Time, Timestamp
from reference_connectors.sqlite._config import database_path
from reference_connectors.sqlite._types import (
    ColumnType,
    Kind,
    column_type,
    column_type_for,
    describe_schema,
    format_timestamp,
    parse_timestamp,
)

UTC = dt.timezone.utc


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ("INTEGER", ColumnType(Kind.INT64)),
        ("bigint", ColumnType(Kind.INT64)),
        ("UNSIGNED BIG INT", ColumnType(Kind.INT64)),
        ("TEXT", ColumnType(Kind.STRING)),
        ("VARCHAR(20)", ColumnType(Kind.STRING)),
        ("NATIVE CHARACTER(70)", ColumnType(Kind.STRING)),
        ("CLOB", ColumnType(Kind.STRING)),
        ("REAL", ColumnType(Kind.FLOAT64)),
        ("DOUBLE PRECISION", ColumnType(Kind.FLOAT64)),
        ("FLOAT", ColumnType(Kind.FLOAT64)),
        ("BLOB", ColumnType(Kind.BYTES)),
        ("BOOLEAN", ColumnType(Kind.BOOLEAN)),
        ("TIMESTAMP", ColumnType(Kind.TIMESTAMP)),
        ("DATETIME", ColumnType(Kind.TIMESTAMP)),
        ("DATE", ColumnType(Kind.DATE)),
        ("TIME", ColumnType(Kind.TIME)),
        ("DECIMAL_TEXT(2)", ColumnType(Kind.DECIMAL, 2)),
        ("decimal_text ( 4 )", ColumnType(Kind.DECIMAL, 4)),
        ("DECIMAL(10,3)", ColumnType(Kind.DECIMAL, 3)),
        ("NUMERIC(8)", ColumnType(Kind.DECIMAL, 0)),
        ("NUMERIC", None),
        ("", None),
        ("DECIMAL_TEXT", ColumnType(Kind.STRING)),  # no scale: just text
    ],
)
def test_declared_types_map_to_connect_types(declared: str, expected: ColumnType | None) -> None:
    assert column_type(declared) == expected


@pytest.mark.parametrize(
    ("schema", "declared"),
    [
        (Schema.INT8_SCHEMA, "INTEGER"),
        (Schema.INT32_SCHEMA, "INTEGER"),
        (Schema.INT64_SCHEMA, "INTEGER"),
        (Schema.FLOAT32_SCHEMA, "REAL"),
        (Schema.FLOAT64_SCHEMA, "REAL"),
        (Schema.BOOLEAN_SCHEMA, "BOOLEAN"),
        (Schema.STRING_SCHEMA, "TEXT"),
        (Schema.BYTES_SCHEMA, "BLOB"),
        (Decimal.schema(2), "DECIMAL_TEXT(2)"),
        (Timestamp.SCHEMA, "TIMESTAMP"),
        (Date.SCHEMA, "DATE"),
        (Time.SCHEMA, "TIME"),
    ],
)
def test_sink_column_types_read_back_as_the_same_type(schema: Schema, declared: str) -> None:
    ctype = column_type_for(schema)
    assert ctype is not None
    assert ctype.declared() == declared
    assert column_type(declared) == ctype
    assert ctype.accepts(schema)
    # The source reads the column back with the widened type of the same kind.
    assert ctype.accepts(ctype.schema(optional=False))


def test_nested_types_have_no_column_type() -> None:
    assert column_type_for(SchemaBuilder.array(Schema.INT32_SCHEMA).build()) is None
    assert column_type_for(SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()) is None


@pytest.mark.parametrize(
    ("ctype", "schema", "ok"),
    [
        (ColumnType(Kind.INT64), Schema.STRING_SCHEMA, False),
        (ColumnType(Kind.INT64), Timestamp.SCHEMA, False),  # an INT64 underneath, still not int
        (ColumnType(Kind.INT64), Date.SCHEMA, False),
        (ColumnType(Kind.STRING), Schema.INT64_SCHEMA, False),
        (ColumnType(Kind.FLOAT64), Schema.INT64_SCHEMA, False),
        (ColumnType(Kind.BYTES), Decimal.schema(2), False),
        (ColumnType(Kind.DECIMAL, 2), Decimal.schema(1), True),  # rescaled exactly
        (ColumnType(Kind.DECIMAL, 2), Decimal.schema(3), False),  # would drop digits
        (ColumnType(Kind.DECIMAL, 2), Schema.FLOAT64_SCHEMA, False),
        (ColumnType(Kind.TIMESTAMP), Schema.STRING_SCHEMA, False),
        (ColumnType(Kind.BOOLEAN), Schema.OPTIONAL_BOOLEAN_SCHEMA, True),
    ],
)
def test_accepts_only_lossless_schemas(ctype: ColumnType, schema: Schema, ok: bool) -> None:
    assert ctype.accepts(schema) is ok


@pytest.mark.parametrize(
    ("ctype", "value", "stored"),
    [
        (ColumnType(Kind.INT64), 7, 7),
        (ColumnType(Kind.FLOAT64), 0.25, 0.25),
        (ColumnType(Kind.STRING), "x", "x"),
        (ColumnType(Kind.BYTES), b"\x00\x01", b"\x00\x01"),
        (ColumnType(Kind.BOOLEAN), True, 1),
        (ColumnType(Kind.BOOLEAN), False, 0),
        (ColumnType(Kind.DECIMAL, 2), decimal.Decimal("12.3"), "12.30"),
        (ColumnType(Kind.DECIMAL, 2), decimal.Decimal("-0.01"), "-0.01"),
        (ColumnType(Kind.DECIMAL, 0), decimal.Decimal("1E+3"), "1000"),
        (
            ColumnType(Kind.DECIMAL, 2),
            decimal.Decimal("123456789012345678901234567890.12"),
            "123456789012345678901234567890.12",
        ),
        (
            ColumnType(Kind.TIMESTAMP),
            dt.datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
            "2026-01-02T03:04:05.006+00:00",
        ),
        (ColumnType(Kind.DATE), dt.date(2026, 2, 28), "2026-02-28"),
        (ColumnType(Kind.TIME), dt.time(23, 59, 1, 250000), "23:59:01.250"),
        (ColumnType(Kind.INT64), None, None),
    ],
)
def test_values_round_trip_exactly(ctype: ColumnType, value: Any, stored: Any) -> None:
    assert ctype.to_sqlite(value) == stored
    back = ctype.to_connect(stored)
    assert back == value
    if isinstance(value, decimal.Decimal):
        assert back.as_tuple().exponent == -ctype.scale  # the schema's scale, exactly


def test_decimal_that_would_lose_digits_is_refused_both_ways() -> None:
    ctype = ColumnType(Kind.DECIMAL, 2)
    with pytest.raises(ValueError, match="more than 2 decimal places"):
        ctype.to_sqlite(decimal.Decimal("1.005"))
    with pytest.raises(ValueError, match="not a valid Decimal"):
        ctype.to_connect("1.005")
    with pytest.raises(ValueError, match="not a valid Decimal"):
        ctype.to_connect("abc")


def test_numeric_columns_give_decimals_rounded_to_their_scale() -> None:
    # A DECIMAL(p,s) column has NUMERIC affinity: SQLite hands back REAL or INTEGER values.
    ctype = ColumnType(Kind.DECIMAL, 2)
    assert ctype.to_connect(12.3) == decimal.Decimal("12.30")
    assert ctype.to_connect(0.1 + 0.2) == decimal.Decimal("0.30")
    assert ctype.to_connect(5) == decimal.Decimal("5.00")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01T10:00:00.000+00:00", dt.datetime(2026, 1, 1, 10, tzinfo=UTC)),
        ("2026-01-01 10:00:00", dt.datetime(2026, 1, 1, 10, tzinfo=UTC)),  # SQLite's datetime()
        ("2026-01-01T10:00:00Z", dt.datetime(2026, 1, 1, 10, tzinfo=UTC)),
        ("2026-01-01T12:00:00+02:00", dt.datetime(2026, 1, 1, 10, tzinfo=UTC)),
    ],
)
def test_timestamps_parse_to_aware_utc(text: str, expected: dt.datetime) -> None:
    parsed = parse_timestamp(text)
    assert parsed == expected
    assert parsed.tzinfo is UTC


def test_formatted_timestamps_sort_in_time_order() -> None:
    values = [
        dt.datetime(2026, 1, 1, 9, tzinfo=dt.timezone(dt.timedelta(hours=-5))),  # 14:00 UTC
        dt.datetime(2026, 1, 1, 10),  # naive: UTC
        dt.datetime(2026, 1, 1, 12, 0, 0, 1000, tzinfo=UTC),
    ]
    texts = [format_timestamp(v) for v in values]
    assert sorted(texts) == [texts[1], texts[2], texts[0]]
    assert texts[1] == "2026-01-01T10:00:00.000+00:00"


@pytest.mark.parametrize(
    ("ctype", "stored"),
    [
        (ColumnType(Kind.INT64), "12"),
        (ColumnType(Kind.STRING), 12),
        (ColumnType(Kind.BYTES), "x"),
        (ColumnType(Kind.BOOLEAN), 2),
        (ColumnType(Kind.TIMESTAMP), 1700000000),
        (ColumnType(Kind.TIMESTAMP), "yesterday"),
        (ColumnType(Kind.DATE), "2026-13-01"),
    ],
)
def test_stored_values_of_the_wrong_type_are_refused(ctype: ColumnType, stored: Any) -> None:
    with pytest.raises(ValueError, match=f"not a valid {ctype}"):
        ctype.to_connect(stored)


def test_booleans_read_from_numbers_and_words() -> None:
    ctype = ColumnType(Kind.BOOLEAN)
    assert [ctype.to_connect(v) for v in (0, 1, "true", " FALSE ", "1")] == [
        False,
        True,
        True,
        False,
        True,
    ]


def test_column_schemas_are_optional_unless_required() -> None:
    ctype = ColumnType(Kind.DECIMAL, 3)
    assert ctype.schema(optional=True) == Decimal.builder(3).optional().build()
    assert ctype.schema(optional=False) == Decimal.schema(3)
    assert describe_schema(Decimal.schema(3)) == "Decimal(scale=3)"
    assert describe_schema(Timestamp.SCHEMA) == "Timestamp"
    assert describe_schema(Schema.OPTIONAL_STRING_SCHEMA) == "STRING"
    assert str(ctype) == "Decimal(scale=3)"


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("/data/app.db", "/data/app.db"),
        ("sqlite:////data/app.db", "/data/app.db"),
        ("sqlite:///data/app.db", "data/app.db"),
        ("jdbc:sqlite:/data/app.db", "/data/app.db"),
        ("  app.db ", "app.db"),
    ],
)
def test_connection_urls_name_a_file(url: str, path: str) -> None:
    assert str(database_path(url)) == path


@pytest.mark.parametrize("url", [":memory:", "sqlite:///:memory:", "sqlite:///", ""])
def test_in_memory_or_empty_urls_are_refused(url: str) -> None:
    with pytest.raises(ConfigException, match=r"connection.url"):
        database_path(url)
