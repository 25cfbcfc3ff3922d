from __future__ import annotations

import random
import threading

from cdk.runtime._submitted import CommittableOffsets, SubmittedRecords

P1 = {"file": "a"}
P2 = {"file": "b"}


def off(n: int) -> dict[str, int]:
    return {"position": n}


def test_nothing_submitted_is_empty() -> None:
    records = SubmittedRecords()
    snapshot = records.committable_offsets()
    assert snapshot.is_empty
    assert not snapshot.has_pending
    assert snapshot.offsets == []
    assert records.pending() == 0


def test_in_order_acks_commit_the_latest_offset() -> None:
    records = SubmittedRecords()
    handles = [records.submit(P1, off(i)) for i in range(3)]
    for h in handles:
        h.ack()
    snapshot = records.committable_offsets()
    assert snapshot.offsets == [(P1, off(2))]
    assert snapshot.num_committable == 3
    assert snapshot.num_uncommittable == 0
    assert records.pending() == 0
    # Taken once: the next snapshot has nothing new.
    assert records.committable_offsets().is_empty


def test_unacked_record_blocks_later_acked_ones_of_its_partition() -> None:
    records = SubmittedRecords()
    first = records.submit(P1, off(1))
    second = records.submit(P1, off(2))
    third = records.submit(P1, off(3))
    second.ack()
    third.ack()
    snapshot = records.committable_offsets()
    assert snapshot.offsets == []
    assert snapshot.num_committable == 0
    assert snapshot.num_uncommittable == 3
    assert snapshot.num_deques == 1
    assert snapshot.largest_deque_size == 3
    assert snapshot.largest_deque_partition == P1
    assert snapshot.has_pending
    first.ack()
    snapshot = records.committable_offsets()
    assert snapshot.offsets == [(P1, off(3))]
    assert snapshot.num_committable == 3


def test_partitions_are_independent() -> None:
    records = SubmittedRecords()
    a1 = records.submit(P1, off(1))
    records.submit(P1, off(2))  # never acked
    b1 = records.submit(P2, off(10))
    b2 = records.submit(P2, off(11))
    a1.ack()
    b2.ack()
    snapshot = records.committable_offsets()
    assert snapshot.offsets == [(P1, off(1))]
    b1.ack()
    snapshot = records.committable_offsets()
    assert snapshot.offsets == [(P2, off(11))]
    assert snapshot.num_uncommittable == 1


def test_partition_identity_ignores_field_order() -> None:
    records = SubmittedRecords()
    first = records.submit({"a": 1, "b": 2}, off(1))
    second = records.submit({"b": 2, "a": 1}, off(2))
    second.ack()
    assert records.committable_offsets().offsets == []
    first.ack()
    assert records.committable_offsets().offsets == [({"b": 2, "a": 1}, off(2))]


def test_null_partition_and_offset_are_tracked() -> None:
    records = SubmittedRecords()
    r = records.submit(None, None)
    r.ack()
    snapshot = records.committable_offsets()
    assert snapshot.offsets == [(None, None)]
    assert snapshot.num_committable == 1


def test_drop_removes_a_synchronously_rejected_record() -> None:
    records = SubmittedRecords()
    first = records.submit(P1, off(1))
    rejected = records.submit(P1, off(2))
    assert records.pending() == 2
    assert rejected.drop() is True
    assert records.pending() == 1
    assert rejected.drop() is False  # already gone
    first.ack()
    assert records.committable_offsets().offsets == [(P1, off(1))]


def test_drop_from_the_middle_and_ack_after_drop() -> None:
    records = SubmittedRecords()
    a = records.submit(P1, off(1))
    b = records.submit(P1, off(2))
    c = records.submit(P1, off(3))
    assert b.drop()
    b.ack()  # no double counting
    assert records.pending() == 2
    a.ack()
    c.ack()
    assert records.pending() == 0
    assert records.committable_offsets().offsets == [(P1, off(3))]


def test_ack_is_idempotent() -> None:
    records = SubmittedRecords()
    r = records.submit(P1, off(1))
    r.ack()
    r.ack()
    assert records.pending() == 0
    assert r.acked


def test_offsets_are_copied_at_submission() -> None:
    records = SubmittedRecords()
    partition = {"file": "a"}
    offset = {"position": 1}
    r = records.submit(partition, offset)
    partition["file"] = "changed"
    offset["position"] = 99
    r.ack()
    assert records.committable_offsets().offsets == [({"file": "a"}, {"position": 1})]


def test_await_all_messages_times_out_then_succeeds() -> None:
    records = SubmittedRecords()
    r = records.submit(P1, off(1))
    assert records.await_all_messages(0.05) is False
    acker = threading.Thread(target=r.ack, name="test-acker")
    acker.start()
    assert records.await_all_messages(10.0) is True
    acker.join()
    assert records.await_all_messages(0.0) is True  # nothing in flight


