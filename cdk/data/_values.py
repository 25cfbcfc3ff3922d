"""Conversions between Connect values and their string forms: :class:`Values`."""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import math
import re
import struct as _struct
from collections.abc import Mapping, Sequence
from typing import Any

from cdk.data._builder import SchemaBuilder
from cdk.data._logical import Date, Decimal, Time, Timestamp, datetime_to_millis, millis_to_datetime
from cdk.data._schema import Schema, SchemaType
from cdk.data._struct import SchemaAndValue, Struct
from cdk.errors import DataException

__all__ = ["Values"]

_UTC = _dt.timezone.utc
_EPOCH_DATE = _dt.date(1970, 1, 1)
_MS_PER_DAY = 86_400_000
_INT_RANGES = (
    (Schema.INT8_SCHEMA, -(2**7), 2**7 - 1),
    (Schema.INT16_SCHEMA, -(2**15), 2**15 - 1),
    (Schema.INT32_SCHEMA, -(2**31), 2**31 - 1),
    (Schema.INT64_SCHEMA, -(2**63), 2**63 - 1),
)
# Numbers with more integer digits than this are out of every integer range (and int() of
# "1e999999999" would take forever), so they are never turned into Python ints.
_MAX_DIGITS = 40
_RANGE_OF = {s.type: (lo, hi) for s, lo, hi in _INT_RANGES}
# Java's BigDecimal(String) syntax: no NaN/Infinity, no underscores, no surrounding blanks.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z")
# The longest temporal literal an embedded scalar may start with (colons possibly escaped).
_EMBEDDED_TEMPORAL = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}\\?:\d{2}\\?:\d{2}\.\d{3}Z|\d{2}\\?:\d{2}\\?:\d{2}\.\d{3}Z"
)
_DELIMITERS = frozenset(':,{}[]"')
_TEMPORAL_NAMES = frozenset({Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME})
_NUMERIC_RANK = {
    SchemaType.INT8: 0,
    SchemaType.INT16: 1,
    SchemaType.INT32: 2,
    SchemaType.INT64: 3,
    SchemaType.FLOAT32: 4,
    SchemaType.FLOAT64: 5,
}


