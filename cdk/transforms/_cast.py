"""Cast: change the type of fields, or of the whole key or value (Kafka's ``Cast``).

Casts follow Java's conversions, as Kafka's does: integers narrow by keeping the low bits
(``300`` to int8 is ``44``), floats truncate toward zero and saturate, decimals truncate then keep
the low bits, booleans become ``1``/``0``, strings are parsed (a string out of range is an error),
and any number is ``true`` unless zero. Casting to string gives Java's text of the value; bytes
are base64-encoded and Date/Time/Timestamp values are rendered in ISO-8601 (UTC). Before a
numeric or boolean cast, Date/Time/Timestamp values become their integer encoding (days, or
milliseconds).
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import logging
import math
import re
import struct as _struct
from collections.abc import Mapping
from typing import Any, ClassVar, Generic

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type
from cdk.config.validators import LambdaValidator
from cdk.data import Date, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.errors import ConfigException, DataException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    R,
    SchemaCache,
    Transformation,
    ValueMixin,
    attach_variants,
    copy_schema_metadata,
    require_map,
    require_struct,
    struct_get,
)

__all__ = ["Cast"]

_log = logging.getLogger(__name__)

SPEC_CONFIG = "spec"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
_PURPOSE = "cast types"
_WHOLE_VALUE = ""  # never a valid field name in a spec

_INPUT_TYPES = (
    SchemaType.INT8,
    SchemaType.INT16,
    SchemaType.INT32,
    SchemaType.INT64,
    SchemaType.FLOAT32,
    SchemaType.FLOAT64,
    SchemaType.BOOLEAN,
    SchemaType.STRING,
    SchemaType.BYTES,
)
_OUTPUT_TYPES = _INPUT_TYPES[:-1]
_INT_BITS = {SchemaType.INT8: 8, SchemaType.INT16: 16, SchemaType.INT32: 32, SchemaType.INT64: 64}
_MS_PER_DAY = 86_400_000
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _type_list(types: tuple[SchemaType, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def parse_spec(mappings: list[str]) -> dict[str, SchemaType]:
    """Parse ``spec`` entries (``field:type`` or one bare ``type``) into field -> target type.

    The whole-value cast is stored under the empty name.

    Raises:
        ConfigException: an empty spec, a malformed entry, or an unknown or unsupported type.
    """
    if not mappings:
        raise ConfigException(SPEC_CONFIG, mappings, "Must specify at least one field to cast.")
    casts: dict[str, SchemaType] = {}
    whole = False
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) > 2:
            raise ConfigException(SPEC_CONFIG, mappings, f"Invalid cast mapping: {mapping}")
        if len(parts) == 1:
            casts[_WHOLE_VALUE] = _output_type(mappings, parts[0].strip())
            whole = True
        else:
            casts[parts[0].strip()] = _output_type(mappings, parts[1].strip())
    if whole and len(mappings) > 1:
        raise ConfigException(
            SPEC_CONFIG,
            mappings,
            "Cast transformations that specify a type to cast the entire value to may ony "
            "specify a single cast in their spec",
        )
    return casts


def _output_type(mappings: list[str], name: str) -> SchemaType:
    try:
        target = SchemaType[name.upper()]
    except KeyError:
        raise ConfigException(
            SPEC_CONFIG, mappings, f"Invalid type found in casting spec: {name}"
        ) from None
    if target not in _OUTPUT_TYPES:
        raise ConfigException(
            SPEC_CONFIG,
            mappings,
            f"Cast transformation does not support casting to {target.name}; supported types "
            f"are {_type_list(_OUTPUT_TYPES)}",
        )
    return target


def _validate_spec(name: str, value: Any) -> None:
    parse_spec(list(value or []))


CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        SPEC_CONFIG,
        Type.LIST,
        NO_DEFAULT,
        LambdaValidator.of(
            _validate_spec, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"
        ),
        Importance.HIGH,
        "What to cast: comma-separated <code>field:type</code> pairs for fields of a Struct or "
        "map, or a single type for the entire key or value. Types: int8, int16, int32, int64, "
        "float32, float64, boolean and string; bytes values can only become strings (base64).",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "When a field is null and its schema has a default value: true casts the default, false "
        "keeps null.",
    )
)


# -- Java conversions ------------------------------------------------------------------------------
def _wrap(value: int, bits: int) -> int:
    """Keep the low ``bits`` bits as a signed integer (Java's narrowing of integers)."""
    mask = (1 << bits) - 1
    value &= mask
    return value - (1 << bits) if value >> (bits - 1) else value


def _float_to_int(value: float, bits: int) -> int:
    """Java's narrowing of a double: NaN is 0, saturate to int (or long), then keep low bits."""
    if math.isnan(value):
        return 0
    wide = 64 if bits == 64 else 32
    lo, hi = -(1 << (wide - 1)), (1 << (wide - 1)) - 1
    if math.isinf(value):
        return _wrap(hi if value > 0 else lo, bits)
    return _wrap(max(lo, min(hi, int(value))), bits)


def _to_float32(value: float) -> float:
    try:
        return float(_struct.unpack("f", _struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


_JAVA_INT = re.compile(r"[+-]?[0-9]+\Z")
_JAVA_FLOAT = re.compile(
    r"[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?)\Z"
)


def _parse_int(text: str, bits: int) -> int:
    if not _JAVA_INT.match(text):
        raise ValueError(text)
    number = int(text)
    if not -(1 << (bits - 1)) <= number < (1 << (bits - 1)):
        raise ValueError(text)
    return number


def _parse_float(text: str) -> float:
    stripped = text.strip()
    if not _JAVA_FLOAT.match(stripped):
        raise ValueError(text)
    return float(stripped.rstrip("fFdD").replace("Infinity", "inf"))


def _to_int(value: Any, bits: int) -> int:
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int):
        return _wrap(value, bits)
    if isinstance(value, float):
        return _float_to_int(value, bits)
    if isinstance(value, _decimal.Decimal):
        return _wrap(int(value), bits)
    if isinstance(value, str):
        return _parse_int(value, bits)
    raise DataException(f"Unexpected type in Cast transformation: class {type(value).__name__}")


def _to_float(value: Any) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float, _decimal.Decimal)):
        return float(value)
    if isinstance(value, str):
        return _parse_float(value)
    raise DataException(f"Unexpected type in Cast transformation: class {type(value).__name__}")


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return _float_to_int(value, 64) != 0
    if isinstance(value, (int, _decimal.Decimal)):
        return _wrap(int(value), 64) != 0
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataException(f"Unexpected type in Cast transformation: class {type(value).__name__}")


