"""TimestampConverter: convert timestamps between strings, epoch numbers and Connect logical types.

String formats are Java ``SimpleDateFormat`` patterns (see :mod:`cdk.transforms._date_format`).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any, ClassVar

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type, validators
from cdk.data import Date, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.data._logical import datetime_to_millis, millis_to_datetime
from cdk.errors import ConfigException, ConnectException, DataException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    R,
    SchemaCache,
    Transformation,
    ValueMixin,
    attach_variants,
    copy_schema_basics,
    require_map,
    require_struct_or_null,
    struct_get,
)
from cdk.transforms._date_format import SimpleDateFormat

__all__ = ["SimpleDateFormat", "TimestampConverter"]

# -- TimestampConverter ---------------------------------------------------------------------------
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)
_PURPOSE = "converting timestamp formats"
TYPE_STRING = "string"
TYPE_UNIX = "unix"
TYPE_DATE = "Date"
TYPE_TIME = "Time"
TYPE_TIMESTAMP = "Timestamp"
_PRECISIONS = ("nanoseconds", "microseconds", "milliseconds", "seconds")

OPTIONAL_DATE_SCHEMA = Date.builder().optional().build()
OPTIONAL_TIME_SCHEMA = Time.builder().optional().build()
OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()

_TYPE_SCHEMAS: dict[str, tuple[Schema, Schema]] = {
    TYPE_STRING: (Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA),
    TYPE_UNIX: (Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA),
    TYPE_DATE: (Date.SCHEMA, OPTIONAL_DATE_SCHEMA),
    TYPE_TIME: (Time.SCHEMA, OPTIONAL_TIME_SCHEMA),
    TYPE_TIMESTAMP: (Timestamp.SCHEMA, OPTIONAL_TIMESTAMP_SCHEMA),
}


def _class(value: Any) -> str:
    return f"class {type(value).__name__}"


def _truncating_div(value: int, divisor: int) -> int:
    """Integer division rounding toward zero, as Java's TimeUnit conversions."""
    quotient = abs(value) // divisor
    return quotient if value >= 0 else -quotient


def _to_ms_precision(value: _dt.datetime) -> _dt.datetime:
    if value.tzinfo is None:
        value = value.replace(tzinfo=_UTC)
    value = value.astimezone(_UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        "field",
        Type.STRING,
        "",
        None,
        Importance.HIGH,
        "The field holding the timestamp; leave empty when the whole key or value is the "
        "timestamp.",
    )
    .define(
        "target.type",
        Type.STRING,
        NO_DEFAULT,
        validators.ValidString.of(TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP),
        Importance.HIGH,
        "What to convert the timestamp to: string, unix, Date, Time or Timestamp.",
    )
    .define(
        "format",
        Type.STRING,
        "",
        None,
        Importance.MEDIUM,
        "A java.text.SimpleDateFormat pattern, used to render the timestamp when "
        "target.type=string and to read timestamps that arrive as strings.",
    )
    .define(
        "unix.precision",
        Type.STRING,
        "milliseconds",
        validators.ValidString.of(*_PRECISIONS),
        Importance.LOW,
        "The unit of Unix epoch numbers, for output with target.type=unix and for reading "
        "integer input: seconds, milliseconds, microseconds or nanoseconds. Sub-millisecond "
        "digits are lost in conversions.",
    )
    .define(
        "replace.null.with.default",
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Whether a null field that has a default value is replaced by that default (true) "
        "or kept as null (false).",
    )
)


