"""OFF-05 to OFF-07: a sink's committed offsets are durable across stops and crashes."""

from __future__ import annotations

import time

from harness._driver import Delivery
from harness.certify._checks import check
from harness.certify._context import CheckContext
from harness.certify.suites.off._common import _BATCH, _DELIVERY_TIMEOUT, _fail_on_failed_task
from harness.certify.suites.off._sinks import _CommitAudit, _Produced, _wait_sink
from harness.certify.suites.off._sources import _compare_bounded

__all__: list[str] = []


@check(
    "OFF-05",
    "Sink commits offsets only for records it made durable",
    kinds=("sink",),
    fix=(
        "Write buffered records in ``flush()``, or override ``pre_commit()`` to return only "
        "the offsets of records already stored."
    ),
)
def sink_commit_durable(ctx: CheckContext) -> None:
    """A sink's committed offsets never cover a record it has not stored.

    Records are produced in waves while the sink runs. Between waves and until every record
    is stored, the harness reads the consumer group's committed offsets and then what the
    external system holds: every record below a committed offset must already be stored. A sink
    that buffers records in put() and lets the default pre_commit() commit offsets before it
    wrote them loses those records if the worker dies.
    """
    with ctx.driver() as d, ctx.worker() as w:
        topic = ctx.create_topic(ctx.topic())
        name = ctx.unique("off05")
        group = f"connect-{name}"
        w.create(name, ctx.connector_config(d, topic))
        w.wait_state(name, "RUNNING")
        sent = _Produced(ctx, d, topic)
        audit = _CommitAudit(ctx, d, group, topic, sent.positions)
        sent.produce(20)

        def progress(expected: str) -> bool:
            audit.sample()
            _fail_on_failed_task(w.rest, name, expected)
            return False

        ctx.wait_for(
            lambda: progress("the sink to store records") or bool(d.read_back()),
            _DELIVERY_TIMEOUT,
            expected="the sink to store records",
            actual=lambda: f"it stored none of the {len(sent.ids)} records produced",
            interval=0.3,
        )
        for _ in range(6):  # waves of records, each followed by a sample
            sent.produce(20)
            audit.sample()
        wanted = set(sent.ids)
        end = sent.end_offsets()
        ctx.wait_for(
            lambda: (
                progress(f"the sink to store the {len(wanted)} records")
                or wanted <= set(d.read_back())
                or audit.reached(end)
            ),
            _DELIVERY_TIMEOUT,
            expected=f"the sink to store the {len(wanted)} records",
            actual=lambda: (
                f"it stored {len(set(d.read_back()) & wanted)}; the group "
                f"{group} committed {audit.last}"
            ),
            interval=0.3,
        )
        audit.sample()


