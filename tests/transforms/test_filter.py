"""Filter drops every record; it is meant to be paired with a predicate (see test_chain)."""

from __future__ import annotations

from cdk.api import SinkRecord, SourceRecord
from cdk.transforms import Filter


def test_drops_every_record() -> None:
    xform: Filter[SourceRecord] = Filter()
    xform.configure({})
    assert xform.apply(SourceRecord(None, None, "t", 0, None, None, None, "v")) is None
    sink: Filter[SinkRecord] = Filter()
    assert sink.apply(SinkRecord("t", 0, None, None, None, None, 0)) is None


def test_has_no_config() -> None:
    assert len(Filter().config()) == 0
