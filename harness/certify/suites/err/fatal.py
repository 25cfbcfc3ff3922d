"""ERR-02: a fatal error fails the task, soon, with a clear ConnectException."""

from __future__ import annotations

import time

from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext
from harness.certify.suites.err._common import RecordFlow
from harness.certify.suites.err._traces import (
    connector_error,
    describe_chain,
    first_line,
)

__all__ = ["fatal_error"]

#: How long a broken external system may take to fail the task (ERR-02).
FAIL_S = 30.0


@check(
    "ERR-02",
    "A fatal error fails the task with a clear ConnectException",
    capabilities=("break_external_system()",),
    fix=(
        'Raise a ``ConnectException`` (``raise ConnectException("...") from exc``) for a '
        "failure that will not go away; do not swallow it or retry it forever."
    ),
)
def fatal_error(ctx: CheckContext) -> None:
    """When the external system breaks for good, the task fails with a ConnectException.

    Records flow first; then the driver breaks the external system (``break_external_system()``)
    and more records are produced (sink; a source's are written just before the break). Within
    30 s a task must be FAILED with a trace whose error, raised by the connector, is a
    ConnectException (or a subclass: DataException...) with a message. A connector that
    swallows the error and stays RUNNING, keeps retrying a permanent failure, or fails with a
    raw Python exception (``sqlite3.DatabaseError``, ``KeyError``...) fails this check. Not
    verified when the driver has no ``break_external_system()``; not applicable only when the
    driver declares ``external_system = False``.
    """
    ctx.require_external_system()
    ctx.require("break_external_system")
    with ctx.driver() as d, ctx.worker() as w:
        flow = RecordFlow(ctx, d, w)
        before = ctx.ids(20)
        flow.send(before)
        flow.create()
        flow.wait_delivered(before, "before the break")
        mark = len(ctx.log_lines)
        after = ctx.ids(20)
        if ctx.kind == "source":
            flow.send(after)
            d.break_external_system()
        else:
            d.break_external_system()
            flow.send(after)
        broken = time.monotonic()
        expected = (
            f"the task to be FAILED within {FAIL_S:g}s of the external system breaking, with "
            "a ConnectException-family error that says what went wrong"
        )
        failed = ctx.wait_for(
            flow.failed_task,
            FAIL_S,
            expected=expected,
            actual=lambda: f"the status is {flow.brief_status()}{_logged_errors(ctx, mark)}",
            interval=0.2,
        )
        trace = str(failed.get("trace") or "")
        ctx.evidence("task FAILED after (s)", round(time.monotonic() - broken, 1))
        ctx.evidence("error chain", describe_chain(trace) if trace.strip() else None)
        if not trace.strip():
            raise CheckFailed(expected, f"task {failed.get('id')} is FAILED without a trace")
        verdict = connector_error(trace)
        if verdict is None:
            chain = describe_chain(trace)
            raise CheckFailed(
                expected,
                f"task {failed.get('id')} FAILED with {chain}, which is not a ConnectException "
                "(wrap the error: raise ConnectException('what failed') from exc)",
                details=trace,
            )


def _logged_errors(ctx: CheckContext, mark: int) -> str:
    errors = [
        line.splitlines()[0] for line in ctx.log_lines[mark:] if line.startswith(("ERROR", "WARN"))
    ]
    if not errors:
        return ""
    return (
        f"; the log has {len(errors)} error/warning lines since the break, e.g. "
        f"{first_line(errors[0])!r} (the error was logged, not raised?)"
    )
