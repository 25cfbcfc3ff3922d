"""ACK-01 to ACK-04: what an acknowledging source acknowledges, and when.

Each check reads the source system's own state through the driver's ``pending_ids()`` while no
worker runs the connector, and compares it with what Kafka holds: a message that is neither in
Kafka nor held by the source system is lost (acknowledged too early); one that Kafka has and
the source system still holds after a clean stop will come again (acknowledged too late, or
never).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from harness.certify._checks import CheckFailed, CheckNotVerified, check
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._rest import RestClient
from harness.certify.suites._faults import DropOnIds, FailOnIds, with_transform
from harness.certify.suites.off._common import _ids
from harness.certify.suites.off._sources import _source_delivery, _wait_source_ids, _write

__all__ = [
    "ack_after_kafka",
    "clean_stop_acknowledges",
    "crash_redelivers_missing",
    "dropped_acknowledged",
]

#: Records per batch.
BATCH = 30
#: How long the task may take to poll the records written while the broker is stalled.
POLL_TIMEOUT_S = 10.0
#: The producer's linger in ACK-02: records sent and not yet acknowledged by Kafka at the kill.
LINGER_MS = 1500
_CAPABILITY = "pending_ids()"
_POLL_TOTAL = "kafka_connect_source_task_metrics_source_record_poll_total{"
_FIX_EARLY = (
    "Acknowledge a message in the source system only in ``commit_record(record, metadata)``, "
    "which the runtime calls once Kafka has acknowledged the record (or with ``metadata`` None "
    "for a record that was dropped or skipped): never in ``poll()`` and never in ``stop()``; a "
    "message that was not acknowledged must stay with the source system, which redelivers it."
)


def _pending(ctx: CheckContext, d: Any, when: str) -> list[Hashable]:
    """The ids the source system still holds (the driver's ``pending_ids()``), as evidence."""
    try:
        found = list(d.pending_ids())
    except Exception as exc:  # noqa: BLE001 - a broken driver is named as such
        raise CheckFailed(
            "the driver's pending_ids() to read what the source system still holds",
            f"it raised {type(exc).__name__}: {exc}",
        ) from None
    ctx.evidence(f"held by the source system {when}", len(found))
    return found


def _in_kafka(ctx: CheckContext, d: Any, topic: str) -> list[Hashable]:
    """Every id in Kafka (one entry per copy), once nothing new arrived for a second."""
    return ctx.source_ids(d, ctx.read_records(topic, idle=1.0, timeout=15.0))


def _polled(w: WorkerHandle, name: str) -> int:
    """How many records the connector's task 0 has polled (Kafka's source task metric)."""
    try:
        value = w.embedded.metrics().value(
            "source-task-metrics", "source-record-poll-total", connector=name, task=0
        )
    except KeyError:
        return 0
    return int(value) if isinstance(value, (int, float)) else 0


def _polled_remote(rest: RestClient, name: str) -> int:
    """The same metric, read from a worker process's ``GET /metrics`` (Prometheus text)."""
    answer = rest.get("/metrics")
    if answer.status != 200:
        return 0
    wanted = f'connector="{name}"'
    total = 0.0
    for line in answer.text.splitlines():
        if line.startswith(_POLL_TOTAL) and wanted in line and 'task="0"' in line:
            with contextlib.suppress(ValueError, IndexError):
                total = max(total, float(line.rsplit(" ", 1)[1]))
    return int(total)


def _sorted(ids: Iterable[Hashable]) -> list[Hashable]:
    return sorted(ids, key=lambda i: (not isinstance(i, int), i if isinstance(i, int) else str(i)))


def _prepare(ctx: CheckContext) -> None:
    ctx.require_acknowledging_source()
    ctx.require("pending_ids")


def _expect_drained(ctx: CheckContext, d: Any, when: str) -> None:
    """Fail unless the source system holds nothing more (every message was acknowledged)."""
    left = _pending(ctx, d, when)
    if left:
        raise CheckFailed(
            f"every message acknowledged {when}, once Kafka had its record",
            f"the source system still holds {len(left)} (ids {_ids(_sorted(left))}): they will "
            "be delivered again",
        )


@check(
    "ACK-01",
    "Nothing is acknowledged to the source system before Kafka has its record",
    kinds=("source",),
    source_kind="acknowledging",
    capabilities=(_CAPABILITY,),
    exclusive="kafka",  # it stalls the broker every check of the run shares
    fix=_FIX_EARLY,
)
def ack_after_kafka(ctx: CheckContext) -> None:
    """While Kafka acknowledges nothing, the source system keeps every message.

    Records are written and delivered; then the broker is stopped (SIGSTOP, or docker pause)
    and more records are written. Once the task has polled them (its
    ``source-record-poll-total`` metric), the worker is stopped cleanly while the broker is
    still stopped: its final flush cannot complete, so Kafka has acknowledged none of those
    records, and the source system must still hold every one of them (``pending_ids()``).
    A message it no longer holds was acknowledged in ``poll()`` or ``stop()`` and would be lost
    in a real outage. Then the broker continues, a new worker delivers every record, and after
    its clean stop the source system holds nothing. Not verified on an existing cluster.
    """
    _prepare(ctx)
    broker = ctx.broker
    if broker is None:
        raise CheckNotVerified(
            f"the broker of this run ({ctx.kafka_kind}) cannot be stalled; only a broker the run "
            "started can (cdk certify --kafka embedded, or testcontainers)"
        )
    props = ctx.worker_properties(
        **{"offset.flush.timeout.ms": "2000", "task.shutdown.graceful.timeout.ms": "20000"}
    )
    name = ctx.unique("ack01")
    topic = ctx.topic()
    with ctx.driver() as d:
        config = ctx.connector_config(d, topic)
        first = _write(ctx, d, BATCH)
        try:
            with ctx.worker(props) as w:
                w.create(name, config)
                _wait_source_ids(ctx, d, topic, first, "the records written first", w.rest, name)
                before = _polled(w, name)
                broker.pause()
                stalled = _write(ctx, d, BATCH)
                ctx.wait_for(
                    lambda: _polled(w, name) >= before + len(stalled),
                    POLL_TIMEOUT_S,
                    expected=f"the task to poll the {len(stalled)} records written while the "
                    "broker was stopped",
                    actual=lambda: f"it polled {_polled(w, name) - before}",
                    interval=0.1,
                )
            # the worker stopped cleanly, the broker still stopped: Kafka has none of them
            held = set(_pending(ctx, d, "after a clean stop while the broker was stopped"))
        finally:
            broker.resume()
        early = [i for i in stalled if i not in held]
        ctx.evidence("polled while the broker was stopped", len(stalled))
        ctx.evidence("acknowledged before Kafka had them", len(early))
        if early:
            raise CheckFailed(
                "no message acknowledged to the source system before Kafka acknowledged its record",
                f"of the {len(stalled)} records polled while the broker was stopped (none of "
                f"which Kafka acknowledged), the source system no longer holds {len(early)} "
                f"after a clean stop of the worker (ids {_ids(early)}): they were acknowledged "
                "in poll() or stop(), and are lost",
            )
        written = first + stalled
        with ctx.worker(props) as w:
            w.create(name, config)
            got = _source_delivery(ctx, d, topic, written, w.rest, name)
        ctx.compare_ids(
            written,
            got,
            what="once the broker was back and a new worker ran the connector",
            allow_duplicates=True,
        )
        _expect_drained(ctx, d, "after the broker came back and the worker stopped cleanly")


@check(
    "ACK-02",
    "kill -9 redelivers exactly what Kafka lacks; nothing acknowledged comes back",
    kinds=("source",),
    source_kind="acknowledging",
    capabilities=(_CAPABILITY,),
    fix=_FIX_EARLY,
)
def crash_redelivers_missing(ctx: CheckContext) -> None:
    """After ``kill -9`` every message is in Kafka or still held by the source system.

    The source runs in a ``cdk standalone`` process whose producer lingers
    (``producer.linger.ms=1500``), so that records are sent and not yet acknowledged by Kafka.
    Records are written steadily; once some are in Kafka, a last batch is written and, as soon
    as the task has polled it (its ``source-record-poll-total`` metric), the process is killed
    with SIGKILL. Every message must then be in Kafka or held by the source system
    (``pending_ids()``): one that is neither was acknowledged before Kafka had it and is lost.
    A new process delivers every message; the only duplicates allowed are the messages that
    were in Kafka at the kill and still held by the source system (Kafka had them, their
    acknowledgement never reached the source system); a message that comes again although the
    source system no longer held it fails. After a clean stop the source system holds nothing.
    """
    _prepare(ctx)
    props = ctx.worker_properties(**{"producer.linger.ms": str(LINGER_MS)})
    name = ctx.unique("ack02")
    topic = ctx.topic()
    with ctx.driver() as d:
        config = ctx.connector_config(d, topic)
        written = _write(ctx, d, 10)
        with ctx.standalone({name: config}, props) as p:
            _write_until_in_kafka(ctx, d, topic, written)
            last = _write(ctx, d, 10)
            written += last
            # killed once the task polled them: they wait in the lingering producer
            ctx.wait_for(
                lambda: _polled_remote(p.rest, name) >= len(written),
                POLL_TIMEOUT_S,
                expected=f"the task to poll the {len(written)} records written",
                actual=lambda: f"it polled {_polled_remote(p.rest, name)}",
                interval=0.05,
            )
            p.kill()
        at_kill = _in_kafka(ctx, d, topic)
        held = set(_pending(ctx, d, "after the kill"))
        in_kafka = set(at_kill)
        lost = [i for i in written if i not in in_kafka and i not in held]
        may_repeat = in_kafka & held
        ctx.evidence("in Kafka at the kill", len(in_kafka))
        ctx.evidence("in Kafka and still held by the source system", len(may_repeat))
        if lost:
            raise CheckFailed(
                "every message in Kafka or still held by the source system after kill -9",
                f"{len(lost)} of {len(written)} are in neither (ids {_ids(lost)}): they were "
                "acknowledged before Kafka acknowledged their records, and are lost",
            )
        with ctx.standalone({name: config}, props) as p:
            got = _source_delivery(ctx, d, topic, written, p.rest, name)
            p.stop()
        copies = Counter(got)
        repeated = {i: n - 1 for i, n in copies.items() if n > 1}
        unexpected = _sorted(i for i in repeated if i not in may_repeat or repeated[i] > 1)
        ctx.evidence("duplicates allowed", len(may_repeat))
        ctx.compare_ids(
            written,
            got,
            what="after kill -9 of cdk standalone and a restart",
            allow_duplicates=True,
            max_duplicates=len(may_repeat),
        )
        if unexpected:
            raise CheckFailed(
                "no message the source system no longer held to come again after the restart",
                f"{len(unexpected)} came again although the source system had let them go "
                f"(ids {_ids(unexpected)}): a message acknowledged to the source system must "
                "not be redelivered, and one redelivered must not be sent twice",
            )
        _expect_drained(ctx, d, "after the restart and a clean stop")


def _write_until_in_kafka(ctx: CheckContext, d: Any, topic: str, written: list[int]) -> None:
    """Write records steadily until Kafka has at least one of them."""
    deadline = time.monotonic() + 40.0
    while not ctx.read_records(topic, min_records=1, timeout=0.5, idle=0.2):
        if time.monotonic() >= deadline:
            raise CheckFailed(
                "the source to deliver records to Kafka",
                f"after 40s and {len(written)} records written Kafka has none",
            )
        written += _write(ctx, d, 5)


@check(
    "ACK-03",
    "A clean stop leaves nothing unacknowledged and a restart redelivers nothing",
    kinds=("source",),
    source_kind="acknowledging",
    capabilities=(_CAPABILITY,),
    fix=(
        "Acknowledge every message in ``commit_record()`` once Kafka has its record; keep the "
        "connection to the source system open until ``stop()``, which the runtime calls after "
        "the last ``commit_record()`` of a clean stop, and close it there."
    ),
)
def clean_stop_acknowledges(ctx: CheckContext) -> None:
    """After a clean stop, what Kafka has is acknowledged and nothing is delivered twice.

    Records are written and delivered, more are written, and the worker is stopped cleanly
    (its final flush waits for Kafka, then the task's last ``commit_record()`` calls come, then
    ``stop()``). The source system must no longer hold any message Kafka has (one it holds will
    be delivered again), and every message must be in one of the two. More records are written
    and a new worker runs the connector: every message must reach Kafka exactly once, and after
    its clean stop the source system holds nothing.
    """
    _prepare(ctx)
    name = ctx.unique("ack03")
    topic = ctx.topic()
    props = ctx.worker_properties()
    with ctx.driver() as d:
        config = ctx.connector_config(d, topic)
        written = _write(ctx, d, BATCH)
        with ctx.worker(props) as w:
            w.create(name, config)
            _wait_source_ids(ctx, d, topic, written, "the records written first", w.rest, name)
            written += _write(ctx, d, BATCH)  # still being read when the worker stops
        in_kafka = set(_in_kafka(ctx, d, topic))
        held = set(_pending(ctx, d, "after a clean stop"))
        again = _sorted(in_kafka & held)
        if again:
            raise CheckFailed(
                "every message Kafka has acknowledged to the source system by the end of a "
                "clean stop",
                f"the source system still holds {len(again)} that Kafka has (ids {_ids(again)}): "
                "they will be delivered again (commit_record() does not acknowledge, or the "
                "connection was closed before the last acknowledgements)",
            )
        lost = [i for i in written if i not in in_kafka and i not in held]
        if lost:
            raise CheckFailed(
                "every message in Kafka or still held by the source system after a clean stop",
                f"{len(lost)} are in neither (ids {_ids(lost)}): acknowledged but never delivered",
            )
        written += _write(ctx, d, BATCH // 2)
        with ctx.worker(props) as w:
            w.create(name, config)
            got = _source_delivery(ctx, d, topic, written, w.rest, name)
        ctx.compare_ids(written, got, what="after a clean stop and a restart")
        _expect_drained(ctx, d, "after the second clean stop")


@check(
    "ACK-04",
    "Records dropped by a transformation or skipped by errors.tolerance=all are acknowledged",
    kinds=("source",),
    source_kind="acknowledging",
    capabilities=(_CAPABILITY,),
    fix=(
        "Acknowledge in ``commit_record(record, None)`` too: ``metadata`` is None for a record "
        "a transformation dropped or ``errors.tolerance=all`` skipped, which will never reach "
        "Kafka; left unacknowledged, the source system redelivers it forever."
    ),
)
def dropped_acknowledged(ctx: CheckContext) -> None:
    """A record that never reaches Kafka on purpose is still acknowledged, so the queue drains.

    The connector runs with ``errors.tolerance=all`` and two harness transformations: one drops
    every seventh record (as a filter would), the other fails on others (poison records,
    skipped under the tolerance). Once every other record is in Kafka the worker stops cleanly;
    the source system must hold none of the dropped or skipped messages (the runtime called
    ``commit_record(record, None)`` for each), and none of them may be in Kafka.
    """
    _prepare(ctx)
    name = ctx.unique("ack04")
    topic = ctx.topic()
    with ctx.driver() as d:
        written = _write(ctx, d, BATCH)
        dropped = written[3::7]
        poison = written[5::7]
        settings = {"ids": ",".join(str(i) for i in dropped)}
        config = with_transform(
            ctx.connector_config(d, topic, errors_tolerance="all"), "ackdrop", DropOnIds, settings
        )
        config = with_transform(
            config,
            "ackpoison",
            FailOnIds,
            {"ids": ",".join(str(i) for i in poison), "exception": "DataException"},
        )
        kept = [i for i in written if i not in dropped and i not in poison]
        with ctx.worker() as w:
            w.create(name, config)
            _wait_source_ids(ctx, d, topic, kept, "the records not dropped", w.rest, name)
        ctx.evidence("dropped by a transformation", len(dropped))
        ctx.evidence("skipped under errors.tolerance=all", len(poison))
        in_kafka = set(_in_kafka(ctx, d, topic))
        leaked = _sorted(in_kafka & (set(dropped) | set(poison)))
        if leaked:
            raise CheckFailed(
                "the dropped and skipped records to stay out of Kafka",
                f"Kafka has {len(leaked)} of them (ids {_ids(leaked)})",
            )
        held = set(_pending(ctx, d, "after a clean stop"))
        _fail_held(dropped, held, "dropped by a transformation")
        _fail_held(poison, held, "skipped under errors.tolerance=all")
        _fail_held(kept, held, "delivered to Kafka")


def _fail_held(ids: Sequence[Hashable], held: set[Hashable], what: str) -> None:
    found = [i for i in ids if i in held]
    if found:
        raise CheckFailed(
            f"every record {what} acknowledged to the source system",
            f"the source system still holds {len(found)} of the {len(ids)} records {what} "
            f"after a clean stop (ids {_ids(found)}): it will redeliver them forever",
        )
