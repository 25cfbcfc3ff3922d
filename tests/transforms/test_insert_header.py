"""InsertHeader, ported from Kafka's InsertHeaderTest."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from cdk.api import Headers, SourceRecord
from cdk.data import Date, Schema
from cdk.errors import ConfigException
from cdk.transforms import InsertHeader


def _apply(header: Any, literal: Any, headers: Headers) -> SourceRecord:
    xform: InsertHeader[SourceRecord] = InsertHeader()
    xform.configure({"header": header, "value.literal": literal})
    record = SourceRecord({"p": 1}, {"o": 2}, "topic", 0, None, "key", None, "value", 0, headers)
    out = xform.apply(record)
    assert out is not None
    assert (out.topic, out.key, out.value, out.timestamp) == ("topic", "key", "value", 0)
    return out


def test_insertion_with_existing_other_header() -> None:
    headers = Headers().add_string("existing", "existing-value")
    out = _apply("inserted", "inserted-value", headers)
    expected = Headers().add_string("existing", "existing-value")
    expected.add("inserted", "inserted-value", Schema.STRING_SCHEMA)
    assert out.headers == expected
    assert len(headers) == 1  # the original record is left alone


def test_insertion_with_existing_same_header() -> None:
    headers = Headers().add_string("existing", "preexisting-value")
    out = _apply("existing", "existing-value", headers)
    assert [(h.key, h.value) for h in out.headers] == [
        ("existing", "preexisting-value"),
        ("existing", "existing-value"),
    ]


def test_insertion_with_byte_header() -> None:
    out = _apply("inserted", "1", Headers())
    header = out.headers.last_with_name("inserted")
    assert header is not None
    assert (header.schema, header.value) == (Schema.INT8_SCHEMA, 1)


@pytest.mark.parametrize(
    ("literal", "schema", "value"),
    [
        ("18000", Schema.INT16_SCHEMA, 18000),
        ("50000", Schema.INT32_SCHEMA, 50000),
        ("87474836647", Schema.INT64_SCHEMA, 87474836647),
        ("true", Schema.BOOLEAN_SCHEMA, True),
        ("2019-08-23", Date.SCHEMA, dt.date(2019, 8, 23)),
    ],
)
def test_literal_types(literal: str, schema: Schema, value: Any) -> None:
    header = _apply("h", literal, Headers()).headers.last_with_name("h")
    assert header is not None
    assert header.schema == schema
    assert header.value == value


def test_config_rejects_null_header_key() -> None:
    with pytest.raises(ConfigException, match="configuration header"):
        InsertHeader().configure({"header": None, "value.literal": "1"})


def test_config_rejects_null_header_value() -> None:
    with pytest.raises(ConfigException, match=r"configuration value\.literal"):
        InsertHeader().configure({"header": "inserted", "value.literal": None})


def test_config_requires_both_keys() -> None:
    with pytest.raises(ConfigException, match='"header"'):
        InsertHeader().configure({"value.literal": "x"})
    with pytest.raises(ConfigException, match=r'"value\.literal"'):
        InsertHeader().configure({"header": "x"})
