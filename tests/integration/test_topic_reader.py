"""The tests' topic reader finds records a fetch skipped (the embedded broker's fetch gaps)."""

from __future__ import annotations

import uuid

from confluent_kafka import Producer

from tests._fetch_skip import skipping_factory
from tests.integration._support import TopicReader, make_topic


def test_a_stalled_reader_reads_again_and_keeps_each_record_once(kafka_bootstrap: str) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for n in range(40):
        producer.produce(topic, f"v{n}".encode(), f"k{n}".encode(), partition=n % 2)
    assert producer.flush(10) == 0
    # partition 0 holds k0, k2, ... at offsets 0..19: its first fetch leaves offsets 5..9 out
    reader = TopicReader(
        kafka_bootstrap, topic, consumer_factory=skipping_factory([(topic, 0, 5, 5)])
    )
    try:
        reader.wait_for(40, timeout=30)
        assert reader.rereads >= 1
        assert reader.healed == 5
        assert sorted(m.key for m in reader.messages) == sorted(f"k{n}".encode() for n in range(40))
        for partition in (0, 1):
            offsets = [m.offset for m in reader.messages if m.partition == partition]
            assert offsets == list(range(20))
        reader.poll(TopicReader.REREAD_AFTER_S + 0.5)  # another read again finds nothing new
        reader.poll(0.5)
        assert len(reader.messages) == 40
    finally:
        reader.close()


def test_a_reader_made_before_its_topic_exists_reads_it_once_it_does(kafka_bootstrap: str) -> None:
    # as a test that starts reading when a source task is RUNNING, before its first record
    topic = f"later-{uuid.uuid4().hex[:8]}"
    reader = TopicReader(kafka_bootstrap, topic)
    try:
        producer = Producer({"bootstrap.servers": kafka_bootstrap})
        for n in range(3):
            producer.produce(topic, f"v{n}".encode(), f"k{n}".encode())
        assert producer.flush(10) == 0
        reader.wait_for(3, timeout=30)
        assert sorted(m.key for m in reader.messages) == [b"k0", b"k1", b"k2"]
    finally:
        reader.close()
