"""How SQLite column types map to Connect schemas, and values between the two.

SQLite types are dynamic: a column's declared type only gives it an *affinity*, and any column
can hold any value. The connectors therefore map the declared type to one Connect type and check
every value themselves, both ways:

=========================================  ==========================  ===========================
Declared type (case-insensitive)           Connect schema              Stored as
=========================================  ==========================  ===========================
``DECIMAL_TEXT(s)``                        Decimal (scale s)           exact text ``"12.30"``
``DECIMAL(p,s)``, ``NUMERIC(p,s)``         Decimal (scale s)           number (REAL: inexact)
contains ``BOOL``                          BOOLEAN                     0 / 1
contains ``DATETIME`` or ``TIMESTAMP``     Timestamp                   ISO-8601 text, UTC
contains ``DATE``                          Date                        ``YYYY-MM-DD`` text
contains ``TIME``                          Time                        ``HH:MM:SS.fff`` text
contains ``INT``                           INT64                       integer
contains ``CHAR``, ``CLOB`` or ``TEXT``    STRING                      text
contains ``BLOB``                          BYTES                       blob
contains ``REAL``, ``FLOA`` or ``DOUB``    FLOAT64                     real
=========================================  ==========================  ===========================

Rules are tried in this order. Decimals are stored as text in ``DECIMAL_TEXT(s)`` columns because
a ``DECIMAL(p,s)`` column has NUMERIC affinity: SQLite turns ``'12.30'`` into the binary floating
point number 12.3, which cannot hold every decimal exactly (and drops the scale). The name
``DECIMAL_TEXT`` contains ``TEXT``, so SQLite gives the column TEXT affinity and keeps the digits.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import re
from dataclasses import dataclass
from typing import Any

from cdk import Date, Decimal, Schema, SchemaBuilder, SchemaType, Time, Timestamp

__all__ = [
    "ColumnType",
    "Kind",
    "column_type",
    "column_type_for",
    "describe_schema",
    "format_timestamp",
    "parse_timestamp",
]

_UTC = dt.timezone.utc
_INTEGER_TYPES = frozenset({SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64})
_LOGICAL = frozenset(
    {Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME}
)
_DECIMAL_TEXT = re.compile(r"DECIMAL_TEXT\s*\(\s*(\d+)\s*\)")
_DECIMAL = re.compile(r"(?:DECIMAL|NUMERIC)\s*\(\s*\d+\s*(?:,\s*(\d+)\s*)?\)")


class Kind(enum.Enum):
    """The Connect type a column holds."""

    INT64 = "INT64"
    FLOAT64 = "FLOAT64"
    STRING = "STRING"
    BYTES = "BYTES"
    BOOLEAN = "BOOLEAN"
    TIMESTAMP = "Timestamp"
    DATE = "Date"
    TIME = "Time"
    DECIMAL = "Decimal"


@dataclass(frozen=True)
class ColumnType:
    """The Connect meaning of a column: its kind and, for decimals, its scale."""

    kind: Kind
    scale: int = 0

    def __str__(self) -> str:
        if self.kind is Kind.DECIMAL:
            return f"Decimal(scale={self.scale})"
        return str(self.kind.value)

    # -- schemas ----------------------------------------------------------------------------------
    def schema(self, *, optional: bool) -> Schema:
        """The Connect schema of the column's values."""
        builder = _BUILDERS[self.kind](self.scale)
        return (builder.optional() if optional else builder).build()

    def declared(self) -> str:
        """The SQLite type to declare for a new column (``CREATE``/``ALTER TABLE``)."""
        if self.kind is Kind.DECIMAL:
            return f"DECIMAL_TEXT({self.scale})"
        return _DECLARED[self.kind]

    def accepts(self, schema: Schema) -> bool:
        """Whether values of ``schema`` can be stored in the column without loss."""
        logical = schema.name if schema.name in _LOGICAL else None
        kind = self.kind
        if kind is Kind.DECIMAL:
            return logical == Decimal.LOGICAL_NAME and Decimal.scale(schema) <= self.scale
        if kind in _LOGICAL_KINDS:
            return logical == _LOGICAL_KINDS[kind]
        if logical is not None:
            return False
        if kind is Kind.INT64:
            return schema.type in _INTEGER_TYPES
        if kind is Kind.FLOAT64:
            return schema.type in (SchemaType.FLOAT32, SchemaType.FLOAT64)
        return bool(schema.type.name == kind.value)

    # -- values -----------------------------------------------------------------------------------
    def to_connect(self, value: Any) -> Any:
        """The Connect value of a stored SQLite value (``None`` stays ``None``).

        Raises:
            ValueError: the stored value does not fit the column's type (the message says why).
        """
        if value is None:
            return None
        kind = self.kind
        if kind is Kind.INT64:
            if isinstance(value, int):
                return value
        elif kind is Kind.FLOAT64:
            if isinstance(value, (int, float)):
                return float(value)
        elif kind is Kind.STRING:
            if isinstance(value, str):
                return value
        elif kind is Kind.BYTES:
            if isinstance(value, bytes):
                return value
        elif kind is Kind.BOOLEAN:
            flag = _BOOLEANS.get(value.strip().lower() if isinstance(value, str) else value)
            if flag is not None:
                return bool(flag)
        elif isinstance(value, str):
            try:
                return _TEXT_PARSERS[kind](value, self.scale)
            except ValueError as exc:
                raise ValueError(f"text {value!r} is not a valid {self}: {exc}") from None
        elif kind is Kind.DECIMAL and isinstance(value, (int, float)):
            return _number_to_decimal(value, self.scale)
        raise ValueError(f"{type(value).__name__} value {value!r} is not a valid {self}")

    def to_sqlite(self, value: Any) -> Any:
        """The SQLite value that stores a Connect value (``None`` stays ``None``).

        Raises:
            ValueError: the value cannot be stored exactly (the message says why).
        """
        if value is None:
            return None
        kind = self.kind
        if kind is Kind.BOOLEAN:
            return 1 if value else 0
        if kind is Kind.INT64:
            return int(value)
        if kind is Kind.FLOAT64:
            return float(value)
        if kind is Kind.STRING:
            return str(value)
        if kind is Kind.BYTES:
            return bytes(value)
        if kind is Kind.TIMESTAMP:
            return format_timestamp(value)
        if kind is Kind.DATE:
            return str(value.isoformat())
        if kind is Kind.TIME:
            return str(value.replace(tzinfo=None).isoformat(timespec="milliseconds"))
        return format(_rescale(value, self.scale), "f")


