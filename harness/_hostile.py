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
import struct as _struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import strategies as st

from cdk.data import Date, Decimal, Schema, SchemaType, Struct, Time, Timestamp
from harness._limits import Limit, limits_for

__all__ = [
    "DEFAULT_DIGITS",
    "LONG_STRING",
    "corner_values",
    "hostile_values",
    "limit_problems",
    "rules_for",
]

_UTC = dt.timezone.utc
#: How long the long strings are when no limit is declared: 64 KiB (characters, or UTF-8 bytes).
LONG_STRING = 65_536
#: How many digits the largest decimals have when no limit is declared.
DEFAULT_DIGITS = 38

#: Strings, by class. Each is sent as it is (within the limits: characters a limit excludes are
#: taken out, a string longer than a limit is cut to it).
_STRINGS: tuple[str, ...] = (
    # empty, blank, padded
    "",
    " ",
    "   ",
    "\t",
    " padded ",
    "  leading",
    "trailing  ",
    "\u00a0no-break\u00a0spaces\u00a0",
    "\u3000ideographic space\u3000",
    # 1-to-4-byte UTF-8, combining marks, right-to-left, zero-width and invisible characters
    "é",
    "naïve café, Ærøskøbing, Straße",
    "Ελληνικά кириллица",
    "日本語のテキスト",
    "한국어",
    "😀",
    "👩\u200d👩\u200d👧 family, 🇫🇷 flag, 👍🏽 tone",
    # mathematical letters and digits (outside the Basic Multilingual Plane)
    "\U0001d518\U0001d52b\U0001d526\U0001d520\U0001d52c\U0001d521\U0001d522"
    " \U0001d7d9\U0001d7da\U0001d7db",
    "e\u0301 (e + combining acute)",
    "Z\u0351\u0352a\u0300\u0301l\u0302g\u0303o\u0304",
    "שלום עולם",
    "مرحبا بالعالم",
    "left \u202eright-to-left override\u202c end",
    "zero\u200bwidth\u200cjoiners\u200d",
    "\ufeffbyte order mark",
    "\ufffd replacement, \uffff noncharacter",
    # control characters
    "line\nbreak",
    "\n",
    "windows\r\nline",
    "\r\n",
    "carriage\rreturn",
    "tab\tseparated\tvalues",
    "nul\x00inside",
    "\x00",
    "\x01\x02\x03\x07\x08\x0b\x0c\x0e\x1b\x1f\x7f",
    "\x1b[31mANSI red\x1b[0m",
    "next line\x85 line separator\u2028 paragraph separator\u2029",
    # quotes, backslashes, JSON, CSV and SQL metacharacters
    "'",
    "''",
    '"',
    "\\",
    '\\"',
    "\\n is not a newline",
    "C:\\path\\to\\file",
    "it's",
    'say "hello"',
    "a,b,c",
    '"quoted","csv",field',
    "semi;colon",
    "{}",
    "[]",
    '{"key": [1, "two", null]}',
    '"},{"id":1',
    "' OR '1'='1",
    "'); DROP TABLE records; --",
    "%s %d %% %n",
    "? :name $1 @p0",
    "${env:HOME} #{x} {{ y }}",
    "</script><script>alert(1)</script>",
    "&amp; &lt; <!-- -->",
    "null",
    "NULL",
    "None",
    "true",
    "0",
    "-0",
    "1e309",
    "NaN",
    "0x1F",
    "# comment",
    "-- comment",
    "/* comment */",
    "key=value",
    "*",
)
#: A character of each UTF-8 length, for the long strings (the widest the limits allow).
_WIDE = ("😀", "日", "é", "x")

