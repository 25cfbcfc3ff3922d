"""Track source records in flight to the producer and the offsets that are safe to commit.

A source task's records are submitted in the order ``poll()`` returned them, one deque per
source partition. The producer acknowledges them in any order (from its delivery-callback
thread). The offset of a partition may be committed up to the latest record such that it and
every record submitted before it in that partition were acknowledged (or dropped): committing
further would lose the unacknowledged records if the worker died. This is Kafka Connect's
``SubmittedRecords``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CommittableOffsets", "SubmittedRecord", "SubmittedRecords"]


def _partition_key(partition: Mapping[str, Any] | None) -> str:
    """A canonical text for a source partition, equal for equal maps in any field order."""
    if partition is None:
        return "null"
    try:
        return json.dumps(dict(partition), sort_keys=True, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):
        return repr(sorted((repr(k), repr(v)) for k, v in partition.items()))


_SCALARS = (str, int, float, bool, type(None))


def _same_partition(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two partitions have the same key: equal flat maps whose values have equal types.

    ``1 == 1.0 == True`` in Python but not in Java (nor in the key text), hence the type checks;
    maps with nested values are left to :func:`_partition_key`.
    """
    if a != b:
        return False
    for name, value in a.items():
        kind = type(value)
        if type(name) is not str or kind not in _SCALARS or kind is not type(b[name]):
            return False
    return True


class SubmittedRecord:
    """One record handed to the producer; :meth:`ack` it on delivery or :meth:`drop` it.

    Attributes:
        partition: the record's source partition (``None`` when it has none).
        offset: the record's source offset (``None`` when it has none).
    """

    __slots__ = ("_acked", "_key", "_owner", "offset", "partition")

    def __init__(
        self,
        owner: SubmittedRecords,
        key: str,
        partition: dict[str, Any] | None,
        offset: dict[str, Any] | None,
    ) -> None:
        self._owner = owner
        self._key = key
        self.partition = partition
        self.offset = offset
        self._acked = False

    @property
    def acked(self) -> bool:
        """Whether the record was acknowledged (or dropped)."""
        return self._acked

    def ack(self) -> None:
        """Acknowledge the record: its offset may be committed. Safe from any thread; idempotent."""
        self._owner._ack(self)

    def drop(self) -> bool:
        """Stop tracking the record (the producer rejected it synchronously).

        Returns:
            Whether the record was still tracked.
        """
        return self._owner.remove_last_occurrence(self)

    def __repr__(self) -> str:
        return (
            f"SubmittedRecord(partition={self.partition!r}, offset={self.offset!r}, "
            f"acked={self._acked})"
        )


@dataclass(frozen=True)
class CommittableOffsets:
    """A snapshot of the offsets a source task may commit, and of what is still pending.

    Attributes:
        offsets: ``(partition, offset)`` per source partition with newly committable records
            (the latest committable offset; partition or offset may be ``None`` for records
            that had none).
        num_committable: records that became committable since the previous snapshot.
        num_uncommittable: records still waiting for themselves or an earlier record to be
            acknowledged.
        num_deques: source partitions with records still pending.
        largest_deque_size: the most records pending in one source partition.
        largest_deque_partition: that partition (``None`` when nothing is pending).
    """

    offsets: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = field(default_factory=list)
    num_committable: int = 0
    num_uncommittable: int = 0
    num_deques: int = 0
    largest_deque_size: int = 0
    largest_deque_partition: dict[str, Any] | None = None

    @property
    def is_empty(self) -> bool:
        """Whether the snapshot holds no offsets and no committable or pending records."""
        return self.num_committable == 0 and self.num_uncommittable == 0 and not self.offsets

    @property
    def has_pending(self) -> bool:
        """Whether records were still pending at the time of the snapshot."""
        return self.num_uncommittable > 0

    def updated_with(self, newer: CommittableOffsets) -> CommittableOffsets:
        """Combine with a newer snapshot: newer offsets win, committable counts add up."""
        merged = {_partition_key(p): (p, o) for p, o in self.offsets}
        merged.update({_partition_key(p): (p, o) for p, o in newer.offsets})
        return CommittableOffsets(
            offsets=list(merged.values()),
            num_committable=self.num_committable + newer.num_committable,
            num_uncommittable=newer.num_uncommittable,
            num_deques=newer.num_deques,
            largest_deque_size=newer.largest_deque_size,
            largest_deque_partition=newer.largest_deque_partition,
        )


