"""Compiled plans of the :class:`~cdk.converters.ProtobufConverter` (see :mod:`._sr_plan`).

Serializing, a plan reads the struct's slots, checks them as validation would, creates the
message and sets each field: scalars (and nested plain messages) by attribute, in one pass;
anything else (maps, arrays, enums, logical types, wrappers, unions, a default standing in for a
``None``) by :func:`._protobuf_data.fill_field`/:func:`._protobuf_data.set_field`, the general
path's own functions. Deserializing, it parses the message with the message class's
``FromString`` (the upb C backend where installed) and reads scalar fields by attribute, the rest
by :func:`._protobuf_data.field_in`, each value checked as :meth:`Struct.put` validates it.
"""

from __future__ import annotations

from typing import Any

from cdk.converters import _protobuf_data as _data
from cdk.converters._sr_plan import Decode, Encode, attribute, build, check, test
from cdk.data import Schema, SchemaAndValue, SchemaType, Struct

__all__: list[str] = []

# Message types the general path writes and reads specially (not as a nested Connect struct).
_SPECIAL = frozenset(
    {_data.TIMESTAMP_TYPE, _data.DATE_TYPE, _data.TIME_TYPE, _data.DECIMAL_TYPE, *_data._UNWRAPPED}
)


def _scalar(fd: Any) -> bool:
    return fd.type not in (fd.TYPE_MESSAGE, fd.TYPE_ENUM, fd.TYPE_GROUP) and not _data.repeated(fd)


def _nested(fd: Any, schema: Schema) -> bool:
    return (
        fd.type == fd.TYPE_MESSAGE
        and not _data.repeated(fd)
        and fd.message_type.full_name not in _SPECIAL
        and schema.type is SchemaType.STRUCT
        and not _data.is_union(schema)
    )


class _EncoderGen:
    def __init__(self) -> None:
        self.names: dict[str, Any] = {
            "Struct": Struct,
            "fill_field": _data.fill_field,
            "set_field": _data.set_field,
        }
        self.count = 0

    def key(self, prefix: str, value: Any) -> str:
        self.count += 1
        name = f"{prefix}{self.count}_"
        self.names[name] = value
        return name

    def unpack(self, schema: Schema, values: str, indent: str) -> tuple[list[str], list[str]]:
        """Variables for a struct's slots, and the line unpacking ``values`` into them."""
        self.count += 1
        xs = [f"x{self.count}_{f.index}" for f in schema.fields]
        return xs, ([f"{indent}{', '.join(xs)}, = {values}"] if xs else [])

    def fields(self, desc: Any, schema: Schema, msg: str, xs: list[str], indent: str) -> list[str]:
        """Lines setting message ``msg`` from a struct's (checked) slots in ``xs``."""
        lines: list[str] = []
        fields = schema.fields
        d = self.key("D", desc)
        for f, x in zip(fields, xs, strict=True):
            s = self.key("s", f.schema)
            fk = self.key("F", f)
            lines.append(f"{indent}if {x} is None:")
            lines.append(f"{indent}    {x} = {s}.default_value")
            lines.append(f"{indent}    if {x} is not None:")
            lines.append(f"{indent}        fill_field({msg}, {d}, {fk}, {x})")
            lines.append(f"{indent}else:")
            lines.extend(self.field(desc, f, x, msg, d, fk, indent + "    "))
        return lines

    def field(self, desc: Any, f: Any, x: str, msg: str, d: str, fk: str, indent: str) -> list[str]:
        fd = None if _data.is_union(f.schema) else _data.find_field(desc, f.name)
        if fd is not None and attribute(fd.name):
            if _scalar(fd):
                value = f"bytes({x})" if f.schema.type is SchemaType.BYTES else x
                return [f"{indent}{msg}.{fd.name} = {value}"]
            if _nested(fd, f.schema):
                sub = f"m{self.count + 1}_"
                self.count += 1
                xs, unpack = self.unpack(f.schema, f"{x}._values", indent)
                return [
                    f"{indent}{sub} = {msg}.{fd.name}",
                    *unpack,
                    *self.fields(fd.message_type, f.schema, sub, xs, indent),
                    f"{indent}{sub}.SetInParent()",
                ]
            return [
                f"{indent}set_field({msg}, {self.key('FD', fd)}, {self.key('s', f.schema)}, {x})"
            ]
        return [f"{indent}fill_field({msg}, {d}, {fk}, {x})"]


def compile_encoder(descriptor: Any, cls: Any, schema: Schema, prefix: bytes) -> Encode | None:
    """The plan serializing structs of ``schema`` as ``descriptor`` (bytes after ``prefix``)."""
    if schema.type is not SchemaType.STRUCT or _data.is_union(schema):
        return None
    gen = _EncoderGen()
    names = gen.names
    names.update(S=schema, C=cls, P=prefix)
    fields = schema.fields
    lines = [
        "    if type(value) is not Struct:",
        "        return None",
        "    vs = value.schema",
        "    if vs is not S and vs != S:",
        "        return None",
    ]
    xs, unpack = gen.unpack(schema, "value._values", "    ")
    lines += unpack
    if fields:
        checks = " and ".join(check(f.schema, x, names) for f, x in zip(fields, xs, strict=True))
        lines += [f"    if not ({checks}):", "        return None"]
    lines.append("    m = C()")
    lines += gen.fields(descriptor, schema, "m", xs, "    ")
    lines.append("    return P + m.SerializeToString()")
    body = "".join(f"    {line}\n" for line in lines)
    source = f"def encode(value):\n    try:\n{body}    except Exception:\n        return None\n"
    encode: Encode = build("encode", source, names, schema)
    return encode


def compile_decoder(descriptor: Any, cls: Any, schema: Schema, offset: int) -> Decode | None:
    """The plan reading a whole payload (the message at ``offset``) as ``schema``."""
    if schema.type is not SchemaType.STRUCT:
        return None
    names: dict[str, Any] = {
        "parse": cls.FromString,
        "S": schema,
        "SV": SchemaAndValue,
        "trusted": Struct._trusted,
        "field_in": _data.field_in,
        "ABSENT": _data.ABSENT,
        "D": descriptor,
        "N": offset,
    }
    lines = [
        "def decode(data):",
        "    try:",
        "        m = parse(data[N:])",
        "    except Exception:",
        "        return None",
        "    try:",
    ]
    xs = []
    for f in schema.fields:
        x = f"x{f.index}"
        xs.append(x)
        names[f"F{f.index}_"] = f
        ok = test(f.schema, x, names)
        fd = None if _data.is_union(f.schema) else descriptor.fields_by_name.get(f.name)
        if fd is not None and attribute(fd.name) and _scalar(fd):
            value = f"m.{fd.name}"
            if f.schema.type is SchemaType.BYTES:
                value = f"bytes({value})"
            if _data.synthetic(fd):
                lines += [
                    f"        {x} = {value} if m.HasField({fd.name!r}) else None",
                    f"        if {x} is not None and not {ok}:",
                    "            return None",
                ]
            else:
                lines += [
                    f"        {x} = {value}",
                    f"        if not {ok}:",
                    "            return None",
                ]
        else:
            lines += [
                f"        {x} = field_in(m, D, F{f.index}_)",
                f"        if {x} is ABSENT:",
                f"            {x} = None",
                f"        elif not {ok}:",
                "            return None",
            ]
    lines += [
        f"        return SV(S, trusted(S, [{', '.join(xs)}]))",
        "    except Exception:",
        "        return None",
    ]
    decode: Decode = build("decode", "\n".join(lines) + "\n", names, schema)
    return decode
