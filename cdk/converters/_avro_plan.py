"""Compiled plans of the :class:`~cdk.converters.AvroConverter` (see :mod:`._sr_plan`).

For a record of primitive fields (optional ones as Avro unions with ``null``), logical types and
nested records, a plan writes and reads the Avro binary encoding itself, in one generated
function: zig-zag varints for ``int``/``long`` (and lengths and union indexes), IEEE 754
little-endian ``float``/``double``, one byte per ``boolean``, UTF-8 ``string``, length-prefixed
``bytes``, record fields in order, exactly as fastavro's ``schemaless_writer`` and
``schemaless_reader`` (which the general path uses) encode and decode them. Values are taken as
:meth:`._avro_data.AvroData.from_connect_data`/``to_connect_data`` take them (the same logical
conversions, ``float()`` of a float, the record's fields matched by name). A schema with
anything else (arrays, maps, enums, fixed, unions of several types, union structs, records whose
Avro fields are not the Connect fields in order) has no plan; a record the plan is not sure of
(a default standing in for a ``None``, a value of an inexact type, a payload that is not the
canonical encoding of a value: a boolean byte other than 0 or 1, a varint beyond 64 bits, an
``int`` beyond 32 bits, bad UTF-8, trailing bytes) takes the general path.
"""

from __future__ import annotations

import struct
from typing import Any

from cdk.converters._avro_common import (
    AvroDataConfig,
    is_union_schema,
    to_avro_logical,
    to_connect_logical,
    type_of,
)
from cdk.converters._avro_names import scrub_name
from cdk.converters._sr_plan import Decode, Encode, build, check
from cdk.data import Date, Decimal, Schema, SchemaAndValue, SchemaType, Struct, Time, Timestamp

__all__: list[str] = []

# The Avro type of a Connect type (or logical type name); anything else has no plan.
_AVRO_TYPES = {
    SchemaType.INT8: "int",
    SchemaType.INT16: "int",
    SchemaType.INT32: "int",
    SchemaType.INT64: "long",
    SchemaType.FLOAT32: "float",
    SchemaType.FLOAT64: "double",
    SchemaType.BOOLEAN: "boolean",
    SchemaType.STRING: "string",
    SchemaType.BYTES: "bytes",
    SchemaType.STRUCT: "record",
}
_LOGICAL_AVRO_TYPES = {
    Decimal.LOGICAL_NAME: "bytes",
    Date.LOGICAL_NAME: "int",
    Time.LOGICAL_NAME: "int",
    Timestamp.LOGICAL_NAME: "long",
}
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class _NoPlan(Exception):
    """The schema has a part a plan does not cover."""


def _is_null(node: Any) -> bool:
    return type_of(node) == "null"


def _member(node: Any) -> tuple[Any, int | None, int | None]:
    """The node values are written as, and the union indexes of ``null`` and of that node."""
    if not isinstance(node, list):
        return node, None, None
    if len(node) != 2 or sum(1 for m in node if _is_null(m)) != 1:
        raise _NoPlan
    null = 0 if _is_null(node[0]) else 1
    return node[1 - null], null, 1 - null


def _avro_type(schema: Schema, target: Any) -> str:
    """The Avro type a plan writes a value of ``schema`` as (checked against ``target``)."""
    if is_union_schema(schema):
        raise _NoPlan
    expected = _LOGICAL_AVRO_TYPES.get(schema.name or "") or _AVRO_TYPES.get(schema.type)
    if expected is None or type_of(target) != expected:
        raise _NoPlan
    return expected


def _record_fields(config: AvroDataConfig, schema: Schema, target: Any) -> list[Any]:
    """The Avro field of each Connect field, when they are the record's fields in order."""
    avro_fields = target.get("fields")
    if not isinstance(avro_fields, list) or len(avro_fields) != len(schema.fields):
        raise _NoPlan
    out = []
    for f, af in zip(schema.fields, avro_fields, strict=True):
        name = scrub_name(f.name) if config.scrub_invalid_names else f.name
        if not isinstance(af, dict) or af.get("name") != name:
            raise _NoPlan
        out.append(af)
    return out


