"""How SCH-09 reports: the plan in the evidence, a failure with its smallest example."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from harness.certify._checks import CheckFailed
from harness.certify._context import CheckContext
from harness.certify.suites.sch._hostile import Plan
from harness.certify.suites.sch._mismatch import Mismatch, brief

__all__: list[str] = []

_EXPECTED = (
    "every value {verb} exactly as {gave}, hostile values included (the hard corners of each "
    "type), but for the limits the driver declares"
)


def reproduce(ctx: CheckContext) -> str:
    """The command that draws the same values again."""
    return f"cdk certify --only SCH-09 --seed {ctx.seed}"


def record_plan(ctx: CheckContext, plan: Plan, count: int) -> None:
    """Put what SCH-09 sends in the evidence: seed, records, drawn fields, limits."""
    ctx.evidence("values drawn with seed", ctx.seed)
    ctx.evidence("records of hostile values", count)
    ctx.evidence("fields drawn", list(plan.drawn) if plan.struct else ["the whole value"])
    kept = [name for name in plan.fixed if name not in plan.server_assigned]
    if kept:
        ctx.evidence("fields kept as the driver makes them", kept)
    if plan.server_assigned:
        ctx.evidence(
            "fields the system assigns (not compared)",
            [str(limit) for limit in plan.limits if limit.kind == "server_assigned"],
        )
    ctx.evidence("declared limits", plan.describe_limits())
    ctx.evidence("reproduce with", reproduce(ctx))


def passed(ctx: CheckContext, plan: Plan) -> None:
    """Say on a passing result which limits it rests on."""
    if plan.limits:
        ctx.note(
            "every value came back exactly, within the driver's declared limits: "
            + "; ".join(str(limit) for limit in plan.limits)
        )


def fail(
    ctx: CheckContext,
    mismatches: Sequence[Mismatch],
    shrunk: Sequence[Mismatch],
    total: int,
    verb: str,
    gave: str,
) -> None:
    """Fail naming the first difference and the smallest failing values found.

    Raises:
        CheckFailed: always.
    """
    records = len({m.record_id for m in mismatches})
    fields = list(dict.fromkeys(m.field for m in mismatches))
    smallest = "; ".join(str(m) for m in shrunk if m is not mismatches[0])
    actual = (
        f"{records} of {total} records came back different (fields: {', '.join(fields)}); "
        f"the first: {mismatches[0]}"
    )
    if smallest:
        actual += f"; the smallest failing value found: {smallest}"
    actual += f" (seed {ctx.seed})"
    ctx.evidence("smallest failures", [str(m) for m in shrunk])
    details = [f"reproduce: {reproduce(ctx)}", "", *(str(m) for m in mismatches[:50])]
    if len(mismatches) > 50:
        details.append(f"… and {len(mismatches) - 50} more")
    raise CheckFailed(_EXPECTED.format(verb=verb, gave=gave), actual, details="\n".join(details))


def record_text(plan: Plan, record_id: Hashable, content: Any) -> str:
    """A record by its id and its drawn values."""
    if plan.struct and isinstance(content, Mapping):
        shown = ", ".join(f"{k}={brief(v)}" for k, v in content.items())
        return f"record id {record_id!r} ({shown})"
    return f"record id {record_id!r} (value {brief(content)})"
