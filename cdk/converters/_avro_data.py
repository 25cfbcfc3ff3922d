"""Confluent's mapping between Connect schemas/values and Avro schemas/values.

This is the behaviour of Confluent's ``io.confluent.connect.avro.AvroData``, ported: the Avro
schema a Connect schema becomes (with the ``connect.*`` properties that make the trip lossless),
the Connect schema an Avro schema becomes (also for Avro schemas no Connect converter wrote), and
the value conversions both ways.

Avro schemas are handled as JSON-ready Python structures (``str`` for bare primitives, ``dict``
for everything else, ``list`` for unions). :meth:`AvroData.from_connect_schema` returns the JSON
structure laid out as Avro's Java ``Schema.toString`` lays it out (same key order, a named type
written once and referenced by name afterwards, namespaces omitted where inherited).

Values on the Avro side are what fastavro's ``schemaless_writer`` takes and ``schemaless_reader``
returns for a schema without logical types (the converter strips ``logicalType`` before handing a
schema to fastavro, so logical conversions happen here, by the Connect schema): ``int``,
``float``, ``bool``, ``str``, ``bytes``, ``list``, ``dict``; a union member is written in
fastavro's tuple notation ``(type_name, value)`` and read back that way for named types.
"""

from __future__ import annotations

import collections
import re
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from cdk.data import Date, Decimal, Schema, SchemaBuilder, SchemaType, Struct, Time, Timestamp
from cdk.errors import DataException, SchemaBuilderException

