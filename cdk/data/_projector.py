"""Projection of a value from one schema onto a compatible one: :class:`SchemaProjector`."""

from __future__ import annotations

import struct as _struct
from collections.abc import Mapping
from typing import Any

from cdk.data._schema import Schema, SchemaType
from cdk.data._struct import Struct
from cdk.errors import SchemaProjectorException

__all__ = ["SchemaProjector"]

_NUMERIC_ORDER = (
    SchemaType.INT8,
    SchemaType.INT16,
    SchemaType.INT32,
    SchemaType.INT64,
    SchemaType.FLOAT32,
    SchemaType.FLOAT64,
)
_PROMOTABLE = frozenset(
    (_NUMERIC_ORDER[i], _NUMERIC_ORDER[j])
    for i in range(len(_NUMERIC_ORDER))
    for j in range(i, len(_NUMERIC_ORDER))
)
_INTEGRAL = frozenset(_NUMERIC_ORDER[:4])


class SchemaProjector:
    """Projects values between compatible schemas, as Kafka's ``SchemaProjector``.

    Compatible means: the same type, or a numeric widening along
    INT8 → INT16 → INT32 → INT64 → FLOAT32 → FLOAT64; the same schema name; the same parameters.
    The version is not compared. An optional source can be projected onto a required target only
    if the target has a default (used for ``None``). Struct fields are taken from the target: a
    field missing from the source gets the target field's default, stays ``None`` if optional,
    and otherwise fails; source fields the target lacks are dropped.

    Example::

        SchemaProjector.project(Schema.INT32_SCHEMA, 7, Schema.FLOAT64_SCHEMA)  # 7.0
    """

    @staticmethod
    def project(source_schema: Schema, value: Any, target_schema: Schema) -> Any:
        """Return ``value`` (valid for ``source_schema``) projected onto ``target_schema``.

        Raises:
            SchemaProjectorException: the schemas are not compatible, or a required target has no
                default for a missing/``None`` value.
        """
        _check_maybe_compatible(source_schema, target_schema)
        if source_schema.optional and not target_schema.optional:
            if target_schema.default_value is None:
                raise SchemaProjectorException(
                    "Writer schema is optional, however, target schema does not provide a "
                    "default value."
                )
            if value is None:
                return target_schema.default_value
            return _project_required(source_schema, value, target_schema)
        if value is None:
            return None
        return _project_required(source_schema, value, target_schema)


def _java_null(value: Any) -> str:
    return "null" if value is None else str(value)


def _java_map(params: Mapping[str, str]) -> str:
    # Kafka's schemas without parameters have none at all, which prints as "null".
    if not params:
        return "null"
    return "{" + ", ".join(f"{k}={v}" for k, v in params.items()) + "}"


def _check_maybe_compatible(source: Schema, target: Schema) -> None:
    if source.type is not target.type and (source.type, target.type) not in _PROMOTABLE:
        raise SchemaProjectorException(
            f"Schema type mismatch. source type: {source.type} and target type: {target.type}"
        )
    if source.name != target.name:
        raise SchemaProjectorException(
            f"Schema name mismatch. source name: {_java_null(source.name)} and target name: "
            f"{_java_null(target.name)}"
        )
    if dict(source.parameters) != dict(target.parameters):
        raise SchemaProjectorException(
            f"Schema parameters not equal. source parameters: {_java_map(source.parameters)} and "
            f"target parameters: {_java_map(target.parameters)}"
        )


def _project_required(source: Schema, value: Any, target: Schema) -> Any:
    ttype = target.type
    if ttype is SchemaType.STRUCT:
        return _project_struct(source, value, target)
    if ttype is SchemaType.ARRAY:
        if not isinstance(value, (list, tuple)):
            raise SchemaProjectorException(f"Cannot project {value!r} as an ARRAY: not a list")
        return [
            SchemaProjector.project(source.value_schema, item, target.value_schema)
            for item in value
        ]
    if ttype is SchemaType.MAP:
        if not isinstance(value, Mapping):
            raise SchemaProjectorException(f"Cannot project {value!r} as a MAP: not a mapping")
        return {
            SchemaProjector.project(source.key_schema, k, target.key_schema): (
                SchemaProjector.project(source.value_schema, v, target.value_schema)
            )
            for k, v in value.items()
        }
    return _project_primitive(source, value, target)


def _project_struct(source: Schema, value: Any, target: Schema) -> Struct:
    if not isinstance(value, Struct):
        raise SchemaProjectorException(f"Cannot project {value!r} as a STRUCT: not a Struct")
    projected = Struct(target)
    for target_field in target.fields:
        name = target_field.name
        source_field = source.field(name)
        if source_field is not None:
            try:
                field_value = SchemaProjector.project(
                    source_field.schema, value.get(name), target_field.schema
                )
            except SchemaProjectorException as exc:
                raise SchemaProjectorException(f"Error projecting {name}", field=name) from exc
            projected.put(name, field_value)
        elif target_field.schema.default_value is not None:
            projected.put(name, target_field.schema.default_value)
        elif not target_field.schema.optional:
            raise SchemaProjectorException(
                f"Required field `{name}` is missing from source schema: {source!r}", field=name
            )
    return projected


def _project_primitive(source: Schema, value: Any, target: Schema) -> Any:
    if source.type is target.type or (source.type, target.type) not in _PROMOTABLE:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SchemaProjectorException(f"Cannot project {value!r} onto {target.type}: not a number")
    if target.type in _INTEGRAL:
        return value
    as_float = float(value)
    if target.type is SchemaType.FLOAT32 and source.type in _INTEGRAL:
        # Kafka's floatValue(): a wide integer loses precision as a 32-bit float.
        as_float = float(_struct.unpack("<f", _struct.pack("<f", as_float))[0])
    return as_float
