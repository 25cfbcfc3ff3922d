"""The broker stall of a check in a child process: the parent grants it, and stalls the broker.

The checks that stall the broker (``exclusive="kafka"``: ERR-04, ERR-05) need it to themselves
only while it is stopped, not for their whole run: they create their connector, send records and
wait for them (and, once the broker is back, wait for the rest) next to the other checks. When a
check calls :meth:`GrantedStall.pause`, its child asks the parent (``("broker", "want",
index)``); the parent stops handing out checks that need Kafka, waits until the ones running
have ended, then stops the broker and answers ``("broker", "granted")`` on the child's standard
input. :meth:`GrantedStall.resume` tells the parent (``("broker", "released", index)``), which
continues the broker once no check holds it. Checks that ask while others wait are granted the
same stall.

A stall check that has not released the broker yet (it is about to ask, or waiting) holds back
the checks on Kafka that have not started, so that the broker is free soon after it asks.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["GRANTED", "GrantedStall"]

#: The parent's answer to a ``("broker", "want", index)`` frame.
GRANTED = ("broker", "granted")


class GrantedStall:
    """Stalls the run's broker through the parent (see the module docstring).

    Args:
        index: the check's index in the plan.
        send: writes a frame to the parent.
        receive: reads the next frame from the parent (blocks).
    """

    def __init__(self, index: int, send: Callable[[Any], None], receive: Callable[[], Any]) -> None:
        self._index = index
        self._send = send
        self._receive = receive
        self._lock = threading.Lock()
        self._held = False

    def pause(self) -> None:
        """Stop the broker: ask the parent and wait until it has (the others on Kafka ended).

        Raises:
            RuntimeError: the parent answered something else.
        """
        with self._lock:
            if self._held:
                return
            self._send(("broker", "want", self._index))
            answer = self._receive()
            if tuple(answer) != GRANTED:
                raise RuntimeError(f"the parent answered {answer!r} to a broker stall request")
            self._held = True

    def resume(self) -> None:
        """Let the parent continue the broker (once no other check holds it); harmless twice."""
        with self._lock:
            if not self._held:
                return
            self._held = False
            self._send(("broker", "released", self._index))

    @contextlib.contextmanager
    def stalled(self) -> Iterator[None]:
        """Keep the broker stopped for the duration of the block (released whatever happens)."""
        self.pause()
        try:
            yield
        finally:
            self.resume()
