"""Confluent's mapping between Connect schemas/values and Avro schemas/values.

This is the behaviour of Confluent's ``io.confluent.connect.avro.AvroData``, ported.
:class:`AvroData` is the entry point: it converts schemas both ways (the work is done in
:mod:`cdk.converters._avro_schema_from_connect` and :mod:`cdk.converters._avro_schema_to_connect`,
with caches kept here) and converts values both ways, which this module implements.

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
import threading
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

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
from cdk.converters._avro_names import full_name_of, resolve_avro_schema, scrub_name
from cdk.converters._avro_schema_from_connect import connect_to_avro_schema
from cdk.converters._avro_schema_to_connect import avro_to_connect_schema
from cdk.data import Schema, SchemaType, Struct
from cdk.errors import DataException

__all__ = ["AvroData"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


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


class AvroData:
    """Converts between Connect and Avro, both schemas and values, as Confluent's ``AvroData``.

    Args:
        config: the mapping settings.
    """

    def __init__(self, config: AvroDataConfig | None = None) -> None:
        self.config = config or AvroDataConfig()
        self._from_cache: _LRU[Schema, Any] = _LRU(self.config.schemas_cache_size)
        self._to_cache: _LRU[tuple[str, int | None], Schema] = _LRU(self.config.schemas_cache_size)

    # == schemas, both ways =======================================================================
    def from_connect_schema(self, schema: Schema) -> Any:
        """The Avro schema (JSON structure, Java layout) for a Connect schema.

        Raises:
            DataException: the schema has no faithful Avro form (an invalid name with
                ``scrub.invalid.names`` off, a named type defined twice differently, ...).
        """
        cached = self._from_cache.get(schema)
        if cached is not None:
            return cached
        result = connect_to_avro_schema(self.config, schema)
        self._from_cache.put(schema, result)
        return result

    def to_connect_schema(self, avro_schema: Any, version: int | None = None) -> Schema:
        """The Connect schema for an Avro schema (JSON structure, raw or resolved).

        Args:
            avro_schema: the Avro schema.
            version: the Schema Registry version, used when the schema has no ``connect.version``.
        """
        resolved = resolve_avro_schema(avro_schema)
        return avro_to_connect_schema(self.config, resolved, version)

    def to_connect_schema_cached(self, key: str, resolved: Any, version: int | None) -> Schema:
        """As :meth:`to_connect_schema` for an already resolved schema, cached by ``key``."""
        cached = self._to_cache.get((key, version))
        if cached is not None:
            return cached
        schema = avro_to_connect_schema(self.config, resolved, version)
        self._to_cache.put((key, version), schema)
        return schema

    # == Connect -> Avro value ====================================================================
    def from_connect_data(self, schema: Schema, avro_schema: Any, value: Any) -> Any:
        """The fastavro value for a Connect value (``avro_schema`` resolved, see module doc)."""
        return self._to_avro(schema, avro_schema, value)

    def _to_avro(self, schema: Schema, node: Any, value: Any) -> Any:
        if value is None:
            if not schema.optional:
                raise DataException("Found null value for non-optional schema")
            return None
        union_struct = is_union_schema(schema)
        target = node
        if isinstance(node, list) and not union_struct:
            target = non_null_member(node)
        value = to_avro_logical(schema, value)
        stype = schema.type
        result: Any
        if stype in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            result = float(value)
        elif stype is SchemaType.BYTES:
            result = bytes(value)
            if type_of(target) == "fixed" and len(result) != int(target["size"]):
                raise DataException(
                    f"Fixed-size bytes value has {len(result)} bytes; the Avro type "
                    f"'{target['name']}' has size {target['size']}"
                )
        elif stype is SchemaType.ARRAY:
            items = target["items"]
            result = [self._to_avro(schema.value_schema, items, v) for v in value]
        elif stype is SchemaType.MAP:
            ks, vs = schema.key_schema, schema.value_schema
            if type_of(target) == "map":
                values = target["values"]
                result = {k: self._to_avro(vs, values, v) for k, v in value.items()}
            else:
                entry = target["items"]
                kf, vf = entry_fields(entry)
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
                        if member_field_name(self.config, member) == f.name:
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

    # == Avro -> Connect value ====================================================================
    def to_connect_data(self, schema: Schema, avro_schema: Any, value: Any) -> Any:
        """The Connect value for a value fastavro read (``avro_schema`` resolved)."""
        return self._to_connect(schema, avro_schema, value)

    def _to_connect(self, schema: Schema, node: Any, value: Any) -> Any:
        if value is None:
            if not schema.optional:
                raise DataException("Found null value for non-optional schema")
            return None
        union_struct = is_union_schema(schema)
        if isinstance(node, list):
            member = _pick_member(node, value)
            if isinstance(value, tuple):
                value = value[1]
            if union_struct:
                fname = member_field_name(self.config, member)
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
            if type_of(node) == "map":
                values = node["values"]
                result = {str(k): self._to_connect(vs, values, v) for k, v in value.items()}
            else:
                kf, vf = entry_fields(node["items"])
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
        return to_connect_logical(schema, result)


# -- helpers -------------------------------------------------------------------------------------
def _fastavro_type_name(node: Any) -> str:
    name = full_name_of(node)
    return name if name is not None else type_of(node)


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
            if full_name_of(member) == value[0] or type_of(member) == value[0]:
                return member
    non_null = [m for m in union if type_of(m) != "null"]
    if len(non_null) == 1:
        return non_null[0]
    for member in non_null:
        types = _PY_TYPES.get(type_of(member))
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
