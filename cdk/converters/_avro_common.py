"""What both directions of the Connect⇄Avro mapping share.

The names of Confluent's ``connect.*`` and ``io.confluent.connect.avro.*`` properties, the
mapping settings (:class:`AvroDataConfig`), and small helpers on Avro schema JSON nodes and on
the Connect schemas Confluent gives a special Avro meaning (unions, map entries, logical types).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cdk.data import Date, Decimal, Schema, SchemaType, Time, Timestamp
from cdk.errors import DataException

__all__ = [
    "AVRO_TYPE_ENUM",
    "AVRO_TYPE_UNION",
    "DEFAULT_SCHEMA_FULL_NAME",
    "NAMESPACE",
    "AvroDataConfig",
    "strip_logical_types",
]

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
DEFAULT_SCHEMA_FULL_NAME = f"{NAMESPACE}.{DEFAULT_SCHEMA_NAME}"
MAP_ENTRY_TYPE_NAME = "MapEntry"
KEY_FIELD = "key"
VALUE_FIELD = "value"

CONNECT_NAME_PROP = "connect.name"
CONNECT_DOC_PROP = "connect.doc"
CONNECT_VERSION_PROP = "connect.version"
CONNECT_DEFAULT_VALUE_PROP = "connect.default"
CONNECT_PARAMETERS_PROP = "connect.parameters"
CONNECT_INTERNAL_TYPE_NAME = "connect.internal.type"
CONNECT_TYPE_PROP = "connect.type"
AVRO_RECORD_DOC_PROP = f"{NAMESPACE}.record.doc"
AVRO_ENUM_DOC_PREFIX_PROP = f"{NAMESPACE}.enum.doc."
AVRO_FIELD_DOC_PREFIX_PROP = f"{NAMESPACE}.field.doc."
AVRO_FIELD_DEFAULT_FLAG_PROP = f"{NAMESPACE}.field.default"
AVRO_ENUM_DEFAULT_PREFIX_PROP = f"{NAMESPACE}.enum.default."
AVRO_TYPE_UNION = f"{NAMESPACE}.Union"
AVRO_TYPE_ENUM = f"{NAMESPACE}.Enum"
CONNECT_AVRO_FIXED_SIZE_PROP = "connect.fixed.size"
CONNECT_AVRO_DECIMAL_PRECISION_PROP = "connect.decimal.precision"
CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT = 64
AVRO_PROP = "avro"
LOGICAL_TYPE_PROP = "logicalType"

PRIMITIVE_TYPES = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
NAMED_TYPES = frozenset({"record", "error", "enum", "fixed"})
NO_DEFAULT: Any = object()


@dataclass(frozen=True)
class AvroDataConfig:
    """The settings of the mapping (the ``AvroDataConfig`` keys of Confluent's converter).

    Attributes:
        connect_meta_data: write/read the ``connect.*`` properties (``connect.meta.data``).
        enhanced_avro_schema_support: keep Avro enums as enums and use full names for union
            members (``enhanced.avro.schema.support``).
        scrub_invalid_names: replace characters Avro does not allow in names instead of failing
            (``scrub.invalid.names``).
        schemas_cache_size: how many schema conversions each direction keeps
            (``schemas.cache.config``).
    """

    connect_meta_data: bool = True
    enhanced_avro_schema_support: bool = False
    scrub_invalid_names: bool = False
    schemas_cache_size: int = 1000


def type_of(node: Any) -> str:
    """The Avro type of a schema node (``"union"`` for a list, the named kind for a named type)."""
    if isinstance(node, list):
        return "union"
    if isinstance(node, dict):
        t = node.get("type")
        if isinstance(t, (dict, list)):
            return type_of(t)
        return str(t)
    return str(node)


def node_props(node: Any) -> Mapping[str, Any]:
    """The properties of a schema node (none for a bare primitive name or a union)."""
    return node if isinstance(node, dict) else {}


def strip_logical_types(node: Any) -> Any:
    """A copy of an Avro schema JSON structure without any ``logicalType`` annotation.

    The converter gives fastavro this physical schema, so the values it reads and writes are the
    primitive encodings and the logical conversions stay under this module's control.
    """
    if isinstance(node, list):
        return [strip_logical_types(n) for n in node]
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == LOGICAL_TYPE_PROP:
                continue
            if key in ("type", "items", "values"):
                out[key] = strip_logical_types(value)
            elif key == "fields" and isinstance(value, list):
                out[key] = [
                    {k: (strip_logical_types(v) if k == "type" else v) for k, v in f.items()}
                    if isinstance(f, dict)
                    else f
                    for f in value
                ]
            else:
                out[key] = value
        return out
    return node


def is_union_schema(schema: Schema) -> bool:
    """Whether a Connect schema is the struct that stands for an Avro union."""
    return schema.type is SchemaType.STRUCT and schema.name == AVRO_TYPE_UNION


def entry_fields(entry: Any) -> tuple[Any, Any]:
    """The key and value types of a map-entry record (a map with non-string keys)."""
    fields = {f["name"]: f["type"] for f in entry.get("fields", [])}
    if len(fields) != 2 or KEY_FIELD not in fields or VALUE_FIELD not in fields:
        raise DataException(
            "Found map encoded as array of key-value pairs, but array elements do not match the "
            "expected format."
        )
    return fields[KEY_FIELD], fields[VALUE_FIELD]


def non_null_member(union: list[Any]) -> Any:
    """The member of an optional schema's Avro union that is not ``null``."""
    for member in union:
        if type_of(member) != "null":
            return member
    raise DataException("An optional schema should have a non-null member in its Avro union")


def member_field_name(config: AvroDataConfig, member: Any) -> str:
    """The Connect union-struct field name of an Avro union member."""
    t = type_of(member)
    if t in NAMED_TYPES:
        full = str(member["name"])
        if config.enhanced_avro_schema_support:
            return full
        return full.rpartition(".")[2]
    return t


_TO_AVRO_LOGICAL: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: Decimal.from_logical,
    Date.LOGICAL_NAME: Date.from_logical,
    Time.LOGICAL_NAME: Time.from_logical,
    Timestamp.LOGICAL_NAME: Timestamp.from_logical,
}
_TO_CONNECT_LOGICAL: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: Decimal.to_logical,
    Date.LOGICAL_NAME: Date.to_logical,
    Time.LOGICAL_NAME: Time.to_logical,
    Timestamp.LOGICAL_NAME: Timestamp.to_logical,
}


def to_avro_logical(schema: Schema, value: Any) -> Any:
    """A Connect logical value (Decimal, Date, Time, Timestamp) in its physical form."""
    if schema.name is None or value is None:
        return value
    convert = _TO_AVRO_LOGICAL.get(schema.name)
    return convert(schema, value) if convert is not None else value


def to_connect_logical(schema: Schema, value: Any) -> Any:
    """A physical value as the Connect logical value its schema names, if any."""
    if schema.name is None or value is None:
        return value
    convert = _TO_CONNECT_LOGICAL.get(schema.name)
    return convert(schema, value) if convert is not None else value
