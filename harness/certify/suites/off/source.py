"""OFF-01 to OFF-04: a source resumes exactly where its committed offsets say."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness._driver import Delivery, SourceDriver
from harness.certify._checks import CheckFailed, CheckNotVerified, check
from harness.certify._context import CheckContext
from harness.certify._probe import offset_key
from harness.certify.suites.off._common import _BATCH, _RESUME_SAMPLES, _ids, _show
from harness.certify.suites.off._sources import (
    _compare_bounded,
    _covered_records,
    _numeric_fields,
    _probe_records,
    _pushed,
    _resume_points,
    _source_class,
    _source_delivery,
    _source_record_id,
    _spread,
    _wait_source_ids,
    _write,
    _write_until_committed,
)

__all__: list[str] = []


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
    source_kind="replayable",
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
    connector itself, once the restarted worker has stopped, so that it never takes what the
    worker must read). A connector that claims exactly-once delivery may have none. Not
    applicable to an acknowledging source (a queue), whose crash check is ACK-02.
    """
    ctx.require_replayable_source()
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
        ctx.evidence("in Kafka at the kill", len(at_kill))
        ctx.evidence("offsets committed before the kill", observed)
        after = _write(ctx, d, 20)
        written += after
        with ctx.standalone({name: config}, props) as p:
            got = _source_delivery(ctx, d, topic, written, p.rest, name)
        # Only now, with no worker left to read the source, may the connector read it again
        # in-process to learn what the offsets cover: a probe between the kill and the restart
        # would take what the restarted worker must read (messages a queue redelivers).
        covered, how = _covered_records(ctx, config, observed, len(written))
        ctx.evidence("records those offsets cover", covered)
        exactly_once = ctx.driver_class.delivery is Delivery.EXACTLY_ONCE
        bound = 0 if exactly_once else max(0, len(at_kill) - covered)
        ctx.evidence("duplicates allowed", bound)
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
    source_kind="replayable",
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
    was emitted, an off-by-one), a repeated or unexpected one that it re-reads. Not applicable
    to an acknowledging source (a queue), which cannot be read again from an offset.
    """
    ctx.require_replayable_source()
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
        ctx.evidence("distinct offsets emitted", len(points))
        ctx.evidence("resume points sampled", min(len(points), _RESUME_SAMPLES))
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
    source_kind="replayable",
    capabilities=("future_offset() (offsets with no numeric field)",),
    fix=(
        "When the stored offset is beyond the data, return ``None`` (or an empty list) from "
        "``poll()`` until new data arrives; do not raise or start over from the beginning."
    ),
)
def source_future_offset(ctx: CheckContext) -> None:
    """A source task started from an offset beyond its data emits nothing and raises nothing.

    Records are written and read in-process; then a new task starts from an offset beyond the
    last one of each source partition, as after an offset reset with PATCH
    /connectors/{c}/offsets or a source that was truncated. It must emit no record and raise
    no error (not applicable to an acknowledging source, which has no position to move).
    The offset ahead comes from the driver (``future_offset()``: a Redis stream id
    ahead of the clock, a cursor past the end), else the harness pushes every numeric field of
    the last offset far ahead (plus 10^9). Not verified when the offsets have no numeric field
    and the driver has no ``future_offset()``.
    """
    ctx.require_replayable_source()
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
        if not last:
            raise CheckFailed(
                "the records to carry a source partition and offset (what a worker commits)",
                f"none of the {len(records)} records emitted has both",
            )
        future = _future_offsets(ctx, d, last)
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
        ctx.evidence("last offsets", {k: o for k, (_, o) in last.items()})
        ctx.evidence("future offsets", future)
        ctx.evidence("records emitted from the future offsets", len(resumed))
        if resumed:
            ids = [_source_record_id(d, r) for r in resumed]
            raise CheckFailed(
                "a task started from an offset beyond the last record to emit nothing",
                f"the task {where} emitted {len(resumed)} records (ids {_ids(ids)}) of the "
                f"{len(written)} written before that offset",
            )


def _future_offsets(
    ctx: CheckContext,
    d: SourceDriver,
    last: Mapping[str, tuple[dict[str, Any], dict[str, Any]]],
) -> dict[str, dict[str, Any]]:
    """An offset beyond the data for each partition: the driver's, else numeric fields pushed."""
    if _implements(d, "future_offset"):
        future: dict[str, dict[str, Any]] = {}
        for key, (partition, offset) in last.items():
            try:
                found = d.future_offset(dict(partition), dict(offset))
            except Exception as exc:  # noqa: BLE001 - a broken driver is named as such
                raise CheckFailed(
                    "the driver's future_offset() to return an offset beyond the data",
                    f"future_offset({_show(partition)}, {_show(offset)}) raised "
                    f"{type(exc).__name__}: {exc}",
                ) from None
            if not isinstance(found, Mapping) or not found:
                raise CheckFailed(
                    "the driver's future_offset() to return an offset (a mapping)",
                    f"it returned {found!r:.200} for {_show(partition)}",
                )
            future[key] = dict(found)
        ctx.evidence("future offsets from", "the driver's future_offset()")
        return future
    if not any(_numeric_fields(offset) for _, offset in last.values()):
        raise CheckNotVerified(
            "the source offsets have no numeric field the harness can push ahead (last "
            f"offsets: {_show([o for _, o in last.values()])}), and the driver "
            f"{type(d).__name__} has no future_offset() to give one beyond the data: "
            "implement it (see the driver contract), or waive the check with the reason"
        )
    ctx.evidence("future offsets from", "every numeric field of the last offset plus 10^9")
    return {key: _pushed(offset) for key, (_, offset) in last.items()}


def _implements(d: SourceDriver, capability: str) -> bool:
    return getattr(type(d), capability) is not getattr(SourceDriver, capability)