class _Gen:
    def __init__(self) -> None:
        self.names: dict[str, Any] = {
            "Struct": Struct,
            "tal": to_avro_logical,
            "tcl": to_connect_logical,
            "trusted": Struct._trusted,
            "SV": SchemaAndValue,
            "pf": struct.Struct("<f").pack,
            "pd": struct.Struct("<d").pack,
            "uf": struct.Struct("<f").unpack_from,
            "ud": struct.Struct("<d").unpack_from,
            "rest": _varint_rest,
        }
        self.count = 0

    def key(self, prefix: str, value: Any) -> str:
        self.count += 1
        name = f"{prefix}{self.count}_"
        self.names[name] = value
        return name

    def var(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}_"

    # -- writing ---------------------------------------------------------------------------
    def write_struct(
        self, config: AvroDataConfig, schema: Schema, target: Any, xs: list[str], indent: str
    ) -> list[str]:
        """Lines writing a record from a struct's (checked) slots in ``xs``."""
        lines: list[str] = []
        for f, af, x in zip(schema.fields, _record_fields(config, schema, target), xs, strict=True):
            lines += [
                f"{indent}if {x} is None and {self.key('s', f.schema)}.default_value is not None:",
                f"{indent}    return None",  # the default stands in: the general path writes it
            ]
            lines += self.write(config, f.schema, af["type"], x, indent)
        return lines

    def write(
        self, config: AvroDataConfig, schema: Schema, node: Any, x: str, indent: str
    ) -> list[str]:
        """Lines writing ``x`` (checked; ``None`` only if ``schema`` is optional)."""
        target, null, index = _member(node)
        avro = _avro_type(schema, target)
        value = self.write_value(config, schema, target, avro, x, indent + "    ")
        if null is None:
            if schema.optional:  # None for a type that is not nullable: the general path's error
                return [
                    f"{indent}if {x} is None:",
                    f"{indent}    return None",
                    *[line[4:] for line in value],
                ]
            return [line[4:] for line in value]
        return [
            f"{indent}if {x} is None:",
            f"{indent}    out.append({2 * null})",
            f"{indent}else:",
            f"{indent}    out.append({2 * (index or 0)})",
            *value,
        ]

    def write_value(
        self, config: AvroDataConfig, schema: Schema, target: Any, avro: str, x: str, indent: str
    ) -> list[str]:
        if avro == "record":
            xs = [f"{self.var('x')}" for _ in schema.fields]
            unpack = [f"{indent}{', '.join(xs)}, = {x}._values"] if xs else []
            return unpack + self.write_struct(config, schema, target, xs, indent)
        lines: list[str] = []
        if schema.name in _LOGICAL_AVRO_TYPES:
            y = self.var("y")
            lines.append(f"{indent}{y} = tal({self.key('s', schema)}, {x})")
            x = y
            if avro in ("int", "long"):
                lo, hi = _INT32 if avro == "int" else _INT64
                lines += [
                    f"{indent}if type({x}) is not int or not {lo} <= {x} <= {hi}:",
                    f"{indent}    return None",
                ]
        if avro in ("int", "long"):
            return lines + _write_varint(f"(({x} << 1) ^ ({x} >> 63))", indent)
        if avro == "float":
            return [*lines, f"{indent}out += pf(float({x}))"]
        if avro == "double":
            return [*lines, f"{indent}out += pd(float({x}))"]
        if avro == "boolean":
            return [*lines, f"{indent}out.append(1 if {x} else 0)"]
        b = self.var("b")
        encode = f"{x}.encode()" if avro == "string" else f"bytes({x})"
        return [
            *lines,
            f"{indent}{b} = {encode}",
            *_write_varint(f"(len({b}) << 1)", indent),
            f"{indent}out += {b}",
        ]

    # -- reading ---------------------------------------------------------------------------
    def read_struct(self, schema: Schema, target: Any, indent: str) -> tuple[list[str], str]:
        """Lines reading a record of ``schema``, and the expression of its struct."""
        avro_fields = target.get("fields")
        if not isinstance(avro_fields, list) or len(avro_fields) != len(schema.fields):
            raise _NoPlan
        lines: list[str] = []
        xs = []
        for f, af in zip(schema.fields, avro_fields, strict=True):
            if not isinstance(af, dict):
                raise _NoPlan
            x = self.var("x")
            xs.append(x)
            lines += self.read(f.schema, af.get("type"), x, indent)
        return lines, f"trusted({self.key('S', schema)}, [{', '.join(xs)}])"

    def read(self, schema: Schema, node: Any, x: str, indent: str) -> list[str]:
        """Lines reading a value of ``schema`` into ``x``."""
        target, null, index = _member(node)
        avro = _avro_type(schema, target)
        value = self.read_value(schema, target, avro, x, indent + "    ")
        if null is None:
            return [line[4:] for line in value]
        n = self.var("n")
        lines = _read_varint(n, indent)
        lines += [f"{indent}if {n} == {2 * null}:"]
        if schema.optional:
            lines.append(f"{indent}    {x} = None")
        else:  # the general path's "null value for non-optional schema"
            lines.append(f"{indent}    return None")
        return [
            *lines,
            f"{indent}elif {n} == {2 * (index or 0)}:",
            *value,
            f"{indent}else:",
            f"{indent}    return None",
        ]

    def read_value(self, schema: Schema, target: Any, avro: str, x: str, indent: str) -> list[str]:
        if avro == "record":
            lines, expr = self.read_struct(schema, target, indent)
            return [*lines, f"{indent}{x} = {expr}"]
        raw = self.var("r") if schema.name in _LOGICAL_AVRO_TYPES else x
        if avro in ("int", "long"):
            n = self.var("n")
            lines = _read_varint(n, indent)
            lines.append(f"{indent}{raw} = ({n} >> 1) ^ -({n} & 1)")
            if avro == "int":
                lo, hi = _INT32
                lines += [f"{indent}if not {lo} <= {raw} <= {hi}:", f"{indent}    return None"]
        elif avro in ("float", "double"):
            size, unpack = (4, "uf") if avro == "float" else (8, "ud")
            lines = [f"{indent}{raw}, = {unpack}(data, p)", f"{indent}p += {size}"]
        elif avro == "boolean":
            b = self.var("b")
            lines = [
                f"{indent}{b} = data[p]",
                f"{indent}p += 1",
                f"{indent}if {b} > 1:",
                f"{indent}    return None",
                f"{indent}{raw} = {b} == 1",
            ]
        else:
            n = self.var("n")
            e = self.var("e")
            lines = _read_varint(n, indent)
            lines += [
                f"{indent}if {n} & 1:",
                f"{indent}    return None",
                f"{indent}{e} = p + ({n} >> 1)",
                f"{indent}if {e} > len(data):",
                f"{indent}    return None",
                f"{indent}{raw} = data[p:{e}]" + (".decode()" if avro == "string" else ""),
                f"{indent}p = {e}",
            ]
        if raw != x:
            lines.append(f"{indent}{x} = tcl({self.key('s', schema)}, {raw})")
        return lines