__all__ = [
    "AVRO_TYPE_ENUM",
    "AVRO_TYPE_UNION",
    "DEFAULT_SCHEMA_FULL_NAME",
    "NAMESPACE",
    "AvroData",
    "AvroDataConfig",
    "full_name_of",
    "scrub_name",
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

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_NAMED = frozenset({"record", "error", "enum", "fixed"})
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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
_NO_DEFAULT: Any = object()

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


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


class _LRU(Generic[K, V]):
    """A small thread-safe LRU cache."""

    def __init__(self, size: int) -> None:
        self._size = max(size, 0)
        self._data: collections.OrderedDict[K, V] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        if self._size == 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._size:
                self._data.popitem(last=False)


# -- names -----------------------------------------------------------------------------------------
def scrub_name(name: str) -> str:
    """Turn any string into a valid Avro name, as Confluent's ``scrub.invalid.names`` does.

    A valid name is returned unchanged. Otherwise the name is URL-encoded (``application/
    x-www-form-urlencoded``, UTF-8), prefixed with ``x`` if it starts with a digit, and every
    character other than ``[A-Za-z0-9_]`` becomes ``_``.
    """
    if not name or _NAME_RE.fullmatch(name):
        return name
    encoded = _url_encode(name)
    if encoded[0].isdigit():
        encoded = "x" + encoded
    return "".join(ch if (ch.isascii() and (ch.isalnum() or ch == "_")) else "_" for ch in encoded)


def _url_encode(text: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch.isascii() and (ch.isalnum() or ch in ".-*_"):
            out.append(ch)
        elif ch == " ":
            out.append("+")
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def full_name_of(node: Any) -> str | None:
    """The full name of a named Avro schema node (record, enum, fixed), else ``None``."""
    if isinstance(node, dict) and node.get("type") in _NAMED:
        return str(node["name"])
    return None


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


def _type_of(node: Any) -> str:
    if isinstance(node, list):
        return "union"
    if isinstance(node, dict):
        t = node.get("type")
        if isinstance(t, (dict, list)):
            return _type_of(t)
        return str(t)
    return str(node)


def _props(node: Any) -> Mapping[str, Any]:
    return node if isinstance(node, dict) else {}


# -- resolving Avro schema JSON (names, namespaces, references) ----------------------------------
class _Resolver:
    """Normalizes Avro schema JSON: full names everywhere, references replaced by definitions."""

    def __init__(self) -> None:
        self.names: dict[str, dict[str, Any]] = {}
        self._in_progress: set[str] = set()

    def resolve(self, node: Any, namespace: str | None = None) -> Any:
        if isinstance(node, str):
            if node in _PRIMITIVES:
                return node
            full = node if "." in node or not namespace else f"{namespace}.{node}"
            for candidate in (full, node):
                if candidate in self._in_progress:
                    raise DataException(
                        f"Avro schema is recursive through '{candidate}'; Connect schemas cannot "
                        f"express recursive types"
                    )
                if candidate in self.names:
                    return self.names[candidate]
            raise DataException(f"Avro schema refers to an undefined type '{node}'")
        if isinstance(node, list):
            return [self.resolve(n, namespace) for n in node]
        if not isinstance(node, dict) or "type" not in node:
            raise DataException(f"Invalid Avro schema: {node!r}")
        t = node["type"]
        if isinstance(t, (dict, list)) or (
            isinstance(t, str) and t not in _PRIMITIVES | _NAMED and t not in ("array", "map")
        ):
            # {"type": {...}} or {"type": "SomeNamedType"}: a wrapped schema
            return self.resolve(t, namespace)
        if t in _NAMED:
            name = str(node.get("name", ""))
            if "." in name:
                full = name
            else:
                space = node.get("namespace", namespace)
                full = f"{space}.{name}" if space else name
            own_space = full.rpartition(".")[0] or None
            out = {k: v for k, v in node.items() if k != "namespace"}
            out["name"] = full
            if full in self.names:
                raise DataException(f"Invalid Avro schema: type '{full}' is defined twice")
            self.names[full] = out
            if t in ("record", "error"):
                self._in_progress.add(full)
                fields = []
                for f in node.get("fields", []):
                    fcopy = dict(f)
                    fcopy["type"] = self.resolve(f["type"], own_space)
                    fields.append(fcopy)
                out["fields"] = fields
                self._in_progress.discard(full)
            return out
        if t == "array":
            out = dict(node)
            out["items"] = self.resolve(node["items"], namespace)
            return out
        if t == "map":
            out = dict(node)
            out["values"] = self.resolve(node["values"], namespace)
            return out
        return node


def resolve_avro_schema(avro_schema: Any) -> Any:
    """Normalize Avro schema JSON (full names, references inlined as shared objects)."""
    return _Resolver().resolve(avro_schema)


# -- building Avro schemas from Connect schemas --------------------------------------------------
class _Ref(str):
    """A reference to a named type already written (its full name)."""

    __slots__ = ()


class _FromConnectContext:
    def __init__(self) -> None:
        self.schema_map: dict[Schema, Any] = {}
        self.defined: dict[str, Schema | None] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.name_index = 0
        self.map_entry_index = 1


class AvroData:
    """Converts between Connect and Avro, both schemas and values, as Confluent's ``AvroData``.

    Args:
        config: the mapping settings.
    """

    def __init__(self, config: AvroDataConfig | None = None) -> None:
        self.config = config or AvroDataConfig()
        self._from_cache: _LRU[Schema, Any] = _LRU(self.config.schemas_cache_size)
        self._to_cache: _LRU[tuple[str, int | None], Schema] = _LRU(self.config.schemas_cache_size)

    # == Connect -> Avro schema ===================================================================
    def from_connect_schema(self, schema: Schema) -> Any:
        """The Avro schema (JSON structure, Java layout) for a Connect schema.

        Raises:
            DataException: the schema has no faithful Avro form (an invalid name with
                ``scrub.invalid.names`` off, a named type defined twice differently, ...).
        """
        cached = self._from_cache.get(schema)
        if cached is not None:
            return cached
        ctx = _FromConnectContext()
        tree = self._from_connect(schema, ctx, ignore_optional=False)
        result = _java_layout(tree, None)
        self._from_cache.put(schema, result)
        return result

    def _split(self, full_name: str, what: str) -> tuple[str | None, str]:
        parts = full_name.split(".")
        if self.config.scrub_invalid_names:
            parts = [scrub_name(p) for p in parts]
        for part in parts:
            if not _NAME_RE.fullmatch(part):
                raise DataException(
                    f"Cannot convert Connect {what} name '{full_name}' to Avro: '{part}' is not a "
                    f"valid Avro name ([A-Za-z_][A-Za-z0-9_]*); set scrub.invalid.names=true to "
                    f"replace invalid characters"
                )
        if len(parts) == 1:
            return None, parts[0]
        return ".".join(parts[:-1]), parts[-1]

    def _name_or_default(
        self, ctx: _FromConnectContext, name: str | None
    ) -> tuple[str | None, str]:
        if name is not None:
            return self._split(name, "schema")
        ctx.name_index += 1
        suffix = str(ctx.name_index) if ctx.name_index > 1 else ""
        return NAMESPACE, DEFAULT_SCHEMA_NAME + suffix

    def _define(
        self, ctx: _FromConnectContext, namespace: str | None, name: str, schema: Schema | None
    ) -> None:
        full = f"{namespace}.{name}" if namespace else name
        if full in ctx.defined or full in _PRIMITIVES:
            raise DataException(
                f"Cannot convert Connect schema to Avro: the name '{full}' would name two "
                f"different Avro types, and Avro allows one definition per full name"
            )
        ctx.defined[full] = schema

    def _field_name(self, name: str) -> str:
        if self.config.scrub_invalid_names:
            name = scrub_name(name)
        if not _NAME_RE.fullmatch(name):
            raise DataException(
                f"Cannot convert Connect field name '{name}' to Avro: it is not a valid Avro name "
                f"([A-Za-z_][A-Za-z0-9_]*); set scrub.invalid.names=true to replace invalid "
                f"characters",
                field=name,
            )
        return name

    def _from_connect_cycle(self, schema: Schema, ctx: _FromConnectContext, ignore: bool) -> Any:
        return self._from_connect(schema, ctx, ignore_optional=ignore)

    def _from_connect(
        self, schema: Schema, ctx: _FromConnectContext, *, ignore_optional: bool
    ) -> Any:
        union_struct = _is_union_schema(schema)
        if not union_struct and not schema.optional:
            cached = ctx.schema_map.get(schema)
            if cached is not None:
                name = full_name_of(cached)
                return _Ref(name) if name is not None else cached
        meta = self.config.connect_meta_data
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
            if self.config.enhanced_avro_schema_support and AVRO_TYPE_ENUM in params:
                enum_full = params[AVRO_TYPE_ENUM]
                space, name = self._split(enum_full, "enum")
                self._define(ctx, space, name, None)
                prefix = AVRO_TYPE_ENUM + "."
                symbols = [k[len(prefix) :] for k in params if k.startswith(prefix)]
                for sym in symbols:
                    if not _NAME_RE.fullmatch(sym):
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
                space, name = self._name_or_default(ctx, schema.name)
                self._define(ctx, space, name, schema)
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
                "items": self._from_connect_cycle(schema.value_schema, ctx, False),
            }
        elif stype is SchemaType.MAP:
            key_schema = schema.key_schema
            if key_schema.type is SchemaType.STRING and not key_schema.optional:
                values = self._from_connect_cycle(schema.value_schema, ctx, False)
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
                    self._define(ctx, NAMESPACE, name, schema)
                else:
                    space, name = self._name_or_default(ctx, schema.name)
                    self._define(ctx, space, name, schema)
                    entry = {"type": "record", "name": name, "namespace": space}
                    entry_props = {CONNECT_INTERNAL_TYPE_NAME: MAP_ENTRY_TYPE_NAME}
                entry["fields"] = [
                    self._record_field(KEY_FIELD, key_schema, None, ctx),
                    self._record_field(VALUE_FIELD, schema.value_schema, None, ctx),
                ]
                entry.update(entry_props)
                base = {"type": "array", "items": entry}
        elif stype is SchemaType.STRUCT:
            if union_struct:
                members: list[Any] = ["null"] if schema.optional else []
                for f in schema.fields:
                    members.append(self._from_connect_cycle(_non_optional(f.schema), ctx, True))
                base = members
            elif schema.optional:
                base = ["null", self._from_connect_cycle(_non_optional(schema), ctx, False)]
            else:
                space, name = self._name_or_default(ctx, schema.name)
                self._define(ctx, space, name, schema)
                base = {"type": "record", "name": name, "namespace": space}
                doc = params.get(AVRO_RECORD_DOC_PROP)
                if doc is not None:
                    base["doc"] = doc
                fields = []
                seen: set[str] = set()
                for f in schema.fields:
                    avro_name = self._field_name(f.name)
                    if avro_name in seen:
                        raise DataException(
                            f"Cannot convert Connect schema to Avro: two fields map to the Avro "
                            f"field name '{avro_name}'",
                            field=f.name,
                        )
                    seen.add(avro_name)
                    fdoc = params.get(AVRO_FIELD_DOC_PREFIX_PROP + f.name)
                    fields.append(self._record_field(avro_name, f.schema, fdoc, ctx))
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
                connect_params = {
                    k: v for k, v in params.items() if k != AVRO_FIELD_DEFAULT_FLAG_PROP
                }
                if connect_params:
                    props[CONNECT_PARAMETERS_PROP] = connect_params
                if schema.default_value is not None and AVRO_FIELD_DEFAULT_FLAG_PROP not in params:
                    props[CONNECT_DEFAULT_VALUE_PROP] = self._default_to_json(
                        schema, schema.default_value
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
        if isinstance(base, dict) and base.get("type") in _NAMED:
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
        self, name: str, schema: Schema, doc: str | None, ctx: _FromConnectContext
    ) -> dict[str, Any]:
        avro = self._from_connect(schema, ctx, ignore_optional=False)
        out: dict[str, Any] = {"name": name, "type": avro}
        if doc is not None:
            out["doc"] = doc
        default: Any = _NO_DEFAULT
        if schema.default_value is not None:
            default = self._default_to_json(schema, schema.default_value)
        elif schema.optional:
            default = None
        if default is not _NO_DEFAULT and _default_fits(avro, default, ctx):
            out["default"] = default
        return out

    def _default_to_json(self, schema: Schema, value: Any) -> Any:
        """A Connect default value as Avro JSON (Confluent's encoding)."""
        if value is None:
            return None
        value = _to_avro_logical(schema, value)
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
            return [self._default_to_json(schema.value_schema, v) for v in value]
        if stype is SchemaType.MAP:
            ks = schema.key_schema
            if ks.type is SchemaType.STRING and not ks.optional:
                return {k: self._default_to_json(schema.value_schema, v) for k, v in value.items()}
            return [
                [self._default_to_json(ks, k), self._default_to_json(schema.value_schema, v)]
                for k, v in value.items()
            ]
        struct: Struct = value
        if _is_union_schema(schema):
            for f in schema.fields:
                member = struct.get(f)
                if member is not None:
                    return self._default_to_json(f.schema, member)
            return None
        out: dict[str, Any] = {}
        for f in schema.fields:
            name = scrub_name(f.name) if self.config.scrub_invalid_names else f.name
            out[name] = self._default_to_json(f.schema, struct.get(f))
        return out

    # == Connect -> Avro value ====================================================================
    def from_connect_data(self, schema: Schema, avro_schema: Any, value: Any) -> Any:
        """The fastavro value for a Connect value (``avro_schema`` resolved, see module doc)."""
        return self._to_avro(schema, avro_schema, value)

    def _to_avro(self, schema: Schema, node: Any, value: Any) -> Any:
        if value is None:
            if not schema.optional:
                raise DataException("Found null value for non-optional schema")
            return None
        union_struct = _is_union_schema(schema)
        target = node
        if isinstance(node, list) and not union_struct:
            target = _non_null_member(node)
        value = _to_avro_logical(schema, value)
        stype = schema.type
        result: Any
        if stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            result = float(value)
        elif stype is SchemaType.BYTES:
            result = bytes(value)
            if _type_of(target) == "fixed" and len(result) != int(target["size"]):
                raise DataException(
                    f"Fixed-size bytes value has {len(result)} bytes; the Avro type "
                    f"'{target['name']}' has size {target['size']}"
                )
        elif stype is SchemaType.ARRAY:
            items = target["items"]
            result = [self._to_avro(schema.value_schema, items, v) for v in value]
        elif stype is SchemaType.MAP:
            ks, vs = schema.key_schema, schema.value_schema
            if _type_of(target) == "map":
                values = target["values"]
                result = {k: self._to_avro(vs, values, v) for k, v in value.items()}
            else:
                entry = target["items"]
                kf, vf = _entry_fields(entry)
                result = [
                    {
                        KEY_FIELD: self._to_avro(ks, kf, k),
                        VALUE_FIELD: self._to_avro(vs, vf, v),
                    }
                    for k, v in value.items()
                ]
        elif stype is SchemaType.STRUCT:
            struct: Struct = value
            if struct.schema != schema:
                raise DataException("Mismatching struct schema")
            if union_struct:
                members = node if isinstance(node, list) else [node]
                for f in schema.fields:
                    member_value = struct.get(f)
                    if member_value is None:
                        continue
                    for member in members:
                        if member == "null":
                            continue
                        if self._member_field_name(member) == f.name:
                            inner = self._to_avro(f.schema, member, member_value)
                            return (_fastavro_type_name(member), inner)
                    raise DataException(
                        f"No member of the Avro union matches the Connect union field '{f.name}'",
                        field=f.name,
                    )
                if not schema.optional:
                    raise DataException("Found null value for non-optional schema")
                return None
            record: dict[str, Any] = {}
            avro_fields = {af["name"]: af for af in target["fields"]}
            for f in schema.fields:
                avro_name = scrub_name(f.name) if self.config.scrub_invalid_names else f.name
                avro_field = avro_fields.get(avro_name)
                if avro_field is None:
                    raise DataException(
                        f"Field '{f.name}' is not in the Avro schema '{target.get('name')}'",
                        field=f.name,
                    )
                try:
                    record[avro_name] = self._to_avro(f.schema, avro_field["type"], struct.get(f))
                except DataException as exc:
                    if exc.field is None:
                        raise DataException(
                            f"{exc.message} (field '{f.name}')", field=f.name
                        ) from exc
                    raise
            result = record
        else:
            result = value
        if isinstance(node, list) and not union_struct:
            return (_fastavro_type_name(target), result)
        return result

    # == Avro -> Connect schema ===================================================================
    def to_connect_schema(self, avro_schema: Any, version: int | None = None) -> Schema:
        """The Connect schema for an Avro schema (JSON structure, raw or resolved).

        Args:
            avro_schema: the Avro schema.
            version: the Schema Registry version, used when the schema has no ``connect.version``.
        """
        resolved = resolve_avro_schema(avro_schema)
        return self._to_connect_schema(resolved, False, _NO_DEFAULT, version)

    def to_connect_schema_cached(self, key: str, resolved: Any, version: int | None) -> Schema:
        """As :meth:`to_connect_schema` for an already resolved schema, cached by ``key``."""
        cached = self._to_cache.get((key, version))
        if cached is not None:
            return cached
        schema = self._to_connect_schema(resolved, False, _NO_DEFAULT, version)
        self._to_cache.put((key, version), schema)
        return schema

    def _member_field_name(self, member: Any) -> str:
        t = _type_of(member)
        if t in _NAMED:
            full = str(member["name"])
            if self.config.enhanced_avro_schema_support:
                return full
            return full.rpartition(".")[2]
        return t

    def _to_connect_schema(
        self, node: Any, force_optional: bool, field_default: Any, version: int | None = None
    ) -> Schema:
        meta = self.config.connect_meta_data
        props = _props(node)
        atype = _type_of(node)
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
            builder = (
                Timestamp.builder() if logical == "timestamp-millis" else SchemaBuilder.int64()
            )
        elif atype == "string":
            builder = SchemaBuilder.string()
        elif atype == "array":
            items = node["items"]
            if _is_map_entry(items):
                kf, vf = _entry_fields(items)
                builder = SchemaBuilder.map(
                    self._to_connect_schema(kf, False, _NO_DEFAULT),
                    self._to_connect_schema(vf, False, _NO_DEFAULT),
                )
            else:
                builder = SchemaBuilder.array(self._to_connect_schema(items, False, _NO_DEFAULT))
        elif atype == "map":
            builder = SchemaBuilder.map(
                Schema.STRING_SCHEMA, self._to_connect_schema(node["values"], False, _NO_DEFAULT)
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
                fdefault = f.get("default", _NO_DEFAULT)
                builder.field(f["name"], self._to_connect_schema(f["type"], False, fdefault))
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
            if len(members) == 2 and "null" in [_type_of(m) for m in members]:
                other = next(m for m in members if _type_of(m) != "null")
                return self._to_connect_schema(other, True, _NO_DEFAULT)
            builder = SchemaBuilder.struct().name(AVRO_TYPE_UNION)
            seen: set[str] = set()
            for member in members:
                if _type_of(member) == "null":
                    if not builder.is_optional:
                        builder.optional()
                    continue
                fname = self._member_field_name(member)
                if fname in seen:
                    raise DataException(
                        "Multiple union schemas map to the Connect union field name"
                    )
                seen.add(fname)
                builder.field(fname, self._to_connect_schema(member, True, _NO_DEFAULT))
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
        connect_default = props.get(CONNECT_DEFAULT_VALUE_PROP, _NO_DEFAULT)
        default_json = field_default
        if field_default is _NO_DEFAULT:
            default_json = connect_default
        elif connect_default is _NO_DEFAULT and meta:
            builder.parameter(AVRO_FIELD_DEFAULT_FLAG_PROP, "true")
        if default_json is not _NO_DEFAULT and default_json is not None:
            try:
                default = self._default_from_json(builder.build(), node, default_json)
                if default is not None:
                    builder.default_value(default)
            except (DataException, SchemaBuilderException, ValueError, TypeError, KeyError):
                pass  # Confluent ignores a default it cannot read
        return builder.build()

    def _default_from_json(self, schema: Schema, node: Any, value: Any) -> Any:
        """A Connect default value from Avro JSON (field ``default`` or ``connect.default``)."""
        if value is None:
            return None
        atype = _type_of(node)
        result: Any
        if atype == "union":
            if _is_union_schema(schema):
                first = node[0]
                if _type_of(first) == "null":
                    return None
                f = schema.field(self._member_field_name(first))
                if f is None:
                    return None
                inner = self._default_from_json(f.schema, first, value)
                return Struct(schema).put(f, inner)
            return self._default_from_json(schema, _non_null_member(node), value)
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
                kf, vf = _entry_fields(items)
                out: dict[Any, Any] = {}
                for entry in value:
                    if isinstance(entry, dict):
                        k, v = entry.get(KEY_FIELD), entry.get(VALUE_FIELD)
                    else:
                        k, v = entry
                    out[self._default_from_json(schema.key_schema, kf, k)] = (
                        self._default_from_json(schema.value_schema, vf, v)
                    )
                result = out
            else:
                if not isinstance(value, list):
                    raise DataException(f"Invalid JSON for array default value: {value}")
                result = [self._default_from_json(schema.value_schema, items, v) for v in value]
        elif atype == "map":
            if not isinstance(value, dict):
                raise DataException(f"Invalid JSON for map default value: {value}")
            result = {
                k: self._default_from_json(schema.value_schema, node["values"], v)
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
                    f, self._default_from_json(f.schema, avro_field["type"], value.get(f.name))
                )
            return struct
        else:
            return None
        return _to_connect_logical(schema, result)

    # == Avro -> Connect value ====================================================================
    def to_connect_data(self, schema: Schema, avro_schema: Any, value: Any) -> Any:
        """The Connect value for a value fastavro read (``avro_schema`` resolved)."""
        return self._to_connect(schema, avro_schema, value)

    def _to_connect(self, schema: Schema, node: Any, value: Any) -> Any:
        if value is None:
            if not schema.optional:
                raise DataException("Found null value for non-optional schema")
            return None
        union_struct = _is_union_schema(schema)
        if isinstance(node, list):
            member = _pick_member(node, value)
            if isinstance(value, tuple):
                value = value[1]
            if union_struct:
                fname = self._member_field_name(member)
                f = schema.field(fname)
                if f is None:
                    raise DataException(f"Did not find matching union field for data: {value!r}")
                return Struct(schema).put(f, self._to_connect(f.schema, member, value))
            node = member
        stype = schema.type
        result: Any
        if stype in (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64):
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataException(f"Invalid type for {stype.name}: {type(value).__name__}")
            result = value
        elif stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            result = float(value)
        elif stype is SchemaType.BOOLEAN:
            result = bool(value)
        elif stype is SchemaType.STRING:
            result = str(value)
        elif stype is SchemaType.BYTES:
            result = bytes(value)
        elif stype is SchemaType.ARRAY:
            items = node["items"]
            result = [self._to_connect(schema.value_schema, items, v) for v in value]
        elif stype is SchemaType.MAP:
            ks, vs = schema.key_schema, schema.value_schema
            if _type_of(node) == "map":
                values = node["values"]
                result = {str(k): self._to_connect(vs, values, v) for k, v in value.items()}
            else:
                kf, vf = _entry_fields(node["items"])
                result = {
                    _hashable_key(self._to_connect(ks, kf, e[KEY_FIELD])): self._to_connect(
                        vs, vf, e[VALUE_FIELD]
                    )
                    for e in value
                }
        else:
            values_list = [
                self._to_connect(f.schema, avro_field["type"], value.get(avro_field["name"]))
                for f, avro_field in zip(schema.fields, node["fields"], strict=True)
            ]
            return Struct._trusted(schema, values_list)
        return _to_connect_logical(schema, result)


# -- helpers -------------------------------------------------------------------------------------
def _is_union_schema(schema: Schema) -> bool:
    return schema.type is SchemaType.STRUCT and schema.name == AVRO_TYPE_UNION


def _is_fixed_schema(schema: Schema) -> bool:
    return (
        schema.type is SchemaType.BYTES
        and schema.name is not None
        and CONNECT_AVRO_FIXED_SIZE_PROP in schema.parameters
    )


def _is_map_entry(node: Any) -> bool:
    if _type_of(node) != "record":
        return False
    if node.get("name") == f"{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}":
        return True
    return bool(node.get(CONNECT_INTERNAL_TYPE_NAME) == MAP_ENTRY_TYPE_NAME)


def _entry_fields(entry: Any) -> tuple[Any, Any]:
    fields = {f["name"]: f["type"] for f in entry.get("fields", [])}
    if len(fields) != 2 or KEY_FIELD not in fields or VALUE_FIELD not in fields:
        raise DataException(
            "Found map encoded as array of key-value pairs, but array elements do not match the "
            "expected format."
        )
    return fields[KEY_FIELD], fields[VALUE_FIELD]


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


def _non_null_member(union: list[Any]) -> Any:
    for member in union:
        if _type_of(member) != "null":
            return member
    raise DataException("An optional schema should have a non-null member in its Avro union")


def _fastavro_type_name(node: Any) -> str:
    name = full_name_of(node)
    return name if name is not None else _type_of(node)


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "boolean": (bool,),
    "int": (int,),
    "long": (int,),
    "float": (float,),
    "double": (float,),
    "bytes": (bytes, bytearray),
    "string": (str,),
    "array": (list,),
    "map": (dict,),
}


def _pick_member(union: list[Any], value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        for member in union:
            if full_name_of(member) == value[0] or _type_of(member) == value[0]:
                return member
    non_null = [m for m in union if _type_of(m) != "null"]
    if len(non_null) == 1:
        return non_null[0]
    for member in non_null:
        types = _PY_TYPES.get(_type_of(member))
        if types is None:
            continue
        if isinstance(value, bool) and bool not in types:
            continue
        if isinstance(value, types):
            return member
    raise DataException(f"Did not find matching union field for data: {value!r}")


def _hashable_key(key: Any) -> Any:
    if isinstance(key, list):
        raise DataException("Map keys of ARRAY type cannot be read back into a Python dict")
    return key


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


def _to_avro_logical(schema: Schema, value: Any) -> Any:
    if schema.name is None or value is None:
        return value
    convert = _TO_AVRO_LOGICAL.get(schema.name)
    return convert(schema, value) if convert is not None else value


def _to_connect_logical(schema: Schema, value: Any) -> Any:
    if schema.name is None or value is None:
        return value
    convert = _TO_CONNECT_LOGICAL.get(schema.name)
    return convert(schema, value) if convert is not None else value


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))


