r"""JSON text exactly as Kafka's Jackson writes it: strings, doubles, floats, decimals.

Jackson (as configured by Kafka's ``JsonSerializer``) writes compact JSON, UTF-8 without escaping
non-ASCII characters of the Basic Multilingual Plane, characters beyond it as escaped UTF-16
surrogate pairs (``\uD83D\uDE00``, upper-case hex; :func:`jackson_utf8`), control characters below
U+0020 as ``\b \t \n \f \r`` or ``\u00XX`` (upper-case hex), doubles and floats as Java's
``Double.toString``/``Float.toString`` (shortest round-trip digits, JDK 19+), non-finite numbers
quoted (``"NaN"``, ``"Infinity"``, ``"-Infinity"``) and BigDecimals with ``BigDecimal.toString``
(the same text as Python's ``str(decimal.Decimal)``).

Kafka's ``JsonDeserializer`` enables Jackson's ``ALLOW_LEADING_ZEROS_FOR_NUMBERS``: numbers whose
integer part has leading zeros (``00012``, ``-007.5``) are read as if the zeros were not there.
:func:`without_leading_zeros` rewrites such text into standard JSON for a second parse attempt.
"""

from __future__ import annotations

import decimal as _decimal
import math
import re
import struct
import sys
from json.encoder import encode_basestring as _c_encode_basestring

__all__ = [
    "jackson_utf8",
    "java_double",
    "java_float",
    "json_decimal",
    "json_string",
    "without_leading_zeros",
]

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
    r"""A quoted JSON string in Jackson's escaping (non-ASCII kept, ``\u00XX`` upper-case).

    Characters beyond U+FFFF stay raw here; :func:`jackson_utf8` escapes them when the whole text
    is encoded, so that the common case costs nothing extra per string.
    """
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


# A 4-byte UTF-8 sequence (a character beyond U+FFFF); with "surrogatepass" bytes, also a 3-byte
# one holding a UTF-16 surrogate (a lone surrogate in the Python string). The alternation is kept
# out of the common path: it makes the regex scan every byte twice.
_FOUR_BYTE = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")
_FOUR_BYTE_OR_SURROGATE = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}|\xed[\xa0-\xbf][\x80-\xbf]")
_FOUR_BYTE_LEAD = re.compile(rb"[\xf0-\xf4]")

# CPython stores a str with 1, 2 or 4 bytes per character, the fewest that hold its largest
# character (PEP 393), and str.__sizeof__ reports that storage: a size matching 1 or 2 bytes per
# character proves there is no character beyond U+FFFF without scanning the text (~10 ns against
# ~500 ns for a regex scan of a 150-byte record). Any other size (another interpreter, a
# non-compact str) just means "scan the bytes".
_sizeof = str.__sizeof__
_COMPACT_BASE = _sizeof("\xe9") - 2
_KIND_CHECK = (
    sys.implementation.name == "cpython"
    and _sizeof("\u0100\u0100") == _COMPACT_BASE + 6
    and _sizeof("\U0001f600") == _COMPACT_BASE + 8
)


_ESCAPE_CACHE: dict[bytes, bytes] = {}


def _utf16_escape(match: re.Match[bytes]) -> bytes:
    r"""``\uXXXX`` escapes of the UTF-16 code units of one matched UTF-8 sequence."""
    seq = match.group()
    cached = _ESCAPE_CACHE.get(seq)
    if cached is not None:
        return cached
    if len(seq) == 4:
        code = (seq[0] & 0x07) << 18 | (seq[1] & 0x3F) << 12 | (seq[2] & 0x3F) << 6 | seq[3] & 0x3F
        code -= 0x10000
        escaped = b"\\u%04X\\u%04X" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
    else:  # a surrogate code point encoded on its own ("surrogatepass")
        escaped = b"\\u%04X" % ((seq[0] & 0x0F) << 12 | (seq[1] & 0x3F) << 6 | seq[2] & 0x3F)
    if len(_ESCAPE_CACHE) < 4096:
        _ESCAPE_CACHE[seq] = escaped
    return escaped


def jackson_utf8(text: str) -> bytes:
    r"""Encode JSON text to bytes as Jackson's UTF-8 generator does.

    Jackson writes Java ``char`` by ``char``: characters of the Basic Multilingual Plane as raw
    UTF-8, but each UTF-16 surrogate (so every character beyond U+FFFF, and any lone surrogate) as
    a ``\uXXXX`` escape with upper-case hex: ``"😀"`` becomes ``"\uD83D\uDE00"``. Raw non-ASCII
    bytes only ever occur inside JSON strings, so escaping at the byte level is safe.

    Args:
        text: JSON text as produced by the encoders of this package.

    Returns:
        The UTF-8 bytes, with supplementary characters and surrogates escaped.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: Jackson escapes them too
        return _FOUR_BYTE_OR_SURROGATE.sub(_utf16_escape, text.encode("utf-8", "surrogatepass"))
    if data.isascii():
        return data
    if _KIND_CHECK:
        size = _sizeof(text)
        chars = len(text) + 1
        if size == _COMPACT_BASE + chars or size == _COMPACT_BASE + 2 * chars:
            return data  # stored 1 or 2 bytes per character: nothing beyond U+FFFF
    if _FOUR_BYTE_LEAD.search(data) is None:
        return data
    return _FOUR_BYTE.sub(_utf16_escape, data)


# A JSON string (skipped whole, so digits inside strings are never touched) or a number, whose
# fraction and exponent are consumed with it (their leading zeros are standard JSON).
_STRING_OR_NUMBER = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"'
    r"|(?P<sign>-?)(?P<int>[0-9]+)(?P<rest>(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?)"
)


def without_leading_zeros(text: str) -> str | None:
    """Drop the leading zeros of numbers outside strings, as Jackson's ALLOW_LEADING_ZEROS does.

    ``00012`` becomes ``12``, ``-007.50`` becomes ``-7.50`` and ``000`` becomes ``0``; strings,
    fractions and exponents are left alone.

    Args:
        text: JSON text that failed to parse.

    Returns:
        The rewritten text, or ``None`` when no number had leading zeros (nothing to retry).
    """
    changed = False

    def strip(match: re.Match[str]) -> str:
        nonlocal changed
        digits = match.group("int")
        if digits is None or len(digits) < 2 or digits[0] != "0":
            return match.group()
        changed = True
        return match.group("sign") + (digits.lstrip("0") or "0") + match.group("rest")

    result = _STRING_OR_NUMBER.sub(strip, text)
    return result if changed else None