class SubmittedRecords:
    """Records dispatched to the producer per source partition, in submission order.

    Thread-safe: records are submitted and offsets taken on the task's threads while
    acknowledgements arrive on the producer's delivery-callback thread.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._records: dict[str, deque[SubmittedRecord]] = {}
        self._num_unacked = 0
        self._num_settled = 0  # acks + drops ever, for await_all_messages
        self._num_waiting = 0  # threads in await_all_messages (acks notify only then)
        # The previous submission's partition (a copy) and key: consecutive records mostly share
        # their source partition, and comparing two small maps is much cheaper than keying one.
        self._last_partition: dict[str, Any] | None = None
        self._last_key = "null"

    def submit(
        self, partition: Mapping[str, Any] | None, offset: Mapping[str, Any] | None
    ) -> SubmittedRecord:
        """Track a record about to be sent; returns the handle to :meth:`~SubmittedRecord.ack`."""
        if partition is None:
            key, copied = "null", None
        else:
            copied = dict(partition)
            last = self._last_partition
            if last is not None and _same_partition(copied, last):
                key = self._last_key
            else:
                key = _partition_key(copied)
                self._last_partition, self._last_key = copied, key
        record = SubmittedRecord(self, key, copied, None if offset is None else dict(offset))
        with self._cond:
            queue = self._records.get(key)
            if queue is None:
                queue = self._records[key] = deque()
            queue.append(record)
            self._num_unacked += 1
        return record

    def _ack(self, record: SubmittedRecord) -> None:
        with self._cond:
            if record._acked:
                return
            record._acked = True
            self._settled()

    def _settled(self) -> None:
        self._num_unacked -= 1
        self._num_settled += 1
        if self._num_waiting:
            self._cond.notify_all()

    def remove_last_occurrence(self, record: SubmittedRecord) -> bool:
        """Stop tracking ``record`` (searching from the newest); see :meth:`SubmittedRecord.drop`.

        Returns:
            Whether the record was found.
        """
        with self._cond:
            queue = self._records.get(record._key)
            if not queue:
                return False
            if queue[-1] is record:
                queue.pop()
            else:
                for index in range(len(queue) - 1, -1, -1):
                    if queue[index] is record:
                        del queue[index]
                        break
                else:
                    return False
            if not queue:
                del self._records[record._key]
            if not record._acked:
                record._acked = True
                self._settled()
            return True

    def committable_offsets(self) -> CommittableOffsets:
        """Release the acknowledged heads of every partition and return their latest offsets."""
        offsets: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []
        committable = uncommittable = largest = 0
        largest_partition: dict[str, Any] | None = None
        with self._cond:
            for key in list(self._records):
                queue = self._records[key]
                before = len(queue)
                last: SubmittedRecord | None = None
                while queue and queue[0]._acked:
                    last = queue.popleft()
                if last is not None:
                    offsets.append((last.partition, last.offset))
                pending = len(queue)
                committable += before - pending
                uncommittable += pending
                if pending > largest:
                    largest = pending
                    largest_partition = queue[0].partition
                if not queue:
                    del self._records[key]
            num_deques = len(self._records)
        return CommittableOffsets(
            offsets=offsets,
            num_committable=committable,
            num_uncommittable=uncommittable,
            num_deques=num_deques,
            largest_deque_size=largest,
            largest_deque_partition=largest_partition,
        )

    def await_all_messages(self, timeout_s: float) -> bool:
        """Wait until every record in flight now has been acknowledged or dropped.

        Returns:
            ``True`` if they all were within ``timeout_s`` seconds.
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._cond:
            target = self._num_settled + self._num_unacked
            while self._num_settled < target:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._num_waiting += 1
                try:
                    self._cond.wait(remaining)
                finally:
                    self._num_waiting -= 1
            return True

    def pending(self) -> int:
        """How many submitted records are neither acknowledged nor dropped."""
        with self._cond:
            return self._num_unacked

    def __repr__(self) -> str:
        return f"SubmittedRecords(pending={self.pending()}, partitions={len(self._records)})"
