"""The OFF suite: offsets survive stops and crashes, resume points are exact, the REST API works.

A source connector's offsets are the positions it attaches to its records (``source_offset``)
and the worker commits once Kafka acknowledged them; a sink connector's are its consumer group's
committed offsets, which the worker commits for what ``pre_commit`` returns. The checks stop,
kill (``kill -9`` of a real ``cdk standalone``) and restart connectors, resume source tasks from
every committed position, and drive the offsets REST API, then compare the delivered record ids
with what the driver wrote or the harness produced.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cdk.api import SinkConnector, SinkRecord, SinkTask, SourceConnector, SourceRecord
from cdk.converters import JsonConverter
from cdk.runtime import EmbeddedWorker
from harness._driver import Delivery, SinkDriver, SourceDriver
from harness.certify._checks import CheckFailed, CheckSkipped, check
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify._probe import SourceProbe, offset_key
from harness.certify._rest import RestClient

__all__: list[str] = []

#: Records per batch in the checks (small: each check runs in seconds on a correct connector).
_BATCH = 40
#: How long a check waits for records that a correct connector delivers in a few seconds.
_DELIVERY_TIMEOUT = 40.0
#: Resume points OFF-03 tries at most.
_RESUME_SAMPLES = 8


# =============================================================================================
# Sources


@check(
    "OFF-01",
    "Source resumes after a clean stop: no loss, no duplicates",
    kinds=("source",),
    fix=(
        "Give each ``SourceRecord`` the offset of that record (the position to resume after), "
        "and in ``start()`` read ``self.context.offset_storage_reader.offset(partition)`` and "
        "continue after it."
    ),
)
def source_clean_restart(ctx: CheckContext) -> None:
    """A source resumes exactly where it stopped after a clean stop or a delete.

    The source runs on a worker, which is stopped cleanly while records are still being
    written (the worker commits the offsets of every record Kafka acknowledged); more records are
    written while it is down, and a new worker with the same offsets file resumes the connector.
    Then the connector is deleted (DELETE /connectors/{c}) and created again under the same name
    after more records. Each time every record must be in Kafka exactly once: a duplicate means
    the connector did not resume from its committed offset, a missing record that it skipped
    one.
    """
    props = ctx.worker_properties()
    name = ctx.unique("off01")
    topic = ctx.topic()
    with ctx.driver() as d:
        config = ctx.connector_config(d, topic)
        first = _write(ctx, d, _BATCH)
        with ctx.worker(props) as w:
            w.create(name, config)
            _wait_source_ids(
                ctx, d, topic, first, "the records written before the stop", w.rest, name
            )
            second = _write(ctx, d, _BATCH)  # still being read when the worker stops
        third = _write(ctx, d, _BATCH // 2)  # written while no worker runs
        written = first + second + third
        with ctx.worker(props) as w:
            w.create(name, config)
            got = _source_delivery(ctx, d, topic, written, w.rest, name)
            ctx.compare_ids(
                written,
                got,
                what=f"after a clean stop of the worker ({len(first)} records delivered before "
                f"it, {len(second)} written just before it, {len(third)} while it was down) "
                "and a restart with the same offsets file",
            )
            answer = w.rest.delete(f"/connectors/{name}")
            if answer.status not in (200, 204):
                raise CheckFailed(
                    f"DELETE /connectors/{name} to delete the connector",
                    f"the worker answered {answer.status}: {answer.text[:300]}",
                )
            fourth = _write(ctx, d, _BATCH // 2)
            written += fourth
            w.create(name, config)
            got = _source_delivery(ctx, d, topic, written, w.rest, name)
            ctx.compare_ids(
                written,
                got,
                what=f"after DELETE /connectors/{name} and creating it again under the same name "
                f"({len(fourth)} records written in between; the offsets stay in the worker)",
            )


@check(
    "OFF-02",
    "Source loses nothing when the worker is killed (kill -9); duplicates bounded",
    kinds=("source",),
    fix=(
        "Emit offsets that describe each record's own position (never a position read ahead) "
        "and resume strictly after the stored offset in ``start()``, as for OFF-01."
    ),
)
def source_crash_restart(ctx: CheckContext) -> None:
    """A source loses nothing when its worker process is killed, and re-sends little.

    The source runs in a real ``cdk standalone`` process with a file offset store while
    records are written steadily. Once the worker has committed offsets (GET
    /connectors/{c}/offsets shows them) and more records are in flight, the process is killed
    with SIGKILL; more records are written and a new process with the same worker properties
    (same offsets file) resumes. No record may be lost. Duplicates are counted: a worker re-sends
    at most the records produced after its last offset commit, so duplicates may not exceed the
    records in Kafka at the kill minus those covered by the last committed offsets observed
    before it (the harness finds the records an offset covers by reading the source with the
    connector itself). A connector that claims exactly-once delivery may have none.
    """
    props = ctx.worker_properties()
    name = ctx.unique("off02")
    topic = ctx.topic()
    with ctx.driver() as d:
        config = ctx.connector_config(d, topic)
        written = _write(ctx, d, 20)
        with ctx.standalone({name: config}, props) as p:
            observed = _write_until_committed(ctx, d, p.rest, name, written)
            p.kill()
        at_kill = ctx.source_ids(d, ctx.read_records(topic, idle=1.0, timeout=15.0))
        if not at_kill:
            raise CheckFailed(
                "the source to deliver records before the kill",
                f"Kafka has none of the {len(written)} records written "
                f"(the last offsets observed: {_show(observed)})",
            )
        covered, how = _covered_records(ctx, config, observed, len(written))
        after = _write(ctx, d, 20)
        written += after
        with ctx.standalone({name: config}, props) as p:
            got = _source_delivery(ctx, d, topic, written, p.rest, name)
        exactly_once = ctx.driver_class.delivery is Delivery.EXACTLY_ONCE
        bound = 0 if exactly_once else max(0, len(at_kill) - covered)
        why = (
            "the connector claims exactly-once delivery"
            if exactly_once
            else f"{len(at_kill)} records were in Kafka at the kill and the last offsets "
            f"committed before it cover {covered} of them ({how}): only the {bound} others "
            "may be sent again"
        )
        duplicates = _compare_bounded(
            ctx,
            written,
            got,
            bound,
            what=f"after kill -9 of cdk standalone and a restart with the same offsets file "
            f"({len(written) - len(after)} records written before the kill, {len(after)} after)",
            why=why,
        )
        ctx.metric("source.crash.duplicates", duplicates, "records", higher_is_better=False)


@check(
    "OFF-03",
    "Source resumes from each committed offset with exactly the remaining records",
    kinds=("source",),
    fix=(
        'Make a stored offset mean "everything up to and including this record" and resume '
        "from the record after it, for each source partition separately; look for an "
        "off-by-one in the resume query."
    ),
)
def source_resume_points(ctx: CheckContext) -> None:
    """A source task resumed from any offset it emitted yields exactly the later records.

    Records are written (into two input streams when the driver has several) and the
    connector's task reads them all in-process, keeping each record's source partition and
    offset. Then, for up to 8 distinct offsets spread over the run, a new task starts with that
    offset stored for its partition (as a worker would after committing it) and must emit exactly
    the records after it: a missing id means the resume skips records (an offset ahead of what
    was emitted, an off-by-one), a repeated or unexpected one that it re-reads.
    """
    with ctx.driver() as d:
        streams = min(d.streams, 2)
        per_stream = _BATCH if streams == 1 else _BATCH // 2
        written: list[int] = []
        for stream in range(streams):
            written += _write(ctx, d, per_stream, stream=stream)
        config = ctx.connector_config(d, ctx.topic())
        connector = _source_class(ctx)
        records = _probe_records(connector, config, None, count=len(written), what="from scratch")
        ids = [_source_record_id(d, r) for r in records]
        ctx.compare_ids(written, ids, what="the task started without stored offsets")
        points = _resume_points(records, ids)
        if not points:
            raise CheckFailed(
                "the records to carry source partitions and offsets",
                f"none of the {len(records)} records has a source offset, so no task can resume",
            )
        failures: list[str] = []
        for point in _spread(points, _RESUME_SAMPLES):
            expected = [i for i in written if i not in point.done]
            where = (
                f"resuming {_show(point.partition)} from offset {_show(point.offset)} "
                f"(the offset of record {point.record_id!r}, {len(point.done)} records of that "
                "partition done)"
            )
            try:
                resumed = _probe_records(
                    connector,
                    config,
                    {offset_key(point.partition): point.offset},
                    count=len(expected),
                    what=where,
                )
                got = [_source_record_id(d, r) for r in resumed]
                ctx.compare_ids(expected, got, what=where)
            except CheckFailed as failure:
                failures.append(f"{failure.expected}: {failure.actual}")
                if len(failures) >= 2:
                    break  # enough evidence; each failing resume costs an idle wait
        if failures:
            raise CheckFailed(
                "a task resumed from any committed offset to emit exactly the records after it",
                f"{len(failures)} resume point(s) went wrong (of {len(points)} distinct offsets, "
                f"{min(len(points), _RESUME_SAMPLES)} sampled); {failures[0]}",
                details="\n".join(failures),
            )


@check(
    "OFF-04",
    "Source given a future offset emits nothing and raises nothing",
    kinds=("source",),
    fix=(
        "When the stored offset is beyond the data, return ``None`` (or an empty list) from "
        "``poll()`` until new data arrives; do not raise or start over from the beginning."
    ),
)
def source_future_offset(ctx: CheckContext) -> None:
    """A source task started from an offset beyond its data emits nothing and raises nothing.

    Records are written and read in-process; the last offset of each source partition is then
    pushed far ahead (every numeric field plus 10^9) and a new task starts from it, as after an
    offset reset with PATCH /connectors/{c}/offsets or a source that was truncated. It must emit
    no record and raise no error. Skipped when the offsets have no numeric field.
    """
    with ctx.driver() as d:
        written = _write(ctx, d, 20)
        config = ctx.connector_config(d, ctx.topic())
        connector = _source_class(ctx)
        records = _probe_records(connector, config, None, count=len(written), what="from scratch")
        if not records:
            raise CheckFailed(
                "the task to emit the records written",
                f"it emitted none of the {len(written)} records",
            )
        last: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        for record in records:
            if record.source_partition is not None and record.source_offset is not None:
                partition = dict(record.source_partition)
                last[offset_key(partition)] = (partition, dict(record.source_offset))
        future = {key: _pushed(offset) for key, (_, offset) in last.items()}
        if not last or not any(_numeric_fields(offset) for _, offset in last.values()):
            raise CheckSkipped(
                "the source offsets have no numeric field to push ahead "
                f"(last offsets: {_show([o for _, o in last.values()])})"
            )
        where = "started with offsets " + ", ".join(
            f"{_show(partition)} -> {_show(future[key])}" for key, (partition, _) in last.items()
        )
        try:
            resumed = _probe_records(connector, config, future, count=None, what=where, idle=1.5)
        except CheckFailed as failure:
            raise CheckFailed(
                "a task started from an offset beyond the last record to emit nothing and "
                "raise nothing",
                failure.actual,
            ) from None
        if resumed:
            ids = [_source_record_id(d, r) for r in resumed]
            raise CheckFailed(
                "a task started from an offset beyond the last record to emit nothing",
                f"the task {where} emitted {len(resumed)} records (ids {_ids(ids)}) of the "
                f"{len(written)} written before that offset",
            )


# =============================================================================================
# Sinks


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


# =============================================================================================
# Both


@check(
    "OFF-08",
    "The offsets REST API shows, resets and restarts the connector's offsets",
    fix=(
        "Keep the position only in Connect's offsets (the source offsets, or the sink's "
        "consumer group), not in a private checkpoint that survives an offset reset; a sink "
        "that rewinds with ``context.offset(...)`` must follow the reset too."
    ),
)
def offsets_rest_api(ctx: CheckContext) -> None:
    """GET, and DELETE after stop, of /connectors/{c}/offsets work and make it start over.

    Once the connector delivered its first records, GET /connectors/{c}/offsets must list
    offsets (a partition and an offset each). After PUT /connectors/{c}/stop, DELETE
    /connectors/{c}/offsets must reset them (GET then lists none), and after PUT
    /connectors/{c}/resume the connector must start over: a source emits every record again, a
    sink's consumer group starts from the beginning and every record is delivered to the task
    again (the harness counts the records given to put()) with nothing lost. A connector that
    keeps its position elsewhere and ignores the reset fails.
    """
    if ctx.kind == "source":
        _rest_offsets_source(ctx)
    else:
        _rest_offsets_sink(ctx)


def _rest_offsets_source(ctx: CheckContext) -> None:
    with ctx.driver() as d, ctx.worker() as w:
        name = ctx.unique("off08")
        topic = ctx.topic()
        written = _write(ctx, d, _BATCH)
        w.create(name, ctx.connector_config(d, topic))
        _wait_source_ids(ctx, d, topic, written, "the records written", w.rest, name)
        _wait_offsets_shown(ctx, w.rest, name)
        _stop_and_reset(ctx, w, name)
        _put(ctx, w.rest, f"/connectors/{name}/resume")
        # Records written after the resume come after the old ones in the same stream: once
        # they arrived, the old ones were emitted again or never will be.
        later = _write(ctx, d, 10)
        got = _wait_source_ids(
            ctx, d, topic, later, "the records written after the resume", w.rest, name
        )
        counts = Counter(got)
        again = [i for i in written if counts[i] < 2]
        if again:
            raise CheckFailed(
                "the source to emit every record again after its offsets were reset",
                f"{len(again)} of the {len(written)} records were not emitted again after "
                f"DELETE /connectors/{name}/offsets and resume, although the {len(later)} "
                f"records written after the resume arrived (ids not emitted again: "
                f"{_ids(again)}); the connector keeps its position outside the worker's offsets",
            )


def _rest_offsets_sink(ctx: CheckContext) -> None:
    with ctx.driver() as d, _recording_worker(ctx) as (w, puts, connector_class):
        topic = ctx.create_topic(ctx.topic())
        name = ctx.unique("off08")
        sent = _Produced(ctx, d, topic)
        ids = sent.produce(_BATCH)
        config = ctx.connector_config(d, topic)
        config["connector.class"] = connector_class
        w.create(name, config)
        _wait_sink(ctx, d, name, topic, sent, ids, w.rest)
        _wait_offsets_shown(ctx, w.rest, name)
        _stop_and_reset(ctx, w, name)
        before = len(puts)
        old = set(sent.positions)
        _put(ctx, w.rest, f"/connectors/{name}/resume")
        # Records produced after the resume come after the old ones in the partition: once the
        # task got them, it got the old ones again or never will.
        later = sent.produce(10)
        new = set(sent.positions) - old

        def redelivered() -> set[tuple[int, int]]:
            return {(p, o) for t, p, o in puts[before:] if t == topic}

        ctx.wait_for(
            lambda: new <= redelivered(),
            _DELIVERY_TIMEOUT,
            expected="the sink task to get the records produced after the resume",
            actual=lambda: f"put() got {len(new & redelivered())} of the {len(new)}",
            interval=0.2,
        )
        again = sorted(old - redelivered())
        if again:
            raise CheckFailed(
                "every record to be delivered to the sink task again after the reset (the "
                "consumer group starts from the beginning)",
                f"{len(again)} of the {len(old)} records were not given to put() again after "
                f"DELETE /connectors/{name}/offsets and resume, although the {len(later)} "
                f"records produced after the resume were (kafka offsets "
                f"{_ids([o for _, o in again])}); the connector keeps its position outside the "
                "consumer group",
            )
        _wait_sink(ctx, d, name, topic, sent, sent.ids, w.rest)
        stored = set(d.read_back())
        missing = [i for i in sent.ids if i not in stored]
        if missing:
            raise CheckFailed(
                "every record to be stored after the offsets were reset and redelivered",
                f"{len(missing)} records are missing (ids {_ids(missing)})",
            )


# =============================================================================================
# Helpers: sources


def _write(ctx: CheckContext, d: SourceDriver, count: int, *, stream: int = 0) -> list[int]:
    ids = ctx.ids(count)
    d.write_records(ids, stream=stream)
    return ids


def _source_class(ctx: CheckContext) -> type[SourceConnector]:
    cls = ctx.connector_class
    if not issubclass(cls, SourceConnector):
        raise CheckFailed("a source connector", f"{ctx.connector_class_name} is not one")
    return cls


def _wait_source_ids(
    ctx: CheckContext,
    d: SourceDriver,
    topic: str,
    ids: Sequence[Hashable],
    what: str,
    rest: RestClient,
    name: str,
) -> list[Hashable]:
    """Wait until every id of ``ids`` is in Kafka; return every id read (in topic order).

    Raises:
        CheckFailed: a task FAILED meanwhile, or ids are still missing at the deadline.
    """
    expected = f"the source to deliver {what} ({len(ids)} records)"
    wanted = set(ids)
    deadline = time.monotonic() + _DELIVERY_TIMEOUT
    need = len(ids)
    while True:
        records = ctx.read_records(topic, min_records=need, timeout=5.0, idle=1.0)
        got = ctx.source_ids(d, records)
        if wanted <= set(got):
            return got
        _fail_on_failed_task(rest, name, expected)
        if time.monotonic() >= deadline:
            missing = sorted(wanted - set(got), key=repr)
            raise CheckFailed(
                expected,
                f"after {_DELIVERY_TIMEOUT:g}s {len(missing)} never arrived (ids {_ids(missing)}); "
                f"Kafka has {len(got)} records",
            )
        need = max(need, len(records) + 1)


def _source_delivery(
    ctx: CheckContext,
    d: SourceDriver,
    topic: str,
    want: Sequence[Hashable],
    rest: RestClient,
    name: str,
) -> list[Hashable]:
    """The ids in Kafka once every id of ``want`` arrived (or the deadline passed).

    Read once more until no record arrived for a second, so late duplicates are counted too.

    Raises:
        CheckFailed: a task FAILED before every id arrived.
    """
    deadline = time.monotonic() + _DELIVERY_TIMEOUT
    need = len(want)
    wanted = set(want)
    while True:
        records = ctx.read_records(topic, min_records=need, timeout=5.0, idle=1.0)
        if wanted <= set(ctx.source_ids(d, records)):
            break
        _fail_on_failed_task(rest, name, f"the source to deliver the {len(want)} records")
        if time.monotonic() >= deadline:
            break
        need = max(need, len(records) + 1)
    return ctx.source_ids(d, ctx.read_records(topic, idle=1.0, timeout=15.0))


def _rest_offsets(rest: RestClient, name: str) -> list[dict[str, Any]]:
    answer = rest.get(f"/connectors/{name}/offsets")
    body = answer.json
    if answer.status != 200 or not isinstance(body, dict):
        return []
    entries = body.get("offsets")
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _write_until_committed(
    ctx: CheckContext, d: SourceDriver, rest: RestClient, name: str, written: list[int]
) -> list[dict[str, Any]]:
    """Write records steadily until offsets were committed and a few more batches followed.

    Returns the last offsets GET /connectors/{c}/offsets showed (just before the kill).
    """
    deadline = time.monotonic() + _DELIVERY_TIMEOUT
    observed: list[dict[str, Any]] = []
    batches_after = 0
    while True:
        written += _write(ctx, d, 5)
        current = _rest_offsets(rest, name)
        if current:
            observed = current
            batches_after += 1
            if batches_after >= 4:  # the last batches are in flight at the kill
                return observed
        else:
            _fail_on_failed_task(rest, name, "the source to deliver records and commit offsets")
            if time.monotonic() >= deadline:
                raise CheckFailed(
                    "the worker to commit source offsets (GET /connectors/{c}/offsets)",
                    f"after {_DELIVERY_TIMEOUT:g}s and {len(written)} records written it shows "
                    "none",
                )
        time.sleep(0.05)  # pacing of the writes (load), not synchronisation


def _covered_records(
    ctx: CheckContext, config: Mapping[str, str], observed: list[dict[str, Any]], written: int
) -> tuple[int, str]:
    """How many records the committed ``observed`` offsets cover, and how that was found.

    The connector reads the source in-process from scratch; an offset covers the records of its
    partition up to the first one carrying it (the fewest it can stand for).
    """
    try:
        records = _probe_records(
            _source_class(ctx), config, None, count=written, what="from scratch"
        )
    except CheckFailed as failure:
        return 0, f"the offsets could not be matched to records: {failure.actual}"
    positions: dict[tuple[str, str], int] = {}
    per_partition: Counter[str] = Counter()
    for record in records:
        if record.source_partition is None or record.source_offset is None:
            continue
        key = offset_key(record.source_partition)
        per_partition[key] += 1
        # the first record carrying an offset: the fewest records it can stand for
        positions.setdefault((key, _norm(record.source_offset)), per_partition[key])
    covered = 0
    unmatched = []
    for entry in observed:
        partition, offset = entry.get("partition"), entry.get("offset")
        if not isinstance(partition, dict) or not isinstance(offset, dict):
            continue
        found = positions.get((offset_key(partition), _norm(offset)))
        if found is None:
            unmatched.append(offset)
        else:
            covered += found
    if unmatched:
        return covered, (
            f"the committed offsets {_show(unmatched)} match no record the connector emits, so "
            "they count as covering none"
        )
    return covered, f"offsets {_show([e.get('offset') for e in observed])}"


def _compare_bounded(
    ctx: CheckContext,
    expected: Sequence[Hashable],
    actual: Sequence[Hashable],
    bound: int,
    *,
    what: str,
    why: str,
) -> int:
    try:
        return ctx.compare_ids(
            expected, actual, what=what, allow_duplicates=bound > 0, max_duplicates=bound
        )
    except CheckFailed as failure:
        allowed = f"at most {bound} duplicates" if bound else "no duplicate"
        raise CheckFailed(
            f"{failure.expected}, with {allowed} ({why})",
            failure.actual,
            details=failure.details,
        ) from None


def _probe_records(
    connector: type[SourceConnector],
    config: Mapping[str, str],
    offsets: Mapping[str, Mapping[str, Any]] | None,
    *,
    count: int | None,
    what: str,
    idle: float = 0.3,
) -> list[SourceRecord]:
    """Run the connector's tasks in-process from ``offsets``; every record they emit.

    With ``count``, polls until that many arrived (at most 20 s, or 3 s without any), then
    until none came for ``idle`` seconds, so extra records are seen too.

    Raises:
        CheckFailed: the connector or a task raised (the message says where and what).
    """
    probe = SourceProbe(connector, config, offsets=offsets)
    try:
        probe.start()
        records: list[SourceRecord] = []
        if count:
            records += probe.poll(count=count, idle=3.0, timeout=20.0)
        records += probe.poll(idle=idle, timeout=20.0)
    except Exception as exc:  # noqa: BLE001 - the connector's error is the finding
        raise CheckFailed(
            "the task to run without error",
            f"the task {what} raised {type(exc).__name__}: {exc}",
        ) from None
    finally:
        with contextlib.suppress(Exception):
            probe.stop()
    errors = probe.context.errors
    if errors:
        raise CheckFailed(
            "the task to run without error",
            f"the connector {what} reported {type(errors[0]).__name__}: {errors[0]}",
        )
    return records


_KEY_CONVERTER = JsonConverter()
_KEY_CONVERTER.configure({"schemas.enable": "true"}, True)
_VALUE_CONVERTER = JsonConverter()
_VALUE_CONVERTER.configure({"schemas.enable": "true"}, False)


def _source_record_id(d: SourceDriver, record: SourceRecord) -> Hashable:
    """The id of a record emitted in-process, as the driver finds it after a JSON round trip."""
    topic = record.topic
    key = _KEY_CONVERTER.to_connect_data(
        topic, _KEY_CONVERTER.from_connect_data(topic, record.key_schema, record.key)
    )
    value = _VALUE_CONVERTER.to_connect_data(
        topic, _VALUE_CONVERTER.from_connect_data(topic, record.value_schema, record.value)
    )
    try:
        return d.record_id(key.value, value.value)
    except Exception as exc:  # noqa: BLE001 - any driver error is reported as such
        raise CheckFailed(
            "every emitted record to carry the id the driver wrote",
            f"the driver cannot find an id in a record for {topic}: {exc}",
        ) from None


@dataclass(frozen=True)
class _ResumePoint:
    partition: dict[str, Any]
    offset: dict[str, Any]
    record_id: Hashable
    done: frozenset[Hashable]  # the ids of that partition up to and including record_id


def _resume_points(records: Sequence[SourceRecord], ids: Sequence[Hashable]) -> list[_ResumePoint]:
    """Every distinct (partition, offset) in emission order, at the first record carrying it.

    A worker commits the offset of the last record Kafka acknowledged: when several records
    carry the same offset, committing it after the first says the others are done too.
    """
    seen: dict[str, list[Hashable]] = {}
    points: dict[tuple[str, str], _ResumePoint] = {}
    for record, id_ in zip(records, ids, strict=True):
        if record.source_partition is None or record.source_offset is None:
            continue
        partition = dict(record.source_partition)
        key = offset_key(partition)
        done = seen.setdefault(key, [])
        done.append(id_)
        offset = json.loads(json.dumps(dict(record.source_offset), default=str))
        point_key = (key, _norm(offset))
        if point_key not in points:
            points[point_key] = _ResumePoint(partition, offset, id_, frozenset(done))
    return list(points.values())


def _spread(points: Sequence[_ResumePoint], limit: int) -> list[_ResumePoint]:
    """At most ``limit`` points spread evenly, the first and the last included."""
    if len(points) <= limit:
        return list(points)
    step = (len(points) - 1) / (limit - 1)
    return [points[round(n * step)] for n in range(limit)]


def _numeric_fields(offset: Mapping[str, Any]) -> list[str]:
    return [k for k, v in offset.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _pushed(offset: Mapping[str, Any]) -> dict[str, Any]:
    """``offset`` with every numeric field far ahead (kept within the 64-bit range)."""
    out = dict(offset)
    for key in _numeric_fields(offset):
        value = offset[key]
        out[key] = min(value + 10**9, 2**62) if isinstance(value, int) else value + 1e9
    return out


# =============================================================================================
# Helpers: sinks


class _Produced:
    """The records the harness produced to a sink's topic, by id and by Kafka position."""

    def __init__(self, ctx: CheckContext, d: SinkDriver, topic: str) -> None:
        self.ctx = ctx
        self.d = d
        self.topic = topic
        self.ids: list[int] = []
        self.positions: dict[tuple[int, int], int] = {}

    def produce(self, count: int) -> list[int]:
        ids = self.ctx.ids(count)
        acks = self.ctx.produce(self.topic, self.ctx.sink_records(self.d, ids))
        for id_, position in zip(ids, acks, strict=True):
            self.positions[position] = id_
        self.ids += ids
        return ids

    def end_offsets(self) -> dict[int, int]:
        return _end_offsets(self.positions)


