"""Connect schema → Avro schema JSON, as Confluent's ``AvroData.fromConnectSchema``.

Each Connect type gets its Avro form; with ``connect.meta.data`` the schema's doc, version,
parameters, default, name and int8/int16 type travel as ``connect.*`` properties so the trip back
is lossless. Optional schemas become unions with ``null``, maps with non-string keys become arrays
of ``MapEntry`` records, and unnamed records get numbered ``ConnectDefault`` names. The result is
laid out as Avro's Java ``Schema.toString`` lays it out (see :func:`java_layout`).
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
    DEFAULT_SCHEMA_NAME,
    KEY_FIELD,
    LOGICAL_TYPE_PROP,
    MAP_ENTRY_TYPE_NAME,
    NAMED_TYPES,
    NAMESPACE,
    NO_DEFAULT,
    PRIMITIVE_TYPES,
    VALUE_FIELD,
    AvroDataConfig,
    is_union_schema,
    type_of,
)
from cdk.converters._avro_defaults import default_to_json
from cdk.converters._avro_names import NAME_RE, NameRef, full_name_of, java_layout, scrub_name
from cdk.data import Date, Decimal, Schema, SchemaType, Time, Timestamp
from cdk.errors import DataException

__all__ = ["connect_to_avro_schema"]

_AVRO_TYPE_OF: dict[SchemaType, str] = {
    SchemaType.INT8: "int",
    SchemaType.INT16: "int",
    SchemaType.INT32: "int",
    SchemaType.INT64: "long",
    SchemaType.FLOAT32: "float",
    SchemaType.FLOAT64: "double",
    SchemaType.BOOLEAN: "boolean",
    SchemaType.STRING: "string",
    SchemaType.BYTES: "bytes",
    SchemaType.ARRAY: "array",
    SchemaType.MAP: "map",
}


class _FromConnectContext:
    def __init__(self, config: AvroDataConfig) -> None:
        self.config = config
        self.schema_map: dict[Schema, Any] = {}
        self.defined: dict[str, Schema | None] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.name_index = 0
        self.map_entry_index = 1


def connect_to_avro_schema(config: AvroDataConfig, schema: Schema) -> Any:
    """The Avro schema (JSON structure, Java layout) for a Connect schema.

    Raises:
        DataException: the schema has no faithful Avro form (an invalid name with
            ``scrub.invalid.names`` off, a named type defined twice differently, ...).
    """
    ctx = _FromConnectContext(config)
    tree = _from_connect(schema, ctx, ignore_optional=False)
    return java_layout(tree, None)


def _split(config: AvroDataConfig, full_name: str, what: str) -> tuple[str | None, str]:
    parts = full_name.split(".")
    if config.scrub_invalid_names:
        parts = [scrub_name(p) for p in parts]
    for part in parts:
        if not NAME_RE.fullmatch(part):
            raise DataException(
                f"Cannot convert Connect {what} name '{full_name}' to Avro: '{part}' is not a "
                f"valid Avro name ([A-Za-z_][A-Za-z0-9_]*); set scrub.invalid.names=true to "
                f"replace invalid characters"
            )
    if len(parts) == 1:
        return None, parts[0]
    return ".".join(parts[:-1]), parts[-1]


def _name_or_default(ctx: _FromConnectContext, name: str | None) -> tuple[str | None, str]:
    if name is not None:
        return _split(ctx.config, name, "schema")
    ctx.name_index += 1
    suffix = str(ctx.name_index) if ctx.name_index > 1 else ""
    return NAMESPACE, DEFAULT_SCHEMA_NAME + suffix


def _define(
    ctx: _FromConnectContext, namespace: str | None, name: str, schema: Schema | None
) -> None:
    full = f"{namespace}.{name}" if namespace else name
    if full in ctx.defined or full in PRIMITIVE_TYPES:
        raise DataException(
            f"Cannot convert Connect schema to Avro: the name '{full}' would name two "
            f"different Avro types, and Avro allows one definition per full name"
        )
    ctx.defined[full] = schema


def _field_name(config: AvroDataConfig, name: str) -> str:
    if config.scrub_invalid_names:
        name = scrub_name(name)
    if not NAME_RE.fullmatch(name):
        raise DataException(
            f"Cannot convert Connect field name '{name}' to Avro: it is not a valid Avro name "
            f"([A-Za-z_][A-Za-z0-9_]*); set scrub.invalid.names=true to replace invalid "
            f"characters",
            field=name,
        )
    return name


def _from_connect_cycle(schema: Schema, ctx: _FromConnectContext, ignore: bool) -> Any:
    return _from_connect(schema, ctx, ignore_optional=ignore)


def _from_connect(schema: Schema, ctx: _FromConnectContext, *, ignore_optional: bool) -> Any:
    union_struct = is_union_schema(schema)
    if not union_struct and not schema.optional:
        cached = ctx.schema_map.get(schema)
        if cached is not None:
            name = full_name_of(cached)
            return NameRef(name) if name is not None else cached
    meta = ctx.config.connect_meta_data
    connect_type: str | None = None
    base: Any
    props: dict[str, Any] = {}
    stype = schema.type
    params = schema.parameters
    if stype in (SchemaType.INT8, SchemaType.INT16):
        connect_type = stype.value
        base = {"type": "int"}
    elif stype in (
        SchemaType.INT32,
        SchemaType.INT64,
        SchemaType.FLOAT32,
        SchemaType.FLOAT64,
        SchemaType.BOOLEAN,
    ):
        base = {"type": _AVRO_TYPE_OF[stype]}
    elif stype is SchemaType.STRING:
        if ctx.config.enhanced_avro_schema_support and AVRO_TYPE_ENUM in params:
            enum_full = params[AVRO_TYPE_ENUM]
            space, name = _split(ctx.config, enum_full, "enum")
            _define(ctx, space, name, None)
            prefix = AVRO_TYPE_ENUM + "."
            symbols = [k[len(prefix) :] for k in params if k.startswith(prefix)]
            for sym in symbols:
                if not NAME_RE.fullmatch(sym):
                    raise DataException(
                        f"Cannot convert enum symbol '{sym}' of '{enum_full}' to Avro: it is "
                        f"not a valid Avro name"
                    )
            base = {"type": "enum", "name": name, "namespace": space}
            doc = params.get(AVRO_ENUM_DOC_PREFIX_PROP + name)
            if doc is not None:
                base["doc"] = doc
            base["symbols"] = symbols
            default_symbol = params.get(AVRO_ENUM_DEFAULT_PREFIX_PROP + name)
            if default_symbol is not None:
                base["default"] = default_symbol
        else:
            base = {"type": "string"}
    elif stype is SchemaType.BYTES:
        if _is_fixed_schema(schema):
            space, name = _name_or_default(ctx, schema.name)
            _define(ctx, space, name, schema)
            base = {
                "type": "fixed",
                "name": name,
                "namespace": space,
                "size": int(params[CONNECT_AVRO_FIXED_SIZE_PROP]),
            }
        else:
            base = {"type": "bytes"}
        if schema.name == Decimal.LOGICAL_NAME:
            base["scale"] = Decimal.scale(schema)
            base["precision"] = _decimal_precision(schema)
    elif stype is SchemaType.ARRAY:
        base = {
            "type": "array",
            "items": _from_connect_cycle(schema.value_schema, ctx, False),
        }
    elif stype is SchemaType.MAP:
        key_schema = schema.key_schema
        if key_schema.type is SchemaType.STRING and not key_schema.optional:
            values = _from_connect_cycle(schema.value_schema, ctx, False)
            base = {"type": "map", "values": values}
        else:
            entry: dict[str, Any]
            if schema.name is None:
                name = MAP_ENTRY_TYPE_NAME
                full = f"{NAMESPACE}.{name}"
                if full in ctx.defined:
                    # Avro allows one definition per name: a second, different map gets a
                    # numbered name, marked as a map entry so Confluent's readers see a map.
                    ctx.map_entry_index += 1
                    name = f"{MAP_ENTRY_TYPE_NAME}{ctx.map_entry_index}"
                    entry = {"type": "record", "name": name, "namespace": NAMESPACE}
                    entry_props = {CONNECT_INTERNAL_TYPE_NAME: MAP_ENTRY_TYPE_NAME}
                else:
                    entry = {"type": "record", "name": name, "namespace": NAMESPACE}
                    entry_props = {}
                _define(ctx, NAMESPACE, name, schema)
            else:
                space, name = _name_or_default(ctx, schema.name)
                _define(ctx, space, name, schema)
                entry = {"type": "record", "name": name, "namespace": space}
                entry_props = {CONNECT_INTERNAL_TYPE_NAME: MAP_ENTRY_TYPE_NAME}
            entry["fields"] = [
                _record_field(KEY_FIELD, key_schema, None, ctx),
                _record_field(VALUE_FIELD, schema.value_schema, None, ctx),
            ]
            entry.update(entry_props)
            base = {"type": "array", "items": entry}
    elif stype is SchemaType.STRUCT:
        if union_struct:
            members: list[Any] = ["null"] if schema.optional else []
            for f in schema.fields:
                members.append(_from_connect_cycle(_non_optional(f.schema), ctx, True))
            base = members
        elif schema.optional:
            base = ["null", _from_connect_cycle(_non_optional(schema), ctx, False)]
        else:
            space, name = _name_or_default(ctx, schema.name)
            _define(ctx, space, name, schema)
            base = {"type": "record", "name": name, "namespace": space}
            doc = params.get(AVRO_RECORD_DOC_PROP)
            if doc is not None:
                base["doc"] = doc
            fields = []
            seen: set[str] = set()
            for f in schema.fields:
                avro_name = _field_name(ctx.config, f.name)
                if avro_name in seen:
                    raise DataException(
                        f"Cannot convert Connect schema to Avro: two fields map to the Avro "
                        f"field name '{avro_name}'",
                        field=f.name,
                    )
                seen.add(avro_name)
                fdoc = params.get(AVRO_FIELD_DOC_PREFIX_PROP + f.name)
                fields.append(_record_field(avro_name, f.schema, fdoc, ctx))
            base["fields"] = fields
    else:  # pragma: no cover - every SchemaType is handled above
        raise DataException(f"Unknown schema type: {stype}")

    final: Any = base
    if not isinstance(base, list):
        if meta:
            if schema.doc is not None:
                props[CONNECT_DOC_PROP] = schema.doc
            if schema.version is not None:
                props[CONNECT_VERSION_PROP] = schema.version
            connect_params = {k: v for k, v in params.items() if k != AVRO_FIELD_DEFAULT_FLAG_PROP}
            if connect_params:
                props[CONNECT_PARAMETERS_PROP] = connect_params
            if schema.default_value is not None and AVRO_FIELD_DEFAULT_FLAG_PROP not in params:
                props[CONNECT_DEFAULT_VALUE_PROP] = default_to_json(
                    ctx.config, schema, schema.default_value
                )
            if schema.name is not None:
                props[CONNECT_NAME_PROP] = schema.name
            if connect_type is not None:
                props[CONNECT_TYPE_PROP] = connect_type
        logical = _logical_type_of(schema)
        if logical is not None:
            props[LOGICAL_TYPE_PROP] = logical
        for k, v in params.items():
            if k.startswith(AVRO_PROP) and k not in base:
                props[k] = v
        if isinstance(base, dict):
            for k, v in props.items():
                base.setdefault(k, v)
        if not ignore_optional and schema.optional:
            final = [base, "null"] if schema.default_value is not None else ["null", base]
    if isinstance(base, dict) and base.get("type") in NAMED_TYPES:
        space = base.get("namespace")
        ctx.nodes[f"{space}.{base['name']}" if space else base["name"]] = base
    if stype is SchemaType.MAP and isinstance(base, dict) and base["type"] == "array":
        entry_node = base["items"]
        space = entry_node.get("namespace")
        ctx.nodes[f"{space}.{entry_node['name']}" if space else entry_node["name"]] = entry_node
    if not schema.optional:
        ctx.schema_map[schema] = final
    return final


def _record_field(
    name: str, schema: Schema, doc: str | None, ctx: _FromConnectContext
) -> dict[str, Any]:
    avro = _from_connect(schema, ctx, ignore_optional=False)
    out: dict[str, Any] = {"name": name, "type": avro}
    if doc is not None:
        out["doc"] = doc
    default: Any = NO_DEFAULT
    if schema.default_value is not None:
        default = default_to_json(ctx.config, schema, schema.default_value)
    elif schema.optional:
        default = None
    if default is not NO_DEFAULT and _default_fits(avro, default, ctx):
        out["default"] = default
    return out


def _is_fixed_schema(schema: Schema) -> bool:
    return (
        schema.type is SchemaType.BYTES
        and schema.name is not None
        and CONNECT_AVRO_FIXED_SIZE_PROP in schema.parameters
    )


def _non_optional(schema: Schema) -> Schema:
    if not schema.optional:
        return schema
    return Schema(
        schema.type,
        optional=False,
        default_value=schema.default_value,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=schema.fields if schema.type is SchemaType.STRUCT else None,
        key_schema=schema.key_schema if schema.type is SchemaType.MAP else None,
        value_schema=(
            schema.value_schema if schema.type in (SchemaType.MAP, SchemaType.ARRAY) else None
        ),
    )


def _decimal_precision(schema: Schema) -> int:
    raw = schema.parameters.get(CONNECT_AVRO_DECIMAL_PRECISION_PROP)
    if raw is None:
        return CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT
    try:
        return int(raw)
    except ValueError as exc:
        raise DataException(f"Invalid {CONNECT_AVRO_DECIMAL_PRECISION_PROP}: {raw}") from exc


def _logical_type_of(schema: Schema) -> str | None:
    name = schema.name
    if name is None:
        return None
    lowered = name.lower()
    if lowered == Decimal.LOGICAL_NAME.lower():
        return "decimal"
    if lowered == Time.LOGICAL_NAME.lower():
        return "time-millis"
    if lowered == Timestamp.LOGICAL_NAME.lower():
        return "timestamp-millis"
    if lowered == Date.LOGICAL_NAME.lower():
        return "date"
    return None


# -- default validation (Avro rejects a field default that does not match the field type) ------
def _default_fits(node: Any, value: Any, ctx: _FromConnectContext) -> bool:
    if isinstance(node, NameRef):
        target = ctx.nodes.get(str(node))
        return True if target is None else _default_fits(target, value, ctx)
    t = type_of(node)
    if t == "union":
        return _default_fits(node[0], value, ctx) if node else False
    if t == "null":
        return value is None
    if t == "boolean":
        return isinstance(value, bool)
    if t in ("int", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if t in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t in ("string", "bytes", "fixed", "enum"):
        return isinstance(value, str)
    if t == "array":
        return isinstance(value, list) and all(_default_fits(node["items"], v, ctx) for v in value)
    if t == "map":
        return isinstance(value, dict) and all(
            _default_fits(node["values"], v, ctx) for v in value.values()
        )
    if t == "record":
        if not isinstance(value, dict):
            return False
        for f in node.get("fields", []):
            if f["name"] in value:
                if not _default_fits(f["type"], value[f["name"]], ctx):
                    return False
            elif "default" not in f:
                return False
        return True
    return True