@check(
    "OFF-06",
    "Sink resumes after a clean stop: no loss, no duplicates",
    kinds=("sink",),
    fix=(
        "Store every record given to ``put()`` before ``flush()``/``pre_commit()`` returns, "
        "and write idempotently (upsert on the record's key, or on topic, partition and "
        "offset) so that records delivered again are not duplicated."
    ),
)
def sink_clean_restart(ctx: CheckContext) -> None:
    """A sink resumes exactly where it stopped after a clean stop.

    The sink runs on a worker, which is stopped cleanly while records are still being
    consumed (the worker calls pre_commit, commits, and closes the task); more records are
    produced while it is down, and a new worker resumes the connector from the consumer group's
    offsets. Once it is stopped cleanly again, the external system must hold every record exactly
    once: a missing record was committed without being written, a duplicate was written without
    its offset being committed.
    """
    props = ctx.worker_properties()
    with ctx.driver() as d:
        topic = ctx.create_topic(ctx.topic())
        name = ctx.unique("off06")
        config = ctx.connector_config(d, topic)
        sent = _Produced(ctx, d, topic)
        first = sent.produce(_BATCH)
        with ctx.worker(props) as w:
            w.create(name, config)
            _wait_sink(ctx, d, name, topic, sent, first, w.rest)
            second = sent.produce(_BATCH)  # being consumed when the worker stops
        third = sent.produce(_BATCH // 2)
        with ctx.worker(props) as w:
            w.create(name, config)
            _wait_sink(ctx, d, name, topic, sent, sent.ids, w.rest)
        ctx.compare_ids(
            sent.ids,
            d.read_back(),
            what=f"stored after a clean stop of the worker ({len(first)} records stored before "
            f"it, {len(second)} produced just before it, {len(third)} while it was down), a "
            "restart and a clean stop",
        )


@check(
    "OFF-07",
    "Sink loses nothing when the worker is killed (kill -9); duplicates bounded",
    kinds=("sink",),
    fix=(
        "Commit only stored records (see OFF-05) and write idempotently, e.g. upsert keyed by "
        "topic, partition and offset, so that records delivered again after a crash overwrite "
        "rather than duplicate."
    ),
)
def sink_crash_restart(ctx: CheckContext) -> None:
    """A sink loses nothing when its worker process is killed, and rewrites little.

    The sink runs in a real ``cdk standalone`` process. Once its consumer group has committed
    offsets, more records are produced and the process is killed with SIGKILL while it consumes
    them; more records are produced and a new process resumes from the group's offsets, then
    stops cleanly. No record may be lost. Duplicates are counted: only the records the sink
    stored after the last committed offset may be written again, so duplicates may not exceed
    the records stored at the kill minus the committed offset last observed before it. A
    connector that claims exactly-once delivery may have none.
    """
    props = ctx.worker_properties()
    with ctx.driver() as d:
        topic = ctx.create_topic(ctx.topic())
        name = ctx.unique("off07")
        group = f"connect-{name}"
        config = ctx.connector_config(d, topic)
        sent = _Produced(ctx, d, topic)
        first = sent.produce(100)
        with ctx.standalone({name: config}, props) as p:
            started = time.monotonic()

            def committed_or_stored() -> bool:
                if sum(ctx.committed_offsets(group, topic).values()) > 0:
                    return True
                _fail_on_failed_task(p.rest, name, "the sink to store the records produced")
                # a sink that keeps its offsets elsewhere never commits: wait for its writes
                return time.monotonic() - started > 8 and set(first) <= set(d.read_back())

            ctx.wait_for(
                committed_or_stored,
                _DELIVERY_TIMEOUT,
                expected=f"the sink to commit offsets or store the {len(first)} records",
                actual=lambda: (
                    f"the group {group} committed "
                    f"{ctx.committed_offsets(group, topic)} and the sink stored "
                    f"{len(d.read_back())} records; log: {p.log_tail(5)}"
                ),
                interval=0.3,
            )
            sent.produce(100)  # flowing when the worker is killed
            committed = sum(ctx.committed_offsets(group, topic).values())
            p.kill()
        stored_at_kill = len(d.read_back())
        after = sent.produce(30)
        with ctx.standalone({name: config}, props) as p:
            _wait_sink(ctx, d, name, topic, sent, sent.ids, p.rest)
            p.stop()  # a clean stop: whatever the sink buffers is written
        exactly_once = ctx.driver_class.delivery is Delivery.EXACTLY_ONCE
        bound = 0 if exactly_once else max(0, stored_at_kill - committed)
        why = (
            "the connector claims exactly-once delivery"
            if exactly_once
            else f"the sink had stored {stored_at_kill} records at the kill and its group had "
            f"committed offsets up to {committed}, below which nothing is delivered again: only "
            f"the {bound} stored records at or above them may be written again"
        )
        duplicates = _compare_bounded(
            ctx,
            sent.ids,
            d.read_back(),
            bound,
            what=f"stored after kill -9 of cdk standalone, a restart and a clean stop "
            f"({len(sent.ids) - len(after)} records produced before the kill, {len(after)} after)",
            why=why,
        )
        ctx.metric("sink.crash.duplicates", duplicates, "records", higher_is_better=False)