class Values:
    r"""Converts values between Connect types and to/from a simple string syntax (Kafka's Values).

    Useful when a value may not be of the expected type, e.g. a header holding ``"42"`` that the
    caller wants as an INT64: ``Values.convert_to_long(header.schema, header.value)``.

    The string syntax: ``true``/``false``; numbers (the narrowest integer type that fits, else
    FLOAT32/FLOAT64, else a Decimal); ISO-8601 ``2019-08-23`` (Date), ``14:34:54.346Z`` (Time)
    and ``2019-08-23T14:34:54.346Z`` (Timestamp), read as UTC; arrays ``[1,2]``; maps
    ``{"a":1}``; inside arrays and maps strings are double-quoted (``\\`` and ``"`` escaped with a
    backslash) and ``null`` is ``None``. Anything else is a plain string.
    :meth:`convert_to_string` writes this syntax, and :meth:`parse_string` reads it back.

    Python value types follow :func:`~cdk.data.validate_value`; all integer widths are ``int``
    and both float widths ``float``. Conversions that cannot be made raise
    :class:`~cdk.errors.DataException` naming the value and the target type. ``None`` converts
    to ``None``.
    """

    # -- conversions -----------------------------------------------------------------------------
    @staticmethod
    def convert_to_boolean(schema: Schema | None, value: Any) -> bool | None:
        """The value as a boolean: ``"true"``/``"false"``, or a number (zero is ``False``)."""
        if value is None:
            return None
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            parsed = Values.parse_string(value).value
            if isinstance(parsed, bool):
                return parsed
        return _as_long(value, schema, Schema.OPTIONAL_BOOLEAN_SCHEMA) != 0

    @staticmethod
    def convert_to_byte(schema: Schema | None, value: Any) -> int | None:
        """The value as an INT8 ``int`` (fractions are truncated; out of range raises)."""
        return _convert_int(schema, value, Schema.OPTIONAL_INT8_SCHEMA)

    @staticmethod
    def convert_to_short(schema: Schema | None, value: Any) -> int | None:
        """The value as an INT16 ``int``."""
        return _convert_int(schema, value, Schema.OPTIONAL_INT16_SCHEMA)

    @staticmethod
    def convert_to_integer(schema: Schema | None, value: Any) -> int | None:
        """The value as an INT32 ``int``."""
        return _convert_int(schema, value, Schema.OPTIONAL_INT32_SCHEMA)

    @staticmethod
    def convert_to_long(schema: Schema | None, value: Any) -> int | None:
        """The value as an INT64 ``int``; dates give days, times and timestamps milliseconds."""
        return _convert_int(schema, value, Schema.OPTIONAL_INT64_SCHEMA)

    @staticmethod
    def convert_to_float(schema: Schema | None, value: Any) -> float | None:
        """The value as a FLOAT32 (a Python ``float``)."""
        if value is None:
            return None
        return _as_double(value, schema, Schema.OPTIONAL_FLOAT32_SCHEMA)

    @staticmethod
    def convert_to_double(schema: Schema | None, value: Any) -> float | None:
        """The value as a FLOAT64 ``float``."""
        if value is None:
            return None
        return _as_double(value, schema, Schema.OPTIONAL_FLOAT64_SCHEMA)

    @staticmethod
    def convert_to_string(schema: Schema | None, value: Any) -> str | None:
        """The value in the string syntax that :meth:`parse_string` reads.

        Top-level strings are written as they are; bytes as base64; numbers as Java prints them
        (``1.0E10``); dates, times and timestamps as ISO-8601 (UTC, millisecond precision).
        """
        if value is None:
            return None
        out: list[str] = []
        _append(out, value, embedded=False)
        return "".join(out)

    @staticmethod
    def convert_to_list(schema: Schema | None, value: Any) -> list[Any] | None:
        """The value as a list; a string is parsed (``"[1, 2]"``)."""
        if value is None:
            return None
        if isinstance(value, str):
            value = Values.parse_string(value).value
        if isinstance(value, (list, tuple)):
            return list(value)
        raise _unable(value, SchemaBuilder.array(Schema.STRING_SCHEMA).build())

    @staticmethod
    def convert_to_map(schema: Schema | None, value: Any) -> dict[Any, Any] | None:
        """The value as a dict; a string is parsed (``'{"a": 1}'``)."""
        if value is None:
            return None
        if isinstance(value, str):
            value = Values.parse_string(value).value
        if isinstance(value, Mapping):
            return dict(value)
        raise _unable(value, SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())

    @staticmethod
    def convert_to_struct(schema: Schema | None, value: Any) -> Struct | None:
        """The value if it is a :class:`~cdk.data.Struct` (nothing converts to a struct)."""
        if value is None:
            return None
        if isinstance(value, Struct):
            return value
        raise _unable(value, SchemaBuilder.struct().build())

    @staticmethod
    def convert_to_decimal(
        schema: Schema | None, value: Any, scale: int
    ) -> _decimal.Decimal | None:
        """The value as a ``decimal.Decimal``; bytes are read as unscaled at ``scale``."""
        if value is None:
            return None
        target = Decimal.schema(scale)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return Decimal.to_logical(target, bytes(value))
        if isinstance(value, _decimal.Decimal):
            return value
        if isinstance(value, bool):
            raise _unable(value, target)
        if isinstance(value, int):
            return _decimal.Decimal(value)
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _unable(value, target)
            return _decimal.Decimal(repr(value))
        if isinstance(value, str):
            text = value.strip()
            if _NUMBER.fullmatch(text):
                return _decimal.Decimal(text)
        raise _unable(value, target)

    @staticmethod
    def convert_to_date(schema: Schema | None, value: Any) -> _dt.date | None:
        """The value as a ``datetime.date``: a timestamp keeps its UTC date, a number is days."""
        if value is None:
            return None
        if isinstance(value, str):
            value = _parse_temporal_or_number(value, Date.SCHEMA)
        if isinstance(value, _dt.datetime):
            return _utc(value).date()
        if isinstance(value, _dt.date):
            return value
        if isinstance(value, _dt.time):
            raise _unable(value, Date.SCHEMA)
        return Date.to_logical(Date.SCHEMA, _as_long(value, schema, Date.SCHEMA))

    @staticmethod
    def convert_to_time(schema: Schema | None, value: Any) -> _dt.time | None:
        """The value as a ``datetime.time``: a timestamp keeps its UTC time, a number is ms."""
        if value is None:
            return None
        if isinstance(value, str):
            value = _parse_temporal_or_number(value, Time.SCHEMA)
        if isinstance(value, _dt.datetime):
            return _utc(value).time()
        if isinstance(value, _dt.time):
            return value
        if isinstance(value, _dt.date):
            raise _unable(value, Time.SCHEMA)
        return Time.to_logical(Time.SCHEMA, _as_long(value, schema, Time.SCHEMA))

    @staticmethod
    def convert_to_timestamp(schema: Schema | None, value: Any) -> _dt.datetime | None:
        """The value as a UTC ``datetime``: a date is its midnight, a time is on 1970-01-01."""
        if value is None:
            return None
        if isinstance(value, str):
            value = _parse_temporal_or_number(value, Timestamp.SCHEMA)
        if isinstance(value, _dt.datetime):
            return value
        if isinstance(value, _dt.date):
            return _dt.datetime(value.year, value.month, value.day, tzinfo=_UTC)
        if isinstance(value, _dt.time):
            return _dt.datetime.combine(_EPOCH_DATE, value.replace(tzinfo=None), tzinfo=_UTC)
        return millis_to_datetime(_as_long(value, schema, Timestamp.SCHEMA))

    # -- schemas and parsing ---------------------------------------------------------------------
    @staticmethod
    def infer_schema(value: Any) -> Schema | None:
        """A schema for ``value``, or ``None`` when none can be inferred.

        ``int`` gives INT64 and ``float`` FLOAT64 (Python has one width of each); ``Decimal``,
        ``date``, ``time`` and ``datetime`` give the logical schemas. A list or dict needs at least
        one non-``None`` element (key and value) and elements of one schema; a ``None`` among them
        makes that schema optional.
        """
        if isinstance(value, str):
            return Schema.STRING_SCHEMA
        if isinstance(value, bool):
            return Schema.BOOLEAN_SCHEMA
        if isinstance(value, int):
            lo, hi = _RANGE_OF[SchemaType.INT64]
            return Schema.INT64_SCHEMA if lo <= value <= hi else None
        if isinstance(value, float):
            return Schema.FLOAT64_SCHEMA
        if isinstance(value, (bytes, bytearray, memoryview)):
            return Schema.BYTES_SCHEMA
        if isinstance(value, _decimal.Decimal):
            exponent = value.as_tuple().exponent
            return Decimal.schema(-exponent) if isinstance(exponent, int) else None
        if isinstance(value, _dt.datetime):
            return Timestamp.SCHEMA
        if isinstance(value, _dt.date):
            return Date.SCHEMA
        if isinstance(value, _dt.time):
            return Time.SCHEMA
        if isinstance(value, Struct):
            return value.schema
        if isinstance(value, (list, tuple)):
            element = _detect(value)
            return None if element is None else SchemaBuilder.array(element).build()
        if isinstance(value, Mapping):
            key = _detect(list(value.keys()))
            val = _detect(list(value.values()))
            if key is None or val is None:
                return None
            return SchemaBuilder.map(key, val).build()
        return None

    @staticmethod
    def parse_string(value: str | None) -> SchemaAndValue:
        """Parse the string syntax (see the class docs) into a schema and value.

        ``None`` and the text ``null`` give :attr:`SchemaAndValue.NULL`; text that is not a
        boolean, number, temporal, array or map (e.g. ``[1, 2,,]``) is a STRING, unchanged.
        Arrays and maps whose elements share no schema get an ARRAY/MAP schema without an
        element (key/value) schema, as in Kafka.
        """
        if value is None:
            return SchemaAndValue.NULL
        if value == "" or value.isspace():
            return SchemaAndValue(Schema.STRING_SCHEMA, value)
        parser = _Parser(value)
        try:
            parsed = parser.parse_value(embedded=False)
            parser.skip_blanks()
            if parser.at_end():
                return parsed if parsed is not None else SchemaAndValue.NULL
        except (DataException, RecursionError):
            pass
        return SchemaAndValue(Schema.STRING_SCHEMA, value)


