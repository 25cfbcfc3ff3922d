"""Hostile values: the hard corners of every Connect type, inside a driver's declared limits.

What a real system sends and naive sinks mangle: empty, blank and padded strings, 1-to-4-byte
UTF-8 (accents, CJK, emoji, combining marks, right-to-left text), control characters, quotes,
backslashes and the metacharacters of JSON, CSV and SQL, 64 KiB strings; integers at the bounds
of their width and just past 2^53; floats at ``-0.0``, their extremes and a subnormal; decimals
with every digit of their scale, negative and zero; dates and timestamps before 1970, in year 1
and year 9999, in the gaps of the Julian-Gregorian switch and of daylight saving time, with
milliseconds; bytes with NUL and high bytes; null for optional fields.

:func:`corner_values` lists them for a schema (deterministic, every class present);
:func:`hostile_values` is a hypothesis strategy that mixes them with random values of the same
classes. Both keep to the :class:`~harness.Limit` objects that apply to the field.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

from hypothesis import strategies as st

from cdk.data import Date, Decimal, Schema, SchemaType, Struct, Time, Timestamp
from harness._corner_data import (
    BYTES,
    DATES,
    DEFAULT_DIGITS,
    FLOAT32_CORNERS,
    FLOAT64_CORNERS,
    INT_BITS,
    LONG_STRING,
    SPECIAL_FLOATS,
    STRINGS,
    TIMES,
    TIMESTAMPS,
    WIDE,
)
from harness._limits import Limit
from harness._rules import Rules, aware, rules_for

__all__ = ["corner_values", "hostile_values"]

_UTC = dt.timezone.utc


# ---------------------------------------------------------------------------------------------
# Corner values


def corner_values(schema: Schema, limits: Sequence[Limit] = (), path: str = "") -> list[Any]:
    """Every hard-corner value of ``schema`` the limits allow, each class present, in order.

    Null comes first for an optional schema. Structs are built field by field, the fields'
    corners taken in turn (so the list is as long as the longest field's); arrays and maps
    are empty, of one corner element, and of several.
    """
    rules = rules_for(limits, path)
    values = _corners(schema, rules, limits)
    out = [None] if schema.optional else []
    return out + _unique(values)


def _corners(schema: Schema, rules: Rules, limits: Sequence[Limit]) -> list[Any]:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return _decimal_corners(Decimal.scale(schema), rules)
    if name == Date.LOGICAL_NAME:
        return _ranged(DATES, rules, dt.date.min, dt.date.max)
    if name == Time.LOGICAL_NAME:
        return _ranged(TIMES, rules, dt.time(0), dt.time(23, 59, 59, 999_000))
    if name == Timestamp.LOGICAL_NAME:
        return _ranged(TIMESTAMPS, rules, TIMESTAMPS[2], TIMESTAMPS[3])
    kind = schema.type
    if kind in INT_BITS:
        return _int_corners(INT_BITS[kind], rules)
    if kind is SchemaType.FLOAT64:
        return _float_corners(FLOAT64_CORNERS, rules)
    if kind is SchemaType.FLOAT32:
        return _float_corners(FLOAT32_CORNERS, rules)
    if kind is SchemaType.BOOLEAN:
        return [True, False]
    if kind is SchemaType.STRING:
        return _string_corners(rules)
    if kind is SchemaType.BYTES:
        return _bytes_corners(rules)
    if kind is SchemaType.ARRAY:
        items = corner_values(schema.value_schema, limits, rules.path)
        small = [v for v in items if _small(v)][:6]
        arrays: list[Any] = [[]]
        arrays += [[v] for v in items]
        arrays.append(small)
        return arrays
    if kind is SchemaType.MAP:
        keys = [k for k in corner_values(schema.key_schema, limits, rules.path) if k is not None]
        items = corner_values(schema.value_schema, limits, rules.path)
        maps: list[Any] = [{}]
        for index, key in enumerate(keys):
            maps.append({key: items[index % len(items)]} if items else {})
        maps.append({k: items[i % len(items)] for i, k in enumerate(keys[:6])} if items else {})
        return maps
    return _struct_corners(schema, limits, rules.path)


def _struct_corners(schema: Schema, limits: Sequence[Limit], path: str) -> list[Struct]:
    columns = {
        f.name: corner_values(f.schema, limits, f"{path}.{f.name}" if path else f.name)
        for f in schema.fields
    }
    longest = max((len(values) for values in columns.values()), default=0)
    out = []
    for index in range(longest):
        struct = Struct(schema)
        for f in schema.fields:
            values = columns[f.name]
            if values:
                struct.put(f.name, values[index % len(values)])
        out.append(struct)
    return out


def _string_corners(rules: Rules) -> list[str]:
    out = []
    for text in STRINGS:
        fitted = rules.fit_text(text)
        if fitted is not None:
            out.append(fitted)
    out.extend(_long_strings(rules))
    return out


def _long_strings(rules: Rules) -> list[str]:
    """A long ASCII string and a long one of the widest character allowed, at the limit."""
    chars = rules.max_chars
    size = rules.max_bytes
    out = []
    for char in ("x", next((c for c in WIDE if rules.char_ok(c)), None)):
        if char is None or not rules.char_ok(char):
            continue
        width = len(char.encode("utf-8"))
        if chars is None and size is None:
            count = LONG_STRING // width  # 64 KiB of UTF-8
            if char == "x":
                count = LONG_STRING
        else:
            count = min(
                chars if chars is not None else 1 << 30,
                size // width if size is not None else 1 << 30,
            )
        if count > 0:
            out.append(char * count)
    return out


def _bytes_corners(rules: Rules) -> list[bytes]:
    size = rules.max_chars if rules.max_chars is not None else LONG_STRING
    out = [b[:size] for b in BYTES]
    out.append(bytes(range(256)) * (size // 256) + bytes(range(size % 256)))
    return out


def _int_corners(bits: int, rules: Rules) -> list[int]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    values = [0, 1, -1, low, high, low + 1, high - 1, 2**7, 2**15, 2**31, 2**53 + 1, -(2**53 + 1)]
    values += [2**24 + 1, 2**32, 10**18]
    return _ranged([v for v in values if low <= v <= high], rules, low, high)


def _float_corners(base: Sequence[float], rules: Rules) -> list[float]:
    values = list(base) + (list(SPECIAL_FLOATS) if rules.specials else [])
    out = []
    for value in values:
        if not rules.negative_zero and value == 0.0 and math.copysign(1.0, value) < 0:
            continue
        if math.isnan(value) or rules.in_range(value):
            out.append(value)
    for edge in (rules.low, rules.high):
        if edge is not None:
            out.append(float(edge))
    return out


def _decimal_corners(scale: int, rules: Rules) -> list[decimal.Decimal]:
    digits = rules.digits if rules.digits is not None else DEFAULT_DIGITS
    biggest = 10**digits - 1
    unscaled = [0, 1, -1, 5, 10 ** min(digits - 1, max(scale, 0)), biggest, -biggest]
    unscaled += [int("123456789" * 5) % (10**digits), -(10 ** (digits - 1))]
    values = [_decimal(u, scale) for u in unscaled]
    kept = [v for v in values if rules.in_range(v)]
    for edge in (rules.low, rules.high):
        if edge is not None:
            exact = decimal.Decimal(edge)
            kept.append(exact.quantize(decimal.Decimal(1).scaleb(-scale)) if scale >= 0 else exact)
    return kept


def _decimal(unscaled: int, scale: int) -> decimal.Decimal:
    return decimal.Decimal(unscaled).scaleb(-scale, decimal.Context(prec=200))


def _ranged(values: Sequence[Any], rules: Rules, low: Any, high: Any) -> list[Any]:
    kept = [v for v in values if rules.in_range(v)]
    for edge in (rules.low, rules.high):
        if edge is not None:
            kept.append(aware(edge))
    if not kept:  # a range that holds none of the corners: its ends at least
        kept = [aware(e) for e in (rules.low or low, rules.high or high)]
    return kept


def _small(value: Any) -> bool:
    if isinstance(value, str | bytes):
        return len(value) <= 64
    return True


def _unique(values: Sequence[Any]) -> list[Any]:
    """``values`` without repeats (``-0.0`` and ``0.0``, ``1`` and ``True`` are different)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for value in values:
        marker = (type(value).__name__, _repr(value))
        if marker not in seen:
            seen.add(marker)
            out.append(value)
    return out


def _repr(value: Any) -> str:
    if isinstance(value, Struct):
        return repr(sorted((f.name, _repr(value.get(f.name))) for f in value.schema.fields))
    if isinstance(value, dict):
        return repr(sorted((_repr(k), _repr(v)) for k, v in value.items()))
    if isinstance(value, list):
        return repr([_repr(v) for v in value])
    return repr(value)


# ---------------------------------------------------------------------------------------------
# The strategy


def hostile_values(
    schema: Schema, limits: Sequence[Limit] = (), path: str = ""
) -> st.SearchStrategy[Any]:
    """Values of ``schema``: its corner values mixed with random ones of the same classes.

    Random strings mix every Unicode category but surrogates (control characters included),
    sometimes padded with spaces; numbers cover their width's whole range; everything stays
    inside the limits that apply to the field.
    """
    rules = rules_for(limits, path)
    corners = [v for v in _corners(schema, rules, limits) if _small(v)]
    base = _random(schema, rules, limits)
    choices = [st.sampled_from(corners), base] if corners else [base]
    strategy: st.SearchStrategy[Any] = st.one_of(*choices)
    if schema.optional:
        strategy = st.one_of(st.none(), strategy)
    return strategy


def _random(schema: Schema, rules: Rules, limits: Sequence[Limit]) -> st.SearchStrategy[Any]:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        digits = rules.digits if rules.digits is not None else DEFAULT_DIGITS
        bound = 10**digits - 1
        return st.integers(-bound, bound).map(lambda u: _decimal(u, scale)).filter(rules.in_range)
    if name == Date.LOGICAL_NAME:
        return st.dates(
            min_value=_date_edge(rules.low, dt.date.min), max_value=_date_edge(rules.high, None)
        )
    if name == Time.LOGICAL_NAME:
        return st.integers(0, 86_399_999).map(_time_of).filter(rules.in_range)
    if name == Timestamp.LOGICAL_NAME:
        low = aware(rules.low) if rules.low is not None else TIMESTAMPS[2]
        high = aware(rules.high) if rules.high is not None else TIMESTAMPS[3]
        return st.integers(_millis(low), _millis(high)).map(_timestamp_of)
    kind = schema.type
    if kind in INT_BITS:
        bits = INT_BITS[kind]
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        if rules.low is not None:
            low = max(low, math.ceil(rules.low))
        if rules.high is not None:
            high = min(high, math.floor(rules.high))
        return st.integers(low, high)
    if kind in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        width: Literal[32, 64] = 32 if kind is SchemaType.FLOAT32 else 64
        floats = st.floats(
            min_value=None if rules.low is None else float(rules.low),
            max_value=None if rules.high is None else float(rules.high),
            allow_nan=rules.specials and rules.low is None and rules.high is None,
            allow_infinity=rules.specials and rules.low is None and rules.high is None,
            width=width,
        )
        if not rules.negative_zero:
            floats = floats.filter(lambda v: not (v == 0.0 and math.copysign(1.0, v) < 0))
        return floats
    if kind is SchemaType.BOOLEAN:
        return st.booleans()
    if kind is SchemaType.STRING:
        return _random_text(rules)
    if kind is SchemaType.BYTES:
        size = min(rules.max_chars or 64, 64)
        return st.binary(max_size=size)
    if kind is SchemaType.ARRAY:
        return st.lists(hostile_values(schema.value_schema, limits, rules.path), max_size=4)
    if kind is SchemaType.MAP:
        keys = hostile_values(_required(schema.key_schema), limits, rules.path)
        return st.dictionaries(
            keys, hostile_values(schema.value_schema, limits, rules.path), max_size=4
        )
    return _random_struct(schema, limits, rules.path)


@st.composite
def _random_struct(draw: Callable[..., Any], schema: Schema, limits: Any, path: str) -> Struct:
    struct = Struct(schema)
    for f in schema.fields:
        child = f"{path}.{f.name}" if path else f.name
        struct.put(f.name, draw(hostile_values(f.schema, limits, child)))
    return struct


def _random_text(rules: Rules) -> st.SearchStrategy[str]:
    alphabet = st.characters(
        exclude_categories=["Cs"],
        exclude_characters=sorted(rules.excluded) or None,
        max_codepoint=_max_codepoint(rules.charset),
    ).filter(rules.char_ok)
    size = min(rules.max_chars or 40, 40)
    text = st.text(alphabet, max_size=size)
    padded = text.map(lambda s: f" {s} ")
    return st.one_of(text, padded).map(lambda s: rules.fit_text(s) or "")


def _max_codepoint(charset: str | None) -> int | None:
    return {"ascii": 0x7F, "latin-1": 0xFF, "bmp": 0xFFFF}.get(charset or "")


def _required(schema: Schema) -> Schema:
    if not schema.optional:
        return schema
    return Schema(schema.type, optional=False, name=schema.name, parameters=schema.parameters)


def _date_edge(edge: Any, default: dt.date | None) -> dt.date:
    if edge is None:
        return default if default is not None else dt.date.max
    return edge.date() if isinstance(edge, dt.datetime) else edge


def _millis(value: dt.datetime) -> int:
    delta = value - dt.datetime(1970, 1, 1, tzinfo=_UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _timestamp_of(millis: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=_UTC) + dt.timedelta(milliseconds=millis)


def _time_of(millis: int) -> dt.time:
    seconds, ms = divmod(millis, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return dt.time(hour, minute, second, ms * 1000)
