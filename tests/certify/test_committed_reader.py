"""The harness's read_committed reader hides what Kafka hides, on the embedded broker too."""

from __future__ import annotations

import uuid

from confluent_kafka import Producer

from harness.certify._committed import read_committed
from tests.integration._support import make_topic


def _producer(bootstrap: str) -> Producer:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": f"reader-{uuid.uuid4().hex}",
            "linger.ms": 0,
        }
    )
    producer.init_transactions(10)
    return producer


def test_aborted_and_open_transactions_are_hidden_committed_and_plain_records_shown(
    kafka_bootstrap: str,
) -> None:
    topic = make_topic(kafka_bootstrap)
    first, second = _producer(kafka_bootstrap), _producer(kafka_bootstrap)
    plain = Producer({"bootstrap.servers": kafka_bootstrap})
    first.begin_transaction()
    first.produce(topic, b"aborted", b"k1", headers=[("h", b"v")])
    first.flush(10)
    second.begin_transaction()
    second.produce(topic, b"committed later", b"k2")
    second.flush(10)
    plain.produce(topic, b"plain", b"k3")
    plain.flush(10)
    first.abort_transaction(10)
    second.commit_transaction(10)
    first.begin_transaction()
    first.produce(topic, b"committed", b"k4", headers=[("h", b"v")])
    first.commit_transaction(10)
    second.begin_transaction()
    second.produce(topic, b"still open", b"k5")
    second.flush(10)

    host, port = kafka_bootstrap.split(",")[0].rsplit(":", 1)
    records = read_committed(host, int(port), topic, 0)
    assert sorted(m.value() or b"" for m in records) == [b"committed", b"committed later", b"plain"]
    committed = next(m for m in records if m.value() == b"committed")
    assert committed.key() == b"k4"
    assert committed.headers() == [("h", b"v")]
    second.abort_transaction(10)