class TimestampConverter(KeyOrValue, Transformation[R]):
    """Convert a timestamp (the whole key/value, or one field of it) to another representation.

    Representations: ``string`` (rendered/parsed with ``format``), ``unix`` (epoch number in
    ``unix.precision`` units), and the Connect logical types ``Date`` (``datetime.date``),
    ``Time`` (``datetime.time``) and ``Timestamp`` (UTC ``datetime.datetime``). Use
    ``TimestampConverter.Key`` or ``TimestampConverter.Value``.
    """

    Key: ClassVar[type[TimestampConverter[Any]]]
    Value: ClassVar[type[TimestampConverter[Any]]]

    def __init__(self) -> None:
        self._field = ""
        self._type = TYPE_TIMESTAMP
        self._format: SimpleDateFormat | None = None
        self._precision = "milliseconds"
        self._replace_null_with_default = True
        self._schema_cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """The ConfigDef: ``field``, ``target.type``, ``format``, ``unix.precision``, ..."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read the settings and compile ``format``.

        Raises:
            ConfigException: a bad or missing setting, naming the key.
        """
        parsed = CONFIG_DEF.parse(configs)
        self._field = parsed["field"]
        self._type = parsed["target.type"]
        self._precision = parsed["unix.precision"]
        self._replace_null_with_default = parsed["replace.null.with.default"]
        self._schema_cache = SchemaCache()
        pattern: str = parsed["format"]
        if self._type == TYPE_STRING and not pattern.strip():
            raise ConfigException(
                "format",
                pattern,
                "TimestampConverter requires format option to be specified when using string "
                "timestamps",
            )
        self._format = None
        if pattern.strip():
            try:
                self._format = SimpleDateFormat(pattern)
            except ValueError as exc:
                raise ConfigException(
                    "format",
                    pattern,
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for "
                    f"string timestamps: {pattern} ({exc})",
                ) from exc

    def apply(self, record: R) -> R | None:
        """Convert the configured timestamp in the record's key or value."""
        schema = self.operating_schema(record)
        if schema is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record, schema)

    # -- schemaless ------------------------------------------------------------------------------
    def _apply_schemaless(self, record: R) -> R:
        raw = self.operating_value(record)
        if raw is None or not self._field:
            return self.new_record(record, None, self._convert(raw, None))
        value = require_map(raw, _PURPOSE)
        updated = dict(value)
        updated[self._field] = self._convert(value.get(self._field), None)
        return self.new_record(record, None, updated)

    # -- with schema -----------------------------------------------------------------------------
    def _apply_with_schema(self, record: R, schema: Schema) -> R:
        if not self._field:
            updated_schema = _TYPE_SCHEMAS[self._type][1 if schema.optional else 0]
            converted = self._convert(self.operating_value(record), _type_from_schema(schema))
            return self.new_record(record, updated_schema, converted)
        value = require_struct_or_null(self.operating_value(record), _PURPOSE)
        cached = self._schema_cache.get_or_compute(schema, self._updated_schema)
        return self.new_record(record, cached, self._convert_struct(value, cached))

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name == self._field:
                builder.field(field.name, _TYPE_SCHEMAS[self._type][int(field.schema.optional)])
            else:
                builder.field(field.name, field.schema)
        updated = builder.build()
        if isinstance(schema.default_value, Struct):
            # the default must be a struct of the new schema itself, which only exists once built
            updated.default_value = self._convert_struct(schema.default_value, updated)
        return updated

    def _convert_struct(self, value: Struct | None, updated_schema: Schema) -> Struct | None:
        if value is None:
            return None
        updated = Struct(updated_schema)
        for field in value.schema.fields:
            field_value = struct_get(value, field, self._replace_null_with_default)
            if field.name == self._field:
                field_value = self._convert(field_value, _type_from_schema(field.schema))
            updated.put(field.name, field_value)
        return updated

    # -- conversion ------------------------------------------------------------------------------
    def _convert(self, timestamp: Any, source_type: str | None) -> Any:
        if timestamp is None:
            return None
        if source_type is None:
            source_type = _infer_type(timestamp)
        return self._to_type(self._to_raw(timestamp, source_type))

    def _to_raw(self, value: Any, source_type: str) -> _dt.datetime:
        if source_type == TYPE_STRING:
            if not isinstance(value, str):
                raise DataException(
                    f"Expected string timestamp to be a String, but found {_class(value)}"
                )
            if self._format is None:
                raise DataException(
                    "TimestampConverter requires the format option to parse string timestamps"
                )
            try:
                return self._format.parse(value)
            except ValueError as exc:
                raise DataException(
                    f"Could not parse timestamp: value ({value}) does not match pattern "
                    f"({self._format.to_pattern()})"
                ) from exc
        if source_type == TYPE_UNIX:
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataException(
                    f"Expected Unix timestamp to be a Long, but found {_class(value)}"
                )
            millis = value
            if self._precision == "seconds":
                millis = value * 1000
            elif self._precision == "microseconds":
                millis = _truncating_div(value, 1000)
            elif self._precision == "nanoseconds":
                millis = _truncating_div(value, 1_000_000)
            return millis_to_datetime(millis)
        if source_type == TYPE_TIMESTAMP:
            if not isinstance(value, _dt.datetime):
                raise DataException(
                    f"Expected Timestamp to be a datetime.datetime, but found {_class(value)}"
                )
            return _to_ms_precision(value)
        if source_type == TYPE_DATE:
            if isinstance(value, _dt.datetime):
                return _to_ms_precision(value)
            if not isinstance(value, _dt.date):
                raise DataException(
                    f"Expected Date to be a datetime.date, but found {_class(value)}"
                )
            return _dt.datetime(value.year, value.month, value.day, tzinfo=_UTC)
        if source_type == TYPE_TIME:
            if isinstance(value, _dt.datetime):
                return _to_ms_precision(value)
            if not isinstance(value, _dt.time):
                raise DataException(
                    f"Expected Time to be a datetime.time, but found {_class(value)}"
                )
            return _to_ms_precision(_dt.datetime.combine(_EPOCH.date(), value, tzinfo=_UTC))
        raise ConnectException(f"Unsupported timestamp type: {source_type}")  # pragma: no cover

    def _to_type(self, raw: _dt.datetime) -> Any:
        target = self._type
        if target == TYPE_STRING:
            assert self._format is not None  # configure() insists on a format for strings
            return self._format.format(raw)
        if target == TYPE_UNIX:
            millis = datetime_to_millis(raw)
            if self._precision == "seconds":
                return _truncating_div(millis, 1000)
            if self._precision == "microseconds":
                return millis * 1000
            if self._precision == "nanoseconds":
                return millis * 1_000_000
            return millis
        if target == TYPE_DATE:
            return raw.date()
        if target == TYPE_TIME:
            return raw.time()
        return raw