# -- helpers: conversion ---------------------------------------------------------------------------
def _type_name(value: Any) -> str:
    return f"class {type(value).__name__}"


def _unable(value: Any, target: Schema | str) -> DataException:
    where = target if isinstance(target, str) else repr(target)
    return DataException(f"Unable to convert {_java_str(value)} ({_type_name(value)}) to {where}")


def _java_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return repr(bytes(value))
    return str(value)


def _utc(value: _dt.datetime) -> _dt.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=_UTC)
    return value.astimezone(_UTC)


def _as_long(value: Any, schema: Schema | None, target: Schema) -> int:
    """The value as an integer (truncating), as Kafka's ``asLong``."""
    if isinstance(value, bool):
        raise _unable(value, target)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _unable(value, target)
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if not _NUMBER.fullmatch(text):
            raise _unable(value, target)
        number = _decimal.Decimal(text)
    elif isinstance(value, _decimal.Decimal):
        number = value
    else:
        number = None
    if number is not None:
        if not number.is_finite() or number.adjusted() > _MAX_DIGITS:
            raise _unable(value, target)
        return int(number)
    if isinstance(value, _dt.datetime):
        return datetime_to_millis(value)
    if isinstance(value, _dt.date):
        return Date.from_logical(Date.SCHEMA, value)
    if isinstance(value, _dt.time):
        return Time.from_logical(Time.SCHEMA, value)
    raise _unable(value, target)