def _end_offsets(positions: Mapping[tuple[int, int], int]) -> dict[int, int]:
    ends: dict[int, int] = {}
    for partition, offset in positions:
        ends[partition] = max(ends.get(partition, 0), offset + 1)
    return ends


def _wait_sink(
    ctx: CheckContext,
    d: SinkDriver,
    name: str,
    topic: str,
    sent: _Produced,
    ids: Sequence[int],
    rest: RestClient,
) -> None:
    """Wait until the sink stored ``ids``, or its group committed everything produced so far.

    The second case lets a sink that writes late (on stop) through; the check then compares
    what is stored after a clean stop. A failed task fails the check at once.
    """
    group = f"connect-{name}"
    wanted = set(ids)
    ends = sent.end_offsets()

    def done() -> bool:
        if wanted <= set(d.read_back()):
            return True
        _fail_on_failed_task(rest, name, f"the sink to store the {len(wanted)} records produced")
        committed = ctx.committed_offsets(group, topic)
        return all(committed.get(p, -1) >= end for p, end in ends.items())

    ctx.wait_for(
        done,
        _DELIVERY_TIMEOUT,
        expected=f"the sink to store the {len(wanted)} records produced",
        actual=lambda: (
            f"it stored {len(wanted & set(d.read_back()))} of them and the group "
            f"{group} committed {ctx.committed_offsets(group, topic)} (end offsets {ends})"
        ),
        interval=0.3,
    )


