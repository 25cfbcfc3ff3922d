"""Header and Headers: Kafka's ConnectHeadersTest and ConnectHeaderTest."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from cdk.api import Header, Headers
from cdk.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Values,
)
from cdk.errors import DataException

UTC = dt.timezone.utc


def keys(headers: Headers) -> list[str]:
    return [h.key for h in headers]


def test_header() -> None:
    header = Header("key", Schema.INT32_SCHEMA, 5)
    assert (header.key, header.schema, header.value) == ("key", Schema.INT32_SCHEMA, 5)
    assert header.rename("other") == Header("other", Schema.INT32_SCHEMA, 5)
    assert header.with_(Schema.STRING_SCHEMA, "x") == Header("key", Schema.STRING_SCHEMA, "x")
    assert header == Header("key", Schema.INT32_SCHEMA, 5)
    assert hash(header) == hash(Header("key", Schema.INT32_SCHEMA, 5))
    assert header != Header("key", Schema.INT64_SCHEMA, 5)
    assert repr(header) == "ConnectHeader(key=key, value=5, schema=Schema{INT32})"
    assert Header("k", None, object()).schema is None


def test_header_validation() -> None:
    with pytest.raises(DataException, match="Header key cannot be null"):
        Header(None, None, 1)  # type: ignore[arg-type]
    with pytest.raises(DataException) as info:
        Header("k", Schema.INT32_SCHEMA, "x")
    assert info.value.field == "k"
    with pytest.raises(DataException, match="null used for required"):
        Header("k", Schema.INT32_SCHEMA, None)


def test_empty() -> None:
    headers = Headers()
    assert headers.is_empty()
    assert len(headers) == 0
    assert headers.size() == 0
    assert not headers
    assert headers.last_with_name("k") is None
    assert headers.all_with_name("k") == []
    assert repr(headers) == "ConnectHeaders(headers=[])"


def test_typed_adders() -> None:
    struct_schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    struct = Struct(struct_schema).put("a", 1)
    stamp = dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
    headers = (
        Headers()
        .add_string("s", "v")
        .add_string("s-null", None)
        .add_boolean("b", True)
        .add_int8("i8", 1)
        .add_int16("i16", 2)
        .add_int32("i32", 3)
        .add_int64("i64", 4)
        .add_float32("f32", 1.5)
        .add_float64("f64", 2.5)
        .add_bytes("by", b"x")
        .add_bytes("by-null", None)
        .add_struct("st", struct)
        .add_decimal("dec", decimal.Decimal("1.56"))
        .add_date("date", dt.date(2020, 1, 2))
        .add_time("time", dt.time(3, 4, 5))
        .add_timestamp("ts", stamp)
        .add_list("list", [1, 2], SchemaBuilder.array(Schema.INT32_SCHEMA).build())
        .add_map(
            "map", {"a": 1}, SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()
        )
    )
    schemas = {h.key: h.schema for h in headers}
    assert schemas["s"] == Schema.STRING_SCHEMA
    assert schemas["s-null"] == Schema.OPTIONAL_STRING_SCHEMA
    assert schemas["b"] == Schema.BOOLEAN_SCHEMA
    assert schemas["i8"] == Schema.INT8_SCHEMA
    assert schemas["i64"] == Schema.INT64_SCHEMA
    assert schemas["f32"] == Schema.FLOAT32_SCHEMA
    assert schemas["by"] == Schema.BYTES_SCHEMA
    assert schemas["by-null"] == Schema.OPTIONAL_BYTES_SCHEMA
    assert schemas["st"] == struct_schema
    assert schemas["dec"] == Decimal.schema(2)
    assert schemas["date"] == Date.SCHEMA
    assert schemas["time"] == Time.SCHEMA
    assert schemas["ts"] == Timestamp.SCHEMA
    assert len(headers) == 18


@pytest.mark.parametrize(
    ("adder", "value"),
    [
        ("add_int8", 128),
        ("add_int16", "x"),
        ("add_int32", 1.5),
        ("add_boolean", 1),
        ("add_date", dt.datetime(2020, 1, 1)),
    ],
)
def test_typed_adders_validate(adder: str, value: object) -> None:
    with pytest.raises(DataException):
        getattr(Headers(), adder)("k", value)


def test_add_with_schema_and_value() -> None:
    headers = Headers().add("k", SchemaAndValue(Schema.INT32_SCHEMA, 5)).add("u", "raw")
    assert headers.last_with_name("k") == Header("k", Schema.INT32_SCHEMA, 5)
    assert headers.last_with_name("u") == Header("u", None, "raw")


def test_parsed_values_without_element_schemas_are_accepted() -> None:
    for text in ("[]", '[1, "a"]', "{}", "{3: null}"):
        parsed = Values.parse_string(text)
        headers = Headers().add("k", parsed)
        assert headers.last_with_name("k") == Header("k", parsed.schema, parsed.value)
    no_element = Values.parse_string("[]").schema
    with pytest.raises(DataException, match="class str"):
        Header("k", no_element, "not a list")
    with pytest.raises(DataException, match="null used for required"):
        Header("k", no_element, None)


def test_all_and_last_with_name() -> None:
    headers = Headers().add_string("k1", "a").add_string("k2", "b").add_string("k1", "c")
    assert [h.value for h in headers.all_with_name("k1")] == ["a", "c"]
    last = headers.last_with_name("k1")
    assert last is not None
    assert last.value == "c"


def test_remove_retain_clear() -> None:
    def sample() -> Headers:
        return (
            Headers()
            .add_int32("k1", 1)
            .add_int32("k2", 2)
            .add_int32("k1", 3)
            .add_int32("k3", 4)
            .add_int32("k2", 5)
        )

    assert keys(sample().remove("k1")) == ["k2", "k3", "k2"]
    assert keys(sample().remove("missing")) == ["k1", "k2", "k1", "k3", "k2"]
    latest = sample().retain_latest()
    assert [(h.key, h.value) for h in latest] == [("k1", 3), ("k3", 4), ("k2", 5)]
    latest_k1 = sample().retain_latest("k1")
    assert [(h.key, h.value) for h in latest_k1] == [("k2", 2), ("k1", 3), ("k3", 4), ("k2", 5)]
    assert sample().clear().is_empty()


def test_apply() -> None:
    headers = Headers().add_int32("a", 1).add_int32("b", 2).add_int32("a", 3)

    def double(h: Header) -> Header | None:
        return h.with_(Schema.INT32_SCHEMA, h.value * 2)

    assert [h.value for h in headers.duplicate().apply(double)] == [2, 4, 6]
    assert [h.value for h in headers.duplicate().apply(double, "a")] == [2, 2, 6]
    assert keys(headers.duplicate().apply(lambda h: None, "a")) == ["b"]
    assert keys(headers.duplicate().apply(lambda h: h.rename("z"))) == ["z", "z", "z"]


def test_duplicate_is_independent_and_iteration_is_a_snapshot() -> None:
    headers = Headers().add_int32("a", 1)
    copy = headers.duplicate()
    copy.add_int32("b", 2)
    assert len(headers) == 1
    assert len(copy) == 2
    assert headers == Headers([Header("a", Schema.INT32_SCHEMA, 1)])
    assert headers != copy
    for header in headers:
        headers.add_header(header.rename("c"))
    assert keys(headers) == ["a", "c"]
    with pytest.raises(TypeError):
        hash(headers)


def test_add_all_and_repr() -> None:
    headers = Headers().add_all([Header("a", None, 1), Header("b", None, 2)])
    assert keys(headers) == ["a", "b"]
    assert repr(Headers().add_int8("a", 1)) == (
        "ConnectHeaders(headers=[ConnectHeader(key=a, value=1, schema=Schema{INT8})])"
    )