def _as_double(value: Any, schema: Schema | None, target: Schema) -> float:
    if isinstance(value, bool):
        raise _unable(value, target)
    if isinstance(value, float):
        return value
    if isinstance(value, (int, _decimal.Decimal)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER.fullmatch(text):
            return float(_decimal.Decimal(text))
        raise _unable(value, target)
    return float(_as_long(value, schema, target))


def _convert_int(schema: Schema | None, value: Any, target: Schema) -> int | None:
    if value is None:
        return None
    result = _as_long(value, schema, target)
    lo, hi = _RANGE_OF[target.type]
    if not lo <= result <= hi:
        raise DataException(
            f"Unable to convert {_java_str(value)} ({_type_name(value)}) to {target!r}: "
            f"{result} is out of range [{lo}, {hi}]"
        )
    return result


def _parse_temporal_or_number(text: str, target: Schema) -> Any:
    parsed = Values.parse_string(text).value
    if isinstance(parsed, bool) or not isinstance(
        parsed, (_dt.date, _dt.time, int, float, _decimal.Decimal)
    ):
        raise _unable(text, target)
    return parsed


# -- helpers: writing ------------------------------------------------------------------------------
def _java_double_str(value: float) -> str:
    """``value`` as Java's ``Double.toString`` prints it (``1.0E10``, ``0.001``, ``NaN``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits, exponent = _decimal.Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text_digits = "".join(map(str, digits)).rstrip("0") or "0"
    exponent += len(digits) - len(text_digits)
    magnitude = abs(value)
    prefix = "-" if sign else ""
    if 1e-3 <= magnitude < 1e7:
        plain = format(_decimal.Decimal(f"{text_digits}E{exponent}"), "f")
        if "." not in plain:
            plain += ".0"
        return prefix + plain
    point_exponent = len(text_digits) - 1 + exponent
    mantissa = text_digits[0] + "." + (text_digits[1:] or "0")
    return f"{prefix}{mantissa}E{point_exponent}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _format_time(value: _dt.time) -> str:
    millis = value.microsecond // 1000
    return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{millis:03d}Z"


def _append(out: list[str], value: Any, embedded: bool) -> None:
    if value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_java_double_str(value))
    elif isinstance(value, _decimal.Decimal):
        out.append(str(value))
    elif isinstance(value, str):
        out.append(f'"{_escape(value)}"' if embedded else value)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        encoded = base64.b64encode(bytes(value)).decode("ascii")
        out.append(f'"{encoded}"' if embedded else encoded)
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _append(out, item, True)
        out.append("]")
    elif isinstance(value, Mapping):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            _append(out, k, True)
            out.append(":")
            _append(out, v, True)
        out.append("}")
    elif isinstance(value, Struct):
        out.append("{")
        for i, field in enumerate(value.schema.fields):
            if i:
                out.append(",")
            _append(out, field.name, True)
            out.append(":")
            _append(out, value.get(field), True)
        out.append("}")
    elif isinstance(value, _dt.datetime):
        moment = _utc(value)
        out.append(f"{moment.date().isoformat()}T{_format_time(moment.time())}")
    elif isinstance(value, _dt.date):
        out.append(value.isoformat())
    elif isinstance(value, _dt.time):
        out.append(_format_time(value))
    else:
        raise DataException(
            f"Failed to serialize unexpected value type {type(value).__qualname__}: {value!r}"
        )


# -- helpers: schemas of parsed values -------------------------------------------------------------
def _with_optional(schema: Schema, optional: bool) -> Schema:
    if schema.optional == optional:
        return schema
    return Schema(
        schema.type,
        optional=optional,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=schema.fields if schema.type is SchemaType.STRUCT else None,
        key_schema=schema._key_schema,
        value_schema=schema._value_schema,
    )


def _merge(a: Schema | None, b: Schema | None) -> Schema | None:
    """The schema both ``a`` and ``b`` values fit (numeric widening), or ``None``."""
    if a is None or b is None:
        return None
    optional = a.optional or b.optional
    if a.name is not None or b.name is not None:
        if a.name != b.name or dict(a.parameters) != dict(b.parameters):
            return None
        return _with_optional(a, optional)
    if a.type in _NUMERIC_RANK and b.type in _NUMERIC_RANK:
        wider = a if _NUMERIC_RANK[a.type] >= _NUMERIC_RANK[b.type] else b
        return _with_optional(wider, optional)
    if a.type is not b.type:
        return None
    if a.type is SchemaType.ARRAY:
        element = _merge(a._value_schema, b._value_schema)
        if element is None:
            return None
        return _with_optional(SchemaBuilder.array(element).build(), optional)
    if a.type is SchemaType.MAP:
        key = _merge(a._key_schema, b._key_schema)
        val = _merge(a._value_schema, b._value_schema)
        if key is None or val is None:
            return None
        return _with_optional(SchemaBuilder.map(key, val).build(), optional)
    if _with_optional(a, False) != _with_optional(b, False):
        return None
    return _with_optional(a, optional)


class _Common:
    """Tracks the common schema of a sequence of parsed elements."""

    def __init__(self) -> None:
        self.schema: Schema | None = None
        self.seen_value = False
        self.seen_null = False
        self.mixed = False

    def add(self, element: SchemaAndValue | None) -> None:
        if element is None or element.value is None:
            self.seen_null = True
            return
        if element.schema is None:
            self.mixed = True
            return
        if not self.seen_value:
            self.seen_value = True
            self.schema = element.schema
        elif not self.mixed:
            self.schema = _merge(self.schema, element.schema)
            self.mixed = self.schema is None

    def result(self) -> Schema | None:
        if self.mixed or self.schema is None:
            return None
        return _with_optional(self.schema, self.schema.optional or self.seen_null)


def _detect(values: Sequence[Any]) -> Schema | None:
    common = _Common()
    for item in values:
        if item is None:
            common.add(None)
            continue
        schema = Values.infer_schema(item)
        if schema is None:
            return None
        common.add(SchemaAndValue(schema, item))
    return common.result()


def _align(schema: Schema, value: Any) -> Any:
    """Convert a parsed value to the common schema of its container (ints to floats, ...)."""
    if value is None:
        return None
    if schema.type in (SchemaType.FLOAT32, SchemaType.FLOAT64) and not isinstance(value, float):
        return float(value)
    if schema.type is SchemaType.ARRAY and schema._value_schema is not None:
        element = schema._value_schema
        return [_align(element, v) for v in value]
    if schema.type is SchemaType.MAP and schema._key_schema is not None:
        kschema, vschema = schema._key_schema, schema._value_schema
        assert vschema is not None
        return {_align(kschema, k): _align(vschema, v) for k, v in value.items()}
    return value


def _container(schema_type: SchemaType, key: Schema | None, value: Schema | None) -> Schema:
    return Schema(schema_type, key_schema=key, value_schema=value)


# -- helpers: parsing ------------------------------------------------------------------------------
def _parse_temporal(token: str) -> SchemaAndValue | None:
    token = token.replace("\\:", ":")
    try:
        match = _TIMESTAMP.fullmatch(token)
        if match:
            y, mo, d, h, mi, s, ms = (int(g) for g in match.groups())
            moment = _dt.datetime(y, mo, d, h, mi, s, ms * 1000, tzinfo=_UTC)
            return SchemaAndValue(Timestamp.SCHEMA, moment)
        match = _TIME.fullmatch(token)
        if match:
            h, mi, s, ms = (int(g) for g in match.groups())
            return SchemaAndValue(Time.SCHEMA, _dt.time(h, mi, s, ms * 1000))
        match = _DATE.fullmatch(token)
        if match:
            y, mo, d = (int(g) for g in match.groups())
            return SchemaAndValue(Date.SCHEMA, _dt.date(y, mo, d))
    except ValueError:
        return None
    return None


def _fits_float32(value: float) -> bool:
    try:
        _struct.pack("<f", value)
    except OverflowError:
        return False
    return True


def _parse_number(token: str) -> SchemaAndValue | None:
    if not _NUMBER.fullmatch(token):
        return None
    number = _decimal.Decimal(token)
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)
    if number.adjusted() <= _MAX_DIGITS and number == number.to_integral_value():
        integral = int(number)
        # "1.0" and "1E2" are integers, as in Kafka; but a float's text such as
        # "4.319657100690119E16" stays a float when the integer would be another number.
        exact = token.lstrip("+-").isdigit() or float(number) == integral
        for schema, lo, hi in _INT_RANGES:
            if exact and lo <= integral <= hi:
                return SchemaAndValue(schema, integral)
    if exponent != 0:
        as_float = float(number)
        if math.isfinite(as_float):
            schema = Schema.FLOAT32_SCHEMA if _fits_float32(as_float) else Schema.FLOAT64_SCHEMA
            return SchemaAndValue(schema, as_float)
    return SchemaAndValue(Decimal.schema(-exponent), number)


class _Parser:
    """A recursive-descent reader of the :class:`Values` string syntax."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def skip_blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_blanks()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> bool:
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def literal(self, word: str, embedded: bool) -> bool:
        """Consume ``word`` if it stands alone (followed by a delimiter, blanks or the end)."""
        self.skip_blanks()
        end = self.pos + len(word)
        if self.text[self.pos : end] != word:
            return False
        rest = self.text[end:]
        stripped = rest.lstrip()
        ok = stripped == "" or (embedded and stripped[0] in _DELIMITERS)
        if ok:
            self.pos = end
        return ok

    def parse_value(self, embedded: bool) -> SchemaAndValue | None:
        char = self.peek()
        if char == "":
            raise DataException(f"Missing value in: {self.text}")
        if embedded and char == '"':
            return self.parse_quoted()
        if self.literal("null", embedded):
            return None
        if self.literal("true", embedded):
            return SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
        if self.literal("false", embedded):
            return SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
        if char == "[":
            return self.parse_array()
        if char == "{":
            return self.parse_map()
        if not embedded:
            return self.parse_scalar(self.text[self.pos :].strip(), embedded)
        return self.parse_scalar(self.read_token(), embedded)

    def read_token(self) -> str:
        match = _EMBEDDED_TEMPORAL.match(self.text, self.pos)
        if match:
            self.pos = match.end()
            return match.group()
        start = self.pos
        escaped = False
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\":
                escaped = not escaped
            elif char in _DELIMITERS and not escaped:
                break
            else:
                escaped = False
            self.pos += 1
        return self.text[start : self.pos].strip()

    def parse_scalar(self, token: str, embedded: bool) -> SchemaAndValue:
        if token and token[0].isdigit():
            temporal = _parse_temporal(token)
            if temporal is not None:
                self.pos = len(self.text) if not embedded else self.pos
                return temporal
        if token and (token[0].isdigit() or token[0] in "+-"):
            number = _parse_number(token)
            if number is not None:
                self.pos = len(self.text) if not embedded else self.pos
                return number
        raise DataException(f"Failed to parse embedded value: {token}")

    def parse_quoted(self) -> SchemaAndValue:
        self.pos += 1  # the opening quote
        chars: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < len(self.text):
                following = self.text[self.pos + 1]
                if following in '\\"':
                    chars.append(following)
                else:
                    chars.append(char + following)
                self.pos += 2
                continue
            if char == '"':
                self.pos += 1
                content = "".join(chars)
                parsed = Values.parse_string(content)
                if parsed.schema is not None and parsed.schema.name in _TEMPORAL_NAMES:
                    return parsed
                return SchemaAndValue(Schema.STRING_SCHEMA, content)
            chars.append(char)
            self.pos += 1
        raise DataException(f"String is missing terminating '\"': {self.text}")

    def parse_array(self) -> SchemaAndValue:
        self.pos += 1  # [
        items: list[Any] = []
        common = _Common()
        while True:
            if self.expect("]"):
                element = common.result()
                if element is not None:
                    items = [_align(element, v) for v in items]
                return SchemaAndValue(_container(SchemaType.ARRAY, None, element), items)
            if self.peek() == "":
                raise DataException(f"Array is missing terminating ']': {self.text}")
            if self.peek() == ",":
                raise DataException(f"Unable to parse an empty array element: {self.text}")
            parsed = self.parse_value(embedded=True)
            common.add(parsed)
            items.append(None if parsed is None else parsed.value)
            if self.peek() != "]" and not self.expect(","):
                raise DataException("Array elements missing ',' delimiter")

    def parse_map(self) -> SchemaAndValue:
        self.pos += 1  # {
        entries: dict[Any, Any] = {}
        keys = _Common()
        values = _Common()
        while True:
            if self.expect("}"):
                kschema, vschema = keys.result(), values.result()
                if kschema is not None and vschema is not None:
                    entries = {_align(kschema, k): _align(vschema, v) for k, v in entries.items()}
                elif kschema is not None:
                    entries = {_align(kschema, k): v for k, v in entries.items()}
                return SchemaAndValue(_container(SchemaType.MAP, kschema, vschema), entries)
            if self.peek() == "":
                raise DataException(f"Map is missing terminating '}}': {self.text}")
            if self.peek() == ",":
                raise DataException(
                    f"Unable to parse a map entry with no key or value: {self.text}"
                )
            key = self.parse_value(embedded=True)
            if key is None or key.value is None:
                raise DataException(f"Map entry may not have a null key: {self.text}")
            if not self.expect(":"):
                raise DataException(f"Map entry is missing ':' at {self.pos} in {self.text}")
            value = self.parse_value(embedded=True)
            try:
                entries[key.value] = None if value is None else value.value
            except TypeError as exc:
                raise DataException(f"Map key is not hashable: {self.text}") from exc
            keys.add(key)
            values.add(value)
            if self.peek() != "}" and not self.expect(","):
                raise DataException(f"Map entries missing ',' delimiter: {self.text}")
