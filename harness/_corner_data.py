"""The hard-corner values of each Connect type that SCH-09 sends (the tables).

:mod:`harness._hostile` fits them to a field's limits; the strings are sent as they are.
"""

from __future__ import annotations

import datetime as dt
import math

from cdk.data import SchemaType

__all__ = [
    "BYTES",
    "DATES",
    "DEFAULT_DIGITS",
    "FLOAT32_CORNERS",
    "FLOAT64_CORNERS",
    "INT_BITS",
    "LONG_STRING",
    "SPECIAL_FLOATS",
    "STRINGS",
    "TIMES",
    "TIMESTAMPS",
    "WIDE",
]

_UTC = dt.timezone.utc
_UTC = dt.timezone.utc
#: How long the long strings are when no limit is declared: 64 KiB (characters, or UTF-8 bytes).
LONG_STRING = 65_536
#: How many digits the largest decimals have when no limit is declared.
DEFAULT_DIGITS = 38

#: Strings, by class. Each is sent as it is (within the limits: characters a limit excludes are
#: taken out, a string longer than a limit is cut to it).
STRINGS: tuple[str, ...] = (
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
WIDE = ("😀", "日", "é", "x")

INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
FLOAT64_CORNERS: tuple[float, ...] = (
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
FLOAT32_CORNERS: tuple[float, ...] = (
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
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf)
DATES = (
    dt.date(1970, 1, 1),
    dt.date(1969, 12, 31),
    dt.date(1, 1, 1),
    dt.date(9999, 12, 31),
    dt.date(1582, 10, 10),  # in the Julian-Gregorian gap of java.util's calendar
    dt.date(1900, 2, 28),
    dt.date(2000, 2, 29),
    dt.date(2038, 1, 20),
)
TIMES = (
    dt.time(0, 0),
    dt.time(23, 59, 59, 999_000),
    dt.time(0, 0, 0, 1_000),
    dt.time(12, 0),
    dt.time(2, 30),  # in a daylight saving time gap of many zones
)
TIMESTAMPS = (
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
BYTES: tuple[bytes, ...] = (
    b"",
    b"\x00",
    b"\x00\x00\x00",
    b"nul\x00inside",
    b"\xff\xfe\xfd\x80",
    b"\xc3\x28 invalid UTF-8",
    b"\r\n\t",
    bytes(range(256)),
)
