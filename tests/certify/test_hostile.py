"""SCH-09's values without Kafka: the limit forms, the corner classes, seeded draws, messages.

The check itself runs against the reference connectors and the broken catalogue in
``test_sch.py``; here its parts: what :class:`harness.Limit` accepts and how it reads, that
every class of hostile value is in the corners and the limits keep them in, that a seed draws
the same records again, and how a difference is put into words.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cdk import Decimal, Schema, SchemaBuilder, SchemaType, Struct, Timestamp
from cdk.data import validate_value
from harness import Limit, default_sink_value_schema
from harness.certify import CheckFailed, CheckNotVerified
from harness.certify.suites.sch._hostile import plan_for
from harness.certify.suites.sch._mismatch import Mismatch, differences
from harness.certify.suites.sch._shrink import candidates, shrink, size
from harness.strategies import corner_values_for, hostile_values_for

UTC = dt.timezone.utc
RECORD = default_sink_value_schema()
OPTIONAL_TIMESTAMP = Timestamp.builder().optional().build()


# --- the limit forms -------------------------------------------------------------------------


def test_a_limit_reads_as_the_report_shows_it() -> None:
    assert str(Limit.max_length("name", 255, "VARCHAR(255)")) == (
        "name: at most 255 characters (VARCHAR(255))"
    )
    assert str(Limit.excludes("*", "\x00\n", "PostgreSQL text")) == (
        "every field: no NUL, newline (\\n) (PostgreSQL text)"
    )
    low = dt.datetime(1000, 1, 1, tzinfo=UTC)
    assert str(Limit.range("created", low, None, "DATETIME")) == (
        "created: at least 1000-01-01T00:00:00+00:00 (DATETIME)"
    )
    assert str(Limit.charset("name", "bmp", "utf8mb3")).startswith(
        "name: characters of the Basic Multilingual Plane"
    )
    assert str(Limit.digits("amount", 12, "NUMERIC(12,2)")) == (
        "amount: at most 12 digits (NUMERIC(12,2))"
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Limit.max_length("name", 0, "x"), "max_length must be a positive int"),
        (lambda: Limit.max_length("name", 10, " "), "needs a reason"),
        (lambda: Limit.charset("name", "klingon", "x"), "unknown charset 'klingon'"),
        (lambda: Limit.excludes("name", "", "x"), "needs the characters"),
        (lambda: Limit.range("n", 5, 1, "x"), "the range of 'n' is empty"),
        (lambda: Limit.range("n", None, None, "x"), "at least one end"),
        (lambda: Limit("", "fixed", "x"), "the field it applies to"),
    ],
)
def test_a_malformed_limit_is_refused_with_what_is_wrong(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_limits_that_do_not_fit_the_schema_fail_the_check_naming_them() -> None:
    with pytest.raises(CheckFailed, match="has no field 'nmae'"):
        plan_for(RECORD, [Limit.max_length("nmae", 10, "typo")], "D")
    with pytest.raises(CheckFailed, match="applies to Decimal values, and 'name' holds STRING"):
        plan_for(RECORD, [Limit.digits("name", 10, "wrong field")], "D")
    with pytest.raises(CheckFailed, match=r"sequence of harness\.Limit"):
        plan_for(RECORD, ["name: 10"], "D")
    with pytest.raises(CheckFailed, match="server_assigned limit names a top-level field"):
        plan_for(RECORD, [Limit.server_assigned("*", "everything")], "D")
    with pytest.raises(CheckNotVerified, match=r"INT64: SCH-09 puts hostile values in"):
        plan_for(Schema.INT64_SCHEMA, (), "D")


# --- the corners -----------------------------------------------------------------------------


def test_the_string_corners_hold_every_class() -> None:
    corners = set(corner_values_for(Schema.STRING_SCHEMA))
    wanted = [
        "",
        " ",
        "\t",
        " padded ",
        "é",
        "日本語のテキスト",
        "😀",
        "e\u0301 (e + combining acute)",
    ]
    wanted += ["שלום עולם", "line\nbreak", "\r\n", "nul\x00inside", "\x00", "'", '"', "\\"]
    wanted += ["a,b,c", '{"key": [1, "two", null]}', "'); DROP TABLE records; --"]
    assert [w for w in wanted if w not in corners] == []
    longest = max(corners, key=len)
    assert len(longest) == 65_536
    assert any(len(s.encode()) == 65_536 and not s.isascii() for s in corners)


def test_the_limits_keep_strings_inside_with_the_edge_itself() -> None:
    limits = [
        Limit.max_length("name", 24, "VARCHAR(24)"),
        Limit.excludes("*", "\x00\n", "no NUL, no newline"),
        Limit.charset("name", "bmp", "utf8mb3"),
    ]
    corners = corner_values_for(Schema.STRING_SCHEMA, limits, field="name")
    assert max(len(s) for s in corners) == 24
    assert not any("\x00" in s or "\n" in s for s in corners)
    assert not any(ord(c) > 0xFFFF for s in corners for c in s)
    assert "日" * 24 in corners  # the widest character the charset allows, at the length


def test_the_number_corners_are_at_the_bounds() -> None:
    assert {-(2**63), 2**63 - 1, 2**53 + 1, 0, -1} <= set(corner_values_for(Schema.INT64_SCHEMA))
    assert {-128, 127} <= set(corner_values_for(Schema.INT8_SCHEMA))
    floats = corner_values_for(Schema.FLOAT64_SCHEMA)
    assert any(f == 0.0 and math.copysign(1, f) < 0 for f in floats)
    assert {5e-324, 1.7976931348623157e308, 2.2250738585072014e-308} <= set(floats)
    assert not any(math.isnan(f) or math.isinf(f) for f in floats)
    declared = [Limit.nan_and_infinity("*", "stored as REAL NaN and Infinity")]
    special = corner_values_for(Schema.FLOAT64_SCHEMA, declared)
    assert any(math.isnan(f) for f in special)
    assert {math.inf, -math.inf} <= set(special)
    no_zero = corner_values_for(Schema.FLOAT64_SCHEMA, [Limit.no_negative_zero("*", "x")])
    assert not any(f == 0.0 and math.copysign(1, f) < 0 for f in no_zero)


def test_decimal_corners_keep_their_scale_and_the_declared_digits() -> None:
    schema = Decimal.builder(2).build()
    corners = corner_values_for(schema)
    assert all(d.as_tuple().exponent == -2 for d in corners)
    assert decimal.Decimal("0.00") in corners
    assert decimal.Decimal("-0.01") in corners
    assert max(len(d.as_tuple().digits) for d in corners) == 38
    limited = corner_values_for(schema, [Limit.digits("*", 12, "NUMERIC(12,2)")])
    assert max(limited) == decimal.Decimal("9999999999.99")


def test_timestamp_corners_span_the_years_with_milliseconds_and_keep_a_range() -> None:
    corners = corner_values_for(OPTIONAL_TIMESTAMP)
    assert corners[0] is None
    years = {t.year for t in corners[1:]}
    assert {1, 1969, 1970, 9999} <= years
    assert any(t.microsecond == 999_000 for t in corners[1:])
    low = dt.datetime(1000, 1, 1, tzinfo=UTC)
    ranged = corner_values_for(OPTIONAL_TIMESTAMP, [Limit.range("*", low, None, "DATETIME")])
    assert min(t for t in ranged if t is not None) == low


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_hostile_values_are_valid_and_stay_inside_the_limits(data: st.DataObject) -> None:
    schema = (
        SchemaBuilder.struct()
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("n", Schema.INT32_SCHEMA)
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
        .field("at", OPTIONAL_TIMESTAMP)
        .build()
    )
    limits = [
        Limit.max_length("name", 10, "short"),
        Limit.excludes("*", "\x00", "no NUL"),
        Limit.range("n", -5, 5, "small"),
        Limit.range("at", dt.datetime(2000, 1, 1, tzinfo=UTC), None, "recent"),
    ]
    value = data.draw(hostile_values_for(schema, limits))
    validate_value(schema, value)
    name = value.get("name")
    assert name is None or (len(name) <= 10 and "\x00" not in name)
    assert -5 <= value.get("n") <= 5
    assert all("\x00" not in tag for tag in value.get("tags") or [])
    assert value.get("at") is None or value.get("at").year >= 2000


# --- seeded draws ----------------------------------------------------------------------------


def test_a_seed_draws_the_same_records_again(tmp_path: Path) -> None:
    plan = plan_for(RECORD, [], "D")
    first = plan.contents(1234, tmp_path / "a")
    again = plan.contents(1234, tmp_path / "b")
    other = plan.contents(99, tmp_path / "c")
    assert len(first) > 60
    assert repr(first) == repr(again)
    assert repr(first) != repr(other)
    assert "id" not in first[0]  # the id is kept as the driver makes it


# --- differences in words --------------------------------------------------------------------


def _struct(**values: Any) -> Struct:
    struct = Struct(RECORD)
    for f in RECORD.fields:
        struct.put(
            f.name,
            values.get(
                f.name,
                7 if f.name == "id" else ("n" if f.schema.type is SchemaType.STRING else None),
            ),
        )
    return struct


@pytest.mark.parametrize(
    ("sent", "stored", "text"),
    [
        (
            {"name": " pad "},
            {"name": "pad"},
            "name: sent ' pad ', stored 'pad' (whitespace trimmed)",
        ),
        ({"name": "x" * 100}, {"name": "x" * 24}, "(cut to 24 of 100 characters)"),
        ({"name": "é"}, {"name": "?"}, "name: sent 'é', stored '?' (1 character replaced by '?'"),
        (
            {"created": dt.datetime(1970, 1, 1, tzinfo=UTC)},
            {"created": dt.datetime(1970, 1, 1, 1, tzinfo=UTC)},
            "(shifted by +1 h)",
        ),
        ({"score": -0.0}, {"score": 0.0}, "score: sent -0.0, stored 0.0 (the sign of zero lost)"),
    ],
)
def test_a_difference_names_the_field_and_both_values(
    sent: dict[str, Any], stored: dict[str, Any], text: str
) -> None:
    plan = plan_for(RECORD, [], "D")
    row = {f.name: _struct(**sent).get(f.name) for f in RECORD.fields} | stored
    (found,) = differences(plan, 7, _struct(**sent), row, verb="stored")
    assert text in str(found)
    assert str(found).startswith("record id 7: ")


def test_smaller_candidates_stay_valid_and_smaller() -> None:
    plan = plan_for(RECORD, [Limit.excludes("*", "\x00", "no NUL")], "D")
    found = candidates(plan, "name", "nul inside")
    assert found == sorted(found, key=size)
    assert all(size(c) < size("nul inside") and "\x00" not in c for c in found)
    assert "" in found


def test_the_shrinker_never_draws_a_fixed_field() -> None:
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("status", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    plan = plan_for(schema, [Limit.fixed("status", "the API decides it")], "D")
    assert plan.fixed == ("id", "status")
    assert candidates(plan, "status", "open") == []
    assert candidates(plan, "id", 12345) == []
    found = [
        Mismatch(1, "status", "open", "closed", "status: wrote 'open', emitted 'closed'"),
        Mismatch(2, "name", "a\x00b", "ab", "name: wrote 'a\\x00b', emitted 'ab'"),
    ]
    asked: list[tuple[str, Any]] = []

    def round_trip(batch: Any) -> list[tuple[Any, list[Mismatch]]]:
        asked.extend(batch)
        return [
            (c, [Mismatch(9, f, c, "", f"{f}: shrunk")] if "\x00" in str(c) else [])
            for f, c in batch
        ]

    shrunk = shrink(found, {1: {}, 2: {"name": "a\x00b"}}, plan, round_trip)
    assert asked, "the drawn field is shrunk"
    assert {name for name, _ in asked} == {"name"}
    assert found[0] in shrunk  # the fixed field's failure is kept as found, not redrawn
    assert [m.field for m in shrunk] == ["status", "name"]


def test_a_server_assigned_field_is_neither_drawn_nor_compared() -> None:
    plan = plan_for(RECORD, [Limit.server_assigned("name", "the API names it")], "D")
    assert "name" not in plan.drawn
    assert plan.server_assigned == ("name",)
    assert str(plan.limits[0]) == (
        "name: assigned by the system: not drawn, not compared (the API names it)"
    )
    sent = _struct(name="sent")
    row = {f.name: sent.get(f.name) for f in RECORD.fields} | {"name": "the server's"}
    assert differences(plan, 7, sent, row, verb="emitted") == []
    fixed = plan_for(RECORD, [Limit.fixed("name", "kept")], "D")
    assert [m.field for m in differences(fixed, 7, sent, row, verb="emitted")] == ["name"]


def test_the_seed_comes_from_cdk_certify_seed_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.certify._runner import SEED_ENV, new_seed

    monkeypatch.setenv(SEED_ENV, "4242")
    assert new_seed() == 4242
    monkeypatch.setenv(SEED_ENV, "soon")
    with pytest.raises(ValueError, match="CDK_CERTIFY_SEED must be a non-negative integer"):
        new_seed()
    monkeypatch.delenv(SEED_ENV)
    assert {new_seed() for _ in range(5)} != {4242}
