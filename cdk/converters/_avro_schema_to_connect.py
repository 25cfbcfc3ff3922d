"""Avro schema JSON → Connect schema, as Confluent's ``AvroData.toConnectSchema``.

Reads the ``connect.*`` properties a Connect converter wrote (name, version, doc, parameters,
default, int8/int16) and also Avro schemas no Connect converter wrote: unions of ``null`` and one
type become optional schemas, other unions become ``io.confluent.connect.avro.Union`` structs,
enums become strings with their symbols as parameters, and arrays of ``MapEntry`` records become
maps.
"""

from __future__ import annotations

from typing import Any

from cdk.converters._avro_common import (
    AVRO_ENUM_DEFAULT_PREFIX_PROP,
    AVRO_ENUM_DOC_PREFIX_PROP,
    AVRO_FIELD_DEFAULT_FLAG_PROP,
    AVRO_FIELD_DOC_PREFIX_PROP,
    AVRO_PROP,
    AVRO_RECORD_DOC_PROP,
    AVRO_TYPE_ENUM,
    AVRO_TYPE_UNION,
    CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT,
    CONNECT_AVRO_DECIMAL_PRECISION_PROP,
    CONNECT_AVRO_FIXED_SIZE_PROP,
    CONNECT_DEFAULT_VALUE_PROP,
    CONNECT_DOC_PROP,
    CONNECT_INTERNAL_TYPE_NAME,
    CONNECT_NAME_PROP,
    CONNECT_PARAMETERS_PROP,
    CONNECT_TYPE_PROP,
    CONNECT_VERSION_PROP,
    DEFAULT_SCHEMA_FULL_NAME,
    LOGICAL_TYPE_PROP,
    MAP_ENTRY_TYPE_NAME,
    NAMESPACE,
    NO_DEFAULT,
    AvroDataConfig,
    entry_fields,
    member_field_name,
    node_props,
    type_of,
)
from cdk.converters._avro_defaults import default_from_json
from cdk.data import Date, Decimal, Schema, SchemaBuilder, Time, Timestamp
from cdk.errors import DataException, SchemaBuilderException

__all__ = ["avro_to_connect_schema"]


def avro_to_connect_schema(config: AvroDataConfig, resolved: Any, version: int | None) -> Schema:
    """The Connect schema for a resolved Avro schema.

    Args:
        config: the mapping settings.
        resolved: the Avro schema as :func:`~cdk.converters._avro_names.resolve_avro_schema`
            returns it.
        version: the Schema Registry version, used when the schema has no ``connect.version``.
    """
    return _to_connect_schema(config, resolved, False, NO_DEFAULT, version)


