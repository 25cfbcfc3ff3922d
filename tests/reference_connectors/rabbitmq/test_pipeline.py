"""The RabbitMQ connectors in an in-process worker on the embedded Kafka broker.

The source acknowledges a message only once Kafka has its record: with Kafka unreachable for
the connector's producer, every message stays unacknowledged and comes back when the task
stops; a clean stop and restart redelivers nothing. The sink publishes what the topic holds.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests._wait import wait_until
from tests.integration._support import (
    Connect,
    cdk_command,
    free_port,
    make_topic,
    reading,
    stop_process,
    unique,
    worker_props,
    write_properties,
)
from tests.reference_connectors.rabbitmq._support import Rabbit

SOURCE = "reference_connectors.rabbitmq:RabbitMQSourceConnector"
SINK = "reference_connectors.rabbitmq:RabbitMQSinkConnector"
STRING = "org.apache.kafka.connect.storage.StringConverter"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


@pytest.fixture
def connect(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Callable[..., Connect]]:
    """Start workers (String keys, byte values); all are stopped at teardown."""
    started: list[Connect] = []

    def start() -> Connect:
        props = worker_props(
            kafka_bootstrap,
            tmp_path / "offsets",
            0,
            **{
                "key.converter": STRING,
                "value.converter": BYTES,
                "connector.client.config.override.policy": "All",
            },
        )
        worker = Connect(props)
        started.append(worker)
        return worker

    yield start
    for worker in reversed(started):
        worker.stop()


def _keys(reader: object) -> list[str]:
    return [m.key.decode() for m in reader.messages]  # type: ignore[attr-defined]


def test_clean_stop_and_restart_redeliver_nothing(
    rabbit: Rabbit, connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    queue = rabbit.queue()
    topic = make_topic(kafka_bootstrap, prefix="rmq")
    config = {
        **rabbit.config(),
        "connector.class": SOURCE,
        "tasks.max": "1",
        "rabbitmq.queue": queue,
        "kafka.topic": topic,
    }
    name = unique("rmq-source")
    rabbit.publish(queue, range(30))
    worker = connect()
    worker.rest.create(name, config)
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for_keys([str(i) for i in range(30)])
        # everything Kafka has is acknowledged: the queue drains (nothing ready or unacked)
        worker.stop()
        wait_until(lambda: rabbit.consumers(queue) == 0, 20, 0.05, "the task's consumer gone")
        assert rabbit.ready(queue) == 0
        rabbit.publish(queue, range(30, 40))
        worker = connect()
        worker.rest.create(name, config)
        reader.wait_for_keys([str(i) for i in range(40)])
        worker.rest.wait_state(name, "RUNNING", 1)
        reader.poll(1.0)
        assert sorted(_keys(reader), key=int) == [str(i) for i in range(40)]  # no duplicate
        assert reader.messages[0].value == b"record-0"


def test_a_killed_worker_loses_nothing(
    rabbit: Rabbit, connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    queue = rabbit.queue()
    topic = make_topic(kafka_bootstrap, prefix="rmq")
    config = {
        **rabbit.config(),
        "name": unique("rmq-source"),
        "connector.class": SOURCE,
        "tasks.max": "1",
        "rabbitmq.queue": queue,
        "kafka.topic": topic,
        "rabbitmq.batch.size": "20",
        "rabbitmq.prefetch.count": "100",
    }
    worker_file = write_properties(
        tmp_path / "worker.properties",
        worker_props(
            kafka_bootstrap,
            tmp_path / "offsets",
            free_port(),
            **{"key.converter": STRING, "value.converter": BYTES},
        ),
    )
    source_file = write_properties(tmp_path / "source.properties", config)
    rabbit.publish(queue, range(2000))
    log = (tmp_path / "worker.log").open("wb")
    proc = subprocess.Popen(
        cdk_command("standalone", str(worker_file), str(source_file)),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        with reading(kafka_bootstrap, topic) as reader:
            reader.wait_for(100, timeout=90)
            proc.kill()  # kill -9 in the middle of the stream
            proc.wait(20)
            # RabbitMQ takes back what the dead connection held unacknowledged
            wait_until(lambda: rabbit.consumers(queue) == 0, 30, 0.05, "the dead consumer gone")
            assert rabbit.ready(queue) > 0  # the kill came before the end
            worker = connect()
            worker.rest.create(config["name"], {k: v for k, v in config.items() if k != "name"})
            keys = reader.wait_for_keys([str(i) for i in range(2000)], timeout=120)
            wait_until(lambda: rabbit.ready(queue) == 0, 30, 0.05, "the queue drained")
            duplicates = sum(keys.values()) - len(keys)
            # a duplicate is a message unacknowledged at the kill: at most the prefetch count
            assert duplicates <= 100, f"{duplicates} duplicates"
    finally:
        stop_process(proc)
        log.close()


def test_nothing_is_acknowledged_before_kafka_has_the_record(
    rabbit: Rabbit, connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    queue = rabbit.queue()
    topic = unique("rmq")
    config = {
        **rabbit.config(),
        "connector.class": SOURCE,
        "tasks.max": "1",
        "rabbitmq.queue": queue,
        "kafka.topic": topic,
        "topic.creation.default.partitions": "1",
        "topic.creation.default.replication.factor": "1",
    }
    name = unique("rmq-source")
    rabbit.publish(queue, range(10))
    worker = connect()
    # the producer cannot reach Kafka: records are polled, never acknowledged by Kafka
    unreachable = {
        **config,
        "producer.override.bootstrap.servers": f"127.0.0.1:{free_port()}",
        "producer.override.delivery.timeout.ms": "600000",
    }
    worker.rest.create(name, unreachable)
    wait_until(lambda: rabbit.ready(queue) == 0, 20, 0.05, "the task to take every message")
    worker.rest.call("DELETE", f"/connectors/{name}", (200, 204))
    # none was acknowledged: RabbitMQ takes them all back when the task's connection closes
    wait_until(lambda: rabbit.ready(queue) == 10, 60, 0.1, "the 10 messages back in the queue")
    worker.rest.create(name, config)
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for_keys([str(i) for i in range(10)])
    wait_until(lambda: rabbit.ready(queue) == 0, 20, 0.05, "the queue drained")


def test_the_sink_publishes_the_topic(
    rabbit: Rabbit, connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    exchange = rabbit.exchange()
    queue = rabbit.queue("out")
    rabbit.bind(queue, exchange)
    topic = unique("rmq")
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for i in range(25):
        producer.produce(topic, key=str(i).encode(), value=f"value-{i}".encode())
    assert producer.flush(30) == 0
    worker = connect()
    worker.rest.create(
        unique("rmq-sink"),
        {
            **rabbit.config(),
            "connector.class": SINK,
            "tasks.max": "1",
            "topics": topic,
            "rabbitmq.exchange": exchange,
            "rabbitmq.value.format": "bytes",
        },
    )
    got: list[tuple[str, bytes]] = []

    def all_there() -> bool:
        got.extend((p.message_id, body) for p, body in rabbit.drain(queue))
        return len(got) >= 25

    wait_until(all_there, 60, 0.1, lambda: f"25 messages published, have {len(got)}")
    assert sorted(got, key=lambda g: int(g[0])) == [
        (str(i), f"value-{i}".encode()) for i in range(25)
    ]
