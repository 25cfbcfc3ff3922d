"""Sink schemas and values derived from the driver's, and the incompatible change SCH-08 makes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cdk.data import (
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    SchemaType,
    Struct,
)
from harness._driver import SinkDriver
from harness.certify._checks import CheckNotVerified, CheckSkipped
from harness.certify.suites.sch._common import _describe, _is_struct

__all__: list[str] = []


def _struct_schema(d: SinkDriver, verb: str) -> Schema:
    schema = d.value_schema()
    if not _is_struct(schema) and d.accepts_any_schema:
        raise CheckSkipped(
            f"not applicable: the driver {type(d).__name__} declares accepts_any_schema and its "
            f"value schema is {_describe(schema)}, not a STRUCT: there is no field to {verb}",
            because="accepts-any-schema",
        )
    if not _is_struct(schema):
        raise CheckNotVerified(
            f"the driver's value schema is {_describe(schema)}, not a STRUCT: there is no field "
            f"to {verb}, so schema migration is not verified (give value_schema() a STRUCT, "
            "or declare accepts_any_schema for a sink that stores values without a schema)"
        )
    return schema


def _rebuild(base: Schema, fields: Sequence[tuple[str, Schema]], *, bump: int = 0) -> Schema:
    """A struct schema like ``base`` (name, version, doc) with ``fields``."""
    builder = SchemaBuilder.struct()
    if base.name is not None:
        builder.name(base.name)
    if base.version is not None:
        builder.version(base.version + bump)
    if base.doc is not None:
        builder.doc(base.doc)
    if base.optional:
        builder.optional()
    for name, schema in fields:
        builder.field(name, schema)
    return builder.build()


def _key(d: SinkDriver, record_id: int) -> SchemaAndValue:
    return SchemaAndValue(d.key_schema(), d.key(record_id))


def _value(d: SinkDriver, record_id: int, schema: Schema) -> Struct:
    """The driver's value in ``schema``, or its value in its own schema mapped onto ``schema``."""
    try:
        value = d.value(record_id, schema)
    except Exception:  # noqa: BLE001 - a driver that only knows its own schema
        value = None
    if isinstance(value, Struct) and value.schema == schema:
        return value
    own = d.value(record_id, d.value_schema())
    out = Struct(schema)
    for f in schema.fields:
        if own.schema.field(f.name) is not None:
            out.put(f.name, own.get(f.name))
        elif f.schema.type is SchemaType.STRING:
            out.put(f.name, f"{f.name}-{record_id}")
    return out


@dataclass(frozen=True)
class _Change:
    """An incompatible variant of a schema and how to make its values."""

    schema: Schema
    text: str
    value: Callable[[Struct], Struct]


_INTEGERS = frozenset({SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64})


def _incompatible(base: Schema) -> _Change | None:
    """``base`` with a field's type changed to STRING (``id`` first), else a required field gone."""
    candidates = sorted(
        (
            f
            for f in base.fields
            if f.schema.name is None
            and f.schema.type.is_primitive
            and f.schema.type is not SchemaType.STRING
            and not f.schema.optional
        ),
        key=lambda f: f.name != "id" or f.schema.type not in _INTEGERS,
    )
    if candidates:
        changed = candidates[0]
        retyped = _rebuild(
            base,
            [(f.name, Schema.STRING_SCHEMA if f is changed else f.schema) for f in base.fields],
        )

        def as_string(value: Struct) -> Struct:
            out = Struct(retyped)
            for f in retyped.fields:
                original = value.get(f.name)
                out.put(f.name, f"x{original}" if f.name == changed.name else original)
            return out

        return _Change(
            retyped,
            f"field {changed.name!r} changed from {_describe(changed.schema)} to STRING "
            '("x<value>")',
            as_string,
        )
    required = [f for f in base.fields if not f.schema.optional and f.name != "id"]
    if not required:
        return None
    gone = required[0]
    smaller = _rebuild(base, [(f.name, f.schema) for f in base.fields if f is not gone])

    def without(value: Struct) -> Struct:
        out = Struct(smaller)
        for f in smaller.fields:
            out.put(f.name, value.get(f.name))
        return out

    return _Change(smaller, f"the required field {gone.name!r} missing", without)
