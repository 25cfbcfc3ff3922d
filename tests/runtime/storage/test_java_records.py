"""Java Kafka Connect 3.9's own records, as its ``connect-distributed`` wrote them (exactly-once).

``java39_eos_records.json`` holds the config, offset and status records a Java 3.9.0 worker with
``exactly.once.source.support=enabled`` wrote (two FileStreamSource connectors, one with
``exactly.once.support=required`` and ``transaction.boundary=interval``, reconfigured, paused,
resumed, restarted, stopped, deleted; its session key and its ``tasks-fencing-`` task-count
records), captured ``read_committed`` from the embedded broker: the exact key and value bytes,
the partition of each offset and status record. The kit must read them as Java does and write
the same bytes for the same input, so either worker can take over the other's topics; no JVM is
needed here.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from cdk.runtime._eos_source_runner import murmur2_partition
from cdk.runtime._status import State, Status, TargetState
from cdk.runtime.distributed._fencing import producers_to_fence
from cdk.runtime.storage import (
    KafkaConfigBackingStore,
    KafkaOffsetBackingStore,
    OffsetStorageReaderImpl,
    offset_key,
    offset_value,
    parse_offset_key,
    parse_offset_value,
)
from cdk.runtime.storage._cluster_records import (
    decode_config,
    decode_status,
    encode_commit,
    encode_properties,
    encode_restart,
    encode_status,
    encode_target_state,
    encode_task_count,
    encode_topic_status,
)
from tests.runtime.storage.test_kafka_stores import _records

JAVA: dict[str, Any] = json.loads(
    (Path(__file__).parent / "java39_eos_records.json").read_text(encoding="utf-8")
)
FILE1 = "/work/java-kafka/run/in1.txt"


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8")


def _config_records() -> list[tuple[str, bytes | None]]:
    later = JAVA["config_topic_after_cdk"]["records"]
    return [(r["key"], _bytes(r["value"])) for r in JAVA["config_topic"] + later]


def _reencoded(key: str, value: bytes | None) -> bytes | None:
    """What the kit writes for the record it decoded from Java's ``key``/``value``."""
    rec = decode_config(key, value)
    if value is None:
        return None
    if rec.kind in ("connector", "task"):
        assert rec.properties is not None
        return encode_properties(rec.properties)
    if rec.kind == "commit":
        assert rec.tasks is not None
        return encode_commit(rec.tasks)
    if rec.kind == "task-count":
        assert rec.tasks is not None
        return encode_task_count(rec.tasks)
    if rec.kind == "target-state":
        assert rec.target_state is not None
        return encode_target_state(rec.target_state)
    if rec.kind == "restart":
        return encode_restart(rec.include_tasks, rec.only_failed)
    raise AssertionError(f"unexpected record {key}: {rec.kind}")


# ------------------------------------------------------------------------------ no broker
def test_every_java_config_record_decodes_and_the_kit_writes_the_same_bytes() -> None:
    kinds: set[str] = set()
    for key, value in _config_records():
        if key == "session-key":
            # the leader's key for signing internal requests: the kit reads past it (its drivers
            # sign nothing), and the record is well-formed Kafka JSON
            assert decode_config(key, value).kind == "other"
            assert value is not None
            assert set(json.loads(value)) == {"key", "algorithm", "creation-timestamp"}
            kinds.add("session-key")
            continue
        kinds.add(decode_config(key, value).kind)
        assert _reencoded(key, value) == value, key
    # every kind of record an exactly-once Java cluster writes is covered
    assert kinds == {
        "session-key",
        "connector",
        "task",
        "commit",
        "task-count",
        "target-state",
        "restart",
    }


def test_java_task_count_and_target_state_records_decode_as_kafka_means_them() -> None:
    records = dict(_config_records())
    assert decode_config("tasks-fencing-fsrc", records["tasks-fencing-fsrc"]).tasks == 1
    assert records["tasks-fencing-fsrc"] == encode_task_count(1) == b'{"task-count":1}'
    stopped = decode_config("target-state-ksrc2", records["target-state-ksrc2"])
    assert stopped.target_state is TargetState.STOPPED
    assert encode_target_state(TargetState.STOPPED) == (b'{"state":"PAUSED","state.v2":"STOPPED"}')
    deleted = decode_config("connector-kstop", records["connector-kstop"])
    assert deleted.kind == "connector"
    assert deleted.properties is None


def test_java_connector_config_and_kit_config_for_the_same_request_are_equal() -> None:
    java = next(v for k, v in _config_records() if k == "connector-fsrc")  # as first created
    assert java is not None
    # the body of Java's PUT /connectors/fsrc/config, in its order, then the name Java adds
    request = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "tasks.max": "1",
        "file": FILE1,
        "topic": "eos-out1",
        "exactly.once.support": "required",
        "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": "500",
    }
    assert json.loads(encode_properties({**request, "name": "fsrc"})) == json.loads(java)
    assert encode_properties({**request, "name": "fsrc"}) == java


def test_java_offsets_keys_values_and_partitions_are_the_kits() -> None:
    topic = JAVA["offset_topic"]
    for rec in topic["records"]:
        key, value = _bytes(rec["key"]), _bytes(rec["value"])
        assert key is not None
        assert value is not None
        connector, partition = parse_offset_key(key)
        assert offset_key(connector, partition) == key
        assert offset_value(parse_offset_value(value)) == value
        # the partition Java's producer chose is the one the kit's stores and tasks choose
        assert murmur2_partition(key, topic["partitions"]) == rec["partition"], rec["key"]
    assert offset_key("fsrc", {"filename": FILE1}) == _bytes(topic["records"][0]["key"])


