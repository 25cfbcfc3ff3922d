"""Compiled per-schema plans: the fast paths of the Protobuf and JSON Schema converters.

A plan is one generated Python function per schema (built once, kept by the converter) that does
a record's whole conversion with the struct's values read straight from its slots, the common
field types inlined, and anything uncommon handed to the very functions the general path uses
(:mod:`._protobuf_data`, :mod:`._json_schema_data`), so a plan's output is the general path's by
construction. A plan answers ``None`` when a record is not one it is sure of (a value whose exact
type its checks do not recognise, a struct of another schema object, any error); the converter
then takes the general path, which gives the same result or raises its own error. The checks are
those of :mod:`cdk.data._checks`: a value they accept is one validation accepts.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from cdk.data import Schema, SchemaAndValue, _checks

__all__: list[str] = []

Encode = Callable[[Any], "bytes | None"]
"""A compiled serializer: the record's bytes, or ``None`` to take the general path."""

Decode = Callable[[bytes], "SchemaAndValue | None"]
"""A compiled deserializer of the whole payload, or ``None`` to take the general path."""


def attribute(name: str) -> bool:
    """Whether ``name`` can be written as ``obj.name`` in generated code."""
    return name.isidentifier() and not keyword.iskeyword(name)


def check(schema: Schema, var: str, names: dict[str, Any]) -> str:
    """An expression, true when ``var`` (possibly ``None``) is certainly valid for ``schema``."""
    return _checks._expression(schema, var, names)


def test(schema: Schema, var: str, names: dict[str, Any]) -> str:
    """An expression, true when ``var`` (not ``None``) is certainly valid for ``schema``."""
    return _checks._test(schema, var, names)


def build(name: str, source: str, names: dict[str, Any], schema: Schema) -> Any:
    """The function ``name`` defined by ``source``, with ``names`` as its globals."""
    exec(compile(source, f"<{name} {schema!r}>", "exec"), names)
    return names[name]
