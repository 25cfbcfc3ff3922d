"""Connect schemas to database columns: the DDL type per dialect, and values to parameters.

The column types the sink creates (``auto.create``, ``auto.evolve``):

=================  =====================  =======================  =====================
Connect            PostgreSQL             MariaDB / MySQL          SQLite
=================  =====================  =======================  =====================
INT8               SMALLINT               TINYINT                  TINYINT
INT16              SMALLINT               SMALLINT                 SMALLINT
INT32              INTEGER                INT                      INTEGER
INT64              BIGINT                 BIGINT                   BIGINT
FLOAT32            REAL                   FLOAT                    REAL
FLOAT64            DOUBLE PRECISION       DOUBLE                   DOUBLE
BOOLEAN            BOOLEAN                TINYINT(1)               BOOLEAN
STRING             TEXT                   LONGTEXT (key:           TEXT
                                          VARCHAR(255))
BYTES              BYTEA                  LONGBLOB (key:           BLOB
                                          VARBINARY(1024))
Decimal(s)         NUMERIC(p, s)          DECIMAL(p, s)            DECIMAL_TEXT(s)
Date               DATE                   DATE                     DATE
Time               TIME                   TIME(6)                  TIME
Timestamp          TIMESTAMP              DATETIME(6)              TIMESTAMP
=================  =====================  =======================  =====================

A Decimal's precision ``p`` is its ``connect.decimal.precision`` parameter when it has one,
else 38 (65 on MariaDB/MySQL, their maximum). SQLite has no exact decimal type: DECIMAL_TEXT
columns hold the decimal as text with the scale's digits, so it stays exact. Timestamps are
written without a time zone, in ``db.timezone``; on SQLite as ISO-8601 text with milliseconds
(it sorts in time order). ARRAY, MAP and STRUCT fields have no column type: flatten them first
(the Flatten transformation).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

from cdk import DataException, Date, Decimal, Schema, SchemaType, Time, Timestamp
from reference_connectors.sql._types_in import Kind, SqlType

__all__ = ["accepts", "column_type", "default_literal", "describe", "to_parameter"]

_UTC = dt.timezone.utc
_ZERO = dt.timedelta(0)
_PLAIN: dict[SchemaType, dict[str, str]] = {
    SchemaType.INT8: {"postgresql": "SMALLINT", "mysql": "TINYINT", "sqlite": "TINYINT"},
    SchemaType.INT16: {"postgresql": "SMALLINT", "mysql": "SMALLINT", "sqlite": "SMALLINT"},
    SchemaType.INT32: {"postgresql": "INTEGER", "mysql": "INT", "sqlite": "INTEGER"},
    SchemaType.INT64: {"postgresql": "BIGINT", "mysql": "BIGINT", "sqlite": "BIGINT"},
    SchemaType.FLOAT32: {"postgresql": "REAL", "mysql": "FLOAT", "sqlite": "REAL"},
    SchemaType.FLOAT64: {"postgresql": "DOUBLE PRECISION", "mysql": "DOUBLE", "sqlite": "DOUBLE"},
    SchemaType.BOOLEAN: {"postgresql": "BOOLEAN", "mysql": "TINYINT(1)", "sqlite": "BOOLEAN"},
    SchemaType.STRING: {"postgresql": "TEXT", "mysql": "LONGTEXT", "sqlite": "TEXT"},
    SchemaType.BYTES: {"postgresql": "BYTEA", "mysql": "LONGBLOB", "sqlite": "BLOB"},
}
#: MariaDB/MySQL cannot index TEXT and BLOB columns without a length: key columns get one.
_MYSQL_KEYS = {SchemaType.STRING: "VARCHAR(255)", SchemaType.BYTES: "VARBINARY(1024)"}
_LOGICAL = {
    Date.LOGICAL_NAME: {"postgresql": "DATE", "mysql": "DATE", "sqlite": "DATE"},
    Time.LOGICAL_NAME: {"postgresql": "TIME", "mysql": "TIME(6)", "sqlite": "TIME"},
    Timestamp.LOGICAL_NAME: {
        "postgresql": "TIMESTAMP",
        "mysql": "DATETIME(6)",
        "sqlite": "TIMESTAMP",
    },
}
_MAX_PRECISION = {"postgresql": 1000, "mysql": 65}
_DEFAULT_PRECISION = {"postgresql": 38, "mysql": 65}


def describe(schema: Schema) -> str:
    """A schema's type for messages: ``INT64``, ``Decimal(scale=2)``, ``optional STRING``."""
    text = schema.type.name
    if schema.name == Decimal.LOGICAL_NAME:
        text = f"Decimal(scale={schema.parameters.get('scale', '0')})"
    elif schema.name in _LOGICAL:
        text = str(schema.name).rsplit(".", 1)[-1]
    return f"optional {text}" if schema.optional else text


def column_type(schema: Schema, dialect: str, *, key: bool = False) -> str:
    """The DDL type of a column holding ``schema``'s values in ``dialect``.

    Raises:
        DataException: the schema has no column type (ARRAY, MAP, STRUCT).
    """
    if schema.name == Decimal.LOGICAL_NAME:
        scale = int(schema.parameters.get("scale", "0"))
        if dialect == "sqlite":
            return f"DECIMAL_TEXT({scale})"
        given = schema.parameters.get("connect.decimal.precision")
        precision = int(given) if given and given.isdigit() else _DEFAULT_PRECISION[dialect]
        precision = min(max(precision, scale, 1), _MAX_PRECISION[dialect])
        return f"{'NUMERIC' if dialect == 'postgresql' else 'DECIMAL'}({precision}, {scale})"
    if schema.name in _LOGICAL:
        return _LOGICAL[str(schema.name)][dialect]
    if key and dialect == "mysql" and schema.type in _MYSQL_KEYS:
        return _MYSQL_KEYS[schema.type]
    types = _PLAIN.get(schema.type)
    if types is None:
        raise DataException(
            f"a {describe(schema)} has no column type: flatten nested values first (e.g. with "
            "the Flatten transformation) or leave the field out (fields.whitelist)"
        )
    return types[dialect]