def _float32_text(value: float) -> str:
    """Java's ``Float.toString``: the shortest text that reads back as the same float32."""
    if math.isnan(value) or math.isinf(value) or value == 0:
        return java_double_text(value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if _to_float32(float(text)) == value:
            return java_double_text(float(text))
    return java_double_text(value)


def java_double_text(value: float) -> str:
    """Java's ``Double.toString`` (``5.0``, ``1.0E10``, ``1.0E-4``, ``NaN``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    magnitude = abs(value)
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(magnitude)
    if 1e-3 <= magnitude < 1e7:
        point = exponent + 1
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exponent}"


def _shortest_digits(magnitude: float) -> tuple[str, int]:
    """The shortest round-trip significant digits of a positive float and its decimal exponent."""
    mantissa, _, exp_text = f"{magnitude!r}".partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    all_digits = (whole + frac).lstrip("0")
    leading_zeros = len(whole + frac) - len((whole + frac).lstrip("0"))
    exponent += len(whole) - 1 - leading_zeros
    return all_digits.rstrip("0") or "0", exponent


def _millis_text(millis: int) -> str:
    """Kafka's ``Values.dateFormatFor``: time, date or timestamp format chosen by the millis."""
    moment = _EPOCH + _dt.timedelta(milliseconds=millis)
    if millis < _MS_PER_DAY:
        return moment.strftime("%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    if millis % _MS_PER_DAY == 0:
        return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        + moment.strftime("%H:%M:%S.")
        + f"{moment.microsecond // 1000:03d}Z"
    )


def _to_string(value: Any, schema: Schema | None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if schema is not None and schema.type is SchemaType.FLOAT32:
            return _float32_text(value)
        return java_double_text(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, _dt.datetime):
        return _millis_text(Timestamp.from_logical(Timestamp.SCHEMA, value))
    if isinstance(value, _dt.date):
        return _millis_text(Date.from_logical(Date.SCHEMA, value) * _MS_PER_DAY)
    if isinstance(value, _dt.time):
        return _millis_text(Time.from_logical(Time.SCHEMA, value))
    return str(value)


def _python_type(value: Any) -> SchemaType | None:
    """The Connect type of a schemaless value (Kafka's ``ConnectSchema.schemaType``)."""
    if isinstance(value, bool):
        return SchemaType.BOOLEAN
    if isinstance(value, int):
        return SchemaType.INT64
    if isinstance(value, float):
        return SchemaType.FLOAT64
    if isinstance(value, str):
        return SchemaType.STRING
    if isinstance(value, (bytes, bytearray, memoryview)):
        return SchemaType.BYTES
    if isinstance(value, (list, tuple)):
        return SchemaType.ARRAY
    if isinstance(value, Mapping):
        return SchemaType.MAP
    if isinstance(value, Struct):
        return SchemaType.STRUCT
    return None


def _encode_logical(schema: Schema, value: Any) -> Any:
    if schema.name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if schema.name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if schema.name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    return value


def cast_value(schema: Schema | None, value: Any, target: SchemaType) -> Any:
    """Cast one value (described by ``schema``, or schemaless) to ``target``.

    Raises:
        DataException: an unsupported input type, or a string that does not parse or fit.
    """
    if value is None:
        return None
    inferred = schema.type if schema is not None else _python_type(value)
    if inferred is None:
        raise DataException(
            f"Cast transformation was passed a value of type class {type(value).__name__} "
            "which is not supported by Connect's data API"
        )
    if inferred not in _INPUT_TYPES:
        raise DataException(
            f"Cast transformation does not support casting from {inferred.name}; supported "
            f"types are {_type_list(_INPUT_TYPES)}"
        )
    original = value
    if schema is not None and schema.name is not None and target is not SchemaType.STRING:
        value = _encode_logical(schema, value)
    try:
        if target in _INT_BITS:
            return _to_int(value, _INT_BITS[target])
        if target is SchemaType.FLOAT32:
            return _to_float32(_to_float(value))
        if target is SchemaType.FLOAT64:
            return _to_float(value)
        if target is SchemaType.BOOLEAN:
            return _to_boolean(value)
        return _to_string(value, schema)
    except ValueError:
        raise DataException(
            f"Value ({original}) was out of range for requested data type"
        ) from None


class Cast(Transformation[R], KeyOrValue, Generic[R]):
    """Cast fields, or the whole key (``Cast.Key``) or value (``Cast.Value``), to another type.

    Example::

        xform = Cast.Value()
        xform.configure({"spec": "age:int32,score:float64"})

    A null key/value passes through unchanged. Schemas are rewritten (and cached) so that cast
    fields carry the new type, keeping their optionality and casting their default values.
    """

    Key: ClassVar[type[Cast[Any]]]
    Value: ClassVar[type[Cast[Any]]]

    def __init__(self) -> None:
        self._casts: dict[str, SchemaType] = {}
        self._whole: SchemaType | None = None
        self._replace_null_with_default = True
        self._cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """Cast's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``spec`` and ``replace.null.with.default``."""
        parsed = CONFIG_DEF.parse(configs)
        self._casts = parse_spec(parsed[SPEC_CONFIG])
        self._whole = self._casts.get(_WHOLE_VALUE)
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._cache = SchemaCache()

    def apply(self, record: R) -> R:
        """The record with the configured casts applied."""
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            return self._apply_schemaless(record, value)
        return self._apply_with_schema(record, schema, value)

    def _apply_schemaless(self, record: R, value: Any) -> R:
        if self._whole is not None:
            return self.new_record(record, None, cast_value(None, value, self._whole))
        data = require_map(value, _PURPOSE)
        updated = dict(data)
        for name, target in self._casts.items():
            updated[name] = cast_value(None, data.get(name), target)
        return self.new_record(record, None, updated)

    def _apply_with_schema(self, record: R, schema: Schema, value: Any) -> R:
        updated_schema = self._updated_schema(schema)
        if self._whole is not None:
            return self.new_record(record, updated_schema, cast_value(schema, value, self._whole))
        struct = require_struct(value, _PURPOSE)
        updated = Struct(updated_schema)
        for field in struct.schema.fields:
            original = struct_get(struct, field, self._replace_null_with_default)
            target = self._casts.get(field.name)
            new_value = original if target is None else cast_value(field.schema, original, target)
            _log.debug("Cast field '%s' from '%s' to '%s'", field.name, original, new_value)
            updated.put(field.name, new_value)
        return self.new_record(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        return self._cache.get_or_compute(schema, self._build_schema)

    def _build_schema(self, schema: Schema) -> Schema:
        if self._whole is not None:
            builder = SchemaBuilder(self._whole)
            # Kafka copies name, version, doc and parameters; a logical type's name and
            # parameters would mislabel the cast value, so they are not carried over.
            if schema.name is not None and not _is_logical(schema):
                builder.name(schema.name)
            if schema.version is not None and not _is_logical(schema):
                builder.version(schema.version)
            if schema.doc is not None:
                builder.doc(schema.doc)
            if schema.parameters and not _is_logical(schema):
                builder.parameters(schema.parameters)
        else:
            if schema.type is not SchemaType.STRUCT:
                raise DataException(
                    f"Only Struct objects supported for [{_PURPOSE}], found: {schema.type.name}"
                )
            builder = copy_schema_metadata(schema, SchemaBuilder.struct())
            for field in schema.fields:
                target = self._casts.get(field.name)
                if target is None:
                    builder.field(field.name, field.schema)
                    continue
                field_builder = SchemaBuilder(target)
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default_value is not None:
                    field_builder.default_value(
                        cast_value(field.schema, field.schema.default_value, target)
                    )
                builder.field(field.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default_value is not None:
            builder.default_value(_cast_default(schema, builder.schema_type))
        return builder.build()


def _is_logical(schema: Schema) -> bool:
    return schema.name in (
        Date.LOGICAL_NAME,
        Time.LOGICAL_NAME,
        Timestamp.LOGICAL_NAME,
        "org.apache.kafka.connect.data.Decimal",
    )


def _cast_default(schema: Schema, target: SchemaType) -> Any:
    if target is not SchemaType.STRUCT:
        return cast_value(schema, schema.default_value, target)
    raise DataException(
        "Cast transformation does not support casting from STRUCT; supported types are "
        f"{_type_list(_INPUT_TYPES)}"
    )


class _Key(KeyMixin, Cast[R]):
    """Cast on the record key (Kafka's ``Cast$Key``)."""


class _Value(ValueMixin, Cast[R]):
    """Cast on the record value (Kafka's ``Cast$Value``)."""


attach_variants(Cast, _Key, _Value)
