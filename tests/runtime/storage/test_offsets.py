from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import pytest

from cdk.errors import ConfigException, ConnectException, DataException
from cdk.runtime.storage import (
    FileOffsetBackingStore,
    KafkaOffsetBackingStore,
    MemoryOffsetBackingStore,
    OffsetBackingStore,
    OffsetStorageReaderImpl,
    OffsetStorageWriter,
    connector_offsets,
    offset_key,
    offset_value,
    parse_offset_key,
    parse_offset_value,
    reset_connector_offsets,
    validate_offset_format,
    write_connector_offsets,
)

# --------------------------------------------------------------------------------------------
# Broker: the session's embedded broker (tests/conftest.py).


@pytest.fixture
def bootstrap(kafka_bootstrap: str) -> str:
    return kafka_bootstrap


# --------------------------------------------------------------------------------------------
# Format


def test_offset_key_and_value_use_kafka_connect_format() -> None:
    assert offset_key("local-file-source", {"filename": "/x"}) == (
        b'["local-file-source",{"filename":"/x"}]'
    )
    assert offset_value({"position": 70}) == b'{"position":70}'
    assert offset_value(None) is None


def test_offset_key_is_independent_of_field_order() -> None:
    assert offset_key("c", {"b": 1, "a": 2}) == offset_key("c", {"a": 2, "b": 1})
    assert offset_key("c", {"b": 1, "a": 2}) == b'["c",{"a":2,"b":1}]'


def test_offset_encoding_of_primitives() -> None:
    value = offset_value(
        {"s": "é", "i": -(2**63), "f": 1.5, "t": True, "n": None, "b": b"\x00\xff"}
    )
    expected = '{"b":"AP8=","f":1.5,"i":-9223372036854775808,"n":null,"s":"é","t":true}'
    assert value == expected.encode()


def test_parse_offset_key_round_trip() -> None:
    key = offset_key("conn", {"filename": "/x", "n": 3})
    assert parse_offset_key(key) == ("conn", {"filename": "/x", "n": 3})
    assert parse_offset_value(b'{"position":70}') == {"position": 70}
    assert parse_offset_value(None) is None
    assert parse_offset_value(b"null") is None


@pytest.mark.parametrize(
    "raw",
    [b"not json", b'{"a":1}', b'["conn"]', b'[1,{"a":1}]', b'["conn",null]', b"\xff"],
)
def test_parse_offset_key_rejects_other_shapes(raw: bytes) -> None:
    with pytest.raises(DataException):
        parse_offset_key(raw)


def test_parse_offset_value_rejects_non_objects() -> None:
    with pytest.raises(DataException, match="JSON object"):
        parse_offset_value(b"[1]")


@pytest.mark.parametrize(
    ("data", "field", "text"),
    [
        ({"pos": {"nested": 1}}, "pos", "field pos contains MAP"),
        ({"pos": [1, 2]}, "pos", "field pos contains ARRAY"),
        ({"pos": object()}, "pos", "field pos contains class builtins.object"),
        ({"pos": 2**64}, "pos", "outside the 64-bit range"),
        ({"pos": float("nan")}, "pos", "NaN"),
        ({1: "x"}, "1", "String keys"),
    ],
)
def test_validate_offset_format_names_the_bad_field(
    data: dict[object, object], field: str, text: str
) -> None:
    with pytest.raises(DataException, match=text) as info:
        validate_offset_format(data)
    assert info.value.field == field


def test_validate_offset_format_accepts_none_and_primitives() -> None:
    validate_offset_format(None)
    validate_offset_format({"a": None, "b": "x", "c": 1, "d": 1.0, "e": False, "f": b"x"})
    with pytest.raises(DataException, match="must be specified as a Map"):
        validate_offset_format([1])


def test_offset_key_rejects_invalid_partition() -> None:
    with pytest.raises(DataException, match="field f"):
        offset_key("conn", {"f": {"x": 1}})


# --------------------------------------------------------------------------------------------
# Memory and file stores


def test_memory_store_get_set_delete() -> None:
    with MemoryOffsetBackingStore() as store:
        store.set({b"a": b"1", b"b": b"2"})
        assert store.get([b"a", b"c"]) == {b"a": b"1"}
        store.set({b"a": None, b"c": b"3"})
        assert store.all() == {b"b": b"2", b"c": b"3"}


