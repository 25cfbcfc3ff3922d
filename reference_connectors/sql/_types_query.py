"""A custom query's result columns to Connect types, from the driver's result description."""

from __future__ import annotations

from typing import Any

from reference_connectors.sql._types_in import Kind, SqlType

__all__ = ["from_description"]


_PG_OIDS: dict[int, Kind] = {
    16: Kind.BOOLEAN,
    20: Kind.INT64,
    21: Kind.INT16,
    23: Kind.INT32,
    26: Kind.INT64,
    700: Kind.FLOAT32,
    701: Kind.FLOAT64,
    18: Kind.STRING,
    19: Kind.STRING,
    25: Kind.STRING,
    114: Kind.STRING,
    1042: Kind.STRING,
    1043: Kind.STRING,
    2950: Kind.STRING,
    3802: Kind.STRING,
    17: Kind.BYTES,
    1082: Kind.DATE,
    1083: Kind.TIME,
    1114: Kind.TIMESTAMP,
    1184: Kind.TIMESTAMP,
}
_PG_NUMERIC = 1700

# pymysql.constants.FIELD_TYPE values.
_MY_FIELDS: dict[int, Kind] = {
    1: Kind.INT8,
    2: Kind.INT16,
    3: Kind.INT32,
    4: Kind.FLOAT32,
    5: Kind.FLOAT64,
    7: Kind.TIMESTAMP,
    8: Kind.INT64,
    9: Kind.INT32,
    10: Kind.DATE,
    11: Kind.TIME,
    12: Kind.TIMESTAMP,
    13: Kind.INT32,
    15: Kind.STRING,
    245: Kind.STRING,
    247: Kind.STRING,
    248: Kind.STRING,
    253: Kind.STRING,
    254: Kind.STRING,
}
_MY_DECIMALS = (0, 246)
_MY_BLOBS = (249, 250, 251, 252)
_MY_BIT = 16
_MY_BINARY_CHARSET = 63


def from_description(
    dialect: str, column: tuple[Any, ...], binary: bool | None = None
) -> SqlType | None:
    """The type of a query's result column from its DB-API description entry.

    Args:
        dialect: ``postgresql`` or ``mysql``.
        column: ``(name, type_code, display_size, internal_size, precision, scale, null_ok)``.
        binary: for MySQL string and blob fields, whether the field holds bytes.
    """
    code = column[1]
    precision, scale = column[4], column[5]
    if dialect == "postgresql":
        if code == _PG_NUMERIC:
            if not precision:
                return None
            return SqlType(Kind.DECIMAL, int(scale or 0), int(precision))
        kind = _PG_OIDS.get(int(code)) if code is not None else None
        return None if kind is None else SqlType(kind)
    if dialect == "mysql":
        if code in _MY_DECIMALS:
            digits = int(precision or 0) - (1 if scale else 0)  # MySQL counts the point
            return SqlType(Kind.DECIMAL, int(scale or 0), max(digits, 1))
        if code == _MY_BIT:
            return SqlType(Kind.BOOLEAN if (column[3] or 1) == 1 else Kind.INT64)
        if code in _MY_BLOBS or (code in (253, 254) and binary):
            return SqlType(Kind.BYTES if binary else Kind.STRING)
        kind = _MY_FIELDS.get(int(code)) if code is not None else None
        return None if kind is None else SqlType(kind)
    return None