_INTEGERS = frozenset({Kind.INT8, Kind.INT16, Kind.INT32, Kind.INT64})
_NUMBERS = _INTEGERS | {Kind.FLOAT32, Kind.FLOAT64, Kind.DECIMAL}
#: The column kinds that can hold each Connect type (the database converts within a family).
_FITS: dict[SchemaType, frozenset[Kind]] = {
    SchemaType.INT8: _NUMBERS | {Kind.BOOLEAN},
    SchemaType.INT16: _NUMBERS,
    SchemaType.INT32: _NUMBERS,
    SchemaType.INT64: _NUMBERS,
    SchemaType.FLOAT32: frozenset({Kind.FLOAT32, Kind.FLOAT64, Kind.DECIMAL}),
    SchemaType.FLOAT64: frozenset({Kind.FLOAT32, Kind.FLOAT64, Kind.DECIMAL}),
    SchemaType.BOOLEAN: _INTEGERS | {Kind.BOOLEAN},
    SchemaType.STRING: frozenset({Kind.STRING}),
    SchemaType.BYTES: frozenset({Kind.BYTES}),
}
_LOGICAL_FITS = {
    Decimal.LOGICAL_NAME: frozenset({Kind.DECIMAL, Kind.FLOAT64, Kind.FLOAT32}),
    Date.LOGICAL_NAME: frozenset({Kind.DATE, Kind.TIMESTAMP}),
    Time.LOGICAL_NAME: frozenset({Kind.TIME}),
    Timestamp.LOGICAL_NAME: frozenset({Kind.TIMESTAMP}),
}


def accepts(column: SqlType, schema: Schema) -> bool:
    """Whether a column of type ``column`` can hold ``schema``'s values without losing them."""
    if schema.name in _LOGICAL_FITS:
        return column.kind in _LOGICAL_FITS[str(schema.name)]
    return column.kind in _FITS.get(schema.type, frozenset())


def to_parameter(
    schema: Schema, dialect: str, timezone: dt.tzinfo, column: SqlType | None = None
) -> Callable[[Any], Any]:
    """A function from a Connect value of ``schema`` to the driver's parameter (None stays None).

    Args:
        schema: the field's schema.
        dialect: ``postgresql``, ``mysql`` or ``sqlite``.
        timezone: the zone timestamps are written in (``db.timezone``).
        column: the column's type, when known (SQLite decimals are text of its scale).
    """
    name = schema.name
    if name == Timestamp.LOGICAL_NAME:
        if dialect == "sqlite":
            return lambda v: None if v is None else _timestamp_text(v, timezone)
        if timezone.utcoffset(None) == _ZERO or str(timezone) == "UTC":
            return _naive_utc  # the common case, without a time zone conversion
        return lambda v: None if v is None else _naive(v, timezone)
    if dialect == "sqlite":
        if name == Decimal.LOGICAL_NAME:
            scale = column.scale if column is not None else int(schema.parameters.get("scale", "0"))
            quantum = decimal.Decimal(1).scaleb(-scale)
            if column is not None and column.kind is not Kind.DECIMAL:
                return lambda v: None if v is None else float(v)
            return lambda v: None if v is None else str(_quantize(v, quantum))
        if name == Date.LOGICAL_NAME:
            return lambda v: None if v is None else v.isoformat()
        if name == Time.LOGICAL_NAME:
            return lambda v: None if v is None else v.isoformat(timespec="milliseconds")
        if schema.type is SchemaType.BOOLEAN:
            return lambda v: None if v is None else int(v)
    if name == Time.LOGICAL_NAME:
        return lambda v: None if v is None else v.replace(tzinfo=None)
    return _identity


def _identity(value: Any) -> Any:
    return value


def _naive_utc(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    if value.tzinfo is _UTC:
        return value.replace(tzinfo=None)
    return _naive(value, _UTC)


def _naive(value: dt.datetime, timezone: dt.tzinfo) -> dt.datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=_UTC)
    return value.astimezone(timezone).replace(tzinfo=None)


def _timestamp_text(value: dt.datetime, timezone: dt.tzinfo) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=_UTC)
    return value.astimezone(timezone).isoformat(timespec="milliseconds")


def _quantize(value: decimal.Decimal, quantum: decimal.Decimal) -> decimal.Decimal:
    with decimal.localcontext() as ctx:
        ctx.prec = max(38, len(value.as_tuple().digits) + 20)
        return value.quantize(quantum, rounding=decimal.ROUND_HALF_EVEN)


def default_literal(schema: Schema, dialect: str) -> str | None:
    """The SQL literal of ``schema``'s default value for a DEFAULT clause (None: no clause)."""
    value = schema.default_value
    if value is None:
        return None
    if schema.type is SchemaType.BOOLEAN:
        if dialect == "postgresql":
            return "TRUE" if value else "FALSE"
        return "1" if value else "0"
    if isinstance(value, (int, float, decimal.Decimal)) and schema.name is None:
        return repr(value) if isinstance(value, float) else str(value)
    if schema.name == Decimal.LOGICAL_NAME and isinstance(value, decimal.Decimal):
        return f"'{value}'" if dialect == "sqlite" else str(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return None  # bytes and temporal defaults: the column is added without a DEFAULT
