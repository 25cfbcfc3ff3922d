"""Kafka's sampled statistics: rates, averages and maxima over sample windows.

Windows: rates, averages and maxima follow Kafka's sampled statistics with the worker's
``metrics.sample.window.ms`` (30 s) and ``metrics.num.samples`` (2). Values go into the current
sample until it is one window old, then a new sample starts (the oldest is dropped beyond
``metrics.num.samples``); a read ignores samples that started more than ``num.samples`` windows
ago. A rate divides the sum of the live samples by the time since the oldest live sample
started, counted as at least ``num.samples - 1`` whole windows (so a task that ran 5 s reports
its count over ~35 s, as Kafka does). An average or maximum with nothing recorded in the live
samples is NaN, a rate 0. ``*-total`` values are cumulative since the task (or worker) started.
"""

from __future__ import annotations

import math
import threading
from collections import deque

__all__ = ["DEFAULT_NUM_SAMPLES", "DEFAULT_WINDOW_MS", "SampledStat", "ratio"]

#: Kafka's defaults of ``metrics.sample.window.ms`` and ``metrics.num.samples``.
DEFAULT_WINDOW_MS = 30_000
DEFAULT_NUM_SAMPLES = 2

_NAN = float("nan")


# -- sampled statistics ------------------------------------------------------------------------
class _Sample:
    __slots__ = ("count", "max", "min", "start", "sum")

    def __init__(self, start: float) -> None:
        self.start = start
        self.count = 0
        self.sum = 0.0
        self.max = -math.inf
        self.min = math.inf


class SampledStat:
    """Values recorded over Kafka's sample windows: rate, average, maximum and total.

    One writer at a time is expected (the task's thread); reads (scrapes) may come from any
    thread. See the module docstring for the window semantics.

    Args:
        window_s: ``metrics.sample.window.ms`` in seconds.
        num_samples: ``metrics.num.samples``.
    """

    __slots__ = ("_lock", "_samples", "_window", "count", "num_samples", "total")

    def __init__(
        self, window_s: float = DEFAULT_WINDOW_MS / 1000, num_samples: int = DEFAULT_NUM_SAMPLES
    ) -> None:
        self._window = window_s
        self.num_samples = max(num_samples, 1)
        self._samples: deque[_Sample] = deque()
        self._lock = threading.Lock()
        #: cumulative sum and count of every recorded value
        self.total = 0.0
        self.count = 0

    def record(self, value: float, now: float) -> None:
        """Add ``value`` at monotonic time ``now``."""
        with self._lock:
            samples = self._samples
            current = samples[-1] if samples else None
            if current is None or now - current.start >= self._window:
                current = _Sample(now)
                samples.append(current)
                if len(samples) > self.num_samples:
                    samples.popleft()
            current.count += 1
            current.sum += value
            if value > current.max:
                current.max = value
            if value < current.min:
                current.min = value
            self.total += value
            self.count += 1

    def _live(self, now: float) -> list[_Sample]:
        horizon = self._window * self.num_samples
        with self._lock:
            return [s for s in self._samples if now - s.start < horizon]

    def rate(self, now: float) -> float:
        """Sum of the live samples per second (Kafka's ``Rate``)."""
        live = self._live(now)
        if not live:
            return 0.0
        elapsed = now - live[0].start
        full_windows = int(elapsed // self._window)
        least = self.num_samples - 1
        if full_windows < least:
            elapsed += (least - full_windows) * self._window
        if elapsed <= 0:
            return 0.0
        return sum(s.sum for s in live) / elapsed

    def avg(self, now: float) -> float:
        """Average of the values in the live samples (NaN when none)."""
        live = self._live(now)
        count = sum(s.count for s in live)
        return sum(s.sum for s in live) / count if count else _NAN

    def max(self, now: float) -> float:
        """Maximum of the values in the live samples (NaN when none)."""
        live = [s for s in self._live(now) if s.count]
        return max(s.max for s in live) if live else _NAN

    def min(self, now: float) -> float:
        """Minimum of the values in the live samples (NaN when none)."""
        return _min(self, now)


def _min(stat: SampledStat, now: float) -> float:
    live = [s for s in stat._live(now) if s.count]
    return min(s.min for s in live) if live else _NAN


def ratio(stat: SampledStat, now: float) -> tuple[float, float]:
    """(successes, failures) as fractions of the live 1.0/0.0 records (0, 0 when none)."""
    share = stat.avg(now)
    if math.isnan(share):
        return 0.0, 0.0
    return share, 1.0 - share
