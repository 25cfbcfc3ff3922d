r"""Declared value limits: what an external system cannot hold, each with its reason.

SCH-09 sends values from the hard corners of every Connect type (:mod:`harness.strategies`,
:func:`~harness.strategies.hostile_values_for`) and requires each to come back exactly. A system
that really cannot hold some values says so on its driver, one :class:`Limit` per limit, each
with the reason a reviewer reads in the report::

    from harness import Limit, SinkDriver

    class MySinkDriver(SinkDriver):
        value_limits = (
            Limit.max_length("name", 255, "the column is VARCHAR(255)"),
            Limit.excludes("*", "\x00", "PostgreSQL text cannot hold NUL"),
            Limit.range("created", dt.datetime(1000, 1, 1, tzinfo=dt.timezone.utc), None,
                        "DATETIME starts in year 1000"),
        )

The generator then stays inside what is declared (it sends the edges themselves: a string of
exactly 255 characters); any value inside that comes back different fails the check. ``field``
is a field of the driver's value schema (``"address.city"`` for a field of a nested struct), or
``"*"`` for every field the limit applies to by type; a limit on an ARRAY or MAP field applies
to its elements (and a MAP's keys). The report and ``summary.json`` list every limit with its
reason next to SCH-09 (``name: at most 255 characters (the column is VARCHAR(255))``).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CHARSETS", "Limit", "check_limits"]

#: The character sets :meth:`Limit.charset` knows by name, besides any Python codec.
CHARSETS: dict[str, str] = {
    "ascii": "ASCII (U+0000..U+007F)",
    "latin-1": "Latin-1 (U+0000..U+00FF)",
    "bmp": "the Basic Multilingual Plane (U+0000..U+FFFF, no 4-byte UTF-8: MySQL's utf8mb3)",
}

_KINDS = (
    "max_length",
    "max_bytes",
    "charset",
    "excludes",
    "range",
    "digits",
    "fixed",
    "server_assigned",
    "no_negative_zero",
    "nan_and_infinity",
)


@dataclass(frozen=True)
class Limit:
    """One value limit of an external system, with its reason.

    Make them with the class methods (:meth:`max_length`, :meth:`charset`, :meth:`excludes`,
    :meth:`range`...), not the constructor. ``str(limit)`` is what the report shows.

    Attributes:
        field: the field it applies to (a name, a dotted path into nested structs, or ``"*"``).
        kind: what is limited (``max_length``, ``max_bytes``, ``charset``, ``excludes``,
            ``range``, ``digits``, ``fixed``, ``no_negative_zero``, ``nan_and_infinity``).
        reason: why the system cannot hold more (shown with the limit).
        value: the limit's parameter (a length, a charset, the excluded characters, the low
            end of a range...).
        high: the high end of a range (None: unbounded).
    """

    field: str
    kind: str
    reason: str
    value: Any = None
    high: Any = None

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"unknown limit kind {self.kind!r} (one of {', '.join(_KINDS)})")
        if not isinstance(self.field, str) or not self.field.strip():
            raise ValueError("a limit needs the field it applies to (a name, or '*')")
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError(f"the limit on {self.field!r} needs a reason (why the system has it)")

    # ------------------------------------------------------------------ the forms
    @classmethod
    def max_length(cls, field: str, length: int, reason: str) -> Limit:
        """Strings of at most ``length`` characters (code points), BYTES of ``length`` bytes."""
        return cls(field, "max_length", reason, _positive(length, "max_length"))

    @classmethod
    def max_bytes(cls, field: str, size: int, reason: str) -> Limit:
        """Strings of at most ``size`` bytes in UTF-8 (e.g. MariaDB's TEXT: 65,535 bytes)."""
        return cls(field, "max_bytes", reason, _positive(size, "max_bytes"))

    @classmethod
    def charset(cls, field: str, charset: str, reason: str) -> Limit:
        """Strings of the characters of ``charset`` only.

        ``charset`` is ``"ascii"``, ``"latin-1"``, ``"bmp"`` (no character beyond U+FFFF, what
        MySQL's 3-byte ``utf8`` holds) or the name of a Python codec (``"cp1252"``).
        """
        key = charset.strip().lower()
        if key not in CHARSETS:
            import codecs

            try:
                codecs.lookup(key)
            except LookupError:
                raise ValueError(
                    f"unknown charset {charset!r}: use ascii, latin-1, bmp or a Python codec name"
                ) from None
        return cls(field, "charset", reason, key)

    @classmethod
    def excludes(cls, field: str, characters: str, reason: str) -> Limit:
        r"""Strings without any of ``characters`` (``"\\x00"``: NUL cannot be stored)."""
        if not isinstance(characters, str) or not characters:
            raise ValueError("excludes needs the characters the system cannot hold")
        return cls(field, "excludes", reason, "".join(dict.fromkeys(characters)))

    @classmethod
    def range(cls, field: str, low: Any, high: Any, reason: str) -> Limit:
        """Numbers, decimals, dates, times or timestamps from ``low`` to ``high`` (inclusive).

        Either end may be None (unbounded). Timestamps are aware datetimes (a naive one is
        UTC).
        """
        if low is None and high is None:
            raise ValueError("a range needs at least one end")
        if low is not None and high is not None and _comparable(low) > _comparable(high):
            raise ValueError(f"the range of {field!r} is empty: {low!r} > {high!r}")
        return cls(field, "range", reason, low, high)

    @classmethod
    def digits(cls, field: str, precision: int, reason: str) -> Limit:
        """Decimals of at most ``precision`` digits in all (``NUMERIC(12,2)``: 12)."""
        return cls(field, "digits", reason, _positive(precision, "digits"))

    @classmethod
    def fixed(cls, field: str, reason: str) -> Limit:
        """A field SCH-09 does not draw: a sink's value keeps what ``value()`` makes for it.

        For fields that carry the record's identity besides ``id`` (which is always kept), or
        that the system computes itself. A source's fixed fields keep the harness's plain
        values.
        """
        return cls(field, "fixed", reason)

    @classmethod
    def server_assigned(cls, field: str, reason: str) -> Limit:
        """A field the external system assigns itself: SCH-09 neither draws nor compares it.

        For values nobody writes: a timestamp the API stamps (``updatedAt``), a status the
        system decides, an id a database generates besides the record's ``id``. The harness
        hands the driver its plain value there (a source driver may ignore it), and whatever
        comes back is accepted; the report lists the field with the reason. Unlike
        :meth:`fixed`, whose fields must still come back as written.
        """
        return cls(field, "server_assigned", reason)

    @classmethod
    def no_negative_zero(cls, field: str, reason: str) -> Limit:
        """Floats without ``-0.0`` (a system that stores it as ``0.0``)."""
        return cls(field, "no_negative_zero", reason)

    @classmethod
    def nan_and_infinity(cls, field: str, reason: str) -> Limit:
        """Floats may also be NaN, ``inf`` and ``-inf``: the reason says how the system stores them.

        Not a limit but a declaration: without it SCH-09 sends no NaN or infinity (JSON cannot
        carry them, and few systems store them).
        """
        return cls(field, "nan_and_infinity", reason)

    # ------------------------------------------------------------------ reading
    def applies_to(self, path: str) -> bool:
        """Whether the limit applies to the field at ``path`` (a dotted path of names)."""
        return self.field == "*" or self.field == path

    def describe(self) -> str:
        """What the limit allows, without the field and the reason."""
        kind, value = self.kind, self.value
        if kind == "max_length":
            return f"at most {value:,} characters"
        if kind == "max_bytes":
            return f"at most {value:,} bytes of UTF-8"
        if kind == "charset":
            return f"characters of {CHARSETS.get(value, value)} only"
        if kind == "excludes":
            return "no " + ", ".join(_char_name(c) for c in value)
        if kind == "range":
            if value is None:
                return f"at most {_show(self.high)}"
            if self.high is None:
                return f"at least {_show(value)}"
            return f"from {_show(value)} to {_show(self.high)}"
        if kind == "digits":
            return f"at most {value} digits"
        if kind == "fixed":
            return "not drawn: kept as value() makes it"
        if kind == "server_assigned":
            return "assigned by the system: not drawn, not compared"
        if kind == "no_negative_zero":
            return "no -0.0"
        return "NaN and infinities sent too"

    def __str__(self) -> str:
        field = "every field" if self.field == "*" else self.field
        return f"{field}: {self.describe()} ({self.reason})"


def check_limits(limits: object) -> list[Limit]:
    """``limits`` as a list of :class:`Limit`.

    Raises:
        TypeError: it is not a sequence of Limit (the message says what it holds).
    """
    if isinstance(limits, Limit):
        return [limits]
    if isinstance(limits, (str, bytes)) or not isinstance(limits, Iterable):
        raise TypeError(
            f"value_limits must be a sequence of harness.Limit, not {type(limits).__name__}"
        )
    out = list(limits)
    wrong = [item for item in out if not isinstance(item, Limit)]
    if wrong:
        raise TypeError(
            "value_limits must hold harness.Limit objects (Limit.max_length(...), "
            f"Limit.excludes(...)...), not {wrong[0]!r}"
        )
    return out


def limits_for(limits: Sequence[Limit], path: str) -> list[Limit]:
    """The limits that apply to the field at ``path``."""
    return [limit for limit in limits if limit.applies_to(path)]


def _positive(number: int, what: str) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"{what} must be a positive int, not {number!r}")
    return number


def _comparable(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, float | int | decimal.Decimal) and not isinstance(value, bool):
        return decimal.Decimal(value)
    return value


def _show(value: Any) -> str:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


_NAMES = {"\x00": "NUL", "\n": "newline (\\n)", "\r": "carriage return (\\r)", "\t": "tab"}


def _char_name(char: str) -> str:
    if char in _NAMES:
        return _NAMES[char]
    if char.isprintable() and not char.isspace():
        return repr(char)
    return f"U+{ord(char):04X}"