_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_FLOAT64_CORNERS: tuple[float, ...] = (
    0.0,
    -0.0,
    1.0,
    -1.5,
    0.1,
    1 / 3,
    123456789.12345679,
    2.0**53,
    -(2.0**63),
    1e16,
    1e-300,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    2.2250738585072014e-308,  # the smallest normal
    -2.2250738585072014e-308,
    5e-324,  # the smallest subnormal
    -5e-324,
    2.225073858507201e-308,  # the largest subnormal
)
_FLOAT32_CORNERS: tuple[float, ...] = (
    0.0,
    -0.0,
    1.0,
    -1.5,
    0.10000000149011612,  # 0.1 in 32 bits
    16777216.0,  # 2^24
    3.4028234663852886e38,  # the largest
    -3.4028234663852886e38,
    1.1754943508222875e-38,  # the smallest normal
    1.401298464324817e-45,  # the smallest subnormal
    -1.401298464324817e-45,
)
_SPECIAL_FLOATS = (math.nan, math.inf, -math.inf)
_DATES = (
    dt.date(1970, 1, 1),
    dt.date(1969, 12, 31),
    dt.date(1, 1, 1),
    dt.date(9999, 12, 31),
    dt.date(1582, 10, 10),  # in the Julian-Gregorian gap of java.util's calendar
    dt.date(1900, 2, 28),
    dt.date(2000, 2, 29),
    dt.date(2038, 1, 20),
)
_TIMES = (
    dt.time(0, 0),
    dt.time(23, 59, 59, 999_000),
    dt.time(0, 0, 0, 1_000),
    dt.time(12, 0),
    dt.time(2, 30),  # in a daylight saving time gap of many zones
)
_TIMESTAMPS = (
    dt.datetime(1970, 1, 1, tzinfo=_UTC),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999_000, tzinfo=_UTC),
    dt.datetime(1, 1, 1, tzinfo=_UTC),
    dt.datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=_UTC),
    dt.datetime(1582, 10, 10, 12, 0, 0, 1_000, tzinfo=_UTC),
    dt.datetime(1900, 1, 1, 0, 0, 0, 1_000, tzinfo=_UTC),
    dt.datetime(2038, 1, 19, 3, 14, 8, 0, tzinfo=_UTC),  # past 32-bit epoch seconds
    dt.datetime(2026, 3, 8, 2, 30, 0, 500_000, tzinfo=_UTC),  # US daylight saving gap (local)
    dt.datetime(2026, 3, 29, 1, 30, 0, 250_000, tzinfo=_UTC),  # EU daylight saving gap
    dt.datetime(2026, 10, 25, 1, 30, 0, 750_000, tzinfo=_UTC),  # EU repeated hour
)
_BYTES: tuple[bytes, ...] = (
    b"",
    b"\x00",
    b"\x00\x00\x00",
    b"nul\x00inside",
    b"\xff\xfe\xfd\x80",
    b"\xc3\x28 invalid UTF-8",
    b"\r\n\t",
    bytes(range(256)),
)


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
    if kind in _INT_BITS:
        return [("INT", None)]
    if kind in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return [("FLOAT", None)]
    return [(kind.name, None)]


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
        return _ranged(_DATES, rules, dt.date.min, dt.date.max)
    if name == Time.LOGICAL_NAME:
        return _ranged(_TIMES, rules, dt.time(0), dt.time(23, 59, 59, 999_000))
    if name == Timestamp.LOGICAL_NAME:
        return _ranged(_TIMESTAMPS, rules, _TIMESTAMPS[2], _TIMESTAMPS[3])
    kind = schema.type
    if kind in _INT_BITS:
        return _int_corners(_INT_BITS[kind], rules)
    if kind is SchemaType.FLOAT64:
        return _float_corners(_FLOAT64_CORNERS, rules)
    if kind is SchemaType.FLOAT32:
        return _float_corners(_FLOAT32_CORNERS, rules)
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
    for text in _STRINGS:
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
    for char in ("x", next((c for c in _WIDE if rules.char_ok(c)), None)):
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
    out = [b[:size] for b in _BYTES]
    out.append(bytes(range(256)) * (size // 256) + bytes(range(size % 256)))
    return out


def _int_corners(bits: int, rules: Rules) -> list[int]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    values = [0, 1, -1, low, high, low + 1, high - 1, 2**7, 2**15, 2**31, 2**53 + 1, -(2**53 + 1)]
    values += [2**24 + 1, 2**32, 10**18]
    return _ranged([v for v in values if low <= v <= high], rules, low, high)


def _float_corners(base: Sequence[float], rules: Rules) -> list[float]:
    values = list(base) + (list(_SPECIAL_FLOATS) if rules.specials else [])
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
            kept.append(_aware(edge))
    if not kept:  # a range that holds none of the corners: its ends at least
        kept = [_aware(e) for e in (rules.low or low, rules.high or high)]
    return kept


def _aware(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=_UTC)
    return value


def _key(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return _aware(value)
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
        low = _aware(rules.low) if rules.low is not None else _TIMESTAMPS[2]
        high = _aware(rules.high) if rules.high is not None else _TIMESTAMPS[3]
        return st.integers(_millis(low), _millis(high)).map(_timestamp_of)
    kind = schema.type
    if kind in _INT_BITS:
        bits = _INT_BITS[kind]
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


def float32(value: float) -> float:
    """``value`` rounded to 32 bits."""
    return float(_struct.unpack("<f", _struct.pack("<f", value))[0])
