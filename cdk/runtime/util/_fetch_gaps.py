"""Records a fetch skipped: noticed, read again once, counted and logged.

A consumer reading a partition in order expects every record at the offset after the one it
took before. The embedded broker (Tansu) sometimes answers a fetch with records that begin past
the offset asked for, although it holds the records in between (a reader that starts again
finds them): a sink that went on would commit past records it never read. Genuine holes in the
offsets look the same to the consumer: a compacted topic, the control records that end
transactions (one offset each), aborted transactions under ``read_committed``, deleted records.

:class:`FetchGaps` tells them apart the only way a client can: the reader seeks the partition
back to the offset it expected and reads once more. If the records come from that offset, the
broker had skipped them (a *healed* gap: counted, and logged once per partition as a WARNING);
if they begin past it again, the offsets are empty and the reader takes the records as they
are. One re-read per gap, so a compacted or transactional partition costs one extra fetch per
hole and never loops.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

__all__ = ["FetchGaps", "PartitionKey"]

log = logging.getLogger("cdk.runtime.fetchgaps")

#: A partition as the readers key it: (topic, partition).
PartitionKey = tuple[str, int]


class FetchGaps:
    """The re-reads in flight of one consumer, and the gaps they healed.

    The reader calls :meth:`check` for a record whose offset is not the one it expected (and
    for the first record of a partition it is reading again). When :meth:`check` returns
    False, the reader seeks the partition back to the expected offset, drops the records of
    that partition it still holds from the same fetch, and takes none of them: the ones after
    the gap come again after the ones before it, in order.

    Args:
        owner: names the reader in log messages (a task runner, a log).
        on_heal: called once per healed gap (a metric's counter).
    """

    __slots__ = ("_on_heal", "_owner", "_pending", "_warned", "confirmed", "healed")

    def __init__(self, owner: object, on_heal: Callable[[], None] | None = None) -> None:
        self._owner = owner
        self._on_heal = on_heal
        # partition -> (offset read again from, offset the skipping fetch began at)
        self._pending: dict[PartitionKey, tuple[int, int]] = {}
        self._warned: set[PartitionKey] = set()
        #: Gaps healed since the reader started.
        self.healed = 0
        #: Gaps a re-read found again, taken as genuine holes in the offsets.
        self.confirmed = 0

    @property
    def rereading(self) -> bool:
        """Whether a partition is being read again (its next record decides the gap)."""
        return bool(self._pending)

    def check(self, key: PartitionKey, expected: int, offset: int) -> bool:
        """Whether to take the record at ``offset`` of partition ``key``.

        Args:
            key: the record's (topic, partition).
            expected: the offset the reader expects next in that partition.
            offset: the record's offset.

        Returns:
            True to take the record (in order; the first of a re-read that healed its gap; or
            past a gap that the re-read confirmed); False when the reader must seek the
            partition back to ``expected`` and read again.
        """
        pending = self._pending.pop(key, None)
        if pending is not None and pending[0] != expected:
            pending = None  # the reader moved since (a rewind): that re-read is moot
        if offset <= expected:
            # In order (or behind: the reader moved back on its own; nothing was skipped).
            if pending is not None and offset == expected:
                self._healed(key, pending)
            return True
        if pending is not None:
            self.confirmed += 1
            log.debug(
                "%s %s-%d has no records between offsets %d and %d (compacted, transaction "
                "markers or deleted records): a second read began at %d again",
                self._owner,
                key[0],
                key[1],
                expected,
                offset,
                offset,
            )
            return True
        self._pending[key] = (expected, offset)
        log.debug(
            "%s a fetch of %s-%d expected at offset %d began at %d: reading again from %d",
            self._owner,
            key[0],
            key[1],
            expected,
            offset,
            expected,
        )
        return False

    def _healed(self, key: PartitionKey, pending: tuple[int, int]) -> None:
        self.healed += 1
        if self._on_heal is not None:
            self._on_heal()
        expected, received = pending
        if key in self._warned:
            level = logging.DEBUG
        else:
            self._warned.add(key)
            level = logging.WARNING
        log.log(
            level,
            "%s the broker skipped records of %s-%d: a fetch from offset %d returned records "
            "from offset %d; read again from %d, they came (%d offsets). Later gaps of this "
            "partition are healed the same way and logged at DEBUG",
            self._owner,
            key[0],
            key[1],
            expected,
            received,
            expected,
            received - expected,
        )

    def forget(self, keys: Iterable[PartitionKey] | None = None) -> None:
        """Drop the re-reads of ``keys`` (every partition when None): the reader moved them."""
        if keys is None:
            self._pending.clear()
            return
        for key in keys:
            self._pending.pop(key, None)

    def __repr__(self) -> str:
        return f"FetchGaps({self._owner}, rereading={sorted(self._pending)}, healed={self.healed})"
