"""SourceRecord/SinkRecord: Kafka's SourceRecordTest and SinkRecordTest (new_record and headers)."""

from __future__ import annotations

import pytest

from cdk.api import Header, Headers, SinkRecord, SourceRecord, TimestampType
from cdk.data import Schema

PARTITION = {"f": "a.txt"}
OFFSET = {"position": 70}


def source_record() -> SourceRecord:
    return SourceRecord(
        PARTITION,
        OFFSET,
        "myTopic",
        0,
        Schema.STRING_SCHEMA,
        "key",
        Schema.BOOLEAN_SCHEMA,
        False,
        100,
    )


def sink_record() -> SinkRecord:
    return SinkRecord(
        "myTopic",
        0,
        Schema.STRING_SCHEMA,
        "key",
        Schema.BOOLEAN_SCHEMA,
        False,
        12,
        100,
        TimestampType.CREATE_TIME,
    )


def test_source_record_attributes() -> None:
    record = source_record()
    assert record.source_partition == PARTITION
    assert record.source_offset == OFFSET
    assert record.topic == "myTopic"
    assert record.kafka_partition == 0
    assert record.key == "key"
    assert record.value is False
    assert record.timestamp == 100
    assert record.headers.is_empty()
    minimal = SourceRecord(None, None, "t")
    assert minimal.kafka_partition is None
    assert minimal.value is None
    assert minimal.timestamp is None


def test_sink_record_attributes() -> None:
    record = sink_record()
    assert record.kafka_offset == 12
    assert record.timestamp_type is TimestampType.CREATE_TIME
    assert str(TimestampType.LOG_APPEND_TIME) == "LogAppendTime"


def test_create_records_with_headers() -> None:
    headers = Headers().add_string("h1", "hv1").add_boolean("h2", True)
    record = SourceRecord(PARTITION, OFFSET, "t", 0, None, None, None, None, 1, headers)
    assert record.headers is headers
    from_list = SourceRecord(PARTITION, OFFSET, "t", headers=[Header("h", None, 1)])
    assert isinstance(from_list.headers, Headers)
    assert len(from_list.headers) == 1


def test_duplicate_record_and_clone_headers() -> None:
    record = source_record()
    record.headers.add_string("h1", "hv1")
    duplicate = record.new_record()
    assert duplicate == record
    assert duplicate is not record
    assert duplicate.headers == record.headers
    assert duplicate.headers is not record.headers
    duplicate.headers.add_int8("h2", 1)
    assert len(record.headers) == 1
    assert len(duplicate.headers) == 2


def test_new_record_replaces_fields() -> None:
    record = source_record()
    changed = record.new_record(
        topic="other", value=True, value_schema=Schema.OPTIONAL_BOOLEAN_SCHEMA
    )
    assert isinstance(changed, SourceRecord)
    assert changed.topic == "other"
    assert changed.value is True
    assert changed.source_offset == OFFSET
    assert changed.key == "key"
    assert changed.timestamp == 100
    assert record.topic == "myTopic"
    sink = sink_record().new_record(kafka_partition=3, timestamp=None)
    assert isinstance(sink, SinkRecord)
    assert sink.kafka_partition == 3
    assert sink.timestamp is None
    assert sink.kafka_offset == 12
    assert sink.timestamp_type is TimestampType.CREATE_TIME


def test_new_record_with_headers() -> None:
    record = source_record()
    new_headers = Headers().add_string("x", "y")
    changed = record.new_record(headers=new_headers)
    assert changed.headers is new_headers
    listed = record.new_record(headers=[Header("z", None, 1)])
    assert isinstance(listed.headers, Headers)
    assert len(listed.headers) == 1


def test_new_record_rejects_unknown_fields() -> None:
    with pytest.raises(TypeError, match="unexpected field"):
        source_record().new_record(kafka_offset=1)


def test_equality_and_repr() -> None:
    assert source_record() == source_record()
    assert source_record() != source_record().new_record(value=True)
    assert sink_record() != source_record()
    with pytest.raises(TypeError):
        hash(source_record())
    text = repr(source_record())
    assert text.startswith("SourceRecord{source_partition={'f': 'a.txt'}")
    assert "topic='myTopic'" in text


def test_negative_timestamp_is_rejected() -> None:
    with pytest.raises(ValueError, match="Invalid record timestamp -1"):
        SourceRecord(None, None, "t", timestamp=-1)


def test_sink_record_keeps_its_original_coordinates_kip_793() -> None:
    from cdk import SinkRecord

    record = SinkRecord("orders", 2, None, "k", None, "v", 41)
    assert (record.original_topic, record.original_kafka_partition) == ("orders", 2)
    assert record.original_kafka_offset == 41
    routed = record.new_record(topic="orders_routed", kafka_partition=0)
    assert (routed.topic, routed.kafka_partition) == ("orders_routed", 0)
    assert (routed.original_topic, routed.original_kafka_partition) == ("orders", 2)
    assert routed.original_kafka_offset == 41
    assert routed != record.new_record(topic="orders_routed", kafka_partition=0, original_topic="x")
    explicit = SinkRecord("a", 0, None, None, None, None, 5, original_topic="b")
    assert (explicit.original_topic, explicit.original_kafka_offset) == ("b", 5)
