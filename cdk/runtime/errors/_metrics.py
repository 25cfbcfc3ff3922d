"""Counters of a task's error handling (Kafka's ``task-error-metrics`` group)."""

from __future__ import annotations

import threading
import time

__all__ = ["ErrorHandlingMetrics"]


class ErrorHandlingMetrics:
    """Counters of a task's error handling (Kafka's ``task-error-metrics`` group). Thread-safe."""

    _FIELDS = (
        "total_record_failures",
        "total_records_skipped",
        "total_record_errors",
        "total_retries",
        "total_errors_logged",
        "deadletterqueue_produce_requests",
        "deadletterqueue_produce_failures",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(self._FIELDS, 0)
        self.last_error_timestamp: int | None = None

    def increment(self, name: str, by: int = 1) -> None:
        """Add ``by`` to counter ``name``."""
        with self._lock:
            self._counts[name] += by

    def record_error_timestamp(self) -> None:
        """Remember the wall-clock time (ms) of the latest failure."""
        self.last_error_timestamp = int(time.time() * 1000)

    def __getattr__(self, name: str) -> int:
        counts = self.__dict__.get("_counts")
        if counts is not None and name in counts:
            return int(counts[name])
        raise AttributeError(name)

    def snapshot(self) -> dict[str, int]:
        """Every counter's current value."""
        with self._lock:
            return dict(self._counts)

    def __repr__(self) -> str:
        return f"ErrorHandlingMetrics({self.snapshot()})"
