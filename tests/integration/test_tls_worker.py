"""A worker whose every Kafka client talks TLS: Kafka's settings, prefixes and overrides."""

from __future__ import annotations

import uuid
from pathlib import Path

from cdk.kafka import create_topics, new_admin
from cdk.runtime.standalone._worker import EmbeddedWorker
from harness.providers.tls import TlsKafka
from tests._wait import wait_until
from tests.integration._support import FAST_GROUP, JSON


def test_a_worker_moves_records_through_a_tls_broker(tls_kafka: TlsKafka, tmp_path: Path) -> None:
    """Worker keys and a connector's overrides over TLS, as Kafka applies them.

    Unprefixed keys serve the admin clients, ``producer.`` ones the source's producer, and the
    sink reads only through its ``consumer.override.`` keys: the worker gives its consumers no
    security settings.
    """
    security = tls_kafka.client_config()
    topic = f"tls-worker-{uuid.uuid4().hex[:8]}"
    create_topics(
        new_admin({"bootstrap.servers": tls_kafka.bootstrap_servers, **security}), [topic]
    )
    props = {
        "bootstrap.servers": tls_kafka.bootstrap_servers,
        "key.converter": JSON,
        "value.converter": JSON,
        "listeners": "http://127.0.0.1:0",
        "offset.flush.interval.ms": "200",
        **security,
        **{f"producer.{k}": v for k, v in security.items()},
        **{f"consumer.{k}": v for k, v in FAST_GROUP.items()},
    }
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = [f"line {i}" for i in range(20)]
    source_file.write_text("".join(f"{line}\n" for line in lines))
    with EmbeddedWorker(props) as worker:
        herder = worker.herder
        assert herder.kafka_cluster_id is not None  # read through the admin client, over TLS
        herder.create_connector(
            "tls-source",
            {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic},
        )
        herder.create_connector(
            "tls-sink",
            {
                "connector.class": "FileStreamSink",
                "file": str(sink_file),
                "topics": topic,
                **{f"consumer.override.{k}": v for k, v in security.items()},
            },
        )

        def copied() -> bool:
            return sink_file.exists() and sink_file.read_text().splitlines() == lines

        wait_until(copied, 60, 0.1, lambda: f"the sink file to hold {len(lines)} lines")
        states = [t["state"] for t in herder.connector_status("tls-sink")["tasks"]]
        assert states == ["RUNNING"]
