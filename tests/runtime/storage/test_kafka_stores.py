"""The config and status stores of distributed mode, on the embedded broker.

The records are read back with a plain confluent-kafka consumer and compared byte for byte with
what Kafka Connect's ``KafkaConfigBackingStore`` and ``KafkaStatusBackingStore`` write.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

from cdk.errors import ConfigException
from cdk.runtime._status import ConnectorTaskId, State, Status, TargetState
from cdk.runtime.storage._config_store import KafkaConfigBackingStore
from cdk.runtime.storage._status_store import KafkaStatusBackingStore
from tests._wait import wait_until


def _topic(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"


def _records(bootstrap: str, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every record of ``topic`` as (partition, key, value), in offset order per partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": _topic("reader"),
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in partitions
        }
        out: list[tuple[int, int, bytes | None, bytes | None]] = []
        done = {p for p, end in ends.items() if end == 0}

        def read() -> bool:
            for msg in consumer.consume(1000, 0.2):
                if msg.error():
                    # the end (a transaction's commit marker may hold the last offset)
                    if msg.error().code() == KafkaError._PARTITION_EOF:
                        done.add(msg.partition())
                    continue
                out.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
                if msg.offset() + 1 >= ends[msg.partition()]:
                    done.add(msg.partition())
            return len(done) == len(ends)

        wait_until(read, 20, 0.0, f"the end of {topic}")
        out.sort()
        return [(p, k, v) for p, _o, k, v in out]
    finally:
        consumer.close()


def _topic_config(bootstrap: str, topic: str) -> tuple[int, str]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    partitions = len(admin.list_topics(topic=topic, timeout=10).topics[topic].partitions)
    futures = admin.describe_configs([ConfigResource("topic", topic)])
    entries: Any = next(iter(futures.values())).result(timeout=10)
    return partitions, entries["cleanup.policy"].value


# ------------------------------------------------------------------------------ config topic
def test_config_store_writes_kafkas_records_and_reads_them_back(kafka_bootstrap: str) -> None:
    topic = _topic("configs")
    with KafkaConfigBackingStore(topic, kafka_bootstrap, replication_factor=1) as store:
        store.put_connector_config(
            "c", {"connector.class": "X", "tasks.max": "2"}, TargetState.STOPPED
        )
        generation = store.put_task_configs("c", [{"task.class": "T", "n": "0"}, {"n": "1"}])
        store.put_target_state("c", TargetState.PAUSED)
        store.put_restart_request("c", include_tasks=True, only_failed=False)
        snapshot = store.snapshot()
    assert _topic_config(kafka_bootstrap, topic) == (1, "compact")
    assert _records(kafka_bootstrap, topic) == [
        (0, b"target-state-c", b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        (0, b"connector-c", b'{"properties":{"connector.class":"X","tasks.max":"2"}}'),
        (0, b"task-c-0", b'{"properties":{"task.class":"T","n":"0"}}'),
        (0, b"task-c-1", b'{"properties":{"n":"1"}}'),
        (0, b"commit-c", b'{"tasks":2}'),
        (0, b"target-state-c", b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        (0, b"restart-connector-c", b'{"include-tasks":true,"only-failed":false}'),
    ]
    assert generation == 4  # the commit record's offset
    assert snapshot.generations == {"c": 4}
    assert snapshot.tasks("c") == [{"task.class": "T", "n": "0"}, {"n": "1"}]
    assert snapshot.target_state("c") is TargetState.PAUSED
    # a restarted store (a new driver) reads the same state from the topic alone
    with KafkaConfigBackingStore(topic, kafka_bootstrap, replication_factor=1) as again:
        assert again.snapshot() == snapshot


def test_task_configs_apply_only_with_a_complete_commit(kafka_bootstrap: str) -> None:
    topic = _topic("configs")
    with KafkaConfigBackingStore(topic, kafka_bootstrap, replication_factor=1) as store:
        store.put_connector_config("a-b", {"k": "v"})
        store.put_task_configs("a-b", [{"i": "0"}])
        producer = Producer({"bootstrap.servers": kafka_bootstrap})
        # a new task set written halfway (a herder died before its commit record)
        producer.produce(topic, key=b"task-a-b-0", value=b'{"properties":{"i":"new"}}')
        producer.flush(10)
        assert store.refresh().tasks("a-b") == [{"i": "0"}]
        # a commit of 2 tasks with only task 0 written: inconsistent, the old configs stay
        producer.produce(topic, key=b"commit-a-b", value=b'{"tasks":2}')
        producer.flush(10)
        snapshot = store.refresh()
        assert snapshot.inconsistent == {"a-b"}
        assert snapshot.tasks("a-b") == [{"i": "0"}]
        # a complete rewrite makes it consistent again
        store.put_task_configs("a-b", [{"i": "x"}, {"i": "y"}])
        snapshot = store.snapshot()
        assert snapshot.inconsistent == frozenset()
        assert snapshot.tasks("a-b") == [{"i": "x"}, {"i": "y"}]
        # a malformed record is skipped, not fatal
        producer.produce(topic, key=b"connector-bad", value=b"not json")
        producer.flush(10)
        assert "bad" not in store.refresh().connectors()
        # deletion: tombstones for the connector and its target state
        store.remove_connector_config("a-b")
        snapshot = store.snapshot()
        assert snapshot.connectors() == []
        assert snapshot.tasks("a-b") == []
        assert snapshot.target_state("a-b") is None
    assert _records(kafka_bootstrap, topic)[-2:] == [
        (0, b"connector-a-b", None),
        (0, b"target-state-a-b", None),
    ]


def test_config_store_listener_hears_other_writers(kafka_bootstrap: str) -> None:
    topic = _topic("configs")
    heard: list[tuple[str, tuple[Any, ...]]] = []

    class Listener:
        def __getattr__(self, name: str) -> Any:
            return lambda *args: heard.append((name, args))

    with (
        KafkaConfigBackingStore(topic, kafka_bootstrap, replication_factor=1) as writer,
        KafkaConfigBackingStore(
            topic, kafka_bootstrap, listener=Listener(), create=False
        ) as reader,
    ):
        writer.put_connector_config("c", {"k": "v"})
        gen = writer.put_task_configs("c", [{}])
        writer.put_target_state("c", TargetState.PAUSED)
        writer.put_restart_request("c", include_tasks=False, only_failed=True)
        writer.remove_connector_config("c")
        reader.refresh()
    assert heard == [
        ("on_connector_config_update", ("c",)),
        ("on_task_config_update", ("c", gen)),
        ("on_target_state_change", ("c", TargetState.PAUSED)),
        ("on_restart_request", ("c", False, True)),
        ("on_connector_config_remove", ("c",)),
    ]


def test_config_store_needs_a_compacted_topic_and_a_name(kafka_bootstrap: str) -> None:
    with pytest.raises(ConfigException, match=r"config\.storage\.topic"):
        KafkaConfigBackingStore("", kafka_bootstrap)
    from confluent_kafka.admin import NewTopic

    topic = _topic("configs")
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    new = NewTopic(
        topic, num_partitions=1, replication_factor=1, config={"cleanup.policy": "delete"}
    )
    admin.create_topics([new])[topic].result(timeout=10)
    store = KafkaConfigBackingStore(topic, kafka_bootstrap)
    with pytest.raises(
        ConfigException, match=r"config topic .*cleanup\.policy=compact.*config\.storage\.topic"
    ):
        store.start()
    store.stop()
    topic = _topic("configs")
    new = NewTopic(
        topic, num_partitions=2, replication_factor=1, config={"cleanup.policy": "compact"}
    )
    admin.create_topics([new])[topic].result(timeout=10)
    with pytest.raises(ConfigException, match="required to have a single partition"):
        KafkaConfigBackingStore(topic, kafka_bootstrap).start()


# ------------------------------------------------------------------------------ status topic
def test_status_store_writes_kafkas_records_and_shares_them(kafka_bootstrap: str) -> None:
    topic = _topic("status")
    task = ConnectorTaskId("c", 1)
    with (
        KafkaStatusBackingStore(topic, kafka_bootstrap, replication_factor=1) as driver,
        KafkaStatusBackingStore(topic, kafka_bootstrap, create=False) as executor,
    ):
        driver.set_generation("c", 7)
        driver.put_connector("c", Status(State.RUNNING, "driver:8083"))
        executor.put_task(task, Status(State.FAILED, "exec-1", "Trace\nline"), generation=7)
        executor.active_topics("c").record("orders", task)
        executor.active_topics("c").record("orders", task)  # known: not written again
        # each sees what the other wrote
        assert executor.connector("c") == Status(State.RUNNING, "driver:8083")
        assert driver.task(task) == Status(State.FAILED, "exec-1", "Trace\nline")
        assert driver.topics("c") == ["orders"]
        # a late status of an older generation does not replace a newer one
        executor.put_task(task, Status(State.RUNNING, "exec-2"), generation=9)
        executor.put_task(task, Status(State.UNASSIGNED, "exec-1"), generation=7)
        assert driver.task(task) == Status(State.RUNNING, "exec-2")
        driver.put_connector("c", Status(State.DESTROYED, "driver:8083"))
        assert executor.connector("c") is None
        driver.reset_topics("c")
        assert executor.topics("c") == []
    partitions, policy = _topic_config(kafka_bootstrap, topic)
    assert (partitions, policy) == (5, "compact")
    records = [(k, v) for _p, k, v in _records(kafka_bootstrap, topic)]
    assert (
        b"status-connector-c",
        b'{"state":"RUNNING","trace":null,"worker_id":"driver:8083","generation":7}',
    ) in records
    assert (
        b"status-task-c-1",
        b'{"state":"FAILED","trace":"Trace\\nline","worker_id":"exec-1","generation":7}',
    ) in records
    topic_records = [(k, v) for k, v in records if k == b"status-topic-orders:connector-c"]
    assert len(topic_records) == 2
    assert topic_records[1][1] is None
    assert topic_records[0][1] is not None
    assert topic_records[0][1].startswith(
        b'{"topic":{"name":"orders","connector":"c","task":1,"discoverTimestamp":'
    )
    assert (b"status-connector-c", None) in records  # DESTROYED is a tombstone


def test_status_store_remove_connector_tombstones_everything(kafka_bootstrap: str) -> None:
    topic = _topic("status")
    with KafkaStatusBackingStore(topic, kafka_bootstrap, partitions=1, replication_factor=1) as s:
        s.put_connector("c", Status(State.RUNNING, "w"))
        s.put_task(ConnectorTaskId("c", 0), Status(State.RUNNING, "w"))
        s.active_topics("c").record("t", ConnectorTaskId("c", 0))
        s.remove_connector("c")
        assert s.connector("c") is None
        assert s.tasks("c") == {}
        assert s.topics("c") == []
    with KafkaStatusBackingStore(topic, kafka_bootstrap) as again:
        assert again.connectors() == set()
        assert again.tasks("c") == {}
