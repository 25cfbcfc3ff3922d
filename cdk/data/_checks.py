"""Validation compiled once per schema: the fast path of :func:`~cdk.data.validate_value`.

A schema's *check* is a function of one value that returns ``True`` when the value is certainly
valid for the schema, and ``False`` when it may not be. It tests exact types (``type(v) is
int``), so it is a few comparisons for the values connectors build (``int``, ``str``, ``float``,
``datetime``...); whatever it does not recognise (a subclass, a ``tuple`` for an ARRAY, a struct
of an equal but distinct schema, an invalid value) makes it answer ``False``, and the caller then
runs the full validation of :mod:`._schema`, which accepts the value or raises its error. So the
values a check accepts are a subset of those the full validation accepts, and every error
message is the full validation's own.

A STRUCT schema also gets a *fields check* of a struct's value list (what
:meth:`~cdk.data.Struct.validate` verifies), generated as one Python function with the common
field types inlined. Both are built on first use and kept on the (immutable) schema.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cdk.data._schema import SchemaType

if TYPE_CHECKING:
    from cdk.data._schema import Schema

__all__ = ["compile_check", "compile_fields_check"]

Check = Callable[[Any], bool]

_INT_RANGES = {
    SchemaType.INT8: (-(2**7), 2**7 - 1),
    SchemaType.INT16: (-(2**15), 2**15 - 1),
    SchemaType.INT32: (-(2**31), 2**31 - 1),
    SchemaType.INT64: (-(2**63), 2**63 - 1),
}

# The one class a logical type's values have (exactly; subclasses take the full validation).
_LOGICAL_TYPES: dict[str, type] = {
    "org.apache.kafka.connect.data.Decimal": _decimal.Decimal,
    "org.apache.kafka.connect.data.Date": _dt.date,
    "org.apache.kafka.connect.data.Time": _dt.time,
    "org.apache.kafka.connect.data.Timestamp": _dt.datetime,
}

_SIMPLE_TYPES: dict[SchemaType, str] = {
    SchemaType.STRING: "type({v}) is str",
    SchemaType.BOOLEAN: "({v} is True or {v} is False)",
    SchemaType.FLOAT64: "(type({v}) is float or type({v}) is int)",
    SchemaType.FLOAT32: "(type({v}) is float or type({v}) is int)",
    SchemaType.BYTES: "type({v}) is bytes",
}


def _never(value: Any) -> bool:
    return False


def compile_check(schema: Schema) -> Check:
    """The check of ``schema`` (built now; the caller keeps it on the schema)."""
    names: dict[str, Any] = {}
    expr = _expression(schema, "v", names)
    return _function("check", "v", f"    return {expr}\n", names, schema)


def compile_fields_check(schema: Schema, *, defaults: bool = True) -> Callable[[list[Any]], bool]:
    """The check of a STRUCT schema's value list, one value per field in field order.

    Args:
        schema: a STRUCT schema.
        defaults: whether ``None`` is valid for a field with a default (as in a struct, where the
            default stands in for it: :meth:`~cdk.data.Struct.validate`), or only for an
            optional field (as :meth:`~cdk.data.Struct.put` checks a value).
    """
    names: dict[str, Any] = {}
    fields = schema.fields
    if not fields:
        return _function("fields_check", "values", "    return not values\n", names, schema)
    terms = []
    for f in fields:
        var = f"x{f.index}"
        names[f"s{f.index}"] = f.schema
        test = _expression(f.schema, var, names)
        # The default is read when needed: a schema's default may be set just after it is built.
        if defaults:
            test = f"({test} or {var} is None and s{f.index}.default_value is not None)"
        terms.append(test)
    unpack = ", ".join(f"x{f.index}" for f in fields) + ","
    body = (
        "    if len(values) != N:\n"
        "        return False\n"
        f"    {unpack} = values\n"
        f"    return {' and '.join(terms)}\n"
    )
    names["N"] = len(fields)
    return _function("fields_check", "values", body, names, schema)


def _function(
    name: str, arg: str, body: str, names: dict[str, Any], schema: Schema
) -> Callable[[Any], bool]:
    source = f"def {name}({arg}):\n{body}"
    exec(compile(source, f"<{name} {schema!r}>", "exec"), names)
    function: Callable[[Any], bool] = names[name]
    return function


def _expression(schema: Schema, var: str, names: dict[str, Any]) -> str:
    """A Python expression, true when the value in ``var`` is certainly valid for ``schema``."""
    test = _test(schema, var, names)
    if schema.optional:
        return f"({var} is None or {test})"
    return test


def _test(schema: Schema, var: str, names: dict[str, Any]) -> str:
    """As :func:`_expression`, for a value that is not ``None``."""
    if schema.name is not None and schema.name in _LOGICAL_TYPES:
        key = f"t_{len(names)}"
        names[key] = _LOGICAL_TYPES[schema.name]
        return f"type({var}) is {key}"
    stype = schema.type
    if stype in _INT_RANGES:
        lo, hi = _INT_RANGES[stype]
        return f"(type({var}) is int and {lo} <= {var} <= {hi})"
    simple = _SIMPLE_TYPES.get(stype)
    if simple is not None:
        return simple.format(v=var)
    # Containers and structs: a function of their own, called from here.
    key = f"c_{len(names)}"
    names[key] = _container_check(schema)
    return f"{key}({var})"


def _container_check(schema: Schema) -> Check:
    from cdk.data._struct import Struct

    stype = schema.type
    names: dict[str, Any] = {}
    if stype is SchemaType.STRUCT:
        names.update(Struct=Struct, S=schema, fields_check=compile_fields_check(schema))
        body = "    return type(v) is Struct and v.schema is S and fields_check(v._values)\n"
        return _function("struct_check", "v", body, names, schema)
    if stype is SchemaType.ARRAY:
        element = schema._value_schema
        if element is None:
            return _never  # the full validation words the missing element schema
        item = _expression(element, "x", names)
        body = f"    return type(v) is list and all([{item} for x in v])\n"
        return _function("array_check", "v", body, names, schema)
    if stype is SchemaType.MAP:
        key_schema, value_schema = schema._key_schema, schema._value_schema
        if key_schema is None or value_schema is None:
            return _never
        key = _expression(key_schema, "k", names)
        value = _expression(value_schema, "x", names)
        body = f"    return type(v) is dict and all([{key} and {value} for k, x in v.items()])\n"
        return _function("map_check", "v", body, names, schema)
    return _never
