"""OFF-08: the offsets REST API lists, alters and resets a connector's offsets."""

from __future__ import annotations

from collections import Counter

from harness.certify._checks import CheckFailed, check
from harness.certify._context import CheckContext
from harness.certify.suites.off._common import (
    _BATCH,
    _DELIVERY_TIMEOUT,
    _ids,
    _put,
    _stop_and_reset,
    _wait_offsets_shown,
)
from harness.certify.suites.off._sinks import _Produced, _recording_worker, _wait_sink
from harness.certify.suites.off._sources import _wait_source_ids, _write

__all__: list[str] = []


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
    keeps its position elsewhere and ignores the reset fails. Not applicable to an
    acknowledging source (a queue has no position to reset; it redelivers what was not
    acknowledged).
    """
    if ctx.kind == "source":
        ctx.require_replayable_source()
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
        ctx.evidence("offsets shown by GET", _wait_offsets_shown(ctx, w.rest, name))
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
        ctx.evidence("written before the reset", len(written))
        ctx.evidence("emitted again after the reset", len(written) - len(again))
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
        ctx.evidence("offsets shown by GET", _wait_offsets_shown(ctx, w.rest, name))
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
        ctx.evidence("produced before the reset", len(old))
        ctx.evidence("given to put() again after the reset", len(old) - len(again))
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
        ctx.evidence("produced", len(sent.ids))
        ctx.evidence("stored", len(stored & set(sent.ids)))
        ctx.evidence("lost", len(missing))
        if missing:
            raise CheckFailed(
                "every record to be stored after the offsets were reset and redelivered",
                f"{len(missing)} records are missing (ids {_ids(missing)})",
            )
