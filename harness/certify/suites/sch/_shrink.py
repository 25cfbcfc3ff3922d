"""SCH-09's smaller failing values: candidates smaller than a failing one, within the limits."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cdk.data import Date, Decimal, Schema, SchemaType, Time, Timestamp
from harness._rules import rules_for
from harness.certify.suites.sch._hostile import Plan, distinct
from harness.certify.suites.sch._mismatch import Mismatch

__all__: list[str] = []


def size(value: Any) -> tuple[Any, ...]:
    """How big a value is, for picking the smallest failing one."""
    if value is None:
        return (0,)
    if isinstance(value, str | bytes):
        return (1, len(value), max(value, default=0) if isinstance(value, bytes) else _top(value))
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, int):
        return (1, abs(value), value < 0)
    if isinstance(value, float):
        return (1, 0.0 if math.isnan(value) else abs(value), math.copysign(1, value) < 0)
    if isinstance(value, decimal.Decimal):
        return (1, len(value.as_tuple().digits), abs(value))
    if isinstance(value, dt.datetime):
        return (1, abs((_aware(value) - _EPOCH).total_seconds()))
    if isinstance(value, dt.date):
        return (1, abs((value - _EPOCH.date()).days))
    if isinstance(value, dt.time):
        return (1, value.hour * 3600 + value.minute * 60 + value.second, value.microsecond)
    return (2, len(repr(value)))


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)


def _top(text: str) -> int:
    return max((ord(c) for c in text), default=0)


def candidates(plan: Plan, name: str, value: Any) -> list[Any]:
    """Values of field ``name`` smaller than ``value`` (within the limits), to try instead.

    None for a field SCH-09 does not draw (``id`` and the :meth:`Limit.fixed` fields keep what
    the driver makes): there is nothing smaller to try there.
    """
    if plan.struct and name not in plan.drawn:
        return []
    schema = _field_schema(plan, name)
    if schema is None:
        return []
    rules = rules_for(plan.limits, "" if name == "value" else name)
    found: list[Any] = []
    if isinstance(value, str):
        half = len(value) // 2
        found = [value[:half], value[half:], value[1:], value[:-1], value.strip(), ""]
        found += list(dict.fromkeys(value))[:12]
        if len(value) > 64:
            found += [value[:64], value[:1024]]
        found = [s for s in found if rules.fit_text(s) == s]
    elif isinstance(value, bytes):
        half = len(value) // 2
        found = [value[:half], value[half:], value[1:], value[:-1], b""]
        found += [bytes([b]) for b in dict.fromkeys(value)][:12]
    elif isinstance(value, bool):
        found = [False]
    elif isinstance(value, int):
        sign = -1 if value < 0 else 1
        found = [0, sign, value // 2, sign * (2**53 + 1), sign * 2**31, value - sign]
    elif isinstance(value, float) and math.isfinite(value):
        found = [0.0, 1.0, -0.0, value / 2, float(round(value))]
    elif isinstance(value, decimal.Decimal):
        exponent = value.as_tuple().exponent
        zero = decimal.Decimal(0).scaleb(exponent if isinstance(exponent, int) else 0)
        found = [zero, value / 10, -value]
        found = [d.quantize(value) if d.is_finite() else d for d in found if d.is_finite()]
    elif isinstance(value, dt.datetime):
        found = [_EPOCH, _aware(value).replace(microsecond=0), _EPOCH.replace(year=2000)]
    elif isinstance(value, dt.date):
        found = [_EPOCH.date(), dt.date(2000, 1, 1)]
    elif isinstance(value, dt.time):
        found = [dt.time(0), value.replace(microsecond=0)]
    if plan.struct and schema.optional:
        found.append(None)
    limit = size(value)
    smaller = [c for c in distinct(found) if size(c) < limit and _valid(schema, c, rules)]
    return sorted(smaller, key=size)


def _field_schema(plan: Plan, name: str) -> Schema | None:
    if not plan.struct:
        return plan.schema if plan.schema.type in (SchemaType.STRING, SchemaType.BYTES) else None
    f = plan.schema.field(name)
    if f is None or f.schema.type in (SchemaType.STRUCT, SchemaType.ARRAY, SchemaType.MAP):
        return None if f is None or f.schema.name is None else f.schema
    return f.schema


def _valid(schema: Schema, value: Any, rules: Any) -> bool:
    if value is None:
        return schema.optional
    if isinstance(value, float | int | decimal.Decimal | dt.date | dt.time) and not isinstance(
        value, bool
    ):
        try:
            if not rules.in_range(value):
                return False
        except TypeError:
            return False
    if isinstance(value, float) and not rules.negative_zero and math.copysign(1, value) < 0:
        return value != 0.0
    if schema.type in (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32):
        bits = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32}[schema.type]
        return isinstance(value, int) and -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    if schema.name == Decimal.LOGICAL_NAME:
        return isinstance(value, decimal.Decimal)
    if schema.name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME):
        return not isinstance(value, str | bytes | int | float)
    return True


@dataclass
class Shrinking:
    """The smallest failing value found so far for one field."""

    mismatch: Mismatch
    tried: set[str] = field(default_factory=set)

    def next_candidates(self, plan: Plan, content: Any) -> list[Any]:
        """Candidates smaller than ``content`` not tried yet (each is tried once)."""
        out = []
        for candidate in candidates(plan, self.mismatch.field, content):
            marker = repr(candidate)
            if marker not in self.tried:
                self.tried.add(marker)
                out.append(candidate)
        return out


#: Sends one record per (field, candidate); what came back for each (None: it could not).
RoundTrip = Callable[[Sequence[tuple[str, Any]]], list[tuple[Any, list[Mismatch]]] | None]
#: Rounds of smaller candidates tried for a failing field (each a batch through the connector).
_SHRINK_ROUNDS = 3
#: The failing fields shrunk (the first ones found).
_SHRINK_FIELDS = 3


def shrink(
    mismatches: Sequence[Mismatch],
    content_of: Mapping[Any, Any],
    plan: Plan,
    round_trip: RoundTrip,
) -> list[Mismatch]:
    """The smallest failing value found for each of the first failing fields.

    Each round sends one record per smaller candidate of each field's smallest failure so far
    (the other fields as the driver makes them), and keeps the smallest that still fails. A
    field SCH-09 does not draw (``id``, :meth:`Limit.fixed`) is never shrunk: its failures are
    kept as found.
    """
    states: dict[str, Shrinking] = {}
    contents: dict[str, Any] = {}
    kept: list[Mismatch] = []
    for mismatch in sorted(mismatches, key=lambda m: size(_content(m, content_of, plan))):
        if plan.struct and mismatch.field not in plan.drawn:
            if all(k.field != mismatch.field for k in kept):
                kept.append(mismatch)
            continue
        if mismatch.field not in states and len(states) < _SHRINK_FIELDS:
            states[mismatch.field] = Shrinking(mismatch)
            contents[mismatch.field] = _content(mismatch, content_of, plan)
    for _ in range(_SHRINK_ROUNDS):
        batch = [
            (name, candidate)
            for name, state in states.items()
            for candidate in state.next_candidates(plan, contents[name])
        ]
        if not batch:
            break
        outcome = round_trip(batch)
        if outcome is None:
            break
        progress = False
        for (name, candidate), (_, found) in zip(batch, outcome, strict=True):
            if found and size(candidate) < size(contents[name]):
                states[name].mismatch = found[0]
                contents[name] = candidate
                progress = True
        if not progress:
            break
    return kept + [state.mismatch for state in states.values()]


def _content(mismatch: Mismatch, content_of: Mapping[Any, Any], plan: Plan) -> Any:
    content = content_of.get(mismatch.record_id)
    if plan.struct and isinstance(content, Mapping):
        return content.get(mismatch.field, mismatch.sent)
    return content if content is not None else mismatch.sent
