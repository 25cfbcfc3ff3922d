"""DropHeaders, ported from Kafka's DropHeadersTest."""

from __future__ import annotations

from typing import Any

import pytest

from cdk.api import Headers, SourceRecord
from cdk.errors import ConfigException
from cdk.transforms import DropHeaders


def _apply(names: Any, headers: Headers) -> SourceRecord:
    xform: DropHeaders[SourceRecord] = DropHeaders()
    xform.configure({"headers": names})
    record = SourceRecord({"p": 1}, {"o": 2}, "topic", 0, None, "key", None, "value", 0, headers)
    out = xform.apply(record)
    assert out is not None
    assert (out.topic, out.key, out.value, out.timestamp) == ("topic", "key", "value", 0)
    assert (out.source_partition, out.source_offset) == ({"p": 1}, {"o": 2})
    return out


def test_drop_existing_header() -> None:
    headers = Headers().add_string("existing", "existing-value").add_string("dropped", "x")
    out = _apply(["dropped"], headers)
    assert out.headers == Headers().add_string("existing", "existing-value")


def test_drop_existing_header_with_multiple_values() -> None:
    headers = (
        Headers()
        .add_string("existing", "existing-value")
        .add_string("dropped", "a")
        .add_string("dropped", "b")
    )
    out = _apply("dropped", headers)
    assert out.headers == Headers().add_string("existing", "existing-value")


def test_drop_not_existing_header() -> None:
    headers = Headers().add_string("existing", "existing-value")
    out = _apply(["dropped"], headers)
    assert out.headers == Headers().add_string("existing", "existing-value")


def test_drop_several_headers_keeps_order() -> None:
    headers = Headers()
    for name in ("AAA", "BBB", "AAA", "CCC", "DDD", "DDD"):
        headers.add_string(name, "dummy value")
    out = _apply("AAA, BBB", headers)
    assert [h.key for h in out.headers] == ["CCC", "DDD", "DDD"]


def test_original_record_headers_untouched() -> None:
    headers = Headers().add_string("dropped", "x")
    _apply(["dropped"], headers)
    assert len(headers) == 1


@pytest.mark.parametrize("names", [[], ""])
def test_config_rejects_empty_list(names: Any) -> None:
    with pytest.raises(ConfigException, match="configuration headers: Empty list"):
        DropHeaders().configure({"headers": names})


def test_config_requires_headers() -> None:
    with pytest.raises(ConfigException, match='"headers"'):
        DropHeaders().configure({})


def test_config_def() -> None:
    key = DropHeaders().config().config_keys()["headers"]
    assert str(key.validator) == "non-empty list"
