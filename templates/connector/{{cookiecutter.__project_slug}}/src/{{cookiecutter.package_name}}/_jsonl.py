"""Conversion between Connect data and the external system's data: JSON objects, one per line.

This is the part of a connector that unit tests cover best, so it has no I/O.
{%- if cookiecutter.kind != 'sink' %}

- :class:`InferredSchema` (source): the Connect schema of a file's lines, inferred from the JSON
  values seen so far. A field's type is fixed by its first non-null value; a new field makes a new
  schema version with that field added, optional.
{%- endif %}
{%- if cookiecutter.kind != 'source' %}

- :func:`to_json` / :func:`from_json` (sink, and its certification driver): a Connect value as
  JSON and back, exactly, by its schema. Decimals are written as strings (their scale is kept),
  Timestamp/Date/Time as ISO-8601 text, bytes as base64.
- :func:`merged_schema` (sink): the schema a file gets when a record's schema differs from the
  file's: an added optional field is added (schema evolution), a field missing from the record is
  kept (the file never loses a column), a changed type is refused with a DataException.
{%- endif %}
"""

from __future__ import annotations

{% if cookiecutter.kind != 'source' -%}
import base64
import datetime as dt
import decimal
{% endif -%}
import json
from collections.abc import Mapping
from typing import Any

from cdk import (
    DataException,
{%- if cookiecutter.kind != 'source' %}
    Date,
{%- endif %}
{%- if cookiecutter.kind != 'source' %}
    Decimal,
{%- endif %}
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
{%- if cookiecutter.kind != 'source' %}
    Time,
    Timestamp,
{%- endif %}
)

__all__ = [
{%- if cookiecutter.kind != 'sink' %}
    "InferredSchema",
{%- endif %}
{%- if cookiecutter.kind != 'source' %}
    "from_json",
    "merged_schema",
    "schema_from_json",
    "schema_to_json",
    "to_json",
{%- endif %}
    "parse_line",
]


