"""A thread-safe limit on the rate and the concurrency of requests to one API."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

__all__ = ["RateLimiter"]

#: How often a wait for a free concurrency slot looks at the stop event and the timeout.
_POLL_S = 0.02


class RateLimiter:
    """A token bucket (``requests_per_second``, ``burst``) and a bound on requests in flight.

    :meth:`acquire` blocks until a request may start; :meth:`release` ends it (frees its slot of
    ``max_concurrent``). The bucket starts full, so the first ``burst`` requests go at once and
    then one every ``1 / requests_per_second`` seconds. Used as a context manager it acquires
    without a timeout. :class:`~cdk.http.HttpClient` acquires around every request it sends,
    retries included.

    Args:
        requests_per_second: the sustained rate; ``None`` or ``0``: no rate limit.
        max_concurrent: the most requests in flight at once; ``None``: no bound.
        burst: the bucket's size, how many requests may go at once after a quiet period.
        clock: a monotonic clock in seconds (for tests).

    Raises:
        ValueError: a negative rate, ``max_concurrent`` below 1, or ``burst`` below 1.
    """

    def __init__(
        self,
        requests_per_second: float | None = None,
        max_concurrent: int | None = None,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if requests_per_second is not None and requests_per_second < 0:
            raise ValueError(f"requests_per_second must be positive, not {requests_per_second}")
        if max_concurrent is not None and max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, not {max_concurrent}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, not {burst}")
        self.requests_per_second = requests_per_second or None
        self.max_concurrent = max_concurrent
        self.burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock()
        self._slots = threading.BoundedSemaphore(max_concurrent) if max_concurrent else None

    def acquire(self, *, timeout: float | None = None, stop: threading.Event | None = None) -> bool:
        """Wait until a request may start.

        Args:
            timeout: the longest wait in seconds; ``None``: no limit. When the rate alone would
                make the wait longer, it returns ``False`` at once.
            stop: an event that ends the wait when set.

        Returns:
            ``True`` when the request may start (then call :meth:`release` after it), ``False``
            when ``timeout`` passed or ``stop`` was set (then do not call :meth:`release`).
        """
        end = None if timeout is None else self._clock() + timeout
        if self._slots is not None and not self._take_slot(end, stop):
            return False
        wait = self._reserve(end)
        if wait is None or (wait > 0 and _sleep(wait, stop)):
            self._free_slot()
            return False
        return True

    def release(self) -> None:
        """End a request that :meth:`acquire` let start."""
        self._free_slot()

    def _take_slot(self, end: float | None, stop: threading.Event | None) -> bool:
        assert self._slots is not None
        while True:
            if stop is not None and stop.is_set():
                return False
            slice_s = _POLL_S if end is None else min(_POLL_S, max(0.0, end - self._clock()))
            if self._slots.acquire(timeout=slice_s):
                return True
            if end is not None and self._clock() >= end:
                return False

    def _free_slot(self) -> None:
        if self._slots is not None:
            self._slots.release()

    def _reserve(self, end: float | None) -> float | None:
        """Take a token (possibly one not refilled yet); the wait until it is due, or ``None``."""
        rate = self.requests_per_second
        if rate is None:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * rate)
            self._last = now
            wait = 0.0 if self._tokens >= 1 else (1 - self._tokens) / rate
            if end is not None and wait > 0 and now + wait > end:
                return None
            self._tokens -= 1
            return wait

    def __enter__(self) -> RateLimiter:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return (
            f"RateLimiter(requests_per_second={self.requests_per_second}, "
            f"max_concurrent={self.max_concurrent}, burst={self.burst})"
        )


def _sleep(seconds: float, stop: threading.Event | None) -> bool:
    """Sleep, or wait on ``stop``; whether ``stop`` ended the wait."""
    if stop is None:
        time.sleep(seconds)
        return False
    return stop.wait(seconds)
