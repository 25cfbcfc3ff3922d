"""Database columns to Connect schemas, and database values to Connect values.

A column's type is described by a :class:`SqlType` (a :class:`Kind` plus precision and scale),
found from what each dialect knows about it:

- a table's columns, reflected: SQLAlchemy's inspector on PostgreSQL and MariaDB/MySQL,
  the declared type text (``PRAGMA table_info``) on SQLite, whose types are dynamic;
- a custom query's columns (``query`` mode): the driver's result description (PostgreSQL type
  OIDs, MySQL field types); on SQLite the values of the first row.

``numeric.mapping`` works as in the JDBC source connector, for DECIMAL and NUMERIC columns:
``none`` gives Decimal (exact, with the column's scale); ``precision_only`` gives INT8..INT64
for scale 0 and a precision up to 18; ``best_fit`` also gives FLOAT64 for a scale above 0 and a
precision up to 18; ``best_fit_eager_double`` gives FLOAT64 for any scale above 0.

A column type with no Connect type (arrays, intervals, geometry...) raises
:class:`UnsupportedColumnType`, which names the table, the column and the type.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import enum
import json
import re
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from cdk import ConnectException, Date, Decimal, Schema, SchemaBuilder, Time, Timestamp

__all__ = [
    "NUMERIC_MAPPINGS",
    "Kind",
    "SqlType",
    "UnsupportedColumnType",
    "from_declared_sqlite",
    "from_reflected",
    "from_value",
    "quiet_reflection",
]

NUMERIC_MAPPINGS = ("none", "precision_only", "best_fit", "best_fit_eager_double")
_UTC = dt.timezone.utc
#: The largest precision whose values fit an INT64 (as the JDBC connector counts).
_MAX_INTEGER_PRECISION = 18


class UnsupportedColumnType(ConnectException):
    """A column whose type has no Connect type."""

    def __init__(self, table: str, column: str, type_text: str) -> None:
        super().__init__(
            f"Column {table}.{column} has the type {type_text}, which has no Connect type: "
            "leave the table out (table.blacklist), or select the column cast to a supported "
            "type with a custom query"
        )
        self.table = table
        self.column = column
        self.type_text = type_text


class Kind(enum.Enum):
    """The Connect type of a column's values."""

    INT8 = "INT8"
    INT16 = "INT16"
    INT32 = "INT32"
    INT64 = "INT64"
    FLOAT32 = "FLOAT32"
    FLOAT64 = "FLOAT64"
    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    BYTES = "BYTES"
    DECIMAL = "Decimal"
    DATE = "Date"
    TIME = "Time"
    TIMESTAMP = "Timestamp"


_INTEGERS = frozenset({Kind.INT8, Kind.INT16, Kind.INT32, Kind.INT64})


@dataclass(frozen=True)
class SqlType:
    """The Connect meaning of a column type.

    Attributes:
        kind: the Connect type.
        scale: for DECIMAL, the number of decimal places.
        precision: for DECIMAL, the number of digits (0: not known).
    """

    kind: Kind
    scale: int = 0
    precision: int = 0

    def __str__(self) -> str:
        if self.kind is Kind.DECIMAL:
            return f"Decimal(scale={self.scale})"
        return str(self.kind.value)

    @property
    def is_integer(self) -> bool:
        """Whether values are integers (an incrementing column must be one)."""
        return self.kind in _INTEGERS or (self.kind is Kind.DECIMAL and self.scale == 0)

    def schema(self, *, optional: bool) -> Schema:
        """The Connect schema of the column's values."""
        builder = _builder(self)
        return (builder.optional() if optional else builder).build()

    def with_numeric_mapping(self, mapping: str) -> SqlType:
        """This type after ``numeric.mapping`` (only DECIMAL types change)."""
        if self.kind is not Kind.DECIMAL or mapping == "none":
            return self
        precision, scale = self.precision, self.scale
        fits = 0 < precision <= _MAX_INTEGER_PRECISION
        if scale <= 0 and fits:
            return SqlType(_integer_kind(precision))
        if scale > 0 and mapping == "best_fit_eager_double":
            return SqlType(Kind.FLOAT64)
        if scale > 0 and fits and mapping == "best_fit":
            return SqlType(Kind.FLOAT64)
        return self

    def converter(self, timezone: dt.tzinfo) -> Callable[[Any], Any]:
        """A function from a driver value to the Connect value (None stays None).

        Args:
            timezone: the zone of timestamps stored without one (``db.timezone``).
        """
        kind = self.kind
        if kind is Kind.DECIMAL:
            quantum = decimal.Decimal(1).scaleb(-self.scale)
            return lambda v: None if v is None else _to_decimal(v, quantum)
        if kind is Kind.TIMESTAMP:
            return lambda v: None if v is None else _to_timestamp(v, timezone)
        return _CONVERTERS[kind]


