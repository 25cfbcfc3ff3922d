"""Compiled plans of the :class:`~cdk.converters.JsonSchemaConverter` (see :mod:`._sr_plan`).

Serializing, a plan reads the struct's slots, checks them as validation would and builds the JSON
object in one pass: integers, floats, booleans and strings as they are (what
:func:`._json_schema_data.from_connect_data` gives for them), nested structs as nested objects,
anything else (bytes, logical types, arrays, maps, unions, a default standing in for a ``None``)
by ``from_connect_data`` itself; then ``orjson.dumps`` as the general path. Deserializing, it
parses with ``orjson.loads`` (as the general path does for schemas without BYTES) and takes the
same four types as they are when their exact type is the schema's, the rest by
:func:`._json_schema_data.to_connect_data`, each value checked as :meth:`Struct.put` validates it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from cdk.converters import _json_schema_data as _data
from cdk.converters._sr_plan import Decode, Encode, build, check, test
from cdk.data import Date, Decimal, Schema, SchemaAndValue, SchemaType, Struct, Time, Timestamp

__all__: list[str] = []

_LOGICAL = frozenset(
    {Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME}
)
_INTS = {
    SchemaType.INT8: (-(2**7), 2**7 - 1),
    SchemaType.INT16: (-(2**15), 2**15 - 1),
    SchemaType.INT32: (-(2**31), 2**31 - 1),
    SchemaType.INT64: (-(2**63), 2**63 - 1),
}
_AS_IS = frozenset(
    {*_INTS, SchemaType.FLOAT32, SchemaType.FLOAT64, SchemaType.BOOLEAN, SchemaType.STRING}
)


def _as_is(schema: Schema) -> bool:
    """Whether a value of ``schema`` is its own JSON (and JSON of it its own value)."""
    return schema.type in _AS_IS and schema.name not in _LOGICAL


def _plain_struct(schema: Schema) -> bool:
    return schema.type is SchemaType.STRUCT and not _data.is_union(schema)


class _EncoderGen:
    def __init__(self, config: _data.JsonSchemaDataConfig) -> None:
        self.names: dict[str, Any] = {
            "Struct": Struct,
            "fcd": _data.from_connect_data,
            "CFG": config,
        }
        self.count = 0

    def key(self, prefix: str, value: Any) -> str:
        self.count += 1
        name = f"{prefix}{self.count}_"
        self.names[name] = value
        return name

    def unpack(self, schema: Schema, values: str, indent: str) -> tuple[list[str], list[str]]:
        self.count += 1
        xs = [f"x{self.count}_{f.index}" for f in schema.fields]
        return xs, ([f"{indent}{', '.join(xs)}, = {values}"] if xs else [])

    def value(self, schema: Schema, x: str, indent: str) -> tuple[list[str], str]:
        """Lines and an expression giving the JSON of checked, non-``None`` value ``x``."""
        if _as_is(schema):
            return [], x
        if _plain_struct(schema):
            d = f"d{self.count + 1}_"
            self.count += 1
            xs, unpack = self.unpack(schema, f"{x}._values", indent)
            return [*unpack, *self.object(schema, d, xs, indent)], d
        return [], f"fcd({self.key('s', schema)}, {x}, CFG)"

    def object(self, schema: Schema, d: str, xs: list[str], indent: str) -> list[str]:
        """Lines building the JSON object ``d`` of a struct's (checked) slots in ``xs``."""
        lines: list[str] = []
        literal: list[str] = []
        fields = schema.fields
        rest = 0
        # the leading fields that the checks prove are present and need no lines, in a literal
        for f, x in zip(fields, xs, strict=True):
            if f.schema.optional or not _as_is(f.schema):
                break
            literal.append(f"{self.key('n', f.name)}: {x}")
            rest += 1
        lines.append(f"{indent}{d} = {{{', '.join(literal)}}}")
        for f, x in list(zip(fields, xs, strict=True))[rest:]:
            n = self.key("n", f.name)
            s = self.key("s", f.schema)
            before, expr = self.value(f.schema, x, indent + "    ")
            if f.schema.optional:
                lines += [
                    f"{indent}if {x} is None:",
                    f"{indent}    {x} = {s}.default_value",
                    f"{indent}    if {x} is not None:",
                    f"{indent}        {d}[{n}] = fcd({s}, {x}, CFG)",
                    f"{indent}else:",
                    *before,
                    f"{indent}    {d}[{n}] = {expr}",
                ]
            else:  # the checks passed: not None
                lines += [line[4:] for line in before]
                lines.append(f"{indent}{d}[{n}] = {expr}")
        return lines


def compile_encoder(
    schema: Schema,
    config: _data.JsonSchemaDataConfig,
    header: bytes,
    default: Callable[[Any], Any],
) -> Encode | None:
    """The plan serializing structs of ``schema`` (``header`` first), ``default`` for orjson."""
    if not _plain_struct(schema):
        return None
    gen = _EncoderGen(config)
    names = gen.names
    names.update(S=schema, P=header, dumps=orjson.dumps, default=default)
    lines = [
        "if type(value) is not Struct:",
        "    return None",
        "vs = value.schema",
        "if vs is not S and vs != S:",
        "    return None",
    ]
    xs, unpack = gen.unpack(schema, "value._values", "")
    lines += unpack
    if xs:
        checks = " and ".join(
            check(f.schema, x, names) for f, x in zip(schema.fields, xs, strict=True)
        )
        lines += [f"if not ({checks}):", "    return None"]
    lines += gen.object(schema, "d", xs, "")
    lines.append("return P + dumps(d, default=default)")
    body = "".join(f"        {line}\n" for line in lines)
    source = f"def encode(value):\n    try:\n{body}    except Exception:\n        return None\n"
    encode: Encode = build("encode", source, names, schema)
    return encode


def compile_decoder(schema: Schema, offset: int) -> Decode | None:
    """The plan reading a whole payload (the JSON at ``offset``) as ``schema``."""
    if not _plain_struct(schema):
        return None
    names: dict[str, Any] = {
        "loads": orjson.loads,
        "S": schema,
        "SV": SchemaAndValue,
        "trusted": Struct._trusted,
        "tcd": _data.to_connect_data,
        "N": offset,
    }
    lines = [
        "def decode(data):",
        "    try:",
        "        t = loads(data[N:])",
        "    except Exception:",
        "        return None",
        "    try:",
        "        if type(t) is not dict:",
        "            return None",
        "        g = t.get",
    ]
    xs = []
    for f in schema.fields:
        x = f"x{f.index}"
        xs.append(x)
        names[f"n{f.index}_"] = f.name
        names[f"s{f.index}_"] = f.schema
        ok = test(f.schema, x, names)
        if f.schema.type in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            ok = f"type({x}) is float"  # an int reads as float(int): the general path's
        if _as_is(f.schema):
            lines.append(f"        {x} = g(n{f.index}_)")
        else:
            lines.append(f"        {x} = tcd(s{f.index}_, g(n{f.index}_))")
        lines += [f"        if {x} is not None and not {ok}:", "            return None"]
    lines += [
        f"        return SV(S, trusted(S, [{', '.join(xs)}]))",
        "    except Exception:",
        "        return None",
    ]
    decode: Decode = build("decode", "\n".join(lines) + "\n", names, schema)
    return decode
