"""SCH-09 for sources: the driver writes hostile values, every emitted field is compared."""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from cdk.api import SourceRecord
from harness._driver import SourceDriver
from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext
from harness.certify._probe import SourceProbe
from harness.certify.suites.sch._common import _SOURCE_TIMEOUT, _error
from harness.certify.suites.sch._hostile import Plan, plan_for, source_value
from harness.certify.suites.sch._mismatch import Mismatch, brief, differences
from harness.certify.suites.sch._outcome import fail, passed, record_plan
from harness.certify.suites.sch._shrink import shrink
from harness.certify.suites.sch._source import _record_id, _source_class, _source_config

__all__ = ["source_fidelity"]


def source_fidelity(ctx: CheckContext) -> None:
    """SCH-09 for a source driver."""
    ctx.require("value_schema")
    ctx.require("write_values")
    with ctx.driver() as d:
        plan = plan_for(d.value_schema(), d.value_limits, type(d).__name__)
        contents = plan.contents(ctx.seed, ctx.workdir / "hypothesis")
        record_plan(ctx, plan, len(contents))
        handed = _write(ctx, d, plan, contents)
        with ctx.probe(_source_class(ctx), _source_config(ctx, d)) as probe:
            mismatches = _emitted(d, plan, probe, handed)
            ctx.evidence("records that came back different", len({m.record_id for m in mismatches}))
            if not mismatches:
                passed(ctx, plan)
                return

            def round_trip(
                batch: Sequence[tuple[str, Any]],
            ) -> list[tuple[Any, list[Mismatch]]] | None:
                written = _write(ctx, d, plan, [{f: c} if plan.struct else c for f, c in batch])
                found = _emitted(d, plan, probe, written)
                return [
                    (value, [m for m in found if m.record_id == rid and m.field == f])
                    for (rid, (value, _)), (f, _) in zip(written.items(), batch, strict=True)
                ]

            content_of = {rid: content for rid, (_, content) in handed.items()}
            shrunk = shrink(mismatches, content_of, plan, round_trip)
            fail(ctx, mismatches, shrunk, len(handed), "emitted", "written")


def _write(
    ctx: CheckContext, d: SourceDriver, plan: Plan, contents: Sequence[Any]
) -> dict[Hashable, tuple[Any, Any]]:
    """Have the driver write the values; (value, content) by the id it returned for each."""
    ids = ctx.ids(len(contents))
    values = [source_value(plan, i, c) for i, c in zip(ids, contents, strict=True)]
    try:
        returned = d.write_values(values)
    except Exception as exc:  # noqa: BLE001 - the external system refusing a value is the finding
        raise CheckFailed(
            "the driver to write the hostile values into the external system",
            f"write_values() raised {_error(exc)[:1500]} (a value the system cannot hold is a "
            "limit to declare in the driver's value_limits, with its reason)",
        ) from None
    if not isinstance(returned, Sequence) or len(returned) != len(values):
        raise CheckFailed(
            "the driver's write_values() to return the id of each value written, in order",
            f"it was given {len(values)} values and returned {returned!r:.200}",
        )
    if len(set(returned)) != len(returned):
        raise CheckFailed(
            "the driver's write_values() to return a different id for each value",
            f"it returned repeated ids: {returned!r:.200}",
        )
    return {
        rid: (value, content)
        for rid, value, content in zip(returned, values, contents, strict=True)
    }


def _emitted(
    d: SourceDriver,
    plan: Plan,
    probe: SourceProbe,
    handed: Mapping[Hashable, tuple[Any, Any]],
) -> list[Mismatch]:
    """Poll until every value handed is emitted (or nothing more comes); how they differ.

    Records the driver cannot recognise any more (a mangled line...) are paired with the
    values not seen, in order: a stream keeps the order of what was written.
    """
    records = _collect(d, probe, set(handed), len(handed))
    by_id: dict[Hashable, SourceRecord] = {}
    unknown: list[SourceRecord] = []
    for record in records:
        rid = _record_id(d, record)
        if rid in handed and rid not in by_id:
            by_id[rid] = record
        else:  # not a value handed, or one emitted again: maybe another, mangled into it
            unknown.append(record)
    out: list[Mismatch] = []
    for rid, (value, _) in handed.items():
        if rid in by_id:
            out.extend(
                differences(
                    plan,
                    rid,
                    value,
                    by_id[rid].value,
                    verb="emitted",
                    gave="wrote",
                    absent_is_null=True,
                )
            )
    missing = [rid for rid in handed if rid not in by_id]
    for rid, record in zip(missing, unknown, strict=False):
        found = differences(
            plan,
            rid,
            handed[rid][0],
            record.value,
            verb="emitted",
            gave="wrote",
            absent_is_null=True,
        )
        out.extend(
            Mismatch(m.record_id, m.field, m.sent, m.got, f"{m.text} (in its place in the stream)")
            for m in found
        )
    for rid in missing[len(unknown) :]:
        text = f"value: wrote {brief(handed[rid][0])}, emitted nothing (no record)"
        out.append(Mismatch(rid, "value", handed[rid][0], None, text))
    return out


def _collect(
    d: SourceDriver, probe: SourceProbe, wanted: set[Hashable], count: int
) -> list[SourceRecord]:
    """Poll until every id in ``wanted`` was emitted, or ``count`` records and a quiet poll."""
    records: list[SourceRecord] = []
    seen: set[Hashable] = set()
    deadline = time.monotonic() + _SOURCE_TIMEOUT
    while not wanted <= seen and time.monotonic() < deadline:
        remaining = max(deadline - time.monotonic(), 0.1)
        try:
            batch = probe.poll(idle=1.0, timeout=min(5.0, remaining))
        except Exception as exc:  # noqa: BLE001 - the connector failing on a value is the finding
            raise CheckFailed(
                f"the source to emit the {count} records of hostile values written",
                f"its task raised {_error(exc)} after emitting {len(records)} of them",
            ) from None
        records.extend(batch)
        seen.update(_record_id(d, r) for r in batch)
        if not batch and len(records) >= count:
            break
    return records
