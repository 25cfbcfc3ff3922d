"""SCH-09 for sinks: hostile records through a worker, every stored field compared.

When the task fails instead of storing them, the harness finds the value it fails on: it sends
the records again in groups, each group to a connector of its own (all at once, on the same
worker), then the records of the failing group one by one, then the failing record's fields
one at a time, then smaller values of that field.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from cdk.data import SchemaAndValue
from harness._driver import SinkDriver
from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext, WorkerHandle
from harness.certify.suites.err import describe_chain
from harness.certify.suites.sch._common import _SINK_TIMEOUT, JSON
from harness.certify.suites.sch._hostile import Plan, plan_for, sink_value
from harness.certify.suites.sch._mismatch import Mismatch, brief, differences
from harness.certify.suites.sch._outcome import fail, passed, record_plan, record_text
from harness.certify.suites.sch._shrink import candidates, shrink
from harness.certify.suites.sch._sink import _failed_trace, _read_back, _sink_config

__all__ = ["sink_fidelity"]

#: How many connectors at a time look for the value a failing sink fails on.
_PARALLEL = 8
#: How long that search may take in all.
_ISOLATE_BUDGET_S = 90.0
#: How long one connector of the search may take to store its records or fail.
_ISOLATE_TIMEOUT_S = 20.0


def sink_fidelity(ctx: CheckContext) -> None:
    """SCH-09 for a sink driver."""
    ctx.require("read_values")
    with ctx.driver() as d:
        plan = plan_for(d.value_schema(), d.value_limits, type(d).__name__)
        contents = plan.contents(ctx.seed, ctx.workdir / "hypothesis")
        ids = ctx.ids(len(contents))
        content_of: dict[int, Any] = dict(zip(ids, contents, strict=True))
        sent: dict[Hashable, Any] = {
            i: sink_value(plan, d.value(i, plan.schema), content_of[i]) for i in ids
        }
        record_plan(ctx, plan, len(ids))
        with ctx.worker() as w:
            topic = ctx.create_topic(ctx.topic())
            _produce(ctx, d, plan, topic, sent)
            name, config = _sink_config(ctx, d, topic, JSON, {"schemas.enable": "true"})
            w.create(name, config)
            trace, stored = _await(ctx, w, [name], d, list(sent), _SINK_TIMEOUT)
            if trace is not None or not stored >= set(sent):
                _not_stored(ctx, w, d, plan, sent, content_of, trace, stored)
            mismatches = _mismatches(d, plan, sent)
            ctx.evidence("records that came back different", len({m.record_id for m in mismatches}))
            if mismatches:
                shrunk = shrink(
                    mismatches,
                    content_of,
                    plan,
                    lambda batch: _round(ctx, w, name, d, plan, topic, batch),
                )
                fail(ctx, mismatches, shrunk, len(sent), "stored", "sent")
    passed(ctx, plan)


def _produce(
    ctx: CheckContext, d: SinkDriver, plan: Plan, topic: str, values: Mapping[Any, Any]
) -> None:
    key_schema = d.key_schema()
    ctx.produce(
        topic,
        [
            (SchemaAndValue(key_schema, d.key(i)), SchemaAndValue(plan.schema, value))
            for i, value in values.items()
        ],
    )


def _await(
    ctx: CheckContext,
    w: WorkerHandle,
    names: Sequence[str],
    d: SinkDriver,
    ids: Sequence[Hashable],
    timeout: float,
) -> tuple[str | None, set[Hashable]]:
    """Wait until ``ids`` are stored or a task of ``names`` failed: its trace, what is stored."""
    wanted = set(ids)
    deadline = time.monotonic() + timeout
    while True:
        trace = next(
            (t for t in (_failed_trace(w.status(n)) for n in names) if t is not None), None
        )
        stored = set(_read_back(d, "while waiting for the records of hostile values"))
        if trace is not None or wanted <= stored or time.monotonic() >= deadline:
            return trace, stored
        time.sleep(0.3)


def _mismatches(d: SinkDriver, plan: Plan, sent: Mapping[Any, Any]) -> list[Mismatch]:
    stored = d.read_values()
    if not isinstance(stored, Mapping):
        raise CheckFailed(
            "the driver's read_values() to return the stored values by record id",
            f"it returned {type(stored).__name__} {stored!r:.200}",
        )
    out: list[Mismatch] = []
    for record_id, value in sent.items():
        row = stored.get(record_id, stored.get(str(record_id)))
        out.extend(
            differences(plan, record_id, value, row, verb="stored", unstored=d.unstored_fields)
        )
    return out


def _round(
    ctx: CheckContext,
    w: WorkerHandle,
    name: str,
    d: SinkDriver,
    plan: Plan,
    topic: str,
    batch: Sequence[tuple[str, Any]],
) -> list[tuple[Any, list[Mismatch]]] | None:
    """Send one record per (field, candidate) to the running connector; what came back."""
    ids = ctx.ids(len(batch))
    values = {i: _value(d, plan, i, field, c) for i, (field, c) in zip(ids, batch, strict=True)}
    _produce(ctx, d, plan, topic, values)
    trace, stored_ids = _await(ctx, w, [name], d, ids, _SINK_TIMEOUT)
    if trace is not None or not stored_ids >= set(ids):
        return None
    stored = d.read_values()
    out = []
    for i, (field, _) in zip(ids, batch, strict=True):
        row = stored.get(i, stored.get(str(i)))
        found = differences(plan, i, values[i], row, verb="stored", unstored=d.unstored_fields)
        out.append((values[i], [m for m in found if m.field == field]))
    return out


def _value(d: SinkDriver, plan: Plan, record_id: int, field: str, content: Any) -> Any:
    """Record ``record_id`` with ``content`` in ``field`` only (the rest as the driver makes it)."""
    return sink_value(
        plan, d.value(record_id, plan.schema), {field: content} if plan.struct else content
    )


# ---------------------------------------------------------------------------------------------
# A task that fails on the hostile records


def _not_stored(
    ctx: CheckContext,
    w: WorkerHandle,
    d: SinkDriver,
    plan: Plan,
    sent: Mapping[Any, Any],
    content_of: Mapping[Any, Any],
    trace: str | None,
    stored: set[Hashable],
) -> None:
    """Fail: the task failed (or stored too few); name the value it fails on when it can.

    Raises:
        CheckFailed: always.
    """
    missing = [i for i in sent if i not in stored]
    expected = f"the sink to store the {len(sent)} records of hostile values"
    what = (
        f"the task failed with {describe_chain(trace)}"
        if trace is not None
        else f"after {_SINK_TIMEOUT:g}s only {len(sent) - len(missing)} are stored"
    )
    ctx.evidence("records stored before it stopped", len(sent) - len(missing))
    culprit = _isolate(ctx, w, d, plan, [content_of[i] for i in missing])
    if culprit is not None:
        field, value, failure = culprit
        where = f"{field} = {brief(value)}" if plan.struct else f"the value ending {brief(value)}"
        ctx.evidence("the value it fails on", where)
        actual = (
            f"{what}; the value it fails on, alone in a record (the other fields as the driver's "
            f"value() makes them): {where}, which {failure}"
        )
    else:
        actual = f"{what}; the first record not stored: " + record_text(
            plan, missing[0], content_of[missing[0]]
        )
    raise CheckFailed(
        expected,
        f"{actual} (seed {ctx.seed}; declare a limit the system really has in the driver's "
        "value_limits, with its reason)",
        details=trace,
    )


def _isolate(
    ctx: CheckContext, w: WorkerHandle, d: SinkDriver, plan: Plan, suspects: Sequence[Any]
) -> tuple[str, Any, str] | None:
    """The (field, value, what happens) the sink fails on, found within the time budget.

    Each round runs a connector per group at once and follows the first group that fails;
    once few enough are left, each drawn field of each record goes alone in a record.
    """
    deadline = time.monotonic() + _ISOLATE_BUDGET_S
    group = list(suspects)
    width = len(plan.drawn) if plan.struct else 1
    while len(group) * width > _PARALLEL and time.monotonic() < deadline:
        parts = _split(group, _PARALLEL)
        failing = _first_failing(ctx, w, d, plan, parts)
        if failing is None:
            return None  # each part alone is stored: the failure needs several records
        group = parts[failing[0]]
    if len(group) * width > _PARALLEL:
        return None
    singles = [
        (f, v)
        for content in group
        for f, v in (content.items() if plan.struct else [("value", content)])
    ]
    failing = _first_failing(ctx, w, d, plan, [[_content(plan, f, v)] for f, v in singles])
    if failing is None:
        return None
    field, value = singles[failing[0]]
    outcome = failing[1]
    smaller = candidates(plan, field, value)[:_PARALLEL]  # the smallest first
    if smaller and time.monotonic() < deadline:
        found = _first_failing(ctx, w, d, plan, [[_content(plan, field, c)] for c in smaller])
        if found is not None:
            value = smaller[found[0]]
    return field, value, outcome


def _content(plan: Plan, field: str, value: Any) -> Any:
    return {field: value} if plan.struct else value


def _split(items: Sequence[Any], parts: int) -> list[list[Any]]:
    size_ = -(-len(items) // parts)
    return [list(items[i : i + size_]) for i in range(0, len(items), size_)]


def _first_failing(
    ctx: CheckContext,
    w: WorkerHandle,
    d: SinkDriver,
    plan: Plan,
    groups: Sequence[Sequence[Any]],
) -> tuple[int, str] | None:
    """Run a connector per group of contents at once; the first group (in order) that fails.

    Its index and what happened, as soon as every group before it is stored; None when all
    are stored.
    """
    runs = []
    for contents in groups:
        topic = ctx.create_topic(ctx.topic())
        ids = ctx.ids(len(contents))
        values = {
            i: sink_value(plan, d.value(i, plan.schema), c)
            for i, c in zip(ids, contents, strict=True)
        }
        _produce(ctx, d, plan, topic, values)
        name, config = _sink_config(ctx, d, topic, JSON, {"schemas.enable": "true"})
        w.create(name, config)
        runs.append((name, ids))
    deadline = time.monotonic() + _ISOLATE_TIMEOUT_S
    outcomes: dict[int, str | None] = {}
    try:
        while True:
            stored = set(_read_back(d, "while looking for the value the sink fails on"))
            for index, (name, ids) in enumerate(runs):
                if index in outcomes:
                    continue
                trace = _failed_trace(w.status(name))
                if trace is not None:
                    outcomes[index] = f"fails the task with {describe_chain(trace)}"
                elif set(ids) <= stored:
                    outcomes[index] = None
                elif time.monotonic() >= deadline:
                    outcomes[index] = f"is not stored within {_ISOLATE_TIMEOUT_S:g}s"
            for index in range(len(runs)):
                if index not in outcomes:
                    break
                outcome = outcomes[index]
                if outcome is not None:
                    return index, outcome
            else:
                return None
            time.sleep(0.3)
    finally:
        for name, _ in runs:
            w.rest.delete(f"/connectors/{name}")