class _CommitAudit:
    """Samples committed offsets, then the stored ids; fails on a record committed unstored."""

    def __init__(
        self,
        ctx: CheckContext,
        d: SinkDriver,
        group: str,
        topic: str,
        positions: Mapping[tuple[int, int], int],
    ) -> None:
        self.ctx = ctx
        self.d = d
        self.group = group
        self.topic = topic
        self.positions = positions
        self.last: dict[int, int] = {}
        self.samples = 0

    def sample(self) -> bool:
        """One sample (always False, to be usable in a wait predicate).

        Raises:
            CheckFailed: a committed offset covers a record the external system lacks.
        """
        committed = self.ctx.committed_offsets(self.group, self.topic)
        stored = set(self.d.read_back())  # read after the commit: it must include it
        self.last = committed
        self.samples += 1
        for partition, offset in sorted(committed.items()):
            below = [
                id_
                for (p, o), id_ in sorted(self.positions.items())
                if p == partition and o < offset
            ]
            missing = [id_ for id_ in below if id_ not in stored]
            if missing:
                raise CheckFailed(
                    "offsets to be committed only for records the sink has made durable "
                    "(every record below a committed offset is in the external system)",
                    f"the group {self.group} committed offset {offset} on partition "
                    f"{partition} of {self.topic}, but {len(missing)} of the {len(below)} "
                    f"records below it are not stored (ids {_ids(missing)}; {len(stored)} "
                    "stored): a crash now would lose them",
                )
        return False

    def reached(self, ends: Mapping[int, int]) -> bool:
        return bool(ends) and all(self.last.get(p, -1) >= end for p, end in ends.items())


