"""ERR-01: a transient outage of the external system is retried without losing records."""

from __future__ import annotations

import time

from harness._driver import Delivery
from harness.certify._checks import check
from harness.certify._context import CheckContext
from harness.certify.suites.err._common import RecordFlow

__all__ = ["retriable_error", "retriable_logged"]

#: The longest outage ERR-01 makes (shorter once the connector has shown it retries).
OUTAGE_MAX_S = 6.0
#: How long the outage goes on after the connector's first retriable error (one more retry).
OUTAGE_AFTER_RETRY_S = 1.0
#: What the runtime's log says when a task's poll() or put() raised a RetriableException (or
#: a subclass of it: the log's trace then names the subclass, so the runtime's own words are
#: what is looked for, not the class name).
_RETRIABLE_SIGNALS = (
    "failed to poll records from SourceTask. Will retry operation.",
    "RetriableException from SinkTask",
)


def retriable_logged(line: str) -> bool:
    """Whether a log line is the runtime's report of a task's retriable error."""
    return any(signal in line for signal in _RETRIABLE_SIGNALS)


@check(
    "ERR-01",
    "A transient outage is retried without losing records",
    capabilities=("outage()",),
    fix=(
        "Raise ``RetriableException`` for transient failures (timeouts, refused connections) "
        "so that the runtime retries, and keep the records that could not be written: "
        "``put()`` gets the batch again, and ``poll()`` must return unsent records again."
    ),
)
def retriable_error(ctx: CheckContext) -> None:
    """During a transient outage the task keeps running and, afterwards, delivers every record.

    Records flow first; then the driver makes the external system unavailable (``outage()``)
    and more records are written (source) or produced (sink). The outage lasts until the
    runtime logged the connector's RetriableException plus one second, at most 6 s. After it,
    every record must arrive (duplicates only for an at-least-once connector) and no task may
    have FAILED: a connector that raises a plain ConnectException for a transient error, or
    loses the records it could not write, fails this check. Required for every connector that
    talks to an external system: not verified when the driver has no ``outage()``; not
    applicable only when the driver declares ``external_system = False``.
    """
    ctx.require_external_system()
    ctx.require("outage")
    with ctx.driver() as d, ctx.worker() as w:
        flow = RecordFlow(ctx, d, w)
        before = ctx.ids(30)
        flow.send(before)
        flow.create()
        flow.wait_delivered(before, "before the outage")
        mark = len(ctx.log_lines)
        during = ctx.ids(30)
        outage = time.monotonic()
        with d.outage():
            flow.send(during)
            retried = _outage_window(ctx, flow, mark)
        ctx.evidence("outage lasted (s)", round(time.monotonic() - outage, 1))
        ctx.evidence("RetriableException logged", retried)
        delivered = flow.wait_delivered(
            before + during,
            "after the outage",
            hint="" if retried else " (the runtime logged no RetriableException during it)",
        )
        ctx.compare_ids(
            before + during,
            delivered,
            what="the records written before and during the outage",
            allow_duplicates=d.delivery is not Delivery.EXACTLY_ONCE,
        )
        flow.raise_if_failed("after the outage")


def _outage_window(ctx: CheckContext, flow: RecordFlow, mark: int) -> bool:
    """Keep the outage on until the connector retried (plus a second) or at most 6 s.

    A bounded measurement window, not a synchronisation wait. Returns whether the runtime
    logged a RetriableException; fails the check as soon as a task is FAILED.
    """
    start = time.monotonic()
    seen: float | None = None
    while True:
        flow.raise_if_failed(
            "during the outage",
            expected="a transient outage to be retried: the task keeps running (a "
            "RetriableException, not a ConnectException) and delivers every record afterwards",
        )
        now = time.monotonic()
        if seen is None and any(retriable_logged(line) for line in ctx.log_lines[mark:]):
            seen = now
        if seen is not None and now - seen >= OUTAGE_AFTER_RETRY_S:
            return True
        if now - start >= OUTAGE_MAX_S:
            return seen is not None
        time.sleep(0.1)  # the sampling period of the window
