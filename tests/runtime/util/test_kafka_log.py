"""KafkaBasedLog.read_to_end on the embedded broker: the whole of each partition's last batch.

Tansu answers the end offset of a partition (ListOffsets) with the base offset of its last
batch + 1: after a batch of 5 records at 0-4 it says 1. A reader that stopped there would
hand the callback one record of the 5, and the other 4 only after some later write.
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition

from cdk.kafka import create_topics
from cdk.runtime.util import KafkaBasedLog
from cdk.runtime.util._kafka_log import LogRecord


def _batch(producer: Producer, topic: str, values: range) -> None:
    """Produce ``values`` as one batch (they are queued before the producer sends any)."""
    for n in values:
        producer.produce(topic, str(n).encode(), f"k{n}".encode())
    assert producer.flush(10) == 0


def test_read_to_end_reads_the_whole_last_batch(kafka_bootstrap: str) -> None:
    topic = f"log-{uuid.uuid4().hex[:10]}"
    create_topics(kafka_bootstrap, [topic], partitions=1, config={"cleanup.policy": "compact"})
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "linger.ms": 100})
    _batch(producer, topic, range(5))
    probe = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": f"probe-{topic}"})
    try:
        # what the broker says the end is (the premise: if it says 5, this test checks nothing
        # the loop without the fetch's high watermark would not)
        _low, high = probe.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    finally:
        probe.close()
    assert high == 1, f"Tansu's end offset of a 5-record batch at 0: {high}"
    read: list[LogRecord] = []
    log = KafkaBasedLog(
        topic, kafka_bootstrap, read.append, replication_factor=1, create=False, timeout_s=15
    )
    log.start()
    try:
        assert [offset for _k, _v, _p, offset in read] == list(range(5))
        _batch(producer, topic, range(5, 12))
        log.read_to_end()
        assert [value for _k, value, _p, _o in read] == [str(n).encode() for n in range(12)]
    finally:
        log.stop()


def test_read_to_end_does_not_wait_for_an_open_transaction(kafka_bootstrap: str) -> None:
    """Records of a transaction not yet committed are not read, and not waited for."""
    topic = f"log-{uuid.uuid4().hex[:10]}"
    create_topics(kafka_bootstrap, [topic], partitions=1, config={"cleanup.policy": "compact"})
    plain = Producer({"bootstrap.servers": kafka_bootstrap, "linger.ms": 0})
    _batch(plain, topic, range(3))
    read: list[LogRecord] = []
    log = KafkaBasedLog(
        topic, kafka_bootstrap, read.append, replication_factor=1, create=False, timeout_s=10
    )
    log.start()
    txn = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"tx-{topic}"})
    txn.init_transactions(10)
    txn.begin_transaction()
    try:
        _batch(txn, topic, range(3, 6))  # on the broker, not committed
        started = time.monotonic()
        log.read_to_end()
        assert time.monotonic() - started < 5, "read_to_end waited for the open transaction"
        assert [value for _k, value, _p, _o in read] == [b"0", b"1", b"2"]
        txn.commit_transaction(10)
        log.read_to_end()
        assert [value for _k, value, _p, _o in read] == [str(n).encode() for n in range(6)]
    finally:
        log.stop()


def test_a_transactional_topic_read_by_the_fallback_consumer_takes_markers_at_once(
    kafka_bootstrap: str,
) -> None:
    """Compressed batches send the log to its librdkafka consumer (the marker-aware reader
    cannot read them); there, the holes of the markers are looked up in the raw batches, not
    read again: 200 transactions come well within the 5 s allowed."""
    topic = f"log-{uuid.uuid4().hex[:10]}"
    create_topics(kafka_bootstrap, [topic], partitions=1, config={"cleanup.policy": "compact"})
    txn = Producer(
        {
            "bootstrap.servers": kafka_bootstrap,
            "transactional.id": f"tx-{topic}",
            "compression.type": "lz4",
            "linger.ms": 0,
        }
    )
    txn.init_transactions(10)
    value = b"x" * 1000  # compresses, so the batch is written compressed
    for n in range(200):  # one record and one COMMIT marker each
        txn.begin_transaction()
        txn.produce(topic, value + str(n).encode(), f"k{n}".encode())
        txn.commit_transaction(10)
    read: list[LogRecord] = []
    log = KafkaBasedLog(
        topic,
        kafka_bootstrap,
        read.append,
        replication_factor=1,
        create=False,
        timeout_s=5,
        stop_at_stable_offset=True,
    )
    log.start()
    try:
        assert log._committed is None, "the marker-aware reader read compressed batches"
        assert [v for _k, v, _p, _o in read] == [value + str(n).encode() for n in range(200)]
        assert [o for _k, _v, _p, o in read] == list(range(0, 400, 2))
    finally:
        log.stop()