@contextlib.contextmanager
def _recording_worker(
    ctx: CheckContext,
) -> Iterator[tuple[WorkerHandle, list[tuple[str, int, int]], str]]:
    """An embedded worker with a subclass of the sink connector that records what put() got.

    Yields the worker, the (topic, partition, offset) of every record its tasks' put() accepted,
    and the subclass's class name for ``connector.class``. The worker loads task classes by
    name, so both subclasses live in this module's namespace while the block runs.
    """
    base = ctx.connector_class
    if not issubclass(base, SinkConnector):
        raise CheckFailed("a sink connector", f"{ctx.connector_class_name} is not one")
    base_task = base().task_class()
    if not issubclass(base_task, SinkTask):
        raise CheckFailed(
            "the sink connector's task_class() to be a SinkTask", f"it is {base_task!r}"
        )
    puts: list[tuple[str, int, int]] = []

    def put(self: SinkTask, records: Sequence[SinkRecord]) -> None:
        base_task.put(self, records)
        puts.extend((r.topic, r.kafka_partition or 0, r.kafka_offset) for r in records)

    def task_class(self: SinkConnector) -> type[SinkTask]:
        return recording_task

    suffix = ctx.unique("").replace("-", "_")
    task_name = f"_OffRecordingTask{suffix}"
    connector_name = f"_OffRecordingConnector{suffix}"
    recording_task: type[SinkTask] = type(
        task_name, (base_task,), {"put": put, "__module__": __name__, "__qualname__": task_name}
    )
    recording: type[SinkConnector] = type(
        connector_name,
        (base,),
        {"task_class": task_class, "__module__": __name__, "__qualname__": connector_name},
    )
    namespace = globals()
    namespace[task_name] = recording_task
    namespace[connector_name] = recording
    try:
        worker = EmbeddedWorker(ctx.worker_properties(), rest=True, extra_plugins=[recording])
        worker.start()
        try:
            assert worker.rest_url is not None
            rest = RestClient(worker.rest_url)
            yield WorkerHandle(worker, rest, ctx), puts, f"{__name__}.{connector_name}"
        finally:
            worker.stop()
    finally:
        namespace.pop(task_name, None)
        namespace.pop(connector_name, None)


