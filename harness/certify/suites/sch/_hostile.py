"""SCH-09's values: the driver's schema and limits as a plan, and the records it makes.

:func:`plan_for` reads the driver's value schema and limits into a :class:`Plan`;
:meth:`Plan.contents` draws what goes into the records (every corner value of every drawn
field, then values hypothesis draws with the run's seed); :func:`sink_value` and
:func:`source_value` make the values sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdk.data import Schema, SchemaType, Struct
from harness._hostile import corner_values, hostile_values
from harness._limits import Limit, check_limits
from harness._rules import limit_problems, rules_for
from harness.certify._checks import CheckFailed, CheckNotVerified
from harness.certify.suites._hypothesis import draw_examples
from harness.certify.suites.sch._common import _describe, _is_struct

__all__: list[str] = []

#: Records drawn by hypothesis after the corner values (the corners come first, every one).
RANDOM_RECORDS = 40
#: The most records SCH-09 sends in its first batch (corners beyond it are left out).
MAX_RECORDS = 200
#: The field every record keeps: it carries the record's id.
ID_FIELD = "id"
#: The value types a value that is not a struct can carry hostile content in.
_APPENDABLE = frozenset({SchemaType.STRING, SchemaType.BYTES, SchemaType.ARRAY, SchemaType.MAP})


@dataclass(frozen=True)
class Plan:
    """What SCH-09 draws for one driver.

    Attributes:
        schema: the driver's value schema.
        limits: the driver's declared limits.
        fixed: the top-level fields kept as the driver makes them (``id``, :meth:`Limit.fixed`,
            :meth:`Limit.server_assigned`).
        drawn: the top-level fields drawn (empty for a value that is not a struct).
        server_assigned: the fixed fields the system assigns (:meth:`Limit.server_assigned`):
            what comes back there is not compared.
    """

    schema: Schema
    limits: tuple[Limit, ...]
    fixed: tuple[str, ...]
    drawn: tuple[str, ...]
    server_assigned: tuple[str, ...] = ()

    @property
    def struct(self) -> bool:
        """Whether the values are structs (else bare values: text, bytes...)."""
        return _is_struct(self.schema)

    def contents(self, seed: int, home: Path) -> list[Any]:
        """The hostile contents of the records, in order: corners first, then drawn ones.

        For a struct, a mapping of each drawn field to its value; else the value itself.
        """
        if self.struct:
            fields = {f.name: f.schema for f in self.schema.fields if f.name in self.drawn}
            corners = {name: corner_values(s, self.limits, name) for name, s in fields.items()}
            longest = max((len(v) for v in corners.values()), default=0)
            out: list[Any] = [
                {name: values[i % len(values)] for name, values in corners.items() if values}
                for i in range(min(longest, MAX_RECORDS - RANDOM_RECORDS))
            ]
            from hypothesis import strategies as st

            strategy = st.fixed_dictionaries(
                {name: hostile_values(s, self.limits, name) for name, s in fields.items()}
            )
            return out + draw_examples(strategy, RANDOM_RECORDS, seed, home)
        schema = _required(self.schema)
        values = corner_values(schema, self.limits, "")
        drawn = draw_examples(hostile_values(schema, self.limits, ""), RANDOM_RECORDS, seed, home)
        return distinct([*values, *drawn])[:MAX_RECORDS]

    def describe_limits(self) -> list[str]:
        """Every declared limit, as the report lists it."""
        return [str(limit) for limit in self.limits]


def plan_for(schema: Schema, limits: object, driver: str) -> Plan:
    """The plan for a driver's ``schema`` and ``value_limits``.

    Raises:
        CheckFailed: the limits are not a sequence of Limit, or name a field the schema does
            not have (or one of another type).
        CheckNotVerified: the schema can carry no hostile value (a bare number, a boolean).
    """
    if not isinstance(schema, Schema):
        raise CheckFailed(
            "the driver's value_schema() to return a cdk.Schema",
            f"{driver}.value_schema() returned {type(schema).__name__} {schema!r:.200}",
        )
    try:
        declared = tuple(check_limits(limits))
    except TypeError as exc:
        raise CheckFailed(
            "the driver's value_limits to be a sequence of harness.Limit", str(exc)
        ) from None
    problems = limit_problems(schema, declared)
    if problems:
        raise CheckFailed(
            "every declared limit to name a field of the value schema, of a type it applies to",
            f"{driver}.value_limits: " + "; ".join(problems),
        )
    if _is_struct(schema):
        fixed = [f.name for f in schema.fields if f.name == ID_FIELD]
        fixed += [
            f.name
            for f in schema.fields
            if rules_for(declared, f.name).fixed and f.name != ID_FIELD
        ]
        drawn = tuple(f.name for f in schema.fields if f.name not in fixed)
        assigned = tuple(
            f.name for f in schema.fields if rules_for(declared, f.name).server_assigned
        )
        return Plan(schema, declared, tuple(fixed), drawn, assigned)
    if schema.type not in _APPENDABLE or schema.name is not None:
        raise CheckNotVerified(
            f"the driver's value schema is {_describe(schema)}: SCH-09 puts hostile values in "
            "the fields of a STRUCT, or appends them to a STRING, BYTES, ARRAY or MAP value, "
            "and a value of this type has nowhere to carry them next to its record id (give "
            "value_schema() a STRUCT)"
        )
    return Plan(schema, declared, (), ())


# ---------------------------------------------------------------------------------------------
# Building values


def sink_value(plan: Plan, base: Any, content: Any) -> Any:
    """The value a sink gets: ``base`` (the driver's ``value()``) with ``content`` in it."""
    schema = plan.schema
    if plan.struct:
        struct = Struct(schema)
        for f in schema.fields:
            if f.name in content:
                struct.put(f.name, content[f.name])
            else:
                struct.put(f.name, get_field(base, f.name))
        return struct
    if content is None:
        return base
    if schema.type is SchemaType.MAP:
        merged = dict(base or {})
        merged.update({k: v for k, v in content.items() if k not in merged})
        return merged
    if schema.type is SchemaType.ARRAY:
        return [*(base or []), *content]
    return base + content


def source_value(plan: Plan, record_id: int, content: Any) -> Any:
    """The value a source driver writes: ``content``, with the harness's id and fixed fields."""
    if not plan.struct:
        return content
    from harness._driver import _field_value

    struct = Struct(plan.schema)
    for f in plan.schema.fields:
        if f.name in content:
            struct.put(f.name, content[f.name])
        elif f.name == ID_FIELD and f.schema.type is SchemaType.STRING:
            struct.put(f.name, str(record_id))
        else:
            struct.put(f.name, _field_value(record_id, f.name, f.schema))
    return struct


def get_field(value: Any, name: str) -> Any:
    """Field ``name`` of a Struct or a mapping (None when it has none)."""
    if isinstance(value, Struct):
        return value.get(name) if value.schema.field(name) is not None else None
    if isinstance(value, Mapping):
        return value.get(name)
    return None


def _required(schema: Schema) -> Schema:
    if not schema.optional:
        return schema
    return Schema(
        schema.type,
        optional=False,
        name=schema.name,
        parameters=schema.parameters,
        key_schema=schema.key_schema if schema.type is SchemaType.MAP else None,
        value_schema=schema.value_schema
        if schema.type in (SchemaType.MAP, SchemaType.ARRAY)
        else None,
    )


def distinct(values: Sequence[Any]) -> list[Any]:
    """``values`` without repeats (by their ``repr``), in order."""
    seen: set[str] = set()
    out = []
    for value in values:
        marker = repr(value)
        if marker not in seen:
            seen.add(marker)
            out.append(value)
    return out