def test_file_store_survives_restart_and_is_readable_json(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "connect.offsets"
    store = FileOffsetBackingStore(path)
    store.start()
    key = offset_key("conn", {"filename": "/x"})
    store.set({key: offset_value({"position": 70}), b"\xff\x00": b"\xfe"})
    store.stop()

    document = json.loads(path.read_text(encoding="utf-8"))
    assert {"key": '["conn",{"filename":"/x"}]', "value": '{"position":70}'} in document["offsets"]
    assert {"key_base64": "/wA=", "value_base64": "/g=="} in document["offsets"]

    reopened = FileOffsetBackingStore(str(path))
    reopened.start()
    assert reopened.all() == {key: b'{"position":70}', b"\xff\x00": b"\xfe"}
    reopened.set({key: None})
    reopened.stop()
    again = FileOffsetBackingStore(path)
    again.start()
    assert again.all() == {b"\xff\x00": b"\xfe"}


def test_file_store_missing_or_empty_file_means_no_offsets(tmp_path: Path) -> None:
    store = FileOffsetBackingStore(tmp_path / "absent")
    store.start()
    assert store.all() == {}
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    store = FileOffsetBackingStore(empty)
    store.start()
    assert store.all() == {}


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b'{"offsets": [{"value": "x"}]}', b'{"offsets": [1]}', b"\xff\xfe"],
)
def test_file_store_corrupt_file_names_the_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.offsets"
    path.write_bytes(content)
    store = FileOffsetBackingStore(path)
    with pytest.raises(ConnectException, match=str(path)):
        store.start()


