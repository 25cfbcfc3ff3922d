"""Small helpers for :class:`concurrent.futures.Future` results of error reports."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future

__all__ = ["combine_futures", "completed_future"]


def completed_future() -> Future[None]:
    """A future that is already done."""
    future: Future[None] = Future()
    future.set_result(None)
    return future


def combine_futures(futures: Sequence[Future[None]]) -> Future[None]:
    """A future done when all of ``futures`` are; failed with the first failure."""
    if len(futures) == 1:
        return futures[0]
    pending = [f for f in futures if not f.done() or f.exception() is not None]
    if not pending:
        return completed_future()
    combined: Future[None] = Future()
    lock = threading.Lock()
    remaining = [len(pending)]

    def on_done(done: Future[None]) -> None:
        with lock:
            remaining[0] -= 1
            finished = remaining[0] == 0
            error = None if done.cancelled() else done.exception()
            if combined.done():
                return
            if error is not None:
                combined.set_exception(error)
            elif finished:
                combined.set_result(None)

    for f in pending:
        f.add_done_callback(on_done)
    return combined
