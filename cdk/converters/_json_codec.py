"""Per-schema JSON encoders and decoders, and Connect schema <-> JSON schema translation.

Everything here is compiled once per schema (and converter settings) into closures: an encoder
turns a Connect value into JSON text, a decoder turns a parsed JSON value (``json.loads`` output)
into a Connect value. :class:`~cdk.converters.JsonConverter` caches them per schema.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal as _decimal
from collections.abc import Callable, Mapping
from typing import Any

from cdk.converters._json_text import java_double, java_float, json_decimal, json_string, to_float32
from cdk.data import Date, Decimal, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.errors import DataException

__all__ = [
    "NeedExactNumbers",
    "Codec",
    "Decoder",
    "Encoder",
    "node_type",
]

Encoder = Callable[[Any], str]
Decoder = Callable[[Any], Any]

_TYPE_NAMES = {
    SchemaType.BOOLEAN: "boolean",
    SchemaType.INT8: "int8",
    SchemaType.INT16: "int16",
    SchemaType.INT32: "int32",
    SchemaType.INT64: "int64",
    SchemaType.FLOAT32: "float",
    SchemaType.FLOAT64: "double",
    SchemaType.BYTES: "bytes",
    SchemaType.STRING: "string",
    SchemaType.ARRAY: "array",
    SchemaType.MAP: "map",
    SchemaType.STRUCT: "struct",
}
_TYPES_BY_NAME = {name: stype for stype, name in _TYPE_NAMES.items()}

_INT_RANGES = {
    SchemaType.INT8: (-(2**7), 2**7 - 1),
    SchemaType.INT16: (-(2**15), 2**15 - 1),
    SchemaType.INT32: (-(2**31), 2**31 - 1),
    SchemaType.INT64: (-(2**63), 2**63 - 1),
}
_INT64_MIN, _INT64_MAX = _INT_RANGES[SchemaType.INT64]
_INT32_MIN, _INT32_MAX = _INT_RANGES[SchemaType.INT32]

_PyDecimal = _decimal.Decimal
# Exact for any decimal: scaleb() in it never rounds.
_EXACT = _decimal.Context(
    prec=_decimal.MAX_PREC, Emax=_decimal.MAX_EMAX, Emin=_decimal.MIN_EMIN, traps=[]
)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_NAIVE_EPOCH = _dt.datetime(1970, 1, 1)  # a naive datetime is read as UTC
_EPOCH_DATE = _dt.date(1970, 1, 1)
_MILLISECOND = _dt.timedelta(milliseconds=1)  # timedelta // this: floor, as Kafka truncates


class NeedExactNumbers(Exception):
    """Raised by a Decimal decoder given a float: the JSON must be re-parsed with exact decimals."""


def node_type(value: Any) -> str:
    """Jackson's node type name for a parsed JSON value (used in error messages)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, (int, float, _PyDecimal)):
        return "NUMBER"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, list):
        return "ARRAY"
    if isinstance(value, dict):
        return "OBJECT"
    return "POJO"


def _class_name(value: Any) -> str:
    return f"class {type(value).__module__}.{type(value).__qualname__}".replace("builtins.", "")


def _invalid_type(schema: Schema | None, value: Any) -> DataException:
    what = schema.type.name if schema is not None else "unknown schema"
    return DataException(f"Invalid type for {what}: {_class_name(value)}")


def _b64(data: bytes | bytearray | memoryview) -> str:
    return '"' + base64.b64encode(data).decode("ascii") + '"'