def _integer_kind(precision: int) -> Kind:
    if precision > 9:
        return Kind.INT64
    if precision > 4:
        return Kind.INT32
    if precision > 2:
        return Kind.INT16
    return Kind.INT8


def _builder(sql_type: SqlType) -> SchemaBuilder:
    kind = sql_type.kind
    if kind is Kind.DECIMAL:
        builder = Decimal.builder(sql_type.scale)
        if sql_type.precision:
            builder.parameter("connect.decimal.precision", str(sql_type.precision))
        return builder
    if kind is Kind.DATE:
        return Date.builder()
    if kind is Kind.TIME:
        return Time.builder()
    if kind is Kind.TIMESTAMP:
        return Timestamp.builder()
    return SchemaBuilder.type(_SCHEMA_TYPES[kind])


# ---------------------------------------------------------------------------------------------
# Values.


def _to_int(value: Any) -> Any:
    if value is None or isinstance(value, int):
        return None if value is None else int(value)
    if isinstance(value, (bytes, bytearray)):  # MySQL BIT(n)
        return int.from_bytes(value, "big")
    if isinstance(value, decimal.Decimal) and value == value.to_integral_value():
        return int(value)
    if isinstance(value, str):
        return int(value.strip())
    raise ValueError(f"{type(value).__name__} value {value!r} is not an integer")


def _to_float(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (int, float, decimal.Decimal)):
        return float(value)
    raise ValueError(f"{type(value).__name__} value {value!r} is not a number")


def _to_bool(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (bytes, bytearray)):
        return any(value)
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str) and value.strip().lower() in _BOOL_TEXT:
        return _BOOL_TEXT[value.strip().lower()]
    raise ValueError(f"{type(value).__name__} value {value!r} is not a boolean")


_BOOL_TEXT = {"0": False, "1": True, "false": False, "true": True, "f": False, "t": True}


def _to_string(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):  # json / jsonb, parsed by the driver
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8")
    if isinstance(value, (uuid.UUID, int, float, decimal.Decimal, set)):
        return ",".join(sorted(value)) if isinstance(value, set) else str(value)
    raise ValueError(f"{type(value).__name__} value {value!r} is not text")


def _to_bytes(value: Any) -> Any:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise ValueError(f"{type(value).__name__} value {value!r} is not bytes")


def _to_decimal(value: Any, quantum: decimal.Decimal) -> decimal.Decimal:
    if isinstance(value, float):
        value = decimal.Decimal(repr(value))
    elif isinstance(value, (int, str)):
        value = decimal.Decimal(value.strip() if isinstance(value, str) else value)
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        raise ValueError(f"{value!r} is not a finite decimal")
    with decimal.localcontext() as ctx:
        ctx.prec = max(38, len(value.as_tuple().digits) + 20)
        return value.quantize(quantum, rounding=decimal.ROUND_HALF_EVEN)


def _to_date(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        return dt.date.fromisoformat(value.strip()[:10])
    raise ValueError(f"{type(value).__name__} value {value!r} is not a date")


def _to_time(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dt.time):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.timedelta):  # MySQL TIME
        if not dt.timedelta(0) <= value < dt.timedelta(days=1):
            raise ValueError(f"{value} is not a time of day")
        return (dt.datetime.min + value).time()
    if isinstance(value, str):
        return dt.time.fromisoformat(value.strip()).replace(tzinfo=None)
    raise ValueError(f"{type(value).__name__} value {value!r} is not a time of day")