# -- default validation (Avro rejects a field default that does not match the field type) ------
def _default_fits(node: Any, value: Any, ctx: _FromConnectContext) -> bool:
    if isinstance(node, _Ref):
        target = ctx.nodes.get(str(node))
        return True if target is None else _default_fits(target, value, ctx)
    t = _type_of(node)
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


# -- Java's Schema.toString layout ---------------------------------------------------------------
def _java_layout(node: Any, space: str | None) -> Any:
    """Lay out a built schema as Java's Avro writes it: inherited namespaces left out."""
    if isinstance(node, _Ref):
        own_space, _, short = str(node).rpartition(".")
        if (own_space or None) == space:
            return short
        return str(node)
    if isinstance(node, list):
        return [_java_layout(n, space) for n in node]
    if not isinstance(node, dict):
        return node
    t = node.get("type")
    out: dict[str, Any] = {}
    if t in _NAMED:
        own = node.get("namespace")
        out["type"] = t
        out["name"] = node["name"]
        if own is not None:
            if own != space:
                out["namespace"] = own
        elif space is not None:
            out["namespace"] = ""
        inner_space = own
        for k, v in node.items():
            if k in ("type", "name", "namespace"):
                continue
            if k == "fields":
                out[k] = [
                    {
                        fk: (_java_layout(fv, inner_space) if fk == "type" else fv)
                        for fk, fv in f.items()
                    }
                    for f in v
                ]
            else:
                out[k] = v
        return out
    for k, v in node.items():
        out[k] = _java_layout(v, space) if k in ("items", "values") else v
    if len(out) == 1 and t in _PRIMITIVES:
        return t
    return out