def _b64decode(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


class Codec:
    """Builds encoders/decoders for one converter configuration.

    Args:
        decimal_numeric: write Decimal values as JSON numbers (``decimal.format=NUMERIC``) rather
            than base64 strings.
        replace_null_with_default: write (and read) ``None`` as the schema default when it has one.
    """

    def __init__(self, *, decimal_numeric: bool, replace_null_with_default: bool) -> None:
        self.decimal_numeric = decimal_numeric
        self.replace_null_with_default = replace_null_with_default

    # -- encoders ------------------------------------------------------------------------------
    def encoder(self, schema: Schema | None) -> Encoder:
        """The encoder for values of ``schema`` (``None`` = schemaless, types inferred)."""
        if schema is None:
            return self.encode_schemaless
        null_text: list[str] = []  # filled below once the encoder exists (defaults need it)

        def on_null() -> str:
            if null_text:
                return null_text[0]
            raise DataException(
                "Conversion error: null value for field that is required and has no default value"
            )

        encoder = self._encoder(schema, on_null)
        if schema.default_value is not None and self.replace_null_with_default:
            null_text.append(encoder(schema.default_value))
        elif schema.optional:
            null_text.append("null")
        return encoder

    def _encoder(self, schema: Schema, on_null: Callable[[], str]) -> Encoder:
        logical = self._logical_encoder(schema, on_null)
        if logical is not None:
            return logical
        stype = schema.type
        if stype in _INT_RANGES:
            return self._int_encoder(schema, on_null)
        if stype is SchemaType.STRING:

            def enc_str(value: Any) -> str:
                if type(value) is str:
                    return json_string(value)
                if value is None:
                    return on_null()
                if isinstance(value, str):
                    return json_string(str(value))
                raise _invalid_type(schema, value)

            return enc_str
        if stype is SchemaType.BOOLEAN:

            def enc_bool(value: Any) -> str:
                if value is True:
                    return "true"
                if value is False:
                    return "false"
                if value is None:
                    return on_null()
                raise _invalid_type(schema, value)

            return enc_bool
        if stype is SchemaType.FLOAT64 or stype is SchemaType.FLOAT32:
            fmt = java_double if stype is SchemaType.FLOAT64 else java_float

            def enc_float(value: Any) -> str:
                if type(value) is float:
                    return fmt(value)
                if value is None:
                    return on_null()
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    try:
                        return fmt(float(value))
                    except OverflowError as exc:
                        raise DataException(
                            f"Value {value} is out of range for {schema.type.name}"
                        ) from exc
                raise _invalid_type(schema, value)

            return enc_float
        if stype is SchemaType.BYTES:

            def enc_bytes(value: Any) -> str:
                if isinstance(value, (bytes, bytearray, memoryview)):
                    return _b64(value)
                if value is None:
                    return on_null()
                raise DataException(f"Invalid type for bytes type: {_class_name(value)}")

            return enc_bytes
        if stype is SchemaType.ARRAY:
            return self._array_encoder(schema, on_null)
        if stype is SchemaType.MAP:
            return self._map_encoder(schema, on_null)
        return self._struct_encoder(schema, on_null)

    def _int_encoder(self, schema: Schema, on_null: Callable[[], str]) -> Encoder:
        lo, hi = _INT_RANGES[schema.type]
        int_repr = int.__repr__

        def enc_int(value: Any) -> str:
            if type(value) is int and lo <= value <= hi:
                return int_repr(value)
            if value is None:
                return on_null()
            if isinstance(value, int) and not isinstance(value, bool):
                if lo <= value <= hi:
                    return int_repr(int(value))
                raise DataException(f"Value {value} is out of range for {schema.type.name}")
            raise _invalid_type(schema, value)

        return enc_int

    def _logical_encoder(self, schema: Schema, on_null: Callable[[], str]) -> Encoder | None:
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            numeric = self.decimal_numeric
            try:
                scale: int | None = Decimal.scale(schema)
            except DataException:
                scale = None  # from_logical words the error for each value

            def enc_decimal(value: Any) -> str:
                if value is None:
                    return on_null()
                if not isinstance(value, _PyDecimal):
                    raise DataException(
                        f"Invalid type for Decimal, expected Decimal but was {_class_name(value)}"
                    )
                if numeric:
                    if not value.is_finite():
                        raise DataException(f"Invalid Decimal value: {value}")
                    return json_decimal(value)
                if scale is not None and value.as_tuple()[2] == -scale:  # finite: an int exponent
                    # Already at the schema's scale: the unscaled integer, exactly.
                    unscaled = int(value.scaleb(scale, _EXACT))
                    length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
                    return _b64(unscaled.to_bytes(length, "big", signed=True))
                return _b64(Decimal.from_logical(schema, value))

            return enc_decimal
        if name == Date.LOGICAL_NAME:
            epoch = _EPOCH_DATE

            def enc_date(value: Any) -> str:
                if type(value) is _dt.date:
                    return str((value - epoch).days)
                if value is None:
                    return on_null()
                if not isinstance(value, _dt.date):
                    raise DataException(
                        f"Invalid type for Date, expected Date but was {_class_name(value)}"
                    )
                return str(Date.from_logical(schema, value))

            return enc_date
        if name == Time.LOGICAL_NAME:

            def enc_time(value: Any) -> str:
                if value is None:
                    return on_null()
                if not isinstance(value, _dt.time):
                    raise DataException(
                        f"Invalid type for Time, expected Date but was {_class_name(value)}"
                    )
                return str(Time.from_logical(schema, value))

            return enc_time
        if name == Timestamp.LOGICAL_NAME:

            def enc_timestamp(value: Any) -> str:
                if type(value) is _dt.datetime:  # Timestamp.from_logical, inlined
                    epoch = _EPOCH if value.tzinfo is not None else _NAIVE_EPOCH
                    return str((value - epoch) // _MILLISECOND)
                if value is None:
                    return on_null()
                if not isinstance(value, _dt.datetime):
                    raise DataException(
                        f"Invalid type for Timestamp, expected Date but was {_class_name(value)}"
                    )
                return str(Timestamp.from_logical(schema, value))

            return enc_timestamp
        return None

    def _array_encoder(self, schema: Schema, on_null: Callable[[], str]) -> Encoder:
        element = self.encoder(schema.value_schema)

        def enc_array(value: Any) -> str:
            if type(value) is list or isinstance(value, (list, tuple)):
                return "[" + ",".join([element(item) for item in value]) + "]"
            if value is None:
                return on_null()
            raise _invalid_type(schema, value)

        return enc_array

    def _map_encoder(self, schema: Schema, on_null: Callable[[], str]) -> Encoder:
        key_enc = self.encoder(schema.key_schema)
        val_enc = self.encoder(schema.value_schema)
        if schema.key_schema.type is SchemaType.STRING:

            def enc_object(value: Any) -> str:
                if isinstance(value, Mapping):
                    parts = []
                    for k, v in value.items():
                        key = key_enc(k)
                        if key[0] != '"':  # a null key; Jackson's asText() gives "null"
                            key = json_string(key)
                        parts.append(key + ":" + val_enc(v))
                    return "{" + ",".join(parts) + "}"
                if value is None:
                    return on_null()
                raise _invalid_type(schema, value)

            return enc_object

        def enc_pairs(value: Any) -> str:
            if isinstance(value, Mapping):
                return (
                    "["
                    + ",".join(
                        ["[" + key_enc(k) + "," + val_enc(v) + "]" for k, v in value.items()]
                    )
                    + "]"
                )
            if value is None:
                return on_null()
            raise _invalid_type(schema, value)

        return enc_pairs

    def _struct_encoder(self, schema: Schema, on_null: Callable[[], str]) -> Encoder:
        fields = schema.fields
        names: dict[str, Any] = {
            "schema": schema,
            "Struct": Struct,
            "on_null": on_null,
            "invalid": _invalid_type,
            "DataException": DataException,
            "js": json_string,
            "jd": java_double,
            "ir": int.__repr__,
        }
        terms = []
        for i, f in enumerate(fields):
            names[f"e{i}"] = self.encoder(f.schema)
            names[f"p{i}"] = ("{" if i == 0 else ",") + json_string(f.name) + ":"
            terms.append(f"p{i}")
            terms.append(_inline_encode(f.schema, f"v{i}", f"e{i}", names, i))
        if fields:
            unpack = ", ".join(f"v{i}" for i in range(len(fields))) + ", = value._values"
            body = " + ".join(terms) + ' + "}"'
        else:
            unpack = "pass"
            body = '"{}"'
        source = (
            "def enc_struct(value):\n"
            "    if type(value) is Struct:\n"
            "        if value.schema is not schema and value.schema != schema:\n"
            "            raise DataException('Mismatching schema.')\n"
            f"        {unpack}\n"
            f"        return {body}\n"
            "    if value is None:\n"
            "        return on_null()\n"
            "    raise invalid(schema, value)\n"
        )
        exec(compile(source, f"<struct encoder {schema!r}>", "exec"), names)
        encoder: Encoder = names["enc_struct"]
        return encoder

    def encode_schemaless(self, value: Any) -> str:
        """Encode a value with no schema, inferring the JSON type from the Python type."""
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if isinstance(value, str):
            return json_string(value)
        if isinstance(value, int):
            return int.__repr__(int(value))
        if isinstance(value, float):
            return java_double(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return _b64(value)
        if isinstance(value, (list, tuple)):
            return "[" + ",".join([self.encode_schemaless(v) for v in value]) + "]"
        if isinstance(value, Mapping):
            enc = self.encode_schemaless
            if all(isinstance(k, str) for k in value):
                return (
                    "{" + ",".join([json_string(k) + ":" + enc(v) for k, v in value.items()]) + "}"
                )
            return (
                "[" + ",".join(["[" + enc(k) + "," + enc(v) + "]" for k, v in value.items()]) + "]"
            )
        if isinstance(value, Struct):
            raise DataException("Mismatching schema.")
        raise DataException(f"Python {_class_name(value)} does not have corresponding schema type.")

    # -- schema -> JSON schema -----------------------------------------------------------------
    def schema_json(self, schema: Schema | None) -> str:
        """The JSON schema text, in Kafka's key order (``type``, children, ``optional``, ...)."""
        if schema is None:
            return "null"
        parts = ['{"type":"', _TYPE_NAMES[schema.type], '"']
        stype = schema.type
        if stype is SchemaType.ARRAY:
            parts += [',"items":', self.schema_json(schema.value_schema)]
        elif stype is SchemaType.MAP:
            parts += [',"keys":', self.schema_json(schema.key_schema)]
            parts += [',"values":', self.schema_json(schema.value_schema)]
        elif stype is SchemaType.STRUCT:
            fields = [
                self.schema_json(f.schema)[:-1] + ',"field":' + json_string(f.name) + "}"
                for f in schema.fields
            ]
            parts += [',"fields":[', ",".join(fields), "]"]
        parts.append(',"optional":true' if schema.optional else ',"optional":false')
        if schema.name is not None:
            parts += [',"name":', json_string(schema.name)]
        if schema.version is not None:
            parts += [',"version":', str(int(schema.version))]
        if schema.doc is not None:
            parts += [',"doc":', json_string(schema.doc)]
        if schema.parameters:
            params = [json_string(k) + ":" + json_string(v) for k, v in schema.parameters.items()]
            parts += [',"parameters":{', ",".join(params), "}"]
        if schema.default_value is not None:
            parts += [',"default":', self.encoder(schema)(schema.default_value)]
        parts.append("}")
        return "".join(parts)

    # -- JSON schema -> schema -----------------------------------------------------------------
    def parse_schema(self, node: Any) -> Schema | None:
        """Build a Connect schema from a parsed JSON schema (``None`` for JSON null)."""
        if node is None:
            return None
        type_name = node.get("type") if isinstance(node, dict) else None
        if not isinstance(type_name, str):
            raise DataException("Schema must contain 'type' field")
        stype = _TYPES_BY_NAME.get(type_name)
        if stype is None:
            raise DataException(f"Unknown schema type: {type_name}")
        if stype is SchemaType.ARRAY:
            items = node.get("items")
            if items is None:
                raise DataException("Array schema did not specify the element type")
            builder = SchemaBuilder.array(self._child(items))
        elif stype is SchemaType.MAP:
            if "keys" not in node:
                raise DataException("Map schema did not specify the key type")
            if "values" not in node:
                raise DataException("Map schema did not specify the value type")
            builder = SchemaBuilder.map(self._child(node["keys"]), self._child(node["values"]))
        elif stype is SchemaType.STRUCT:
            builder = SchemaBuilder.struct()
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise DataException('Struct schema\'s "fields" argument is not an array.')
            for field in fields:
                name = field.get("field") if isinstance(field, dict) else None
                if not isinstance(name, str):
                    raise DataException("Struct schema's field name not specified properly")
                builder.field(name, self._child(field))
        else:
            builder = SchemaBuilder(stype)
        if node.get("optional") is True:
            builder.optional()
        else:
            builder.required()
        name = node.get("name")
        if isinstance(name, str):
            builder.name(name)
        version = node.get("version")
        if type(version) is int:
            builder.version(version)
        doc = node.get("doc")
        if isinstance(doc, str):
            builder.doc(doc)
        params = node.get("parameters")
        if isinstance(params, dict):
            for key, param in params.items():
                if not isinstance(param, str):
                    raise DataException("Schema parameters must have string values.")
                builder.parameter(key, param)
        if "default" in node and node["default"] is not None:
            default = self.decoder(builder.build())(node["default"])
            builder.default_value(default)
        return builder.build()

    def _child(self, node: Any) -> Schema:
        schema = self.parse_schema(node)
        if schema is None:
            raise DataException("Schema must contain 'type' field")
        return schema

    # -- decoders ------------------------------------------------------------------------------
    def decoder(self, schema: Schema | None) -> Decoder:
        """The decoder from parsed JSON to Connect values of ``schema`` (``None`` = infer)."""
        if schema is None:
            return decode_schemaless
        if schema.default_value is not None and self.replace_null_with_default:
            default = schema.default_value

            def on_null() -> Any:
                return default

        elif schema.optional:

            def on_null() -> Any:
                return None

        else:
            type_name = schema.type.name

            def on_null() -> Any:
                raise DataException(f"Invalid null value for required {type_name} field")

        logical = _logical_decoder(schema, on_null)
        if logical is not None:
            return logical
        stype = schema.type
        if stype in _INT_RANGES:
            lo, hi = _INT_RANGES[stype]

            def dec_int(value: Any) -> Any:
                if type(value) is int and lo <= value <= hi:
                    return value
                if value is None:
                    return on_null()
                raise _bad_node(schema, value)

            return dec_int
        if stype is SchemaType.STRING:

            def dec_str(value: Any) -> Any:
                if type(value) is str:
                    return value
                if value is None:
                    return on_null()
                raise _bad_node(schema, value)

            return dec_str
        if stype is SchemaType.BOOLEAN:

            def dec_bool(value: Any) -> Any:
                if value is True or value is False:
                    return value
                if value is None:
                    return on_null()
                raise _bad_node(schema, value)

            return dec_bool
        if stype is SchemaType.FLOAT64 or stype is SchemaType.FLOAT32:
            return _float_decoder(schema, on_null)
        if stype is SchemaType.BYTES:

            def dec_bytes(value: Any) -> Any:
                if type(value) is str:
                    try:
                        return _b64decode(value)
                    except (binascii.Error, ValueError) as exc:
                        raise DataException(f"Invalid bytes field: {exc}") from exc
                if value is None:
                    return on_null()
                raise _bad_node(schema, value)

            return dec_bytes
        if stype is SchemaType.ARRAY:
            element = self.decoder(schema.value_schema)

            def dec_array(value: Any) -> Any:
                if type(value) is list:
                    return [element(item) for item in value]
                if value is None:
                    return on_null()
                raise DataException(
                    f"Arrays should be encoded as JSON arrays, but found {node_type(value)}"
                )

            return dec_array
        if stype is SchemaType.MAP:
            return self._map_decoder(schema, on_null)
        return self._struct_decoder(schema, on_null)

    def _map_decoder(self, schema: Schema, on_null: Callable[[], Any]) -> Decoder:
        key_dec = self.decoder(schema.key_schema)
        val_dec = self.decoder(schema.value_schema)
        if schema.key_schema.type is SchemaType.STRING:

            def dec_object(value: Any) -> Any:
                if type(value) is dict:
                    return {k: val_dec(v) for k, v in value.items()}
                if value is None:
                    return on_null()
                raise DataException(
                    "Maps with string fields should be encoded as JSON objects, but found "
                    + node_type(value)
                )

            return dec_object

        def dec_pairs(value: Any) -> Any:
            if value is None:
                return on_null()
            if type(value) is not list:
                raise DataException(
                    "Maps with non-string fields should be encoded as JSON array of tuples, but "
                    "found " + node_type(value)
                )
            result = {}
            for entry in value:
                if type(entry) is not list:
                    raise DataException(
                        f"Found invalid map entry instead of array tuple: {node_type(entry)}"
                    )
                if len(entry) != 2:
                    raise DataException(
                        f"Found invalid map entry, expected length 2 but found :{len(entry)}"
                    )
                key = key_dec(entry[0])
                try:
                    result[key] = val_dec(entry[1])
                except TypeError as exc:
                    raise DataException(
                        f"Map key {key!r} cannot be used as a Python dict key"
                    ) from exc
            return result

        return dec_pairs

    def _struct_decoder(self, schema: Schema, on_null: Callable[[], Any]) -> Decoder:
        fields = schema.fields
        names: dict[str, Any] = {
            "schema": schema,
            "trusted": Struct._trusted,
            "on_null": on_null,
            "node_type": node_type,
            "DataException": DataException,
        }
        terms = []
        for i, f in enumerate(fields):
            names[f"d{i}"] = self.decoder(f.schema)
            names[f"n{i}"] = f.name
            terms.append(_inline_decode(f.schema, f"g(n{i})", f"d{i}", names, i))
        source = (
            "def dec_struct(value):\n"
            "    if type(value) is dict:\n"
            "        g = value.get\n"
            f"        return trusted(schema, [{', '.join(terms)}])\n"
            "    if value is None:\n"
            "        return on_null()\n"
            "    raise DataException("
            "'Structs should be encoded as JSON objects, but found ' + node_type(value))\n"
        )
        exec(compile(source, f"<struct decoder {schema!r}>", "exec"), names)
        generated: Decoder = names["dec_struct"]
        plan = [(f.name, names[f"d{i}"]) for i, f in enumerate(fields)]

        def dec_struct(value: Any) -> Any:
            try:
                return generated(value)
            except DataException as exc:
                if exc.field is None and type(value) is dict:
                    for name, dec in plan:  # name the field that failed
                        try:
                            dec(value.get(name))
                        except DataException as inner:
                            raise DataException(f"{inner} (field: {name})", field=name) from inner
                raise

        return dec_struct


def _plain(schema: Schema) -> SchemaType | None:
    """The schema's type if values of it are plain JSON scalars that can be inlined."""
    if schema.name in _LOGICAL_NAMES:
        return None
    return schema.type


_LOGICAL_NAMES = frozenset(
    {Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME}
)


def _inline_encode(schema: Schema, var: str, enc: str, names: dict[str, Any], i: int) -> str:
    """A Python expression encoding ``var``: the common case inline, the rest via ``enc``."""
    if schema.name == Timestamp.LOGICAL_NAME:
        names.update(datetime=_dt.datetime, E=_EPOCH, MS=_MILLISECOND)
        return (
            f"(ir(({var} - E) // MS) if type({var}) is datetime and {var}.tzinfo is not None "
            f"else {enc}({var}))"
        )
    if schema.name == Date.LOGICAL_NAME:
        names.update(date=_dt.date, DE=_EPOCH_DATE)
        return f"(ir(({var} - DE).days) if type({var}) is date else {enc}({var}))"
    stype = _plain(schema)
    if stype is SchemaType.STRING:
        return f"(js({var}) if type({var}) is str else {enc}({var}))"
    if stype is SchemaType.BOOLEAN:
        return f"('true' if {var} is True else 'false' if {var} is False else {enc}({var}))"
    if stype is SchemaType.FLOAT64:
        return f"(jd({var}) if type({var}) is float else {enc}({var}))"
    if stype in _INT_RANGES:
        names[f"lo{i}"], names[f"hi{i}"] = _INT_RANGES[stype]
        return f"(ir({var}) if type({var}) is int and lo{i} <= {var} <= hi{i} else {enc}({var}))"
    return f"{enc}({var})"


def _inline_decode(schema: Schema, expr: str, dec: str, names: dict[str, Any], i: int) -> str:
    """A Python expression decoding ``expr``: the common case inline, the rest via ``dec``."""
    stype = _plain(schema)
    x = f"x{i}"
    if stype is SchemaType.STRING:
        return f"({x} if type({x} := {expr}) is str else {dec}({x}))"
    if stype is SchemaType.BOOLEAN:
        return f"({x} if ({x} := {expr}) is True or {x} is False else {dec}({x}))"
    if stype is SchemaType.FLOAT64:
        return f"({x} if type({x} := {expr}) is float else {dec}({x}))"
    if stype in _INT_RANGES:
        names[f"lo{i}"], names[f"hi{i}"] = _INT_RANGES[stype]
        return f"({x} if type({x} := {expr}) is int and lo{i} <= {x} <= hi{i} else {dec}({x}))"
    return f"{dec}({expr})"


def _bad_node(schema: Schema, value: Any) -> DataException:
    return DataException(
        f"Invalid value for {schema.type.name} schema: JSON {node_type(value)} {value!r:.40}"
    )


def _float_decoder(schema: Schema, on_null: Callable[[], Any]) -> Decoder:
    specials = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
    if schema.type is SchemaType.FLOAT64:

        def dec_double(value: Any) -> Any:
            if type(value) is float:
                return value
            if value is None:
                return on_null()
            if type(value) is int or type(value) is _PyDecimal:
                return float(value)
            if type(value) is str and value in specials:
                return specials[value]
            raise _bad_node(schema, value)

        return dec_double

    def dec_float(value: Any) -> Any:
        if value is None:
            return on_null()
        if type(value) in (float, int, _PyDecimal):
            try:
                return to_float32(float(value))
            except OverflowError:
                return float("inf") if value > 0 else float("-inf")
        if type(value) is str and value in specials:
            return specials[value]
        raise _bad_node(schema, value)

    return dec_float


def _logical_decoder(schema: Schema, on_null: Callable[[], Any]) -> Decoder | None:
    name = schema.name
    if name == Decimal.LOGICAL_NAME:

        def dec_decimal(value: Any) -> Any:
            if value is None:
                return on_null()
            if type(value) is _PyDecimal:
                return value
            if type(value) is int:
                return _PyDecimal(value)
            if type(value) is float:
                raise NeedExactNumbers  # parsed without exact decimals: parse again with them
            if type(value) is str:
                try:
                    return Decimal.to_logical(schema, _b64decode(value))
                except (binascii.Error, ValueError, DataException) as exc:
                    raise DataException(f"Invalid bytes for Decimal field: {exc}") from exc
            raise DataException(
                "Invalid type for Decimal, underlying representation should be numeric or bytes "
                f"but was {node_type(value)}"
            )

        return dec_decimal
    for logical, kind, lo, hi in (
        (Date, "integer", _INT32_MIN, _INT32_MAX),
        (Time, "integer", _INT32_MIN, _INT32_MAX),
        (Timestamp, "integral", _INT64_MIN, _INT64_MAX),
    ):
        if name == logical.LOGICAL_NAME:
            return _temporal_decoder(schema, on_null, logical, kind, lo, hi)
    return None


def _temporal_decoder(
    schema: Schema, on_null: Callable[[], Any], logical: Any, kind: str, lo: int, hi: int
) -> Decoder:
    to_logical = logical.to_logical
    short = logical.LOGICAL_NAME.rsplit(".", 1)[-1]

    def dec_temporal(value: Any) -> Any:
        if type(value) is int and lo <= value <= hi:
            return to_logical(schema, value)
        if value is None:
            return on_null()
        raise DataException(
            f"Invalid type for {short}, underlying representation should be {kind} but was "
            f"{node_type(value)}"
        )

    return dec_temporal


def decode_schemaless(value: Any) -> Any:
    """Infer Connect values from parsed JSON: integral -> INT64, other numbers -> FLOAT64."""
    kind = type(value)
    if kind is str or kind is float or kind is bool or value is None:
        return value
    if kind is int:
        if _INT64_MIN <= value <= _INT64_MAX:
            return value
        raise DataException(f"Integer {value} does not fit in an INT64")
    if kind is _PyDecimal:
        return float(value)
    if kind is dict:
        for k, v in value.items():
            t = type(v)
            if t is str or t is float or t is bool or v is None:
                continue
            if t is int and _INT64_MIN <= v <= _INT64_MAX:
                continue
            value[k] = decode_schemaless(v)
        return value
    if kind is list:
        return [decode_schemaless(v) for v in value]
    raise DataException(f"Unknown schema type: {node_type(value)}")
