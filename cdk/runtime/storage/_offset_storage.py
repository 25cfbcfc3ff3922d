"""Reading and writing a connector's source offsets through an :class:`OffsetBackingStore`.

:class:`OffsetStorageReaderImpl` is the reader source tasks and connectors get;
:class:`OffsetStorageWriter` is the framework's buffered writer, flushed in snapshots.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from cdk.api import OffsetStorageReader
from cdk.errors import ConnectException, DataException
from cdk.runtime.storage._offset_format import (
    offset_key,
    offset_value,
    parse_offset_key,
    parse_offset_value,
    validate_offset_format,
)
from cdk.runtime.storage._offset_store import OffsetBackingStore

__all__ = ["OffsetStorageReaderImpl", "OffsetStorageWriter"]

log = logging.getLogger("cdk.runtime.offsets")


def _find_equivalent_keys(
    store: OffsetBackingStore, connector: str, partitions: Iterable[dict[str, Any]]
) -> dict[bytes, bytes]:
    """Stored keys equal to ``partitions`` after parsing (written with another field order)."""
    wanted = list(partitions)
    found: dict[bytes, bytes] = {}
    for key, value in store.all().items():
        try:
            name, partition = parse_offset_key(key)
        except DataException:
            continue
        if name == connector and partition in wanted:
            found[offset_key(connector, partition)] = value
    return found


class OffsetStorageReaderImpl(OffsetStorageReader):
    """The :class:`~cdk.api.OffsetStorageReader` given to source tasks and connectors.

    Args:
        store: the worker's offset store.
        connector: the connector whose offsets are read (the namespace of the keys).
    """

    def __init__(self, store: OffsetBackingStore, connector: str) -> None:
        self._store = store
        self._connector = connector
        self._closed = False

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The last committed offset of ``partition``, or ``None``."""
        return self.offsets([partition])[0][1]

    def offsets(
        self, partitions: Iterable[Mapping[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """The last committed offsets of ``partitions``, in the order given (``None`` if absent).

        Raises:
            DataException: a partition is not a map of primitive values (names the field).
            ConnectException: the reader is closed, or the store could not be read.
        """
        if self._closed:
            raise ConnectException(
                "Offset reader is closed. This is likely because the task has already been "
                "scheduled to stop but has taken longer than the graceful shutdown period to do so."
            )
        requested = [dict(p) for p in partitions]
        keys = [offset_key(self._connector, p) for p in requested]
        try:
            raw = self._store.get(keys)
            missing = [p for p, k in zip(requested, keys, strict=True) if k not in raw]
            if missing:
                raw.update(_find_equivalent_keys(self._store, self._connector, missing))
        except ConnectException as e:
            raise ConnectException(f"Failed to fetch offsets: {e}") from e
        result: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for partition, key in zip(requested, keys, strict=True):
            value: dict[str, Any] | None = None
            if key in raw:
                try:
                    value = parse_offset_value(raw[key])
                    validate_offset_format(value)
                except DataException:
                    log.exception(
                        "Failed to read the stored offset of partition %s of connector %s; "
                        "no value is returned for it",
                        partition,
                        self._connector,
                    )
                    value = None
            result.append((partition, value))
        return result

    def close(self) -> None:
        """Close the reader; later reads raise :class:`~cdk.errors.ConnectException`."""
        self._closed = True


class OffsetStorageWriter:
    """Buffers a connector's source offsets and flushes them to the store in snapshots.

    :meth:`offset` stages an offset. :meth:`begin_flush` moves the staged offsets aside as the
    snapshot to write (new offsets keep being staged meanwhile); :meth:`do_flush` writes the
    snapshot; :meth:`cancel_flush` puts an unwritten snapshot back, under any newer offsets for
    the same partitions. Only one flush runs at a time. Thread-safe.

    Args:
        store: the worker's offset store.
        connector: the connector whose offsets are written.
    """

    def __init__(self, store: OffsetBackingStore, connector: str) -> None:
        self._store = store
        self._connector = connector
        self._cond = threading.Condition()
        self._data: dict[bytes, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self._to_flush: dict[bytes, tuple[dict[str, Any], dict[str, Any] | None]] | None = None

    def offset(self, partition: Mapping[str, Any] | None, offset: Mapping[str, Any] | None) -> None:
        """Stage ``offset`` for ``partition`` (``None`` offset: delete it at the next flush).

        A ``None`` partition (a record without a source partition) is ignored.

        Raises:
            DataException: the partition or offset is not a map of primitive values.
        """
        if partition is None:
            return
        key = offset_key(self._connector, partition)
        validate_offset_format(offset)
        with self._cond:
            self._data[key] = (dict(partition), None if offset is None else dict(offset))

    def flushing(self) -> bool:
        """Whether a flush has begun and not finished or been cancelled."""
        with self._cond:
            return self._to_flush is not None

    def begin_flush(self, timeout_s: float | None = None) -> bool:
        """Snapshot the staged offsets for writing.

        Args:
            timeout_s: how long to wait for a flush in progress to finish; ``None`` does not
                wait.

        Returns:
            ``True`` when a flush began (then call :meth:`do_flush` or :meth:`cancel_flush`),
            ``False`` when there was nothing to flush.

        Raises:
            ConnectException: a flush is still in progress.
        """
        with self._cond:
            if self._to_flush is not None and timeout_s is not None and timeout_s > 0:
                self._cond.wait_for(lambda: self._to_flush is None, timeout=timeout_s)
            if self._to_flush is not None:
                raise ConnectException("OffsetStorageWriter is already flushing")
            if not self._data:
                return False
            self._to_flush = self._data
            self._data = {}
            return True

    def do_flush(self) -> None:
        """Write the snapshot taken by :meth:`begin_flush` to the store.

        On failure the snapshot is put back (as :meth:`cancel_flush`) and the error raised.

        Raises:
            ConnectException: no flush in progress, or the store could not write.
        """
        with self._cond:
            snapshot = self._to_flush
            if snapshot is None:
                raise ConnectException("No offset flush in progress: call begin_flush() first")
            serialized = {key: offset_value(offset) for key, (_p, offset) in snapshot.items()}
        try:
            self._store.set(serialized)
        except BaseException as e:
            self.cancel_flush()
            if isinstance(e, ConnectException) or not isinstance(e, Exception):
                raise
            raise ConnectException(f"Failed to write offsets: {e}") from e
        with self._cond:
            if self._to_flush is snapshot:
                self._to_flush = None
                self._cond.notify_all()
        log.debug("Flushed %d offsets of connector %s", len(serialized), self._connector)

    def cancel_flush(self) -> None:
        """Abandon the flush in progress, keeping its offsets staged (newer ones win)."""
        with self._cond:
            if self._to_flush is None:
                return
            merged = self._to_flush
            merged.update(self._data)
            self._data = merged
            self._to_flush = None
            self._cond.notify_all()

    def staged(self) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """The offsets staged and not yet in a flush (for tests and diagnostics)."""
        with self._cond:
            return list(self._data.values())
