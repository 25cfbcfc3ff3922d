"""Kafka's logical types: :class:`Decimal`, :class:`Date`, :class:`Time`, :class:`Timestamp`.

Each is a named, version-1 schema over a primitive type. Python values are ``decimal.Decimal``,
``datetime.date``, ``datetime.time`` and ``datetime.datetime`` (UTC; a naive datetime is read as
UTC). ``to_logical`` turns the primitive encoding into the Python value, ``from_logical`` the
reverse. Date, Time and Timestamp have millisecond precision, as in Kafka: finer digits of a
``time``/``datetime`` are truncated on encoding.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from typing import ClassVar

from cdk.data._builder import SchemaBuilder
from cdk.data._schema import Schema
from cdk.errors import DataException

__all__ = ["Date", "Decimal", "Time", "Timestamp"]

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS_PER_DAY = 86_400_000


class Decimal:
    """Arbitrary-precision decimals: BYTES holding the unscaled two's-complement big-endian value.

    The scale is the schema parameter ``scale``.
    """

    LOGICAL_NAME: ClassVar[str] = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD: ClassVar[str] = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        """A builder for a Decimal schema of the given scale."""
        return (
            SchemaBuilder.bytes()
            .name(Decimal.LOGICAL_NAME)
            .parameter(Decimal.SCALE_FIELD, str(int(scale)))
            .version(1)
        )

    @staticmethod
    def schema(scale: int) -> Schema:
        """A required Decimal schema of the given scale."""
        return Decimal.builder(scale).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        """The scale a Decimal schema declares."""
        raw = schema.parameters.get(Decimal.SCALE_FIELD)
        if raw is None:
            raise DataException("Invalid Decimal schema: scale parameter not found.")
        try:
            return int(raw)
        except ValueError as exc:
            raise DataException(f"Invalid scale parameter found in Decimal schema: {raw}") from exc

    @staticmethod
    def from_logical(schema: Schema, value: _decimal.Decimal) -> bytes:
        """Encode a decimal as its unscaled bytes at the schema's scale.

        A value with fewer decimal places is rescaled; one that would lose digits is rejected.
        """
        scale = Decimal.scale(schema)
        if not isinstance(value, _decimal.Decimal) or not value.is_finite():
            raise DataException(f"Invalid Decimal value: {value!r}")
        exponent = value.as_tuple().exponent
        assert isinstance(exponent, int)
        if -exponent != scale:
            with _decimal.localcontext() as ctx:
                ctx.prec = max(len(value.as_tuple().digits) + abs(scale) + 2, 28)
                ctx.traps[_decimal.Inexact] = True
                try:
                    value = value.quantize(_decimal.Decimal(1).scaleb(-scale))
                except _decimal.DecimalException as exc:
                    raise DataException(
                        f"Decimal value {value} has mismatching scale for given Decimal schema "
                        f"(scale {scale}) and cannot be rescaled without losing digits"
                    ) from exc
        sign, digits, _ = value.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
        return unscaled.to_bytes(length, "big", signed=True)

    @staticmethod
    def to_logical(schema: Schema, value: bytes | bytearray | memoryview) -> _decimal.Decimal:
        """Decode unscaled bytes into a decimal at the schema's scale."""
        scale = Decimal.scale(schema)
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataException(f"Invalid Decimal encoding: {value!r} is not bytes")
        unscaled = int.from_bytes(bytes(value), "big", signed=True)
        # Built from text, so exact whatever the number of digits (no context rounding).
        return _decimal.Decimal(f"{unscaled}E{-scale}")


class Date:
    """A calendar date: INT32 days since the Unix epoch."""

    LOGICAL_NAME: ClassVar[str] = "org.apache.kafka.connect.data.Date"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        """A builder for the Date schema."""
        return SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.date) -> int:
        """Days since 1970-01-01."""
        _check_name(schema, Date.LOGICAL_NAME)
        if isinstance(value, _dt.datetime):
            if value.time() != _dt.time(0):
                raise DataException(
                    "Kafka Connect Date type should not have any time fields set to non-zero "
                    "values."
                )
            value = value.date()
        if not isinstance(value, _dt.date):
            raise DataException(f"Invalid Date value: {value!r}")
        return (value - _EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.date:
        """The date ``value`` days after 1970-01-01."""
        _check_name(schema, Date.LOGICAL_NAME)
        try:
            return _EPOCH_DATE + _dt.timedelta(days=int(value))
        except OverflowError as exc:
            raise DataException(f"Date value out of range: {value} days since epoch") from exc


class Time:
    """A time of day: INT32 milliseconds since midnight."""

    LOGICAL_NAME: ClassVar[str] = "org.apache.kafka.connect.data.Time"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        """A builder for the Time schema."""
        return SchemaBuilder.int32().name(Time.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.time) -> int:
        """Milliseconds since midnight (sub-millisecond digits are truncated)."""
        _check_name(schema, Time.LOGICAL_NAME)
        if not isinstance(value, _dt.time):
            raise DataException(f"Invalid Time value: {value!r}")
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + (
            value.microsecond // 1000
        )

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.time:
        """The time of day ``value`` ms after midnight."""
        _check_name(schema, Time.LOGICAL_NAME)
        ms = int(value)
        if not 0 <= ms < _MS_PER_DAY:
            raise DataException(
                "Time values must use number of milliseconds greater than 0 and less than 86400000"
            )
        seconds, millis = divmod(ms, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return _dt.time(hour, minute, second, millis * 1000)


class Timestamp:
    """An instant: INT64 milliseconds since the Unix epoch, as a UTC ``datetime``."""

    LOGICAL_NAME: ClassVar[str] = "org.apache.kafka.connect.data.Timestamp"
    SCHEMA: ClassVar[Schema]

    @staticmethod
    def builder() -> SchemaBuilder:
        """A builder for the Timestamp schema."""
        return SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: _dt.datetime) -> int:
        """Epoch milliseconds (a naive datetime is read as UTC; microseconds are truncated)."""
        _check_name(schema, Timestamp.LOGICAL_NAME)
        if not isinstance(value, _dt.datetime):
            raise DataException(f"Invalid Timestamp value: {value!r}")
        return datetime_to_millis(value)

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.datetime:
        """The UTC datetime ``value`` ms after the epoch."""
        _check_name(schema, Timestamp.LOGICAL_NAME)
        return millis_to_datetime(int(value))


def datetime_to_millis(value: _dt.datetime) -> int:
    """Epoch milliseconds of a datetime (naive = UTC), truncating sub-millisecond digits."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def millis_to_datetime(ms: int) -> _dt.datetime:
    """The UTC datetime ``ms`` milliseconds after the epoch."""
    try:
        return _EPOCH + _dt.timedelta(milliseconds=ms)
    except OverflowError as exc:
        raise DataException(f"Timestamp value out of range: {ms} ms since epoch") from exc


def _check_name(schema: Schema, expected: str) -> None:
    if schema.name != expected:
        raise DataException(
            f"Requested conversion of {expected.rsplit('.', 1)[-1]} object but the schema does "
            f"not match."
        )


Date.SCHEMA = Date.builder().build()
Time.SCHEMA = Time.builder().build()
Timestamp.SCHEMA = Timestamp.builder().build()

LOGICAL_NAMES = frozenset(
    {Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME}
)