def _type_from_schema(schema: Schema) -> str:
    if schema.name == Timestamp.LOGICAL_NAME:
        return TYPE_TIMESTAMP
    if schema.name == Date.LOGICAL_NAME:
        return TYPE_DATE
    if schema.name == Time.LOGICAL_NAME:
        return TYPE_TIME
    if schema.type is SchemaType.STRING:
        return TYPE_STRING
    if schema.type is SchemaType.INT64:
        return TYPE_UNIX
    raise ConnectException(
        f"Schema {schema!r} does not correspond to a known timestamp type format"
    )


def _infer_type(value: Any) -> str:
    if isinstance(value, _dt.datetime):
        return TYPE_TIMESTAMP
    if isinstance(value, _dt.date):
        return TYPE_DATE
    if isinstance(value, _dt.time):
        return TYPE_TIME
    if isinstance(value, int) and not isinstance(value, bool):
        return TYPE_UNIX
    if isinstance(value, str):
        return TYPE_STRING
    raise DataException(
        f"TimestampConverter does not support {_class(value)} objects as timestamps"
    )


class _Key(KeyMixin, TimestampConverter[R]):
    """Convert a timestamp in the record key."""


class _Value(ValueMixin, TimestampConverter[R]):
    """Convert a timestamp in the record value."""


attach_variants(TimestampConverter, _Key, _Value)