def parse_line(line: bytes, where: str) -> dict[str, Any]:
    """One line of a file as a JSON object, or a DataException that names ``where``."""
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataException(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise DataException(f"{where}: expected a JSON object, found {type(value).__name__}")
    return value
{%- if cookiecutter.kind != 'sink' %}


def _field_schema(value: Any) -> Schema | None:
    """The Connect schema of a JSON value (None for null: the type is not known yet)."""
    # TODO(partner): map your external system's types to Connect schemas here (logical types
    # such as Decimal.builder(scale), Timestamp.builder() keep exact values).
    if value is None:
        return None
    if isinstance(value, bool):
        return Schema.OPTIONAL_BOOLEAN_SCHEMA
    if isinstance(value, int):
        return Schema.OPTIONAL_INT64_SCHEMA
    if isinstance(value, float):
        return Schema.OPTIONAL_FLOAT64_SCHEMA
    return Schema.OPTIONAL_STRING_SCHEMA  # strings; objects and arrays as JSON text


class InferredSchema:
    """The schema of one input file, grown from the JSON objects it has held so far.

    Args:
        name: the Connect schema name (records of one file share it).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.fields: dict[str, Schema] = {}
        self.version = 0
        self.schema = self._build()

    def _build(self) -> Schema:
        builder = SchemaBuilder.struct().name(self.name).version(max(self.version, 1))
        for field, schema in self.fields.items():
            builder.field(field, schema)
        return builder.build()

    def observe(self, obj: Mapping[str, Any]) -> bool:
        """Learn the fields of ``obj``; True when the schema gained a field (a new version)."""
        added = False
        for field, value in obj.items():
            if field not in self.fields:
                schema = _field_schema(value)
                if schema is not None:
                    self.fields[field] = schema
                    added = True
        if added or self.version == 0:
            self.version += 1
            self.schema = self._build()
        return added

    def to_struct(self, obj: Mapping[str, Any], where: str) -> Struct:
        """``obj`` as a Struct of the current schema (call :meth:`observe` first)."""
        struct = Struct(self.schema)
        for field, schema in self.fields.items():
            struct.put(field, _to_connect(obj.get(field), schema, f"{where}, field {field!r}"))
        return struct


def _to_connect(value: Any, schema: Schema, where: str) -> Any:
    if value is None:
        return None
    kind = schema.type
    if kind is SchemaType.BOOLEAN and isinstance(value, bool):
        return value
    if kind is SchemaType.INT64 and isinstance(value, int) and not isinstance(value, bool):
        return value
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is SchemaType.FLOAT64 and number:
        return float(value)
    if kind is SchemaType.STRING:
        if isinstance(value, str):
            return value
        if isinstance(value, (dict, list)):
            return json.dumps(value, separators=(",", ":"))
    raise DataException(
        f"{where}: expected a {kind.name.lower()} value as in the file's earlier lines, found "
        f"{type(value).__name__} {value!r}"
    )
{%- endif %}
{%- if cookiecutter.kind != 'source' %}


# ---------------------------------------------------------------------------------------------
# Connect values as JSON, by schema


def to_json(schema: Schema, value: Any) -> Any:
    """``value`` (valid for ``schema``) as a JSON-ready Python value."""
    if value is None:
        return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return str(value)
    if name == Timestamp.LOGICAL_NAME:
        return _utc(value).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if name in (Date.LOGICAL_NAME, Time.LOGICAL_NAME):
        return value.isoformat()
    kind = schema.type
    if kind is SchemaType.BYTES:
        return base64.b64encode(bytes(value)).decode("ascii")
    if kind is SchemaType.STRUCT:
        return {f.name: to_json(f.schema, value.get(f.name)) for f in schema.fields}
    if kind is SchemaType.ARRAY:
        return [to_json(schema.value_schema, item) for item in value]
    if kind is SchemaType.MAP:
        return [
            [to_json(schema.key_schema, k), to_json(schema.value_schema, v)]
            for k, v in value.items()
        ]
    return value  # booleans, integers, floats and strings are JSON already


def from_json(schema: Schema, value: Any) -> Any:
    """The Connect value that :func:`to_json` turned into ``value``."""
    if value is None:
        return None
    name = schema.name
    if name == Decimal.LOGICAL_NAME:
        return decimal.Decimal(value)
    if name == Timestamp.LOGICAL_NAME:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if name == Date.LOGICAL_NAME:
        return dt.date.fromisoformat(value)
    if name == Time.LOGICAL_NAME:
        return dt.time.fromisoformat(value)
    kind = schema.type
    if kind is SchemaType.BYTES:
        return base64.b64decode(value)
    if kind is SchemaType.STRUCT:
        struct = Struct(schema)
        for f in schema.fields:
            struct.put(f.name, from_json(f.schema, value.get(f.name)))
        return struct
    if kind is SchemaType.ARRAY:
        return [from_json(schema.value_schema, item) for item in value]
    if kind is SchemaType.MAP:
        return {
            from_json(schema.key_schema, k): from_json(schema.value_schema, v) for k, v in value
        }
    if kind in (SchemaType.FLOAT32, SchemaType.FLOAT64):
        return float(value)
    return value


def _utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)  # Connect timestamps are UTC
    return value.astimezone(dt.timezone.utc)


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """``schema`` in Kafka Connect's JSON schema format (as JsonConverter writes it)."""
    out: dict[str, Any] = {"type": schema.type.name.lower(), "optional": schema.optional}
    for attribute in ("name", "version", "doc"):
        if getattr(schema, attribute) is not None:
            out[attribute] = getattr(schema, attribute)
    if schema.parameters:
        out["parameters"] = dict(schema.parameters)
    if schema.type is SchemaType.STRUCT:
        out["fields"] = [{**schema_to_json(f.schema), "field": f.name} for f in schema.fields]
    elif schema.type is SchemaType.ARRAY:
        out["items"] = schema_to_json(schema.value_schema)
    elif schema.type is SchemaType.MAP:
        out["keys"] = schema_to_json(schema.key_schema)
        out["values"] = schema_to_json(schema.value_schema)
    return out


def schema_from_json(node: Mapping[str, Any]) -> Schema:
    """The schema that :func:`schema_to_json` wrote."""
    kind = SchemaType[str(node["type"]).upper()]
    if kind is SchemaType.STRUCT:
        builder = SchemaBuilder.struct()
        for f in node.get("fields", []):
            builder.field(str(f["field"]), schema_from_json(f))
    elif kind is SchemaType.ARRAY:
        builder = SchemaBuilder.array(schema_from_json(node["items"]))
    elif kind is SchemaType.MAP:
        keys, values = schema_from_json(node["keys"]), schema_from_json(node["values"])
        builder = SchemaBuilder.map(keys, values)
    else:
        builder = SchemaBuilder(kind)
    if node.get("name") is not None:
        builder.name(str(node["name"]))
    if node.get("version") is not None:
        builder.version(int(node["version"]))
    if node.get("doc") is not None:
        builder.doc(str(node["doc"]))
    if node.get("parameters"):
        builder.parameters(dict(node["parameters"]))
    if node.get("optional"):
        builder.optional()
    return builder.build()


def _same_type(a: Schema, b: Schema) -> bool:
    """Whether values of ``a`` and ``b`` are stored alike (optionality and versions aside)."""
    if a.type is not b.type or a.name != b.name or dict(a.parameters) != dict(b.parameters):
        return False
    if a.type is SchemaType.STRUCT:
        return [f.name for f in a.fields] == [f.name for f in b.fields] and all(
            _same_type(fa.schema, fb.schema) for fa, fb in zip(a.fields, b.fields, strict=True)
        )
    if a.type is SchemaType.ARRAY:
        return _same_type(a.value_schema, b.value_schema)
    if a.type is SchemaType.MAP:
        return _same_type(a.key_schema, b.key_schema) and _same_type(a.value_schema, b.value_schema)
    return True


def _describe(schema: Schema) -> str:
    return schema.name or schema.type.name


def merged_schema(current: Schema | None, record: Schema, *, add_fields: bool) -> Schema:
    """The schema a file must have to store records of schema ``record``.

    Args:
        current: the file's schema (None for a new file: the record's schema is adopted).
        record: the schema of the record to store (a STRUCT).
        add_fields: whether a new optional field may be added to the file's schema.

    Raises:
        DataException: the schemas are incompatible; the message names the field.
    """
    if record.type is not SchemaType.STRUCT:
        raise DataException(
            f"expected a STRUCT value schema, found {_describe(record)}: the file stores one "
            "JSON object per record"
        )
    if current is None:
        return record
    fields = {f.name: f.schema for f in current.fields}
    added = []
    for f in record.fields:
        known = fields.get(f.name)
        if known is None:
            if not f.schema.optional:
                raise DataException(
                    f"field {f.name!r} is new and required: existing lines have no value for it"
                )
            if not add_fields:
                raise DataException(
                    f"field {f.name!r} is new, and schema.evolution=none forbids adding it"
                )
            added.append(f)
        elif not _same_type(known, f.schema):
            raise DataException(
                f"field {f.name!r} changed type from {_describe(known)} to {_describe(f.schema)}"
            )
    for f in current.fields:
        if record.field(f.name) is None and not f.schema.optional:
            raise DataException(f"field {f.name!r} is required by the file but missing")
    if not added:
        return current
    builder = SchemaBuilder.struct()
    if current.name is not None:
        builder.name(current.name)
    builder.version((current.version or 1) + 1)
    for f in [*current.fields, *added]:
        builder.field(f.name, f.schema)
    return builder.build()
{%- endif %}