def test_file_store_failed_write_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "offsets"
    store = FileOffsetBackingStore(path)
    store.start()
    store.set({b"a": b"1"})
    path.unlink()
    path.mkdir()  # the rename onto it now fails
    (path / "inside").write_text("x")
    with pytest.raises(ConnectException, match=str(path)):
        store.set({b"a": b"2", b"b": b"3"})
    assert store.all() == {b"a": b"1"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["offsets"]  # no temporary left


def test_file_store_removes_stale_temporary_files(tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    stale = tmp_path / ".connect.offsets.abc123.tmp"
    stale.write_text("partial")
    other = tmp_path / "keep.tmp"
    other.write_text("x")
    FileOffsetBackingStore(path).start()
    assert not stale.exists()
    assert other.exists()


def test_file_store_writes_leave_no_temporaries(tmp_path: Path) -> None:
    store = FileOffsetBackingStore(tmp_path / "o")
    store.start()
    for i in range(5):
        store.set({b"k": str(i).encode()})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


_WRITER = textwrap.dedent(
    """
    import sys
    from cdk.runtime.storage import FileOffsetBackingStore, offset_key, offset_value

    store = FileOffsetBackingStore(sys.argv[1])
    store.start()
    key = offset_key("conn", {"filename": "/x"})
    i = 0
    while True:
        i += 1
        store.set({key: offset_value({"position": i}), b"filler-%d" % (i % 50): b"x" * 200})
        print(i, flush=True)
    """
)


@pytest.mark.slow
def test_file_store_survives_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "connect.offsets"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    try:
        assert proc.stdout is not None
        last = 0
        deadline = time.monotonic() + 60
        while last < 200:
            line = proc.stdout.readline()
            assert line, "the writer process ended early"
            last = int(line)
            assert time.monotonic() < deadline, "the writer is too slow"
        proc.send_signal(signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    for line in rest.split():
        last = int(line)
    assert proc.returncode == -signal.SIGKILL

    store = FileOffsetBackingStore(path)
    store.start()  # parses: never a torn file
    reader = OffsetStorageReaderImpl(store, "conn")
    position = reader.offset({"filename": "/x"})
    assert position is not None
    # Every acknowledged write is on disk; at most the one in progress went further.
    assert last <= position["position"] <= last + 1


# --------------------------------------------------------------------------------------------
# Reader


def test_reader_returns_offsets_in_the_order_asked() -> None:
    store = MemoryOffsetBackingStore()
    write_connector_offsets(store, "conn", [({"f": "a"}, {"pos": 1}), ({"f": "c"}, {"pos": 3})])
    write_connector_offsets(store, "other", [({"f": "b"}, {"pos": 9})])
    reader = OffsetStorageReaderImpl(store, "conn")
    assert reader.offsets([{"f": "c"}, {"f": "b"}, {"f": "a"}]) == [
        ({"f": "c"}, {"pos": 3}),
        ({"f": "b"}, None),
        ({"f": "a"}, {"pos": 1}),
    ]
    assert reader.offset({"f": "a"}) == {"pos": 1}
    assert reader.offset({"f": "zzz"}) is None


def test_reader_finds_keys_written_with_another_field_order() -> None:
    store = MemoryOffsetBackingStore()
    # As a Java worker may have written it (HashMap order, not sorted).
    store.set({b'["conn",{"z":1,"a":"x"}]': b'{"position":5}'})
    reader = OffsetStorageReaderImpl(store, "conn")
    assert reader.offset({"a": "x", "z": 1}) == {"position": 5}


def test_reader_rejects_invalid_partition() -> None:
    reader = OffsetStorageReaderImpl(MemoryOffsetBackingStore(), "conn")
    with pytest.raises(DataException, match="field f"):
        reader.offset({"f": [1]})


def test_reader_skips_unreadable_values(caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryOffsetBackingStore()
    store.set({offset_key("conn", {"f": "a"}): b"garbage"})
    reader = OffsetStorageReaderImpl(store, "conn")
    with caplog.at_level(logging.ERROR):
        assert reader.offset({"f": "a"}) is None
    assert "Failed to read the stored offset" in caplog.text


def test_reader_after_close_raises() -> None:
    reader = OffsetStorageReaderImpl(MemoryOffsetBackingStore(), "conn")
    reader.close()
    with pytest.raises(ConnectException, match="Offset reader is closed"):
        reader.offset({"f": "a"})


class _FailingStore(MemoryOffsetBackingStore):
    def __init__(self) -> None:
        super().__init__()
        self.fail = True

    def get(self, keys: Collection[bytes]) -> dict[bytes, bytes]:
        if self.fail:
            raise ConnectException("store down")
        return super().get(keys)

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        if self.fail:
            raise ConnectException("store down")
        super().set(values)


def test_reader_store_failure_is_a_connect_exception() -> None:
    reader = OffsetStorageReaderImpl(_FailingStore(), "conn")
    with pytest.raises(ConnectException, match="Failed to fetch offsets"):
        reader.offset({"f": "a"})


# --------------------------------------------------------------------------------------------
# Writer


def _stored(store: OffsetBackingStore, connector: str = "conn") -> dict[str, object]:
    return {json.dumps(o["partition"]): o["offset"] for o in connector_offsets(store, connector)}


def test_writer_flushes_staged_offsets() -> None:
    store = MemoryOffsetBackingStore()
    writer = OffsetStorageWriter(store, "conn")
    assert writer.begin_flush() is False  # nothing staged
    writer.offset({"f": "a"}, {"pos": 1})
    writer.offset({"f": "a"}, {"pos": 2})
    writer.offset({"f": "b"}, {"pos": 7})
    assert writer.begin_flush() is True
    assert writer.flushing()
    writer.do_flush()
    assert not writer.flushing()
    assert _stored(store) == {'{"f": "a"}': {"pos": 2}, '{"f": "b"}': {"pos": 7}}
    assert writer.begin_flush() is False


def test_writer_only_one_flush_at_a_time() -> None:
    writer = OffsetStorageWriter(MemoryOffsetBackingStore(), "conn")
    writer.offset({"f": "a"}, {"pos": 1})
    assert writer.begin_flush()
    writer.offset({"f": "a"}, {"pos": 2})
    with pytest.raises(ConnectException, match="already flushing"):
        writer.begin_flush()
    with pytest.raises(ConnectException, match="already flushing"):
        writer.begin_flush(timeout_s=0.05)


def test_writer_cancel_flush_keeps_newer_offsets() -> None:
    store = MemoryOffsetBackingStore()
    writer = OffsetStorageWriter(store, "conn")
    writer.offset({"f": "a"}, {"pos": 1})
    writer.offset({"f": "b"}, {"pos": 1})
    assert writer.begin_flush()
    writer.offset({"f": "a"}, {"pos": 2})  # newer, staged during the flush
    writer.cancel_flush()
    assert sorted(writer.staged(), key=lambda po: str(po[0])) == [
        ({"f": "a"}, {"pos": 2}),
        ({"f": "b"}, {"pos": 1}),
    ]
    writer.cancel_flush()  # no flush in progress: no-op
    assert writer.begin_flush()
    writer.do_flush()
    assert _stored(store) == {'{"f": "a"}': {"pos": 2}, '{"f": "b"}': {"pos": 1}}


def test_writer_failed_flush_restores_the_snapshot() -> None:
    store = _FailingStore()
    writer = OffsetStorageWriter(store, "conn")
    writer.offset({"f": "a"}, {"pos": 1})
    assert writer.begin_flush()
    with pytest.raises(ConnectException, match="store down"):
        writer.do_flush()
    assert not writer.flushing()
    store.fail = False
    assert writer.begin_flush()
    writer.do_flush()
    assert _stored(store) == {'{"f": "a"}': {"pos": 1}}


def test_writer_do_flush_without_begin_raises() -> None:
    with pytest.raises(ConnectException, match="begin_flush"):
        OffsetStorageWriter(MemoryOffsetBackingStore(), "conn").do_flush()


def test_writer_null_offset_deletes_and_null_partition_is_ignored() -> None:
    store = MemoryOffsetBackingStore()
    write_connector_offsets(store, "conn", [({"f": "a"}, {"pos": 1})])
    writer = OffsetStorageWriter(store, "conn")
    writer.offset({"f": "a"}, None)
    writer.offset(None, {"pos": 3})
    assert writer.begin_flush()
    writer.do_flush()
    assert store.all() == {}


def test_writer_rejects_invalid_offsets_when_staged() -> None:
    writer = OffsetStorageWriter(MemoryOffsetBackingStore(), "conn")
    with pytest.raises(DataException, match="field pos"):
        writer.offset({"f": "a"}, {"pos": {"line": 1}})
    with pytest.raises(DataException, match="field f"):
        writer.offset({"f": ["a"]}, {"pos": 1})
    assert writer.begin_flush() is False


# --------------------------------------------------------------------------------------------
# REST helpers


def test_connector_offsets_lists_one_connector(caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryOffsetBackingStore()
    write_connector_offsets(store, "conn", [({"f": "a"}, {"pos": 1}), ({"f": "b"}, {"pos": 2})])
    write_connector_offsets(store, "other", [({"f": "a"}, {"pos": 9})])
    store.set({b"junk": b"1"})
    with caplog.at_level(logging.WARNING):
        assert connector_offsets(store, "conn") == [
            {"partition": {"f": "a"}, "offset": {"pos": 1}},
            {"partition": {"f": "b"}, "offset": {"pos": 2}},
        ]
    assert "unexpected format" in caplog.text
    assert connector_offsets(store, "missing") == []


def test_connector_offsets_prefers_canonical_key_over_foreign_order() -> None:
    store = MemoryOffsetBackingStore()
    store.set({b'["conn",{"z":1,"a":2}]': b'{"pos":1}'})
    write_connector_offsets(store, "conn", [({"a": 2, "z": 1}, {"pos": 5})])
    assert connector_offsets(store, "conn") == [
        {"partition": {"a": 2, "z": 1}, "offset": {"pos": 5}}
    ]


def test_reset_connector_offsets_deletes_only_that_connector() -> None:
    store = MemoryOffsetBackingStore()
    write_connector_offsets(store, "conn", [({"f": "a"}, {"pos": 1}), ({"f": "b"}, {"pos": 2})])
    write_connector_offsets(store, "other", [({"f": "a"}, {"pos": 9})])
    assert reset_connector_offsets(store, "conn") == 2
    assert connector_offsets(store, "conn") == []
    assert connector_offsets(store, "other") == [{"partition": {"f": "a"}, "offset": {"pos": 9}}]
    assert reset_connector_offsets(store, "conn") == 0


# --------------------------------------------------------------------------------------------
# Kafka store (real broker)


def _topic() -> str:
    return f"offsets-{uuid.uuid4().hex[:8]}"


def test_kafka_store_creates_a_compacted_topic(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource

    topic = _topic()
    with KafkaOffsetBackingStore(topic, bootstrap, partitions=3) as store:
        assert store.all() == {}
    admin = AdminClient({"bootstrap.servers": bootstrap})
    metadata = admin.list_topics(topic=topic, timeout=10)
    assert len(metadata.topics[topic].partitions) == 3
    configs = admin.describe_configs([ConfigResource("topic", topic)])
    entries = next(iter(configs.values())).result(timeout=10)
    assert entries["cleanup.policy"].value == "compact"


def test_kafka_store_reads_back_after_restart_and_across_workers(bootstrap: str) -> None:
    topic = _topic()
    first = KafkaOffsetBackingStore(topic, bootstrap, partitions=3)
    first.start()
    second = KafkaOffsetBackingStore(topic, bootstrap, partitions=3)
    second.start()
    try:
        key_a = offset_key("conn", {"f": "a"})
        key_b = offset_key("conn", {"f": "b"})
        first.set({key_a: offset_value({"pos": 1}), key_b: offset_value({"pos": 2})})
        assert first.get([key_a, b"absent"]) == {key_a: b'{"pos":1}'}
        # Another worker sees the write once it reads to the end.
        assert second.get([key_a, key_b]) == {key_a: b'{"pos":1}', key_b: b'{"pos":2}'}
        second.set({key_a: offset_value({"pos": 10}), key_b: None})
        assert first.all() == {key_a: b'{"pos":10}'}
    finally:
        first.stop()
        second.stop()
    with KafkaOffsetBackingStore(topic, bootstrap, partitions=3) as restarted:
        reader = OffsetStorageReaderImpl(restarted, "conn")
        assert reader.offsets([{"f": "a"}, {"f": "b"}]) == [
            ({"f": "a"}, {"pos": 10}),
            ({"f": "b"}, None),
        ]


def test_kafka_store_with_writer_and_rest_helpers(bootstrap: str) -> None:
    with KafkaOffsetBackingStore(_topic(), bootstrap, partitions=1) as store:
        writer = OffsetStorageWriter(store, "conn")
        for i in range(50):
            writer.offset({"f": str(i % 5)}, {"pos": i})
        assert writer.begin_flush()
        writer.do_flush()
        assert connector_offsets(store, "conn") == [
            {"partition": {"f": str(p)}, "offset": {"pos": 45 + p}} for p in range(5)
        ]
        assert reset_connector_offsets(store, "conn") == 5
        assert connector_offsets(store, "conn") == []


def test_kafka_store_refuses_a_non_compacted_topic(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = _topic()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [
            NewTopic(
                topic, num_partitions=1, replication_factor=1, config={"cleanup.policy": "delete"}
            )
        ]
    )
    futures[topic].result(timeout=10)
    store = KafkaOffsetBackingStore(topic, bootstrap)
    with pytest.raises(ConfigException, match=r"cleanup\.policy=compact"):
        store.start()
    store.stop()


def test_kafka_store_requires_a_topic_and_a_start(bootstrap: str) -> None:
    with pytest.raises(ConfigException, match=r"offset\.storage\.topic"):
        KafkaOffsetBackingStore("", bootstrap)
    store = KafkaOffsetBackingStore(_topic(), bootstrap)
    with pytest.raises(ConnectException, match="not started"):
        store.set({b"k": b"v"})


def _transactional(bootstrap: str, transactional_id: str) -> Any:
    from confluent_kafka import Producer

    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 0}
    )
    producer.init_transactions(10)
    return producer


def test_transactional_kafka_store_hides_the_offsets_of_an_aborted_transaction(
    bootstrap: str,
) -> None:
    """A task killed between writing a transaction's offsets and its commit (the window).

    Its successor's ``init_transactions`` fences it and aborts the transaction (the broker
    writes an ABORT marker after the offsets): a store that reads the topic as Kafka's
    ``read_committed`` consumer does on a Kafka broker must not see those offsets, on the
    embedded broker too (whose fetch answers do not list aborted transactions).
    """
    topic = _topic()
    key_a = offset_key("conn", {"f": "a"})
    key_b = offset_key("conn", {"f": "b"})
    with KafkaOffsetBackingStore(topic, bootstrap, partitions=2, transactional=True) as store:
        transactional_id = f"eos-{uuid.uuid4().hex[:8]}"
        zombie = _transactional(bootstrap, transactional_id)
        zombie.begin_transaction()
        zombie.produce(topic, offset_value({"pos": 1}), key_a, partition=0)
        zombie.commit_transaction(10)
        zombie.begin_transaction()
        zombie.produce(topic, offset_value({"pos": 2}), key_a, partition=0)
        zombie.produce(topic, offset_value({"pos": 2}), key_b, partition=1)
        assert zombie.flush(10) == 0  # the offsets are in the log; no commit: it "dies"
        started = time.monotonic()
        # while the transaction is open, a read ends where it starts
        assert store.get([key_a, key_b]) == {key_a: b'{"pos":1}'}
        held = time.monotonic() - started
        successor = _transactional(bootstrap, transactional_id)  # fences it: ABORT markers
        successor.begin_transaction()
        successor.produce(topic, offset_value({"pos": 3}), key_b, partition=1)
        successor.commit_transaction(10)
        assert store.get([key_a, key_b]) == {key_a: b'{"pos":1}', key_b: b'{"pos":3}'}
    with KafkaOffsetBackingStore(topic, bootstrap, partitions=2, transactional=True) as fresh:
        assert fresh.all() == {key_a: b'{"pos":1}', key_b: b'{"pos":3}'}
    logging.getLogger(__name__).info("read held by an open transaction: %.2f s", held)
