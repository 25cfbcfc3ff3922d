"""Connect default values as Avro JSON and back, as Confluent encodes them.

A default travels in the Avro schema: as a record field's ``default`` and, with
``connect.meta.data``, as the ``connect.default`` property. Bytes are written as ISO-8859-1
strings, maps with non-string keys as arrays of ``[key, value]`` pairs, a Connect union by the
value of its set member.
"""

from __future__ import annotations

from typing import Any

from cdk.converters._avro_common import (
    KEY_FIELD,
    VALUE_FIELD,
    AvroDataConfig,
    entry_fields,
    is_union_schema,
    member_field_name,
    non_null_member,
    to_avro_logical,
    to_connect_logical,
    type_of,
)
from cdk.converters._avro_names import scrub_name
from cdk.data import Schema, SchemaType, Struct
from cdk.errors import DataException

__all__ = ["default_from_json", "default_to_json"]


def default_to_json(config: AvroDataConfig, schema: Schema, value: Any) -> Any:
    """A Connect default value as Avro JSON (Confluent's encoding)."""
    if value is None:
        return None
    value = to_avro_logical(schema, value)
    stype = schema.type
    if stype in (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64):
        return int(value)
    if stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return float(value)
    if stype in (SchemaType.BOOLEAN, SchemaType.STRING):
        return value
    if stype is SchemaType.BYTES:
        return bytes(value).decode("latin-1")
    if stype is SchemaType.ARRAY:
        return [default_to_json(config, schema.value_schema, v) for v in value]
    if stype is SchemaType.MAP:
        ks = schema.key_schema
        if ks.type is SchemaType.STRING and not ks.optional:
            return {k: default_to_json(config, schema.value_schema, v) for k, v in value.items()}
        return [
            [default_to_json(config, ks, k), default_to_json(config, schema.value_schema, v)]
            for k, v in value.items()
        ]
    struct: Struct = value
    if is_union_schema(schema):
        for f in schema.fields:
            member = struct.get(f)
            if member is not None:
                return default_to_json(config, f.schema, member)
        return None
    out: dict[str, Any] = {}
    for f in schema.fields:
        name = scrub_name(f.name) if config.scrub_invalid_names else f.name
        out[name] = default_to_json(config, f.schema, struct.get(f))
    return out


def default_from_json(config: AvroDataConfig, schema: Schema, node: Any, value: Any) -> Any:
    """A Connect default value from Avro JSON (field ``default`` or ``connect.default``)."""
    if value is None:
        return None
    atype = type_of(node)
    result: Any
    if atype == "union":
        if is_union_schema(schema):
            first = node[0]
            if type_of(first) == "null":
                return None
            f = schema.field(member_field_name(config, first))
            if f is None:
                return None
            inner = default_from_json(config, f.schema, first, value)
            return Struct(schema).put(f, inner)
        return default_from_json(config, schema, non_null_member(node), value)
    if atype == "int" or atype == "long":
        result = int(value)
    elif atype in ("float", "double"):
        result = float(value)
    elif atype == "boolean":
        result = bool(value)
    elif atype in ("string", "enum"):
        result = str(value)
    elif atype in ("bytes", "fixed"):
        result = value.encode("latin-1") if isinstance(value, str) else bytes(value)
    elif atype == "array":
        items = node["items"]
        if schema.type is SchemaType.MAP:
            kf, vf = entry_fields(items)
            out: dict[Any, Any] = {}
            for entry in value:
                if isinstance(entry, dict):
                    k, v = entry.get(KEY_FIELD), entry.get(VALUE_FIELD)
                else:
                    k, v = entry
                out[default_from_json(config, schema.key_schema, kf, k)] = default_from_json(
                    config, schema.value_schema, vf, v
                )
            result = out
        else:
            if not isinstance(value, list):
                raise DataException(f"Invalid JSON for array default value: {value}")
            result = [default_from_json(config, schema.value_schema, items, v) for v in value]
    elif atype == "map":
        if not isinstance(value, dict):
            raise DataException(f"Invalid JSON for map default value: {value}")
        result = {
            k: default_from_json(config, schema.value_schema, node["values"], v)
            for k, v in value.items()
        }
    elif atype in ("record", "error"):
        if not isinstance(value, dict):
            raise DataException(f"Invalid JSON for record default value: {value}")
        struct = Struct(schema)
        for avro_field in node.get("fields", []):
            f = schema.field(avro_field["name"])
            if f is None:
                continue
            struct.put(
                f, default_from_json(config, f.schema, avro_field["type"], value.get(f.name))
            )
        return struct
    else:
        return None
    return to_connect_logical(schema, result)