def test_await_all_messages_counts_drops() -> None:
    records = SubmittedRecords()
    r = records.submit(P1, off(1))
    r.drop()
    assert records.await_all_messages(0.0) is True


def test_acks_from_many_threads_commit_exactly_the_last_offset() -> None:
    records = SubmittedRecords()
    partitions = [{"p": i} for i in range(4)]
    handles = [records.submit(partitions[i % 4], off(i)) for i in range(2000)]
    shuffled = handles[:]
    random.Random(7).shuffle(shuffled)
    chunks = [shuffled[i::8] for i in range(8)]
    threads = [
        threading.Thread(target=lambda c=c: [h.ack() for h in c], name=f"test-ack-{n}")
        for n, c in enumerate(chunks)
    ]
    for t in threads:
        t.start()
    assert records.await_all_messages(30.0)
    for t in threads:
        t.join()
    snapshot = records.committable_offsets()
    assert {p["p"]: o["position"] for p, o in snapshot.offsets} == {
        0: 1996,
        1: 1997,
        2: 1998,
        3: 1999,
    }
    assert snapshot.num_committable == 2000


def test_committable_offsets_updated_with_newer_snapshot() -> None:
    older = CommittableOffsets(
        offsets=[(P1, off(1)), (P2, off(5))], num_committable=2, num_uncommittable=4
    )
    newer = CommittableOffsets(
        offsets=[({"file": "a"}, off(2))],
        num_committable=1,
        num_uncommittable=1,
        num_deques=1,
        largest_deque_size=1,
        largest_deque_partition=P2,
    )
    merged = older.updated_with(newer)
    assert sorted(merged.offsets, key=lambda po: po[0]["file"]) == [(P1, off(2)), (P2, off(5))]
    assert merged.num_committable == 3
    assert merged.num_uncommittable == 1
    assert merged.largest_deque_partition == P2


def test_ack_wakes_a_thread_already_waiting() -> None:
    from tests._wait import wait_until

    records = SubmittedRecords()
    r = records.submit(P1, off(1))
    result: list[bool] = []
    waiter = threading.Thread(
        target=lambda: result.append(records.await_all_messages(30.0)), name="test-waiter"
    )
    waiter.start()
    wait_until(lambda: records._num_waiting == 1, 10.0, message="the waiter waits")
    r.ack()
    waiter.join(10.0)
    assert result == [True]
    assert records._num_waiting == 0


def test_consecutive_equal_partitions_share_a_queue_whatever_the_object() -> None:
    records = SubmittedRecords()
    handles = [records.submit({"file": "a"}, off(i)) for i in range(3)]  # new dicts, equal
    other = records.submit({"file": "b"}, off(7))
    again = records.submit({"file": "a"}, off(3))
    for h in [*handles, other, again]:
        h.ack()
    snapshot = records.committable_offsets()
    assert sorted(snapshot.offsets, key=repr) == [({"file": "a"}, off(3)), ({"file": "b"}, off(7))]
    assert snapshot.num_committable == 5


def test_partitions_equal_in_python_but_not_in_java_stay_apart() -> None:
    # 1 == 1.0 == True in Python; as Java maps (and as offset keys) they are three partitions.
    records = SubmittedRecords()
    blocked = records.submit({"id": 1}, off(1))
    as_float = records.submit({"id": 1.0}, off(2))
    as_bool = records.submit({"id": True}, off(3))
    nested = records.submit({"id": [1]}, off(4))
    nested_float = records.submit({"id": [1.0]}, off(5))
    for h in (as_float, as_bool, nested, nested_float):
        h.ack()
    snapshot = records.committable_offsets()
    assert sorted(snapshot.offsets, key=repr) == sorted(
        [
            ({"id": 1.0}, off(2)),
            ({"id": True}, off(3)),
            ({"id": [1]}, off(4)),
            ({"id": [1.0]}, off(5)),
        ],
        key=repr,
    )
    assert snapshot.num_uncommittable == 1  # {"id": 1} waits for its own record only
    blocked.ack()
    assert records.committable_offsets().offsets == [({"id": 1}, off(1))]


def test_a_partition_mutated_after_submission_keeps_its_queue() -> None:
    records = SubmittedRecords()
    partition = {"file": "a"}
    first = records.submit(partition, off(1))
    partition["file"] = "b"  # the connector reuses its map: the next record is another partition
    second = records.submit(partition, off(2))
    second.ack()
    assert records.committable_offsets().offsets == [({"file": "b"}, off(2))]
    first.ack()
    assert records.committable_offsets().offsets == [({"file": "a"}, off(1))]
