"""SCH-09's comparison: what came back, field by field, and each difference in words."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cdk.data import Schema, Struct
from harness.certify.suites.sch._hostile import Plan, get_field
from harness.certify.suites.sch._values import _canon, _difference

__all__: list[str] = []


@dataclass(frozen=True)
class Mismatch:
    """One field of one record that did not come back as sent.

    Attributes:
        record_id: the record.
        field: the field (``value`` for a value that is not a struct).
        sent: the value sent (or handed to the source driver).
        got: the value stored (or emitted); :data:`MISSING` when there is none.
        text: the difference in words, naming the field and both values.
    """

    record_id: Hashable
    field: str
    sent: Any
    got: Any
    text: str

    def __str__(self) -> str:
        return f"record id {self.record_id!r}: {self.text}"


MISSING = object()


def differences(
    plan: Plan,
    record_id: Hashable,
    sent: Any,
    got: Any,
    *,
    verb: str,
    gave: str = "sent",
    unstored: Mapping[str, str] | None = None,
    absent_is_null: bool = False,
) -> list[Mismatch]:
    """How ``got`` (what was stored or emitted) differs from ``sent``, field by field.

    With ``absent_is_null``, a field missing from ``got`` counts as null (a source that infers
    its schema from the data has no field for a value it has only seen null).
    """
    if not plan.struct:
        return _leaf(record_id, "value", plan.schema, sent, got, verb, gave)
    if isinstance(got, Struct):
        names = {f.name for f in got.schema.fields}
        got = {name: got.get(name) for name in names}
    if not isinstance(got, Mapping):
        text = f"{verb} {brief(got)}, not the fields of a record"
        return [Mismatch(record_id, "value", sent, got, text)]
    out: list[Mismatch] = []
    for f in plan.schema.fields:
        if f.name in (unstored or {}) or f.name in plan.server_assigned:
            continue
        value = get_field(sent, f.name)
        if f.name not in got:
            if absent_is_null and value is None:
                continue
            text = f"{f.name}: {gave} {brief(value)}, {verb} nothing (the field is missing)"
            out.append(Mismatch(record_id, f.name, value, MISSING, text))
            continue
        out.extend(_leaf(record_id, f.name, f.schema, value, got[f.name], verb, gave))
    return out


def _leaf(
    record_id: Hashable, name: str, schema: Schema, sent: Any, got: Any, verb: str, gave: str
) -> list[Mismatch]:
    problem = _difference(_canon(schema, sent), _canon(schema, got), name, verb, gave)
    if problem is None:
        return []
    if _is_leaf(sent) and _is_leaf(got):
        text = f"{name}: {gave} {brief(sent)}, {verb} {brief(got)}"
        hint = _hint(sent, got)
        if hint:
            text += f" ({hint})"
    else:
        text = problem if len(problem) <= 400 else problem[:400] + " …"
    return [Mismatch(record_id, name, sent, got, text)]


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, Struct | Mapping | list | tuple)


def brief(value: Any) -> str:
    """A value as the report shows it: short, exact, long strings and bytes summarised."""
    if value is None:
        return "null"
    if isinstance(value, str):
        if len(value) <= 60:
            return repr(value)
        return f"{len(value):,} characters {value[:24]!r} … {value[-8:]!r}"
    if isinstance(value, bytes | bytearray):
        data = bytes(value)
        if len(data) <= 40:
            return repr(data)
        return f"{len(data):,} bytes {data[:16]!r} … {data[-4:]!r}"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return f"{type(value).__name__} {value.isoformat()}"
    if isinstance(value, decimal.Decimal):
        return f"Decimal('{value}')"
    if isinstance(value, float):
        return repr(value)
    text = repr(value)
    shown = text if len(text) <= 80 else text[:80] + " …"
    return f"{shown} ({type(value).__name__})" if not isinstance(value, bool | int) else shown


def _hint(sent: Any, got: Any) -> str:
    """What happened to a value, when a simple change explains it."""
    if isinstance(sent, str) and isinstance(got, str):
        return _text_hint(sent, got)
    if isinstance(sent, bytes) and isinstance(got, bytes):
        if sent.startswith(got):
            return f"cut to {len(got):,} of {len(sent):,} bytes"
        return ""
    if isinstance(sent, int) and isinstance(got, int | float) and not isinstance(sent, bool):
        if isinstance(got, float) or (float(sent) == got and sent != got):
            return f"off by {got - sent}: rounded through a 64-bit float"
        return f"off by {got - sent}"
    if isinstance(sent, dt.datetime) and isinstance(got, dt.datetime):
        try:
            shift = _aware(got) - _aware(sent)
        except TypeError:
            return ""
        return f"shifted by {_duration(shift)}"
    if isinstance(sent, float) and isinstance(got, float):
        if sent == 0.0 and got == 0.0:
            return "the sign of zero lost"
        return ""
    return ""


def _text_hint(sent: str, got: str) -> str:
    if got == sent.strip() or got in (sent.lstrip(), sent.rstrip()):
        return "whitespace trimmed"
    if sent.startswith(got):
        return f"cut to {len(got):,} of {len(sent):,} characters"
    if len(sent) == len(got):
        changed = [(a, b) for a, b in zip(sent, got, strict=True) if a != b]
        if changed and all(b == "?" for _, b in changed):
            count = f"{len(changed)} character{'s' if len(changed) > 1 else ''}"
            return f"{count} replaced by '?' ({_chars([a for a, _ in changed])})"
    index = next((i for i, (a, b) in enumerate(zip(sent, got, strict=False)) if a != b), None)
    if index is None:
        return f"{len(got):,} characters instead of {len(sent):,}"
    return (
        f"first difference at character {index}: {gave_char(sent[index])} became "
        f"{gave_char(got[index])}"
    )


def gave_char(char: str) -> str:
    """A character named by its code point (and itself when it is printable)."""
    shown = f" {char!r}" if char.isprintable() and not char.isspace() else ""
    return f"U+{ord(char):04X}{shown}"


def _chars(chars: Sequence[str]) -> str:
    unique = list(dict.fromkeys(chars))
    shown = ", ".join(gave_char(c) for c in unique[:5])
    return shown + (", …" if len(unique) > 5 else "")


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)


def _duration(delta: dt.timedelta) -> str:
    sign = "-" if delta < dt.timedelta(0) else "+"
    seconds = abs(delta.total_seconds())
    if seconds and seconds % 3600 == 0:
        return f"{sign}{seconds / 3600:g} h"
    return f"{sign}{seconds:g} s"
