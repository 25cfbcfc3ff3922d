r"""JSON text exactly as Kafka's Jackson writes it: strings, doubles, floats, decimals.

Jackson (as configured by Kafka's ``JsonSerializer``) writes compact JSON, UTF-8 without escaping
non-ASCII, control characters below U+0020 as ``\b \t \n \f \r`` or ``\u00XX`` (upper-case
hex), doubles and floats as Java's ``Double.toString``/``Float.toString`` (shortest round-trip
digits, JDK 19+), non-finite numbers quoted (``"NaN"``, ``"Infinity"``, ``"-Infinity"``) and
BigDecimals with ``BigDecimal.toString`` (the same text as Python's ``str(decimal.Decimal)``).
"""

from __future__ import annotations

import decimal as _decimal
import math
import re
import struct
from json.encoder import encode_basestring as _c_encode_basestring

__all__ = ["java_double", "java_float", "json_string", "json_decimal"]

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}
for _i in range(0x20):
    _ESCAPES.setdefault(chr(_i), f"\\u{_i:04X}")
del _i
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def _escape(match: re.Match[str]) -> str:
    return _ESCAPES[match.group(0)]


def json_string(value: str) -> str:
    r"""A quoted JSON string in Jackson's escaping (non-ASCII kept, ``\u00XX`` upper-case)."""
    text: str = _c_encode_basestring(value)
    if "\\u00" in text:
        return '"' + _NEEDS_ESCAPE.sub(_escape, value) + '"'
    return text


def _java_digits(digits: str, exponent: int, negative: bool) -> str:
    """Java's layout of ``0.d1d2... x 10**(exponent+1)``: plain in [1e-3, 1e7), else ``d.dddEn``."""
    sign = "-" if negative else ""
    if -3 <= exponent < 7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            frac = digits[exponent + 1 :] or "0"
            return f"{sign}{whole}.{frac}"
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _non_finite(value: float) -> str:
    if value != value:
        return '"NaN"'
    return '"Infinity"' if value > 0 else '"-Infinity"'


def java_double(value: float) -> str:
    """The JSON text Jackson writes for a Java ``double``."""
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7 or magnitude == 0.0:
        return repr(value)  # Python and Java agree on this range (plain notation, ".0")
    if magnitude == math.inf or value != value:
        return _non_finite(value)
    text = repr(value)
    negative = text[0] == "-"
    if negative:
        text = text[1:]
    if "e" in text:
        mantissa, exp = text.split("e")
        if len(mantissa) == 1:  # Java prefers a closer 2-digit decimal (subnormals)
            two = f"{magnitude:.1e}"
            if two[2] != "0" and float(two) == magnitude:
                mantissa, exp = two.split("e")
        digits = mantissa.replace(".", "")
        return _java_digits(digits, int(exp), negative)
    whole, _, frac = text.partition(".")
    if whole != "0":
        digits = (whole + frac).rstrip("0") or "0"
        return _java_digits(digits, len(whole) - 1, negative)
    stripped = frac.lstrip("0")
    return _java_digits(stripped.rstrip("0"), -(len(frac) - len(stripped)) - 1, negative)


_F32 = struct.Struct("<f")
_FLOAT_CACHE: dict[float, str] = {}


_FLT_MAX = 3.4028234663852886e38
_FLT_OVERFLOW = 3.4028235677973366e38  # FLT_MAX + half an ulp: beyond it, rounding overflows


def to_float32(value: float) -> float:
    """Round a Python float to the nearest 32-bit float (OverflowError when out of range)."""
    try:
        result: float = _F32.unpack(_F32.pack(value))[0]
    except OverflowError:
        if abs(value) < _FLT_OVERFLOW:
            return math.copysign(_FLT_MAX, value)
        raise
    return result


def java_float(value: float) -> str:
    """The JSON text Jackson writes for a Java ``float`` holding ``value`` rounded to 32 bits."""
    cached = _FLOAT_CACHE.get(value)
    if cached is not None:
        return cached
    f32 = to_float32(value)
    if f32 != f32 or f32 in (math.inf, -math.inf):
        return _non_finite(f32)
    if f32 == 0.0:
        text = "-0.0" if math.copysign(1.0, f32) < 0 else "0.0"
    else:
        for precision in range(9):
            candidate = f"{f32:.{precision}e}"
            try:
                if to_float32(float(candidate)) == f32:
                    break
            except OverflowError:
                continue
        if precision == 0:
            two = f"{f32:.1e}"  # Java prefers a closer 2-digit decimal over a 1-digit one
            if two[-5] != "0" and to_float32(float(two)) == f32:
                candidate = two
        mantissa, exp = candidate.split("e")
        negative = mantissa[0] == "-"
        digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
        text = _java_digits(digits, int(exp), negative)
    if len(_FLOAT_CACHE) < 4096 and f32 != 0.0:
        _FLOAT_CACHE[value] = text
    return text


def json_decimal(value: _decimal.Decimal) -> str:
    """A JSON number for a decimal, as ``BigDecimal.toString`` writes it."""
    return str(value)
