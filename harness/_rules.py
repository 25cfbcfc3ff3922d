"""What a field's declared limits allow: the :class:`Rules` SCH-09's values keep to."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cdk.data import Date, Decimal, Schema, SchemaType, Time, Timestamp
from harness._corner_data import INT_BITS
from harness._limits import Limit, limits_for

__all__ = ["Rules", "aware", "limit_problems", "rules_for"]

_UTC = dt.timezone.utc


@dataclass(frozen=True)
class Rules:
    """What the limits that apply to one field allow."""

    path: str
    max_chars: int | None = None
    max_bytes: int | None = None
    charset: str | None = None
    excluded: frozenset[str] = frozenset()
    low: Any = None
    high: Any = None
    digits: int | None = None
    fixed: bool = False
    server_assigned: bool = False
    negative_zero: bool = True
    specials: bool = False

    def char_ok(self, char: str) -> bool:
        """Whether a string may hold ``char``."""
        if char in self.excluded or 0xD800 <= ord(char) <= 0xDFFF:
            return False
        return _in_charset(char, self.charset)

    def fit_text(self, text: str) -> str | None:
        """``text`` with the characters the limits exclude taken out and cut to the length.

        None when nothing is left of a string that was not empty.
        """
        kept = "".join(c for c in text if self.char_ok(c))
        if text and not kept:
            return None
        if self.max_chars is not None:
            kept = kept[: self.max_chars]
        if self.max_bytes is not None:
            while len(kept.encode("utf-8")) > self.max_bytes:
                kept = kept[:-1]
        return kept

    def in_range(self, value: Any) -> bool:
        """Whether ``value`` is within the declared range (if any)."""
        key = _key(value)
        if self.low is not None and key < _key(self.low):
            return False
        return not (self.high is not None and key > _key(self.high))


def rules_for(limits: Sequence[Limit], path: str) -> Rules:
    """The :class:`Rules` of the field at ``path`` under ``limits``."""
    fields: dict[str, Any] = {"path": path}
    excluded: set[str] = set()
    for limit in limits_for(limits, path):
        kind, value = limit.kind, limit.value
        if kind == "max_length":
            fields["max_chars"] = min(value, fields.get("max_chars") or value)
        elif kind == "max_bytes":
            fields["max_bytes"] = min(value, fields.get("max_bytes") or value)
        elif kind == "charset":
            fields["charset"] = value
        elif kind == "excludes":
            excluded.update(value)
        elif kind == "range":
            fields["low"], fields["high"] = value, limit.high
        elif kind == "digits":
            fields["digits"] = min(value, fields.get("digits") or value)
        elif kind == "fixed":
            fields["fixed"] = True
        elif kind == "server_assigned":
            fields["fixed"] = fields["server_assigned"] = True
        elif kind == "no_negative_zero":
            fields["negative_zero"] = False
        elif kind == "nan_and_infinity":
            fields["specials"] = True
    return Rules(excluded=frozenset(excluded), **fields)


def limit_problems(schema: Schema, limits: Sequence[Limit]) -> list[str]:
    """What is wrong with ``limits`` for ``schema``: a field it does not have, a wrong type."""
    leaves = _leaf_kinds(schema, "")
    problems = []
    for limit in limits:
        if limit.kind == "server_assigned" and (limit.field == "*" or "." in limit.field):
            problems.append(
                f"{limit}: a server_assigned limit names a top-level field of the value schema"
            )
            continue
        if limit.field == "*":
            continue
        kinds = leaves.get(limit.field)
        if kinds is None:
            known = ", ".join(sorted(p for p in leaves if p)) or "none"
            problems.append(f"{limit}: the value schema has no field {limit.field!r} ({known})")
            continue
        wanted = _APPLIES[limit.kind]
        if wanted and not kinds & wanted:
            problems.append(
                f"{limit}: a {limit.kind} limit applies to {', '.join(sorted(wanted))} values, "
                f"and {limit.field!r} holds {', '.join(sorted(kinds))}"
            )
    return problems


_APPLIES: dict[str, frozenset[str]] = {
    "max_length": frozenset({"STRING", "BYTES"}),
    "max_bytes": frozenset({"STRING"}),
    "charset": frozenset({"STRING"}),
    "excludes": frozenset({"STRING"}),
    "range": frozenset({"INT", "FLOAT", "Decimal", "Date", "Time", "Timestamp"}),
    "digits": frozenset({"Decimal"}),
    "fixed": frozenset(),
    "server_assigned": frozenset(),
    "no_negative_zero": frozenset({"FLOAT"}),
    "nan_and_infinity": frozenset({"FLOAT"}),
}


def _leaf_kinds(schema: Schema, path: str) -> dict[str, set[str]]:
    """Every field path of ``schema`` with the kinds of value it holds (elements included)."""
    out: dict[str, set[str]] = {}
    kinds = out.setdefault(path, set())
    for kind, inner in _contents(schema):
        if inner is None:
            kinds.add(kind)
    if schema.type is SchemaType.STRUCT and schema.name not in _LOGICAL:
        for f in schema.fields:
            child = f"{path}.{f.name}" if path else f.name
            for key, value in _leaf_kinds(f.schema, child).items():
                out.setdefault(key, set()).update(value)
    return out


_LOGICAL = (Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME)


def _contents(schema: Schema) -> list[tuple[str, Schema | None]]:
    """The kinds of leaf value a field of ``schema`` holds (through arrays and maps)."""
    if schema.name in _LOGICAL:
        return [(str(schema.name).rsplit(".", 1)[-1], None)]
    kind = schema.type
    if kind is SchemaType.ARRAY:
        return _contents(schema.value_schema)
    if kind is SchemaType.MAP:
        return _contents(schema.key_schema) + _contents(schema.value_schema)
    if kind is SchemaType.STRUCT:
        return [("STRUCT", schema)]
    if kind in INT_BITS:
        return [("INT", None)]
    if kind in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return [("FLOAT", None)]
    return [(kind.name, None)]


def aware(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=_UTC)
    return value


def _key(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return aware(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and not (isinstance(value, float) and math.isnan(value)):
        return decimal.Decimal(value)
    return value


def _in_charset(char: str, charset: str | None) -> bool:
    if charset is None:
        return True
    code = ord(char)
    if charset == "ascii":
        return code < 0x80
    if charset == "latin-1":
        return code < 0x100
    if charset == "bmp":
        return code <= 0xFFFF
    try:
        char.encode(charset)
    except (UnicodeEncodeError, LookupError):
        return False
    return True