def _write_varint(expr: str, indent: str) -> list[str]:
    """Lines appending the varint of ``expr`` (a non-negative int below 2**64) to ``out``."""
    return [
        f"{indent}n = {expr}",
        f"{indent}while n > 127:",
        f"{indent}    out.append((n & 127) | 128)",
        f"{indent}    n >>= 7",
        f"{indent}out.append(n)",
    ]


def _read_varint(n: str, indent: str) -> list[str]:
    """Lines reading an unsigned varint at ``p`` in ``data`` into ``n`` (at most 64 bits)."""
    return [
        f"{indent}{n} = data[p]",
        f"{indent}p += 1",
        f"{indent}if {n} > 127:",
        f"{indent}    {n}, p = rest(data, p, {n})",
    ]


def _varint_rest(data: bytes, p: int, first: int) -> tuple[int, int]:
    """The rest of a varint whose first byte was ``first``; raises beyond 10 bytes or 64 bits."""
    n = first & 0x7F
    shift = 7
    while True:
        b = data[p]
        p += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")
    if n >= 1 << 64:
        raise ValueError("varint beyond 64 bits")
    return n, p


def compile_encoder(
    config: AvroDataConfig, schema: Schema, resolved: Any, header: bytes
) -> Encode | None:
    """The plan writing structs of ``schema`` as the (resolved) Avro record ``resolved``."""
    if schema.type is not SchemaType.STRUCT or is_union_schema(schema):
        return None
    if type_of(resolved) != "record":
        return None
    gen = _Gen()
    names = gen.names
    names.update(S=schema, H=header)
    xs = [gen.var("v") for _ in schema.fields]
    lines = [
        "if type(value) is not Struct:",
        "    return None",
        "vs = value.schema",
        "if vs is not S and vs != S:",
        "    return None",
    ]
    if xs:
        checks = " and ".join(
            check(f.schema, x, names) for f, x in zip(schema.fields, xs, strict=True)
        )
        lines += [f"{', '.join(xs)}, = value._values", f"if not ({checks}):", "    return None"]
    lines.append("out = bytearray(H)")
    try:
        lines += gen.write_struct(config, schema, resolved, xs, "")
    except _NoPlan:
        return None
    lines.append("return bytes(out)")
    body = "".join(f"        {line}\n" for line in lines)
    source = f"def encode(value):\n    try:\n{body}    except Exception:\n        return None\n"
    encode: Encode = build("encode", source, names, schema)
    return encode


def compile_decoder(schema: Schema, resolved: Any, offset: int) -> Decode | None:
    """The plan reading a whole payload (the Avro record ``resolved`` at ``offset``)."""
    if schema.type is not SchemaType.STRUCT or is_union_schema(schema):
        return None
    if type_of(resolved) != "record":
        return None
    gen = _Gen()
    names = gen.names
    names.update(S=schema, N=offset)
    try:
        lines, expr = gen.read_struct(schema, resolved, "")
    except _NoPlan:
        return None
    lines = ["p = N", *lines, "if p != len(data):", "    return None", f"return SV(S, {expr})"]
    body = "".join(f"        {line}\n" for line in lines)
    source = f"def decode(data):\n    try:\n{body}    except Exception:\n        return None\n"
    decode: Decode = build("decode", source, names, schema)
    return decode
