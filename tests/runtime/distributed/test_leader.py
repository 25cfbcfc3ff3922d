"""The leader's fenced writes on the embedded broker (the lease is tested with whole drivers)."""

from __future__ import annotations

import threading
import uuid

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from cdk.kafka import create_topics
from cdk.runtime.distributed._assignments import AssignmentLog, LeaderRecord
from cdk.runtime.distributed._leader import FencedException, TransactionalWriter
from tests._wait import wait_until


def _committed(bootstrap: str, topic: str) -> list[bytes]:
    """The committed values of ``topic``, as a read_committed reader sees them."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    values: list[bytes] = []
    done = threading.Event()
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])

        def read() -> bool:
            for msg in consumer.consume(100, 0.2):
                if msg.error() is None:
                    values.append(msg.value())
                elif msg.error().code() == KafkaError._PARTITION_EOF:
                    done.set()
            return done.is_set()

        wait_until(read, 30, 0.0, f"the end of {topic}")
    finally:
        consumer.close()
    return values


def test_a_new_leader_fences_the_old_one_and_nothing_it_writes_is_read(
    kafka_bootstrap: str,
) -> None:
    topic = f"fence-{uuid.uuid4().hex[:8]}"
    create_topics(kafka_bootstrap, [topic], partitions=1)
    config = {"bootstrap.servers": kafka_bootstrap}
    fenced: list[bool] = []
    old = TransactionalWriter(
        f"connect-cluster-{topic}", config, on_fenced=lambda: fenced.append(True)
    )
    old.start()
    old.send(topic, [(b"k", b"before")])
    new = TransactionalWriter(f"connect-cluster-{topic}", config)
    new.start()  # fences the old one
    with pytest.raises(FencedException, match="does not lead"):
        old.send(topic, [(b"k", b"zombie")])
    assert old.fenced
    wait_until(lambda: fenced == [True], 10)
    with pytest.raises(FencedException):
        old.send(topic, [(b"k", b"again")])  # it stays fenced
    new.send(topic, [(b"k", b"after")])
    assert _committed(kafka_bootstrap, topic) == [b"before", b"after"]


def test_a_log_of_many_committed_transactions_is_read_to_its_end_at_once(
    kafka_bootstrap: str,
) -> None:
    """Every lease renewal is a transaction of its own; each COMMIT marker takes one offset.

    A driver that starts late reads the assignments topic past hundreds of markers. Read as
    possible skipped records, each such gap cost a re-read (about 0.24 s each on the embedded
    broker) and a driver timed out at startup; with the markers found in the raw batches, a
    topic of 200 transactions comes at once, well within the 5 s this reader is given.
    """
    topic = f"lease-{uuid.uuid4().hex[:8]}"
    writer = TransactionalWriter(f"connect-cluster-{topic}", {"bootstrap.servers": kafka_bootstrap})
    leader = AssignmentLog(topic, kafka_bootstrap, replication_factor=1)
    late = AssignmentLog(topic, kafka_bootstrap, create=False, timeout_s=5.0)
    try:
        writer.start()
        leader.start()
        leader.use_writer(writer.send)
        for epoch in range(200):  # one record and one COMMIT marker each
            leader.publish_leader(LeaderRecord("d1", None, epoch))
        late.start()  # reads the topic to its end, or times out
        assert late.leader == LeaderRecord("d1", None, 199)
    finally:
        late.stop()
        leader.stop()
        writer.close()