def column_type(declared: str) -> ColumnType | None:
    """The Connect meaning of a declared SQLite type, or None when it has none."""
    text = " ".join(declared.upper().split())
    match = _DECIMAL_TEXT.fullmatch(text)
    if match:
        return ColumnType(Kind.DECIMAL, int(match.group(1)))
    match = _DECIMAL.fullmatch(text)
    if match:
        return ColumnType(Kind.DECIMAL, int(match.group(1) or 0))
    for needles, kind in _RULES:
        if any(needle in text for needle in needles):
            return ColumnType(kind)
    return None


def column_type_for(schema: Schema) -> ColumnType | None:
    """The column type that stores values of a Connect schema, or None (arrays, maps, structs)."""
    if schema.name == Decimal.LOGICAL_NAME:
        return ColumnType(Kind.DECIMAL, Decimal.scale(schema))
    for kind, name in _LOGICAL_KINDS.items():
        if schema.name == name:
            return ColumnType(kind)
    if schema.type in _INTEGER_TYPES:
        return ColumnType(Kind.INT64)
    if schema.type in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return ColumnType(Kind.FLOAT64)
    simple = _SIMPLE.get(schema.type)
    return None if simple is None else ColumnType(simple)


def describe_schema(schema: Schema) -> str:
    """A short name of a Connect schema's type: ``STRING``, ``Timestamp``, ``Decimal(scale=2)``."""
    if schema.name == Decimal.LOGICAL_NAME:
        return f"Decimal(scale={schema.parameters.get(Decimal.SCALE_FIELD, '?')})"
    if schema.name in _LOGICAL:
        return str(schema.name).rsplit(".", 1)[-1]
    return schema.type.name


def parse_timestamp(text: str) -> dt.datetime:
    """An aware UTC datetime from ISO-8601 text (``Z`` allowed; no offset means UTC).

    Raises:
        ValueError: the text is not an ISO-8601 date and time.
    """
    value = text.strip()
    if value[-1:] in ("Z", "z"):
        value = value[:-1] + "+00:00"
    parsed = dt.datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=_UTC)
    return parsed.astimezone(_UTC)


