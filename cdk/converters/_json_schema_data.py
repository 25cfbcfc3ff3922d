"""Connect schemas and values to JSON Schemas and JSON, and back, as Confluent's JsonSchemaData.

Connect to JSON Schema: integers are ``{"type": "integer", "connect.type": "int8"|...}``, floats
``{"type": "number", "connect.type": "float32"|"float64"}``, bytes a string with
``"connect.type": "bytes"`` (base64; a Decimal with ``decimal.format=NUMERIC`` a number), a
struct an ``object`` whose properties carry ``"connect.index"`` (and
``"additionalProperties": false`` with ``object.additional.properties=false``), a map with string
keys an ``object`` with ``additionalProperties`` and ``"connect.type": "map"``, other maps an
array of ``{"key", "value"}`` objects, an optional schema ``{"oneOf": [{"type": "null"}, ...]}``,
a union struct (``io.confluent.connect.json.OneOf``) a ``oneOf`` of its members. A schema's name
is the ``title``, its doc the ``description``, its version ``connect.version``, its parameters
``connect.parameters``, its default ``default``.

JSON Schema to Connect reads those back, and reads schemas not written by Connect as Confluent
does: ``integer`` as INT64, ``number`` as FLOAT64, properties in order (or by ``connect.index``),
``oneOf``/``anyOf`` of ``null`` and one schema as that schema optional, other ``oneOf`` as a union
struct, ``enum`` as a string.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdk.data import Date, Decimal, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.errors import DataException

__all__: list[str] = []

NAMESPACE = "io.confluent.connect.json"
JSON_TYPE_ONE_OF = NAMESPACE + ".OneOf"
JSON_TYPE_ENUM = NAMESPACE + ".Enum"
CONNECT_TYPE = "connect.type"
CONNECT_INDEX = "connect.index"
CONNECT_VERSION = "connect.version"
CONNECT_PARAMETERS = "connect.parameters"
NULL_MARKER = "<NULL>"

_INT_TYPES = {
    SchemaType.INT8: "int8",
    SchemaType.INT16: "int16",
    SchemaType.INT32: "int32",
    SchemaType.INT64: "int64",
}
_FROM_CONNECT_TYPE = {
    "int8": SchemaType.INT8,
    "int16": SchemaType.INT16,
    "int32": SchemaType.INT32,
    "int64": SchemaType.INT64,
    "float32": SchemaType.FLOAT32,
    "float64": SchemaType.FLOAT64,
    "bytes": SchemaType.BYTES,
}


@dataclass(frozen=True)
class JsonSchemaDataConfig:
    """How Connect schemas map to JSON Schemas."""

    decimal_numeric: bool = False
    allow_additional_properties: bool = True
    use_optional_for_non_required: bool = False


def is_union(schema: Schema) -> bool:
    """Whether ``schema`` is a union struct (``io.confluent.connect.json.OneOf``)."""
    return schema.type is SchemaType.STRUCT and (schema.name or "").startswith(JSON_TYPE_ONE_OF)


# -- Connect schema -> JSON Schema ---------------------------------------------------------------
def from_connect_schema(
    schema: Schema,
    config: JsonSchemaDataConfig,
    index: int | None = None,
    ignore_optional: bool = False,
) -> dict[str, Any]:
    """The JSON Schema (a dict) of a Connect schema."""
    out: dict[str, Any]
    combined = False
    stype = schema.type
    if stype in _INT_TYPES:
        out = {"type": "integer", CONNECT_TYPE: _INT_TYPES[stype]}
    elif stype is SchemaType.FLOAT32:
        out = {"type": "number", CONNECT_TYPE: "float32"}
    elif stype is SchemaType.FLOAT64:
        out = {"type": "number", CONNECT_TYPE: "float64"}
    elif stype is SchemaType.BOOLEAN:
        out = {"type": "boolean"}
    elif stype is SchemaType.STRING:
        if JSON_TYPE_ENUM in schema.parameters:
            prefix = JSON_TYPE_ENUM + "."
            symbols: list[str | None] = [
                None if k[len(prefix) :] == NULL_MARKER else k[len(prefix) :]
                for k in schema.parameters
                if k.startswith(prefix)
            ]
            out = {"type": "string", "enum": symbols}
        else:
            out = {"type": "string"}
    elif stype is SchemaType.BYTES:
        numeric = schema.name == Decimal.LOGICAL_NAME and config.decimal_numeric
        out = {"type": "number" if numeric else "string", CONNECT_TYPE: "bytes"}
    elif stype is SchemaType.ARRAY:
        out = {"type": "array", "items": from_connect_schema(schema.value_schema, config)}
    elif stype is SchemaType.MAP:
        key = schema.key_schema
        if key.type is SchemaType.STRING and not key.optional:
            out = {
                "type": "object",
                "additionalProperties": from_connect_schema(schema.value_schema, config),
                CONNECT_TYPE: "map",
            }
        else:
            out = {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "key": from_connect_schema(key, config, 0),
                        "value": from_connect_schema(schema.value_schema, config, 1),
                    },
                },
                CONNECT_TYPE: "map",
            }
    elif stype is SchemaType.STRUCT:
        if is_union(schema):
            members = [
                from_connect_schema(_required(f.schema), config, f.index, True)
                for f in schema.fields
            ]
            if schema.optional:
                members.insert(0, {"type": "null"})
            out = {"oneOf": members}
            combined = True
        elif schema.optional and not ignore_optional:
            out = {"oneOf": [{"type": "null"}, from_connect_schema(_required(schema), config)]}
            combined = True
        else:
            properties = {
                f.name: from_connect_schema(f.schema, config, f.index) for f in schema.fields
            }
            out = {"type": "object", "properties": properties}
            if not config.allow_additional_properties:
                out["additionalProperties"] = False
    else:  # pragma: no cover - every SchemaType is handled
        raise DataException(f"Unsupported schema type {stype}")
    if not combined:
        if schema.name is not None:
            out["title"] = schema.name
        if schema.version is not None:
            out[CONNECT_VERSION] = schema.version
        if schema.doc is not None:
            out["description"] = schema.doc
        params = {k: v for k, v in schema.parameters.items() if not k.startswith(NAMESPACE)}
        if params:
            out[CONNECT_PARAMETERS] = params
        if schema.default_value is not None:
            out["default"] = from_connect_data(schema, schema.default_value, config)
        if schema.optional and not ignore_optional:
            wrapped: dict[str, Any] = {"oneOf": [{"type": "null"}, out]}
            if index is not None:
                wrapped[CONNECT_INDEX] = index
            return wrapped
    if index is not None:
        out[CONNECT_INDEX] = index
    return out


def _required(schema: Schema) -> Schema:
    if not schema.optional:
        return schema
    return Schema(
        schema.type,
        False,
        schema.default_value,
        schema.name,
        schema.version,
        schema.doc,
        schema.parameters,
        schema.fields if schema.type is SchemaType.STRUCT else None,
        schema.key_schema if schema.type is SchemaType.MAP else None,
        schema.value_schema if schema.type in (SchemaType.MAP, SchemaType.ARRAY) else None,
    )


# -- Connect value -> JSON -----------------------------------------------------------------------
def from_connect_data(schema: Schema, value: Any, config: JsonSchemaDataConfig) -> Any:
    """The JSON value (a tree of dicts, lists, str, int, float, bool, None) of a Connect value.

    Decimals with ``decimal.format=NUMERIC`` stay :class:`decimal.Decimal` (written as numbers).
    """
    if value is None:
        return None
    name = schema.name
    stype = schema.type
    if name is not None:
        if name == Decimal.LOGICAL_NAME:
            if config.decimal_numeric:
                return value
            return base64.b64encode(Decimal.from_logical(schema, value)).decode("ascii")
        if name == Date.LOGICAL_NAME and isinstance(value, _dt.date):
            return Date.from_logical(schema, value)
        if name == Time.LOGICAL_NAME and isinstance(value, _dt.time):
            return Time.from_logical(schema, value)
        if name == Timestamp.LOGICAL_NAME and isinstance(value, _dt.datetime):
            return Timestamp.from_logical(schema, value)
    if stype is SchemaType.BYTES:
        return base64.b64encode(bytes(value)).decode("ascii")
    if stype is SchemaType.ARRAY:
        vs = schema.value_schema
        return [from_connect_data(vs, v, config) for v in value]
    if stype is SchemaType.MAP:
        ks, vs = schema.key_schema, schema.value_schema
        if ks.type is SchemaType.STRING and not ks.optional:
            return {k: from_connect_data(vs, v, config) for k, v in value.items()}
        return [
            {"key": from_connect_data(ks, k, config), "value": from_connect_data(vs, v, config)}
            for k, v in value.items()
        ]
    if stype is SchemaType.STRUCT:
        struct: Struct = value
        if is_union(schema):
            for f in schema.fields:
                member = struct.get(f)
                if member is not None:
                    return from_connect_data(f.schema, member, config)
            raise DataException("Cannot find non-null field in the union")
        out: dict[str, Any] = {}
        for f in schema.fields:
            v = struct.get(f)
            if v is not None:
                out[f.name] = from_connect_data(f.schema, v, config)
        return out
    return value


# -- JSON Schema -> Connect schema ---------------------------------------------------------------
def to_connect_schema(
    node: Any, version: int | None = None, force_optional: bool = False, *, root: Any = None
) -> Schema:
    """The Connect schema of a JSON Schema (a parsed dict).

    Raises:
        DataException: the JSON Schema has no Connect form (no type, unsupported keywords).
    """
    root = node if root is None else root
    if node is True or node == {}:
        raise DataException("a JSON Schema that allows any value has no Connect schema")
    if not isinstance(node, Mapping):
        raise DataException(f"not a JSON Schema: {node!r}")
    if "$ref" in node:
        return to_connect_schema(
            _resolve_ref(root, node["$ref"]), version, force_optional, root=root
        )
    builder: SchemaBuilder
    for combiner in ("oneOf", "anyOf"):
        if combiner in node:
            subs = list(node[combiner])
            non_null = [s for s in subs if not _is_null(s)]
            if len(subs) == 2 and len(non_null) == 1:
                return to_connect_schema(non_null[0], version, True, root=root)
            builder = SchemaBuilder.struct().name(JSON_TYPE_ONE_OF)
            for i, sub in enumerate(non_null):
                builder.field(
                    f"{JSON_TYPE_ONE_OF}.field.{i}", to_connect_schema(sub, None, True, root=root)
                )
            if len(non_null) != len(subs):
                builder.optional()
            return _finish(builder, node, version, force_optional, named=True)
    if "allOf" in node:
        subs = list(node["allOf"])
        if len(subs) == 1:
            return to_connect_schema(subs[0], version, force_optional, root=root)
        raise DataException("allOf with more than one schema has no Connect schema here")
    jtype = node.get("type")
    if isinstance(jtype, list):
        types = [t for t in jtype if t != "null"]
        if len(types) != 1:
            raise DataException(f"a JSON Schema of types {jtype} has no Connect schema")
        optional = len(types) != len(jtype)
        return to_connect_schema(
            {**node, "type": types[0]}, version, force_optional or optional, root=root
        )
    if "enum" in node or "const" in node:
        values = list(node["enum"]) if "enum" in node else [node["const"]]
        builder = SchemaBuilder.string().parameter(JSON_TYPE_ENUM, "")
        for v in values:
            symbol = NULL_MARKER if v is None else str(v)
            builder.parameter(f"{JSON_TYPE_ENUM}.{symbol}", symbol)
        return _finish(builder, node, version, force_optional)
    connect_type = node.get(CONNECT_TYPE)
    if jtype == "boolean":
        builder = SchemaBuilder.boolean()
    elif jtype in ("integer", "number"):
        if connect_type is None:
            builder = SchemaBuilder.int64() if jtype == "integer" else SchemaBuilder.float64()
        elif connect_type in _FROM_CONNECT_TYPE:
            builder = SchemaBuilder.type(_FROM_CONNECT_TYPE[connect_type])
        else:
            raise DataException(f"Unsupported {CONNECT_TYPE} {connect_type!r}")
    elif jtype == "string":
        builder = SchemaBuilder.bytes() if connect_type == "bytes" else SchemaBuilder.string()
    elif jtype == "array":
        items = node.get("items")
        if items is None:
            raise DataException("Array schema did not specify the items type")
        if connect_type == "map" and isinstance(items, Mapping):
            props = items.get("properties", {})
            builder = SchemaBuilder.map(
                to_connect_schema(props.get("key"), root=root),
                to_connect_schema(props.get("value"), root=root),
            )
        else:
            builder = SchemaBuilder.array(to_connect_schema(items, root=root))
    elif jtype == "object" or "properties" in node:
        if connect_type == "map":
            builder = SchemaBuilder.map(
                Schema.STRING_SCHEMA,
                to_connect_schema(node.get("additionalProperties"), root=root),
            )
        else:
            builder = SchemaBuilder.struct()
            props = node.get("properties", {})
            indexed = sorted(
                enumerate(props.items()),
                key=lambda item: (
                    item[1][1].get(CONNECT_INDEX, item[0])
                    if isinstance(item[1][1], Mapping)
                    else item[0]
                ),
            )
            for _, (name, sub) in indexed:
                builder.field(name, to_connect_schema(sub, root=root))
    else:
        raise DataException(f"a JSON Schema of type {jtype!r} has no Connect schema")
    return _finish(builder, node, version, force_optional)


def _finish(
    builder: SchemaBuilder,
    node: Mapping[str, Any],
    version: int | None,
    force_optional: bool,
    named: bool = False,
) -> Schema:
    title = node.get("title")
    if isinstance(title, str) and not named:
        builder.name(title)
    connect_version = node.get(CONNECT_VERSION)
    if isinstance(connect_version, int):
        builder.version(connect_version)
    elif version is not None:
        builder.version(version)
    if isinstance(node.get("description"), str):
        builder.doc(node["description"])
    params = node.get(CONNECT_PARAMETERS)
    if isinstance(params, Mapping):
        builder.parameters({str(k): str(v) for k, v in params.items()})
    if force_optional:
        builder.optional()
    if "default" in node and node["default"] is not None:
        probe = builder.build()
        builder.default_value(to_connect_data(probe, node["default"]))
    return builder.build()


def _is_null(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null" and len(node) == 1


def _resolve_ref(root: Any, ref: str) -> Any:
    if not ref.startswith("#"):
        raise DataException(f"a reference to another document ({ref}) is not supported")
    target = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            raise DataException(f"unresolvable reference {ref}")
        target = target[part]
    return target


# -- JSON -> Connect value -----------------------------------------------------------------------
def to_connect_data(schema: Schema, value: Any) -> Any:
    """The Connect value of a JSON value, for ``schema``.

    Raises:
        DataException: the JSON does not fit the schema.
    """
    if value is None:
        return None
    name = schema.name
    stype = schema.type
    try:
        if name == Decimal.LOGICAL_NAME:
            if isinstance(value, str):
                return Decimal.to_logical(schema, base64.b64decode(value, validate=True))
            scale = Decimal.scale(schema)
            return _decimal.Decimal(str(value)).quantize(_decimal.Decimal(1).scaleb(-scale))
        if name == Date.LOGICAL_NAME:
            return Date.to_logical(schema, int(value))
        if name == Time.LOGICAL_NAME:
            return Time.to_logical(schema, int(value))
        if name == Timestamp.LOGICAL_NAME:
            return Timestamp.to_logical(schema, int(value))
        if stype in _INT_TYPES:
            if isinstance(value, bool) or not isinstance(value, (int, float, _decimal.Decimal)):
                raise DataException(f"expected an integer for {stype.name}, found {value!r}")
            return int(value)
        if stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            if isinstance(value, bool) or not isinstance(value, (int, float, _decimal.Decimal)):
                raise DataException(f"expected a number for {stype.name}, found {value!r}")
            return float(value)
        if stype is SchemaType.BOOLEAN:
            if not isinstance(value, bool):
                raise DataException(f"expected a boolean, found {value!r}")
            return value
        if stype is SchemaType.STRING:
            if not isinstance(value, str):
                raise DataException(f"expected a string, found {value!r}")
            return value
        if stype is SchemaType.BYTES:
            return base64.b64decode(value, validate=True)
        if stype is SchemaType.ARRAY:
            vs = schema.value_schema
            return [to_connect_data(vs, v) for v in value]
        if stype is SchemaType.MAP:
            ks, vs = schema.key_schema, schema.value_schema
            if ks.type is SchemaType.STRING and not ks.optional:
                if not isinstance(value, Mapping):
                    raise DataException("Maps with string fields should be encoded as JSON objects")
                return {k: to_connect_data(vs, v) for k, v in value.items()}
            return {
                to_connect_data(ks, e.get("key")): to_connect_data(vs, e.get("value"))
                for e in value
            }
        if stype is SchemaType.STRUCT:
            if is_union(schema):
                return _union_value(schema, value)
            if not isinstance(value, Mapping):
                raise DataException(
                    f"Structs should be encoded as JSON objects, but found {type(value).__name__}"
                )
            struct = Struct(schema)
            for f in schema.fields:
                v = to_connect_data(f.schema, value.get(f.name))
                if v is not None:
                    struct.put(f, v)
            return struct
    except (ValueError, TypeError, AttributeError, _decimal.InvalidOperation) as exc:
        raise DataException(f"invalid JSON for {stype.name}: {exc}") from exc
    raise DataException(f"Unsupported schema type {stype}")  # pragma: no cover


def _matches(schema: Schema, value: Any) -> bool:
    stype = schema.type
    if stype in _INT_TYPES:
        return isinstance(value, int) and not isinstance(value, bool)
    if stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return isinstance(value, (int, float, _decimal.Decimal)) and not isinstance(value, bool)
    if stype is SchemaType.BOOLEAN:
        return isinstance(value, bool)
    if stype in (SchemaType.STRING, SchemaType.BYTES):
        return isinstance(value, str)
    if stype is SchemaType.ARRAY:
        return isinstance(value, list)
    if stype is SchemaType.MAP:
        return isinstance(value, (dict, list))
    return False


def _union_value(schema: Schema, value: Any) -> Struct:
    best = None
    best_matching = 0
    for f in schema.fields:
        if f.schema.type is not SchemaType.STRUCT and _matches(f.schema, value):
            return Struct(schema).put(f, to_connect_data(f.schema, value))
        if f.schema.type is SchemaType.STRUCT and isinstance(value, Mapping):
            matching = sum(1 for g in f.schema.fields if g.name in value)
            if matching > best_matching:
                best, best_matching = f, matching
    if best is None:
        raise DataException("Did not find matching oneof field for data")
    return Struct(schema).put(best, to_connect_data(best.schema, value))


def record_name(json_schema: Mapping[str, Any]) -> str | None:
    """The record name of a JSON Schema (its title), for the record name strategies."""
    title = json_schema.get("title")
    if title is None and "oneOf" in json_schema:
        for sub in json_schema["oneOf"]:
            if isinstance(sub, Mapping) and sub.get("title"):
                return str(sub["title"])
    return str(title) if title is not None else None
