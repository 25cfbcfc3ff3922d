"""Waiting on conditions with deadlines (tests never sleep for a fixed time)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 30.0,
    interval: float = 0.05,
    message: str | Callable[[], str] = "condition",
) -> T:
    """Poll ``predicate`` until it returns a truthy value and return that value.

    Raises AssertionError naming ``message`` (a string, or a callable for a description of the
    state at the deadline) when ``timeout`` seconds pass first.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for: {text}")
        time.sleep(interval)