def _to_timestamp(value: Any, timezone: dt.tzinfo) -> dt.datetime:
    if type(value) is dt.datetime and value.tzinfo is None and timezone is _UTC:
        return value.replace(tzinfo=_UTC)  # the common case, fast
    if isinstance(value, str):
        text = value.strip()
        if text[-1:] in ("Z", "z"):
            text = text[:-1] + "+00:00"
        value = dt.datetime.fromisoformat(text)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(value, _UTC)
    elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time())
    if not isinstance(value, dt.datetime):
        raise ValueError(f"{type(value).__name__} value {value!r} is not a timestamp")
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone)
    result: dt.datetime = value.astimezone(_UTC)
    return result


_CONVERTERS: dict[Kind, Callable[[Any], Any]] = {
    Kind.INT8: _to_int,
    Kind.INT16: _to_int,
    Kind.INT32: _to_int,
    Kind.INT64: _to_int,
    Kind.FLOAT32: _to_float,
    Kind.FLOAT64: _to_float,
    Kind.BOOLEAN: _to_bool,
    Kind.STRING: _to_string,
    Kind.BYTES: _to_bytes,
    Kind.DATE: _to_date,
    Kind.TIME: _to_time,
}

_SCHEMA_TYPES = {
    Kind.INT8: Schema.INT8_SCHEMA.type,
    Kind.INT16: Schema.INT16_SCHEMA.type,
    Kind.INT32: Schema.INT32_SCHEMA.type,
    Kind.INT64: Schema.INT64_SCHEMA.type,
    Kind.FLOAT32: Schema.FLOAT32_SCHEMA.type,
    Kind.FLOAT64: Schema.FLOAT64_SCHEMA.type,
    Kind.BOOLEAN: Schema.BOOLEAN_SCHEMA.type,
    Kind.STRING: Schema.STRING_SCHEMA.type,
    Kind.BYTES: Schema.BYTES_SCHEMA.type,
}


# ---------------------------------------------------------------------------------------------
# SQLite: declared types (the rules of the SQLite connectors, tried in this order).

_DECIMAL_TEXT = re.compile(r"DECIMAL_TEXT\s*\(\s*(\d+)\s*\)")
_DECIMAL = re.compile(r"(?:DECIMAL|NUMERIC)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)")
_SQLITE_RULES: tuple[tuple[tuple[str, ...], Kind], ...] = (
    (("BOOL",), Kind.BOOLEAN),
    (("DATETIME", "TIMESTAMP"), Kind.TIMESTAMP),
    (("DATE",), Kind.DATE),
    (("TIME",), Kind.TIME),
    (("INT",), Kind.INT64),
    (("CHAR", "CLOB", "TEXT"), Kind.STRING),
    (("BLOB",), Kind.BYTES),
    (("REAL", "FLOA", "DOUB"), Kind.FLOAT64),
)


def from_declared_sqlite(declared: str) -> SqlType | None:
    """The type of a SQLite column from its declared type, or None when it has none."""
    text = " ".join(declared.upper().split())
    match = _DECIMAL_TEXT.fullmatch(text)
    if match:
        return SqlType(Kind.DECIMAL, int(match.group(1)))
    match = _DECIMAL.fullmatch(text)
    if match:
        return SqlType(Kind.DECIMAL, int(match.group(2) or 0), int(match.group(1)))
    for needles, kind in _SQLITE_RULES:
        if any(needle in text for needle in needles):
            return SqlType(kind)
    return None


def from_value(value: Any) -> SqlType:
    """The type of a SQLite query column from one of its values (None: STRING)."""
    if isinstance(value, bool):
        return SqlType(Kind.BOOLEAN)
    if isinstance(value, int):
        return SqlType(Kind.INT64)
    if isinstance(value, float):
        return SqlType(Kind.FLOAT64)
    if isinstance(value, bytes):
        return SqlType(Kind.BYTES)
    return SqlType(Kind.STRING)