def _to_connect_schema(
    config: AvroDataConfig,
    node: Any,
    force_optional: bool,
    field_default: Any,
    version: int | None = None,
) -> Schema:
    meta = config.connect_meta_data
    props = node_props(node)
    atype = type_of(node)
    connect_type = props.get(CONNECT_TYPE_PROP)
    logical = props.get(LOGICAL_TYPE_PROP)
    logical = logical.lower() if isinstance(logical, str) else None
    builder: SchemaBuilder
    if atype == "boolean":
        builder = SchemaBuilder.boolean()
    elif atype in ("bytes", "fixed"):
        if logical == "decimal":
            scale = props.get("scale")
            builder = Decimal.builder(scale if isinstance(scale, int) else 0)
            precision = props.get("precision")
            if precision is not None:
                if not isinstance(precision, int) or isinstance(precision, bool):
                    raise DataException("precision property must be a JSON Integer.")
                if precision != CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT:
                    builder.parameter(CONNECT_AVRO_DECIMAL_PRECISION_PROP, str(precision))
        else:
            builder = SchemaBuilder.bytes()
        if atype == "fixed":
            builder.parameter(CONNECT_AVRO_FIXED_SIZE_PROP, str(node["size"]))
    elif atype == "double":
        builder = SchemaBuilder.float64()
    elif atype == "float":
        builder = SchemaBuilder.float32()
    elif atype == "int":
        if connect_type is None and logical is None:
            builder = SchemaBuilder.int32()
        elif logical is not None:
            if logical == "date":
                builder = Date.builder()
            elif logical == "time-millis":
                builder = Time.builder()
            else:
                builder = SchemaBuilder.int32()
        elif connect_type == "int8":
            builder = SchemaBuilder.int8()
        elif connect_type == "int16":
            builder = SchemaBuilder.int16()
        else:
            raise DataException(f"Unknown connect.type annotation for Avro int: {connect_type}")
    elif atype == "long":
        builder = Timestamp.builder() if logical == "timestamp-millis" else SchemaBuilder.int64()
    elif atype == "string":
        builder = SchemaBuilder.string()
    elif atype == "array":
        items = node["items"]
        if _is_map_entry(items):
            kf, vf = entry_fields(items)
            builder = SchemaBuilder.map(
                _to_connect_schema(config, kf, False, NO_DEFAULT),
                _to_connect_schema(config, vf, False, NO_DEFAULT),
            )
        else:
            builder = SchemaBuilder.array(_to_connect_schema(config, items, False, NO_DEFAULT))
    elif atype == "map":
        builder = SchemaBuilder.map(
            Schema.STRING_SCHEMA, _to_connect_schema(config, node["values"], False, NO_DEFAULT)
        )
    elif atype in ("record", "error"):
        builder = SchemaBuilder.struct()
        doc = node.get("doc")
        if meta and doc is not None:
            builder.parameter(AVRO_RECORD_DOC_PROP, doc)
        for f in node.get("fields", []):
            fdoc = f.get("doc")
            if meta and fdoc is not None:
                builder.parameter(AVRO_FIELD_DOC_PREFIX_PROP + f["name"], fdoc)
            fdefault = f.get("default", NO_DEFAULT)
            builder.field(f["name"], _to_connect_schema(config, f["type"], False, fdefault))
    elif atype == "enum":
        builder = SchemaBuilder.string()
        full = str(node["name"])
        short = full.rpartition(".")[2]
        if meta:
            if node.get("doc") is not None:
                builder.parameter(AVRO_ENUM_DOC_PREFIX_PROP + short, node["doc"])
            if node.get("default") is not None:
                builder.parameter(AVRO_ENUM_DEFAULT_PREFIX_PROP + short, node["default"])
        builder.parameter(AVRO_TYPE_ENUM, full)
        for sym in node.get("symbols", []):
            builder.parameter(f"{AVRO_TYPE_ENUM}.{sym}", sym)
    elif atype == "union":
        members: list[Any] = node
        if len(members) == 2 and "null" in [type_of(m) for m in members]:
            other = next(m for m in members if type_of(m) != "null")
            return _to_connect_schema(config, other, True, NO_DEFAULT)
        builder = SchemaBuilder.struct().name(AVRO_TYPE_UNION)
        seen: set[str] = set()
        for member in members:
            if type_of(member) == "null":
                if not builder.is_optional:
                    builder.optional()
                continue
            fname = member_field_name(config, member)
            if fname in seen:
                raise DataException("Multiple union schemas map to the Connect union field name")
            seen.add(fname)
            builder.field(fname, _to_connect_schema(config, member, True, NO_DEFAULT))
    elif atype == "null":
        raise DataException("Standalone null schemas are not supported by this converter")
    else:
        raise DataException(f"Couldn't translate unsupported schema type {atype}.")

    doc_val = props.get(CONNECT_DOC_PROP)
    if meta and doc_val is not None:
        builder.doc(str(doc_val))
    version_node = props.get(CONNECT_VERSION_PROP)
    version_int: int | None = None
    if version_node is not None:
        if not isinstance(version_node, int) or isinstance(version_node, bool):
            raise DataException(f"Invalid Connect version found: {version_node}")
        version_int = version_node
    elif version is not None:
        version_int = version
    if version_int is not None and version_int >= 0:
        current = builder.build().version
        if current is not None:
            if current != version_int:
                raise DataException(
                    f"Mismatched versions: version already added to SchemaBuilder ({current})"
                    f" differs from version in source schema ({version_int})"
                )
        else:
            builder.version(version_int)
    parameters = props.get(CONNECT_PARAMETERS_PROP)
    if meta and parameters is not None:
        if not isinstance(parameters, dict):
            raise DataException(
                f"Expected JSON object for schema parameters but found: {parameters}"
            )
        for k, v in parameters.items():
            if not isinstance(v, str):
                raise DataException(
                    f"Expected schema parameter values to be strings but found: {v}"
                )
            builder.parameter(k, v)
    for k, v in props.items():
        if k.startswith(AVRO_PROP):
            builder.parameter(k, v if isinstance(v, str) else _json_text(v))
    name_json = props.get(CONNECT_NAME_PROP)
    name: str | None = None
    if name_json is not None:
        if not isinstance(name_json, str):
            raise DataException(f"Invalid schema name: {name_json}")
        name = name_json
    elif atype in ("record", "error", "enum", "fixed"):
        name = str(node["name"])
    if name is not None and not name.startswith(DEFAULT_SCHEMA_FULL_NAME):
        current_name = builder.build().name
        if current_name is not None:
            if current_name != name:
                raise DataException(
                    f"Mismatched names: name already added to SchemaBuilder ({current_name})"
                    f" differs from name in source schema ({name})"
                )
        else:
            builder.name(name)
    if force_optional and not builder.is_optional:
        builder.optional()
    connect_default = props.get(CONNECT_DEFAULT_VALUE_PROP, NO_DEFAULT)
    default_json = field_default
    if field_default is NO_DEFAULT:
        default_json = connect_default
    elif connect_default is NO_DEFAULT and meta:
        builder.parameter(AVRO_FIELD_DEFAULT_FLAG_PROP, "true")
    if default_json is not NO_DEFAULT and default_json is not None:
        try:
            default = default_from_json(config, builder.build(), node, default_json)
            if default is not None:
                builder.default_value(default)
        except (DataException, SchemaBuilderException, ValueError, TypeError, KeyError):
            pass  # Confluent ignores a default it cannot read
    return builder.build()


def _is_map_entry(node: Any) -> bool:
    if type_of(node) != "record":
        return False
    if node.get("name") == f"{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}":
        return True
    return bool(node.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME)


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))
