"""Java ``SimpleDateFormat`` patterns in Python: the subset Kafka's SMT configs use.

``timestamp.format`` (TimestampRouter) and ``format`` (TimestampConverter) take Java patterns such
as ``yyyy-MM-dd'T'HH:mm:ss.SSSZ``. :class:`SimpleDateFormat` formats and parses them, always in UTC
and in English; pattern letters it cannot honour are rejected with a ConfigException.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, NamedTuple

__all__ = ["SimpleDateFormat"]

_UTC = _dt.timezone.utc

# -- SimpleDateFormat -----------------------------------------------------------------------------
_JAVA_LETTERS = frozenset("GyYMLwWDdFEuaHkKhmsSzZX")
_UNSUPPORTED = {
    "Y": "week year",
    "w": "week in year",
    "W": "week in month",
    "F": "day of week in month",
}
_NUMERIC = frozenset("yMLdDuHkKhmsS")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ZONE = r"(?:GMT|UTC|UT)(?:[+-]\d{1,2}(?::?\d{2})?)?|Z|[+-]\d{2}(?::?\d{2})?"


class _Token(NamedTuple):
    letter: str  # "" for literal text
    width: int
    text: str


def _is_numeric(token: _Token) -> bool:
    return token.letter in _NUMERIC and not (token.letter in "ML" and token.width >= 3)


def _tokenize(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                tokens.append(_Token("", 0, "'"))
                i += 2
                continue
            j, text = i + 1, []
            while True:
                if j >= n:
                    raise ValueError("Unterminated quote")
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        text.append("'")
                        j += 2
                        continue
                    break
                text.append(pattern[j])
                j += 1
            tokens.append(_Token("", 0, "".join(text)))
            i = j + 1
        elif ("a" <= char <= "z") or ("A" <= char <= "Z"):
            if char not in _JAVA_LETTERS:
                raise ValueError(f"Illegal pattern character '{char}'")
            if char in _UNSUPPORTED:
                raise ValueError(f"pattern letter '{char}' ({_UNSUPPORTED[char]}) is not supported")
            j = i
            while j < n and pattern[j] == char:
                j += 1
            if char == "X" and j - i > 3:
                raise ValueError(f"invalid ISO 8601 format: length={j - i}")
            tokens.append(_Token(char, j - i, char * (j - i)))
            i = j
        else:
            tokens.append(_Token("", 0, char))
            i += 1
    return tokens


class SimpleDateFormat:
    """A Java ``SimpleDateFormat`` pattern, formatting and parsing in UTC with English names.

    Supported letters: ``G y M L d D E u a H k K h m s S z Z X`` and quoted literals (``'T'``,
    ``''``). Java's week-based letters (``Y w W F``) are not supported. Parsing is lenient like
    Java's: out-of-range fields roll over (``2021-02-30`` is March 2nd) and text after the pattern
    is ignored.

    Example::

        SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSX").format(dt)  # '2017-01-03T06:30:01.864Z'

    Raises:
        ValueError: the pattern is not valid (the message is Java's where Java has one).
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens = _tokenize(pattern)
        self._regex: re.Pattern[str] | None = None

    def to_pattern(self) -> str:
        """The pattern text."""
        return self.pattern

    # -- formatting ----------------------------------------------------------------------------
    def format(self, value: _dt.datetime) -> str:
        """Render an instant (a naive datetime is read as UTC)."""
        if value.tzinfo is None:
            value = value.replace(tzinfo=_UTC)
        value = value.astimezone(_UTC)
        return "".join(self._format_token(t, value) for t in self._tokens)

    @staticmethod
    def _format_token(token: _Token, v: _dt.datetime) -> str:
        letter, count = token.letter, token.width
        if not letter:
            return token.text
        if letter == "G":
            return "AD"
        if letter == "y":
            return f"{v.year % 100:02d}" if count == 2 else f"{v.year:0{count}d}"
        if letter in "ML":
            if count >= 4:
                return _MONTHS[v.month - 1]
            if count == 3:
                return _MONTHS[v.month - 1][:3]
            return f"{v.month:0{count}d}"
        if letter == "E":
            name = _DAYS[v.weekday()]
            return name if count >= 4 else name[:3]
        if letter == "a":
            return "AM" if v.hour < 12 else "PM"
        if letter == "z":
            return "Coordinated Universal Time" if count >= 4 else "UTC"
        if letter == "Z":
            return "+0000"
        if letter == "X":
            return "Z"
        number = {
            "d": v.day,
            "D": v.timetuple().tm_yday,
            "u": v.isoweekday(),
            "H": v.hour,
            "k": v.hour or 24,
            "K": v.hour % 12,
            "h": v.hour % 12 or 12,
            "m": v.minute,
            "s": v.second,
            "S": v.microsecond // 1000,
        }[letter]
        return f"{number:0{count}d}"

    # -- parsing -------------------------------------------------------------------------------
    def _compiled(self) -> re.Pattern[str]:
        if self._regex is None:
            parts = []
            for index, token in enumerate(self._tokens):
                following = self._tokens[index + 1] if index + 1 < len(self._tokens) else None
                parts.append(self._token_regex(index, token, following))
            self._regex = re.compile("".join(parts))
        return self._regex

    @staticmethod
    def _token_regex(index: int, token: _Token, following: _Token | None) -> str:
        letter, count = token.letter, token.width
        if not letter:
            return re.escape(token.text)
        group = f"(?P<g{index}>"
        if _is_numeric(token):
            abutting = following is not None and _is_numeric(following)
            return group + (rf"\d{{{count}}})" if abutting else r"\d+)")
        if letter in "ML":
            names = "|".join(list(_MONTHS) + [m[:3] for m in _MONTHS])
            return group + f"(?i:{names}))"
        if letter == "E":
            names = "|".join(list(_DAYS) + [d[:3] for d in _DAYS])
            return group + f"(?i:{names}))"
        if letter == "a":
            return group + "(?i:AM|PM))"
        if letter == "G":
            return group + "(?i:AD|BC))"
        return group + f"(?i:{_ZONE}))"

    def parse(self, text: str) -> _dt.datetime:
        """Parse text into an aware UTC datetime.

        Raises:
            ValueError: the text does not match the pattern.
        """
        match = self._compiled().match(text)
        if match is None:
            raise ValueError(f'Unparseable date: "{text}"')
        fields: dict[str, Any] = {}
        two_digit_year = False
        for index, token in enumerate(self._tokens):
            if not token.letter:
                continue
            raw = match.group(f"g{index}")
            if _is_numeric(token):
                fields[token.letter] = int(raw)
                if token.letter == "y" and token.width <= 2 and len(raw) == 2:
                    two_digit_year = True
            elif token.letter in "ML":
                fields["M"] = _month_number(raw)
            elif token.letter in "azZX":
                fields[token.letter if token.letter == "a" else "zone"] = raw.upper()
        return _resolve(fields, two_digit_year)


def _month_number(name: str) -> int:
    lowered = name.lower()
    for number, month in enumerate(_MONTHS, start=1):
        if lowered in (month.lower(), month[:3].lower()):
            return number
    raise ValueError(f"Unknown month {name}")  # pragma: no cover - the regex admits only months


def _zone_offset(zone: str | None) -> _dt.timedelta:
    if zone is None:
        return _dt.timedelta(0)
    offset = re.search(r"([+-])(\d{1,2}):?(\d{2})?$", zone)
    if offset is None:
        return _dt.timedelta(0)
    sign = -1 if offset.group(1) == "-" else 1
    minutes = int(offset.group(2)) * 60 + int(offset.group(3) or 0)
    return sign * _dt.timedelta(minutes=minutes)


def _resolve(fields: dict[str, Any], two_digit_year: bool) -> _dt.datetime:
    year = fields.get("y", 1970)
    if two_digit_year:
        # Java's default: a two-digit year lands within 80 years before and 20 after now
        start = _dt.datetime.now(_UTC).year - 80
        year = (start // 100) * 100 + year
        if year < start:
            year += 100
    if "H" in fields:
        hour = fields["H"]
    elif "k" in fields:
        hour = 0 if fields["k"] == 24 else fields["k"]
    else:
        hour = fields.get("K", 0)
        if "h" in fields:
            hour = 0 if fields["h"] == 12 else fields["h"]
        if fields.get("a") == "PM":
            hour += 12
    months = fields.get("M", 1) - 1
    days = fields.get("d", 1) - 1
    if "D" in fields and "M" not in fields and "d" not in fields:
        days = fields["D"] - 1
    try:
        base = _dt.datetime(year + months // 12, months % 12 + 1, 1, tzinfo=_UTC)
        return (
            base
            + _dt.timedelta(
                days=days,
                hours=hour,
                minutes=fields.get("m", 0),
                seconds=fields.get("s", 0),
                milliseconds=fields.get("S", 0),
            )
            - _zone_offset(fields.get("zone"))
        )
    except (OverflowError, ValueError) as exc:
        raise ValueError(f"Date out of range: {exc}") from exc