def test_java_status_records_are_the_kits_bytes_and_partitions() -> None:
    topic = JAVA["status_topic"]
    seen: set[str] = set()
    for rec in topic["records"]:
        key, value = rec["key"], _bytes(rec["value"])
        assert murmur2_partition(key.encode(), topic["partitions"]) == rec["partition"], key
        decoded = decode_status(key, value)
        seen.add(decoded.kind)
        if decoded.kind == "topic":
            assert decoded.task is not None
            assert decoded.topic is not None
            assert decoded.discover_timestamp_ms is not None
            written = encode_topic_status(
                decoded.topic, decoded.task, decoded.discover_timestamp_ms
            )
        else:
            assert decoded.status is not None
            written = encode_status(decoded.status, decoded.generation)
        assert written == value, key
    assert seen == {"connector", "task", "topic"}
    assert encode_status(Status(State.RUNNING, "127.0.0.1:18083"), 2) == _bytes(
        topic["records"][0]["value"]
    )


def test_fencing_after_javas_task_count_record_follows_kafka() -> None:
    # Java's last record for fsrc says its generation had one task: a new single-task
    # generation fences nothing (its own producer does), a wider one fences that task's id
    records = dict(_config_records())
    count = decode_config("tasks-fencing-fsrc", records["tasks-fencing-fsrc"]).tasks
    group = JAVA["group_id"]
    assert producers_to_fence(group, "fsrc", count, 1) == []
    assert producers_to_fence(group, "fsrc", count, 2) == [f"{group}-fsrc-0"]


# ------------------------------------------------------------------------------ on the broker
def test_the_kits_stores_read_javas_topics(kafka_bootstrap: str) -> None:
    suffix = uuid.uuid4().hex[:8]
    configs, offsets = f"java-configs-{suffix}", f"java-offsets-{suffix}"
    with KafkaConfigBackingStore(configs, kafka_bootstrap, replication_factor=1):
        pass  # creates the topic as a worker does (one partition, compacted)
    with KafkaOffsetBackingStore(offsets, kafka_bootstrap, partitions=2, replication_factor=1):
        pass
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for name, config in _config_records():
        producer.produce(configs, key=name.encode(), value=config, partition=0)
    for rec in JAVA["offset_topic"]["records"]:
        producer.produce(
            offsets, key=_bytes(rec["key"]), value=_bytes(rec["value"]), partition=rec["partition"]
        )
    assert producer.flush(10) == 0

    with KafkaConfigBackingStore(configs, kafka_bootstrap, replication_factor=1) as store:
        state = store.snapshot()
    assert state.connectors() == ["fsrc", "fsrc2", "ksrc"]  # kstop was deleted
    assert state.connector_configs["fsrc"]["tasks.max"] == "2"  # its reconfiguration
    assert state.target_state("fsrc2") is TargetState.STARTED  # paused, then resumed
    assert state.target_state("ksrc2") is None  # its config was written by the kit, not here
    assert state.task_configs["ksrc2"] == ()  # stopped: Java's empty commit
    assert state.task_count_records == {"fsrc": 1, "fsrc2": 1, "ksrc": 1, "ksrc2": 1}
    assert state.pending_fencing == {"ksrc2"}  # its empty commit came after its last record
    [task] = state.tasks("fsrc")
    assert task["task.class"] == "org.apache.kafka.connect.file.FileStreamSourceTask"
    assert task["tasks.max"] == "2"
    assert task["file"] == FILE1

    with KafkaOffsetBackingStore(offsets, kafka_bootstrap, partitions=2) as offset_store:
        reader = OffsetStorageReaderImpl(offset_store, "fsrc")
        # the last of Java's transactional offset commits for the file
        assert reader.offset({"filename": FILE1}) == {"position": 16893}
        # what the kit writes for the same position lands where Java's did, byte for byte
        fsrc_key = offset_key("fsrc", {"filename": FILE1})
        offset_store.set({fsrc_key: offset_value({"position": 16893})})
    written = [(p, k, v) for p, k, v in _records(kafka_bootstrap, offsets) if k == fsrc_key]
    java = [
        (r["partition"], _bytes(r["key"]), _bytes(r["value"]))
        for r in JAVA["offset_topic"]["records"]
        if _bytes(r["key"]) == fsrc_key
    ]
    assert written[: len(java)] == java
    assert written[-1] == java[-1]


@pytest.mark.parametrize("state", [TargetState.PAUSED, TargetState.STARTED, TargetState.STOPPED])
def test_target_state_bytes_match_javas(state: TargetState) -> None:
    java = {
        TargetState.PAUSED: b'{"state":"PAUSED","state.v2":"PAUSED"}',
        TargetState.STARTED: b'{"state":"STARTED","state.v2":"STARTED"}',
        TargetState.STOPPED: b'{"state":"PAUSED","state.v2":"STOPPED"}',
    }[state]
    assert java in {v for _k, v in _config_records()}  # each is one Java wrote
    assert encode_target_state(state) == java
    assert decode_config("target-state-x", java).target_state is state


def test_restart_request_bytes_match_javas() -> None:
    records = dict(_config_records())
    assert records["restart-connector-ksrc"] == encode_restart(True, False)
    rec = decode_config("restart-connector-ksrc", records["restart-connector-ksrc"])
    assert (rec.connector, rec.include_tasks, rec.only_failed) == ("ksrc", True, False)
