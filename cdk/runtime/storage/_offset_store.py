"""The offset backing store interface, and the in-memory store.

An :class:`OffsetBackingStore` holds serialized offsets (bytes in, bytes out; see
:mod:`cdk.runtime.storage._offset_format`). :class:`MemoryOffsetBackingStore` is for tests; the file
store (standalone mode) and the Kafka topic store (distributed mode) live in their own modules.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from types import TracebackType

__all__ = ["MemoryOffsetBackingStore", "OffsetBackingStore", "apply_changes"]


def apply_changes(data: dict[bytes, bytes], values: Mapping[bytes, bytes | None]) -> None:
    """Apply written ``values`` to ``data``: a ``None`` value deletes its key."""
    for key, value in values.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value


class OffsetBackingStore(ABC):
    """A durable key/value store of serialized offsets (bytes in, bytes out).

    Implementations are thread-safe. Use :meth:`start` before and :meth:`stop` after use, or the
    store as a context manager.
    """

    def start(self) -> None:  # noqa: B027 - optional hook
        """Open the store (read existing offsets)."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Close the store, releasing its resources."""

    @abstractmethod
    def get(self, keys: Collection[bytes]) -> dict[bytes, bytes]:
        """The stored values of ``keys``; keys with no value are left out."""

    @abstractmethod
    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Store ``values`` (``None`` deletes a key); durable when this returns.

        Raises:
            ConnectException: the write failed; nothing may be assumed stored.
        """

    @abstractmethod
    def all(self) -> dict[bytes, bytes]:
        """Every stored key and value."""

    def __enter__(self) -> OffsetBackingStore:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class MemoryOffsetBackingStore(OffsetBackingStore):
    """Offsets kept in memory only (lost when the process ends); for tests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[bytes, bytes] = {}

    def get(self, keys: Collection[bytes]) -> dict[bytes, bytes]:
        """The stored values of ``keys``; keys with no value are left out."""
        with self._lock:
            return {k: self._data[k] for k in keys if k in self._data}

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Store ``values`` (``None`` deletes a key)."""
        with self._lock:
            apply_changes(self._data, values)
            self._save()

    def all(self) -> dict[bytes, bytes]:
        """Every stored key and value."""
        with self._lock:
            return dict(self._data)

    def _save(self) -> None:
        """Persist ``_data`` (called with the lock held); nothing to do in memory."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self._data)} offsets)"
