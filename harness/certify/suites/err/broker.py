"""ERR-04 and ERR-05: the Kafka cluster fails mid-stream, and the connector rides it out.

Confluent's partner guide asks a connector's authors to test, and document, what their
connector does when the Kafka cluster fails. These checks stall the run's broker in the middle
of a stream for :data:`STALL_S` seconds (SIGSTOP then SIGCONT for the embedded broker, docker
pause then unpause for a container: its connections stay open and nothing answers, as in a long
broker pause), while records flow:

- ERR-04 (source): records are written into the source system before, during and after the
  stall; every one must reach Kafka, and the tasks must stay RUNNING and recover by themselves.
- ERR-05 (sink): records are produced before the stall, as it starts (their acknowledgement
  waits for the broker) and after it; every one must be stored, and the tasks must stay RUNNING
  and recover by themselves.

The check restarts nothing. Duplicates are allowed for an at-least-once connector (none for
exactly-once) and reported. A run on an existing cluster, whose broker the run cannot stall,
cannot verify these checks.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Hashable

from harness.certify._checks import CheckFailed, CheckNotVerified, check
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify.suites._flows import (
    Flow,
    await_running,
    brief_status,
    failures,
    trace_head,
)

__all__ = ["RECOVERY_S", "STALL_S", "sink_broker_stall", "source_broker_stall"]

#: How long the broker stays stopped.
STALL_S = 10.0
#: How long every record may take to arrive once the broker is back.
RECOVERY_S = 60.0
#: Records sent in each phase (before, during, after the stall).
BATCH = 40

_FIX = (
    "Let the runtime wait for Kafka: do not fail a task, drop records or give up on a timeout "
    "of your own while records wait for the broker. A source returns each record from "
    "``poll()`` once and relies on the runtime's retries and committed offsets; a sink stores "
    "every record ``put()`` hands it, however late, and makes it durable in ``flush()``. Say "
    "in the README what the connector does while Kafka is unavailable."
)
_EXPECTED_RUNNING = "the tasks to keep running through a broker stall and recover by themselves"


@check(
    "ERR-04",
    "The source rides out a stalled Kafka broker: no loss, no restart",
    kinds=("source",),
    fix=_FIX,
    exclusive="kafka",  # it stalls the broker every check of the run shares
)
def source_broker_stall(ctx: CheckContext) -> None:
    """A source loses nothing and needs no restart when the Kafka broker stalls mid-stream.

    Records are written and delivered; then the broker is stopped (SIGSTOP, or docker pause
    for a container) for 10 s while more records are written into the source system, and
    continued; then more are written. Within 60 s of the broker's return every record must be
    in Kafka (duplicates only for an at-least-once connector; their number is reported) and no
    task may have FAILED. A source that fails its task on a Kafka timeout of its own, or skips
    what it could not send in time, fails this check. Not verified on an existing cluster
    (only a broker the run started, embedded or in a container, can be stalled).
    """
    _stall_check(ctx)


@check(
    "ERR-05",
    "The sink rides out a stalled Kafka broker: no loss, no restart",
    kinds=("sink",),
    fix=_FIX,
    exclusive="kafka",  # it stalls the broker every check of the run shares
)
def sink_broker_stall(ctx: CheckContext) -> None:
    """A sink loses nothing and needs no restart when the Kafka broker stalls mid-stream.

    Records are produced and stored; then the broker is stopped (SIGSTOP, or docker pause for
    a container) for 10 s while the harness produces more (they reach the sink late, once the
    broker is back), and continued; then more are produced. Within 60 s of the broker's return
    every record must be stored (duplicates only for an at-least-once connector; their number
    is reported) and no task may have FAILED. A sink that fails on a late batch or a consumer
    timeout, or drops records it deems stale, fails this check. Not verified on an existing
    cluster (only a broker the run started, embedded or in a container, can be stalled).
    """
    _stall_check(ctx)


def _stall_check(ctx: CheckContext) -> None:
    broker = ctx.broker
    if broker is None:
        raise CheckNotVerified(
            f"the broker of this run ({ctx.kafka_kind}) cannot be stalled; only a broker the run "
            "started can (cdk certify --kafka embedded, or testcontainers)"
        )
    with ctx.driver() as d, ctx.worker() as w:
        flow = Flow.open(ctx, d)
        name = ctx.unique("stall")
        w.create(name, flow.config())
        await_running(w, name, when="after it was created")
        flow.send(BATCH, "before the stall")
        flow.expect_all("the records written before the stall")
        back = threading.Event()

        def continue_later() -> None:
            back.wait(STALL_S)
            broker.resume()
            back.set()

        broker.pause()  # in cdk certify's child process: once the parent granted the stall
        stalled_at = time.monotonic()
        timer = threading.Thread(target=continue_later, name="cdk-certify-stall", daemon=True)
        timer.start()
        try:
            _send_while_stalled(ctx, flow, w, name, back)
        finally:
            back.set()
            broker.resume()
            timer.join()
        back_at = time.monotonic()
        flow.send(BATCH, "after the broker came back")
        _wait_recovered(flow, w, name)
        delivered = flow.expect_all(
            "the records sent before, during and after the broker stall", timeout=0
        )
        recovered_s = time.monotonic() - back_at
        _no_failed_task(w, name, "after the broker came back")
        _report(ctx, flow.sent, delivered, back_at - stalled_at, recovered_s)


def _send_while_stalled(
    ctx: CheckContext, flow: Flow, w: WorkerHandle, name: str, back: threading.Event
) -> None:
    """Send records while the broker is stopped, watching the tasks until it is back.

    A source's records keep coming, a part every quarter of the stall; a sink's are produced
    at once (their acknowledgement, and so the call, waits for the broker to come back).
    """
    phase = "while the broker was stalled"
    if ctx.kind == "sink":
        flow.send(BATCH, phase)
    parts = 4 if ctx.kind == "source" else 0
    start = time.monotonic()
    sent = 0
    while True:
        if sent < parts and time.monotonic() - start >= sent * STALL_S / parts:
            flow.send(BATCH // parts, phase)
            sent += 1
        _no_failed_task(w, name, phase)
        if back.wait(0.25):
            return


def _wait_recovered(flow: Flow, w: WorkerHandle, name: str) -> None:
    """Wait until every record sent arrived (at most :data:`RECOVERY_S`), watching the tasks."""
    deadline = time.monotonic() + RECOVERY_S
    wanted = set(flow.sent)
    while True:
        _no_failed_task(w, name, "after the broker came back")
        remaining = deadline - time.monotonic()
        if remaining <= 0 or wanted <= set(flow.delivered(timeout=min(2.0, remaining))):
            return


def _no_failed_task(w: WorkerHandle, name: str, when: str) -> None:
    """Fail the check if the connector or a task FAILED: a stall must not need a restart."""
    status = w.status(name)
    failed = failures(status)
    if failed:
        who, trace = failed[0]
        raise CheckFailed(
            f"{_EXPECTED_RUNNING} (no restart)",
            f"{who} FAILED {when} ({brief_status(status)}): {trace_head(trace)}",
            details=trace,
        )


def _report(
    ctx: CheckContext,
    sent: list[int],
    delivered: list[Hashable],
    stalled_s: float,
    recovered_s: float,
) -> None:
    """Record the figures of a passed stall check (evidence, and the check's log)."""
    copies = Counter(delivered)
    figures: dict[str, int | float] = {
        "broker stalled (s)": round(stalled_s, 1),
        "sent": len(sent),
        "delivered": len(delivered),
        "duplicates": sum(n - 1 for n in copies.values() if n > 1),
        "lost": len(set(sent) - set(copies)),
        "every record delivered after the broker came back (s)": round(recovered_s, 1),
    }
    evidence = getattr(ctx, "evidence", None)  # the evidence API, where the kit has it
    if callable(evidence):
        for key, value in figures.items():
            evidence(key, value)
    ctx.log_lines.append("broker stall: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