def format_timestamp(value: dt.datetime) -> str:
    """ISO-8601 text in UTC with milliseconds (a naive datetime is UTC).

    E.g. ``2026-01-01T10:00:00.000+00:00``: every value has the same shape, so the text sorts in
    time order.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=_UTC)
    return value.astimezone(_UTC).isoformat(timespec="milliseconds")


# ---------------------------------------------------------------------------------------------

_RULES: tuple[tuple[tuple[str, ...], Kind], ...] = (
    (("BOOL",), Kind.BOOLEAN),
    (("DATETIME", "TIMESTAMP"), Kind.TIMESTAMP),
    (("DATE",), Kind.DATE),
    (("TIME",), Kind.TIME),
    (("INT",), Kind.INT64),
    (("CHAR", "CLOB", "TEXT"), Kind.STRING),
    (("BLOB",), Kind.BYTES),
    (("REAL", "FLOA", "DOUB"), Kind.FLOAT64),
)

_SIMPLE = {
    SchemaType.STRING: Kind.STRING,
    SchemaType.BYTES: Kind.BYTES,
    SchemaType.BOOLEAN: Kind.BOOLEAN,
}

_DECLARED = {
    Kind.INT64: "INTEGER",
    Kind.FLOAT64: "REAL",
    Kind.STRING: "TEXT",
    Kind.BYTES: "BLOB",
    Kind.BOOLEAN: "BOOLEAN",
    Kind.TIMESTAMP: "TIMESTAMP",
    Kind.DATE: "DATE",
    Kind.TIME: "TIME",
}

_LOGICAL_KINDS = {
    Kind.TIMESTAMP: Timestamp.LOGICAL_NAME,
    Kind.DATE: Date.LOGICAL_NAME,
    Kind.TIME: Time.LOGICAL_NAME,
}

_BUILDERS = {
    Kind.INT64: lambda _: SchemaBuilder.int64(),
    Kind.FLOAT64: lambda _: SchemaBuilder.float64(),
    Kind.STRING: lambda _: SchemaBuilder.string(),
    Kind.BYTES: lambda _: SchemaBuilder.bytes(),
    Kind.BOOLEAN: lambda _: SchemaBuilder.boolean(),
    Kind.TIMESTAMP: lambda _: Timestamp.builder(),
    Kind.DATE: lambda _: Date.builder(),
    Kind.TIME: lambda _: Time.builder(),
    Kind.DECIMAL: Decimal.builder,
}

_BOOLEANS: dict[Any, bool] = {0: False, 1: True, "0": False, "1": True}
_BOOLEANS.update({"false": False, "true": True})


def _rescale(value: decimal.Decimal, scale: int) -> decimal.Decimal:
    """``value`` with exactly ``scale`` decimal places, refusing to drop digits."""
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        raise ValueError(f"{value!r} is not a finite decimal")
    digits = len(value.as_tuple().digits)
    with decimal.localcontext() as ctx:
        ctx.prec = max(28, digits + abs(scale) + 2)
        ctx.traps[decimal.Inexact] = True
        try:
            return value.quantize(decimal.Decimal(1).scaleb(-scale))
        except decimal.DecimalException:
            raise ValueError(
                f"{value} has more than {scale} decimal places, so it cannot be kept exactly"
            ) from None


def _parse_decimal(text: str, scale: int) -> decimal.Decimal:
    try:
        value = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        raise ValueError("not a decimal number") from None
    return _rescale(value, scale)


def _number_to_decimal(value: float, scale: int) -> decimal.Decimal:
    """A decimal from a number in a NUMERIC column (REAL values are rounded to the scale)."""
    exact = decimal.Decimal(value) if isinstance(value, int) else decimal.Decimal(repr(value))
    if not exact.is_finite():
        raise ValueError(f"{value!r} is not a finite number")
    with decimal.localcontext() as ctx:
        ctx.prec = max(28, len(exact.as_tuple().digits) + abs(scale) + 2)
        return exact.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_EVEN)


def _parse_date(text: str, _: int) -> dt.date:
    return dt.date.fromisoformat(text.strip())


def _parse_time(text: str, _: int) -> dt.time:
    return dt.time.fromisoformat(text.strip()).replace(tzinfo=None)


_TEXT_PARSERS = {
    Kind.TIMESTAMP: lambda text, _: parse_timestamp(text),
    Kind.DATE: _parse_date,
    Kind.TIME: _parse_time,
    Kind.DECIMAL: _parse_decimal,
}