# =============================================================================================
# Helpers: the REST API


def _fail_on_failed_task(rest: RestClient, name: str, expected: str) -> None:
    """Fail the check if the connector or one of its tasks is FAILED (with its trace).

    Raises:
        CheckFailed: naming what failed and the first lines of its trace.
    """
    answer = rest.get(f"/connectors/{name}/status")
    status = answer.json if answer.status == 200 else None
    if not isinstance(status, dict):
        return
    states = [("the connector", status.get("connector") or {})]
    states += [(f"task {t.get('id')}", t) for t in status.get("tasks") or []]
    for what, state in states:
        if isinstance(state, dict) and state.get("state") == "FAILED":
            trace = str(state.get("trace") or "")
            raise CheckFailed(
                expected,
                f"{what} of {name} FAILED: {_brief(' | '.join(trace.splitlines()[-3:]))}",
                details=trace or None,
            )


def _put(ctx: CheckContext, rest: RestClient, path: str) -> None:
    answer = rest.put(path)
    if answer.status not in (200, 202, 204):
        raise CheckFailed(
            f"PUT {path} to be accepted", f"it answered {answer.status}: {_brief(answer.text)}"
        )


def _wait_offsets_shown(ctx: CheckContext, rest: RestClient, name: str) -> list[dict[str, Any]]:
    def shown() -> list[dict[str, Any]]:
        return [
            e
            for e in _rest_offsets(rest, name)
            if isinstance(e.get("partition"), dict) and isinstance(e.get("offset"), dict)
        ]

    return ctx.wait_for(
        shown,
        _DELIVERY_TIMEOUT,
        expected=f"GET /connectors/{name}/offsets to list the committed offsets (a partition "
        "and an offset each) once records were delivered",
        actual=lambda: f"it answers {_brief(rest.get(f'/connectors/{name}/offsets').text)}",
        interval=0.3,
    )


def _stop_and_reset(ctx: CheckContext, w: WorkerHandle, name: str) -> None:
    """PUT .../stop, wait for STOPPED, DELETE .../offsets, and check GET lists none."""
    _put(ctx, w.rest, f"/connectors/{name}/stop")
    w.wait_state(name, "STOPPED", timeout=_DELIVERY_TIMEOUT)
    answer = w.rest.delete(f"/connectors/{name}/offsets")
    if answer.status != 200:
        raise CheckFailed(
            f"DELETE /connectors/{name}/offsets to reset the offsets of the stopped connector",
            f"it answered {answer.status}: {_brief(answer.text)}",
        )
    left = _rest_offsets(w.rest, name)
    if left:
        raise CheckFailed(
            f"GET /connectors/{name}/offsets to list no offsets after the reset",
            f"it lists {_show(left)}",
        )


# =============================================================================================
# Formatting


def _norm(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _show(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _brief(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ids(ids: Sequence[Any], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")