# ---------------------------------------------------------------------------------------------
# PostgreSQL and MariaDB/MySQL: reflected SQLAlchemy types.


def from_reflected(dialect: str, sa_type: Any) -> SqlType | None:
    """The type of a reflected column (a SQLAlchemy type object), or None when it has none."""
    import sqlalchemy as sa
    from sqlalchemy.dialects import mysql, postgresql

    name = type(sa_type).__name__.upper()
    if dialect == "mysql":
        if isinstance(sa_type, mysql.TINYINT) and getattr(sa_type, "display_width", None) == 1:
            return SqlType(Kind.BOOLEAN)  # TINYINT(1), MySQL's BOOLEAN
        if isinstance(sa_type, mysql.BIT):
            return SqlType(Kind.BOOLEAN if (sa_type.length or 1) == 1 else Kind.INT64)
        if isinstance(sa_type, mysql.YEAR):
            return SqlType(Kind.INT32)
        if isinstance(sa_type, (mysql.ENUM, mysql.SET)):
            return SqlType(Kind.STRING)
        unsigned = bool(getattr(sa_type, "unsigned", False))
        if unsigned and isinstance(sa_type, sa.Integer):
            if isinstance(sa_type, sa.BigInteger):
                return SqlType(Kind.DECIMAL, 0, 20)
            return SqlType(_UNSIGNED.get(name, Kind.INT64))
        if isinstance(sa_type, mysql.TINYINT):
            return SqlType(Kind.INT8)
        if isinstance(sa_type, mysql.MEDIUMINT):
            return SqlType(Kind.INT32)
    if dialect == "postgresql":
        if isinstance(sa_type, (postgresql.UUID, postgresql.JSON, postgresql.JSONB)):
            return SqlType(Kind.STRING)
        if isinstance(sa_type, (postgresql.INET, postgresql.CIDR, postgresql.MACADDR)):
            return SqlType(Kind.STRING)
        if isinstance(sa_type, (sa.ARRAY, postgresql.INTERVAL)):
            return None
    if isinstance(sa_type, sa.Boolean):
        return SqlType(Kind.BOOLEAN)
    if isinstance(sa_type, sa.SmallInteger):
        return SqlType(Kind.INT16)
    if isinstance(sa_type, sa.BigInteger):
        return SqlType(Kind.INT64)
    if isinstance(sa_type, sa.Integer):
        return SqlType(Kind.INT32)
    if isinstance(sa_type, sa.Float):
        # REAL / FLOAT(p<=24) are single precision, DOUBLE PRECISION double.
        single = name in ("REAL", "FLOAT") and (sa_type.precision or 0) <= 24
        return SqlType(Kind.FLOAT32 if single else Kind.FLOAT64)
    if isinstance(sa_type, sa.Numeric):
        precision = sa_type.precision or 0
        if not precision:
            return None  # NUMERIC without a precision: no fixed scale
        return SqlType(Kind.DECIMAL, sa_type.scale or 0, precision)
    if isinstance(sa_type, sa.DateTime):
        return SqlType(Kind.TIMESTAMP)
    if isinstance(sa_type, sa.Date):
        return SqlType(Kind.DATE)
    if isinstance(sa_type, sa.Time):
        return SqlType(Kind.TIME)
    if isinstance(sa_type, (sa.LargeBinary, sa.types._Binary)):
        return SqlType(Kind.BYTES)
    if isinstance(sa_type, (sa.String, sa.Enum, sa.Uuid)):
        return SqlType(Kind.STRING)
    return None


_UNSIGNED = {"TINYINT": Kind.INT16, "SMALLINT": Kind.INT32, "MEDIUMINT": Kind.INT32}


@contextlib.contextmanager
def quiet_reflection() -> Iterator[None]:
    """Silence SQLAlchemy's 'did not recognize type' warnings while reflecting.

    Such columns reflect as NullType, which has no Connect type: the caller reports them.
    """
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        yield
