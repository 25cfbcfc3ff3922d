"""Connect schemas and values ⇄ Spark SQL types and values.

============================  ===============================================================
Connect                       Spark
============================  ===============================================================
INT8 / INT16 / INT32 / INT64  ByteType / ShortType / IntegerType / LongType
FLOAT32 / FLOAT64             FloatType / DoubleType
BOOLEAN / STRING / BYTES      BooleanType / StringType / BinaryType
Decimal (scale s)             DecimalType(p, s): p from the ``connect.decimal.precision``
                              parameter, else 38; 0 <= s <= p <= 38
Date                          DateType
Time                          TimeType(3) (milliseconds, as Connect)
Timestamp                     TimestampType (an instant; Spark keeps microseconds, Connect
                              milliseconds: finer digits are truncated on the way back)
ARRAY                         ArrayType(element, containsNull = element optional)
MAP                           MapType(key, value, valueContainsNull = value optional)
STRUCT                        StructType, one field per field, nullable = field optional
optional                      nullable
============================  ===============================================================

Spark to Connect is the reverse, plus TimestampNTZType → Timestamp (read as UTC), CharType and
VarcharType → STRING. Names, versions, docs, parameters and defaults of Connect schemas have no
Spark counterpart (except a Decimal's precision) and are not carried over. What cannot be mapped
(a negative Decimal scale, intervals, variants, NullType...) raises :class:`DataException` naming
the field path.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from typing import Any

from cdk.data import Date, Decimal, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.errors import DataException
from cdk.spark._lazy import spark_types

__all__ = [
    "DECIMAL_PRECISION_PARAMETER",
    "spark_to_connect",
    "connect_to_spark",
    "to_spark_value",
    "to_connect_value",
]

#: The schema parameter carrying a Decimal's precision (as Confluent's converters name it).
DECIMAL_PRECISION_PARAMETER = "connect.decimal.precision"
_MAX_PRECISION = 38
_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)


def _where(path: str) -> str:
    return f"field {path!r}" if path else "the top-level schema"


def connect_to_spark(schema: Schema, path: str = "") -> Any:
    """The Spark ``DataType`` for a Connect schema.

    Args:
        schema: the Connect schema.
        path: the field path used in error messages (``"order.lines"``).

    Raises:
        DataException: the schema (or a nested one) has no Spark type; the message names it.
    """
    t = spark_types()
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        precision = int(schema.parameters.get(DECIMAL_PRECISION_PARAMETER, _MAX_PRECISION))
        if not 0 <= scale <= precision <= _MAX_PRECISION:
            raise DataException(
                f"Cannot map {_where(path)} to Spark: Decimal with scale {scale} and precision "
                f"{precision}; Spark decimals need 0 <= scale <= precision <= {_MAX_PRECISION}",
                field=path or None,
            )
        return t.DecimalType(precision, scale)
    if name == Date.LOGICAL_NAME:
        return t.DateType()
    if name == Time.LOGICAL_NAME:
        return t.TimeType(3)
    if name == Timestamp.LOGICAL_NAME:
        return t.TimestampType()
    simple = _SIMPLE_TO_SPARK.get(schema.type)
    if simple is not None:
        return getattr(t, simple)()
    if schema.type is SchemaType.ARRAY:
        element = schema.value_schema
        return t.ArrayType(connect_to_spark(element, f"{path}[]"), element.optional)
    if schema.type is SchemaType.MAP:
        key = connect_to_spark(schema.key_schema, f"{path}{{key}}")
        value = schema.value_schema
        return t.MapType(key, connect_to_spark(value, f"{path}{{value}}"), value.optional)
    return t.StructType(
        [
            t.StructField(
                f.name, connect_to_spark(f.schema, _join(path, f.name)), f.schema.optional
            )
            for f in schema.fields
        ]
    )


_SIMPLE_TO_SPARK = {
    SchemaType.INT8: "ByteType",
    SchemaType.INT16: "ShortType",
    SchemaType.INT32: "IntegerType",
    SchemaType.INT64: "LongType",
    SchemaType.FLOAT32: "FloatType",
    SchemaType.FLOAT64: "DoubleType",
    SchemaType.BOOLEAN: "BooleanType",
    SchemaType.STRING: "StringType",
    SchemaType.BYTES: "BinaryType",
}
_SIMPLE_TO_CONNECT = {v: k for k, v in _SIMPLE_TO_SPARK.items()}


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def spark_to_connect(dtype: Any, optional: bool = False, path: str = "") -> Schema:
    """The Connect schema for a Spark ``DataType``.

    Args:
        dtype: the Spark data type (a ``StructType`` for a whole row).
        optional: whether the schema is optional (the Spark field is nullable).
        path: the field path used in error messages.

    Raises:
        DataException: the type (or a nested one) has no Connect schema; the message names it.
    """
    t = spark_types()
    kind = type(dtype).__name__
    builder: SchemaBuilder
    if kind in _SIMPLE_TO_CONNECT:
        builder = SchemaBuilder(_SIMPLE_TO_CONNECT[kind])
    elif isinstance(dtype, (t.CharType, t.VarcharType)):
        builder = SchemaBuilder.string()
    elif isinstance(dtype, t.DecimalType):
        builder = Decimal.builder(dtype.scale).parameter(
            DECIMAL_PRECISION_PARAMETER, str(dtype.precision)
        )
    elif isinstance(dtype, t.DateType):
        builder = Date.builder()
    elif isinstance(dtype, t.TimeType):
        builder = Time.builder()
    elif isinstance(dtype, (t.TimestampType, t.TimestampNTZType)):
        builder = Timestamp.builder()
    elif isinstance(dtype, t.ArrayType):
        builder = SchemaBuilder.array(
            spark_to_connect(dtype.elementType, dtype.containsNull, f"{path}[]")
        )
    elif isinstance(dtype, t.MapType):
        builder = SchemaBuilder.map(
            spark_to_connect(dtype.keyType, False, f"{path}{{key}}"),
            spark_to_connect(dtype.valueType, dtype.valueContainsNull, f"{path}{{value}}"),
        )
    elif isinstance(dtype, t.StructType):
        builder = SchemaBuilder.struct()
        for f in dtype.fields:
            builder.field(f.name, spark_to_connect(f.dataType, f.nullable, _join(path, f.name)))
    else:
        raise DataException(
            f"Cannot map {_where(path)} to a Connect schema: Spark type {dtype.simpleString()} "
            "has no Connect counterpart (cast it to a supported type first)",
            field=path or None,
        )
    if optional:
        builder.optional()
    return builder.build()


# -- values ----------------------------------------------------------------------------------------
def to_spark_value(schema: Schema, value: Any, path: str = "") -> Any:
    """A Connect value as the Python value Spark expects for :func:`connect_to_spark`'s type.

    Structs become tuples in field order, Timestamps aware UTC datetimes, the rest stays.

    Raises:
        DataException: ``None`` for a required schema or a Decimal that does not fit its Spark
            precision; the message names the field.
    """
    if value is None:
        if schema.default_value is not None:
            value = schema.default_value
        elif not schema.optional:
            raise DataException(
                f"{_where(path).capitalize()} is required but the value is null", field=path or None
            )
        else:
            return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return _spark_decimal(schema, value, path)
    if name == Timestamp.LOGICAL_NAME:
        return value if value.tzinfo is not None else value.replace(tzinfo=_UTC)
    stype = schema.type
    if stype is SchemaType.STRUCT:
        if not isinstance(value, Struct):
            raise DataException(
                f"{_where(path).capitalize()} expects a Struct, got {type(value).__name__}",
                field=path or None,
            )
        return tuple(
            to_spark_value(f.schema, value.get(f), _join(path, f.name)) for f in schema.fields
        )
    if stype is SchemaType.ARRAY:
        element = schema.value_schema
        return [to_spark_value(element, v, f"{path}[]") for v in value]
    if stype is SchemaType.MAP:
        ks, vs = schema.key_schema, schema.value_schema
        return {
            to_spark_value(ks, k, f"{path}{{key}}"): to_spark_value(vs, v, f"{path}{{value}}")
            for k, v in value.items()
        }
    if stype is SchemaType.BYTES:
        return bytes(value)
    return value


def _spark_decimal(schema: Schema, value: _decimal.Decimal, path: str) -> _decimal.Decimal:
    scale = Decimal.scale(schema)
    precision = int(schema.parameters.get(DECIMAL_PRECISION_PARAMETER, _MAX_PRECISION))
    quantized = value.quantize(
        _decimal.Decimal(1).scaleb(-scale), context=_decimal.Context(prec=80)
    )
    if len(quantized.as_tuple().digits) > precision and quantized != 0:
        raise DataException(
            f"{_where(path).capitalize()}: decimal {value} does not fit Spark's "
            f"DecimalType({precision}, {scale})",
            field=path or None,
        )
    return quantized


def to_connect_value(schema: Schema, value: Any, path: str = "") -> Any:
    """A Spark value (as PySpark hands it to Python) as the Connect value for ``schema``.

    Rows become :class:`Struct`, timestamps aware UTC datetimes truncated to milliseconds (a
    naive one is in the Python worker's local time zone, as PySpark produces them), times are
    truncated to milliseconds.

    Raises:
        DataException: a null for a required field, or a value of the wrong shape; the message
            names the field.
    """
    if value is None:
        if not schema.optional and schema.default_value is None:
            raise DataException(
                f"{_where(path).capitalize()} is required but the value is null", field=path or None
            )
        return None
    name = schema.name
    if name == Timestamp.LOGICAL_NAME:
        if isinstance(value, _dt.datetime):
            aware = value.astimezone(_UTC)
            return aware.replace(microsecond=aware.microsecond // 1000 * 1000)
    elif name == Time.LOGICAL_NAME:
        if isinstance(value, _dt.time):
            return value.replace(microsecond=value.microsecond // 1000 * 1000, tzinfo=None)
    elif name == Date.LOGICAL_NAME and isinstance(value, _dt.datetime):
        return value.date()
    stype = schema.type
    if stype is SchemaType.STRUCT:
        struct = Struct(schema)
        items = _by_name(value)
        for index, f in enumerate(schema.fields):
            raw = items.get(f.name) if items is not None else value[index]
            struct.put(f, to_connect_value(f.schema, raw, _join(path, f.name)))
        return struct
    if stype is SchemaType.ARRAY:
        return [to_connect_value(schema.value_schema, v, f"{path}[]") for v in value]
    if stype is SchemaType.MAP:
        ks, vs = schema.key_schema, schema.value_schema
        return {
            to_connect_value(ks, k, f"{path}{{key}}"): to_connect_value(vs, v, f"{path}{{value}}")
            for k, v in value.items()
        }
    if stype is SchemaType.BYTES and isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def _by_name(value: Any) -> dict[str, Any] | None:
    """A struct-like value's fields by name (None: a tuple/list in field order)."""
    if isinstance(value, Struct):
        return {f.name: value.get(f) for f in value.schema.fields}
    if isinstance(value, dict):
        return value
    if hasattr(value, "asDict"):
        return dict(value.asDict())
    return None


def millis(value: _dt.datetime) -> int:
    """Epoch milliseconds of a datetime (naive: the local time zone, as PySpark's)."""
    return (value.astimezone(_UTC) - _EPOCH) // _dt.timedelta(milliseconds=1)
