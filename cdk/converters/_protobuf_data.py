"""Connect schemas and values to Protobuf descriptors and messages and back, as ProtobufData.

Confluent's ``ProtobufData`` mapping, ported.

Connect to Protobuf (proto3): a struct is a message named after the schema (its namespace the
package; ``ConnectDefault1``, ``ConnectDefault2``, ... without a name), its fields numbered 1, 2,
... in order (or by the ``io.confluent.connect.protobuf.Tag`` parameter); INT8/INT16 are
``int32`` with ``(confluent.field_meta).params`` ``connect.type`` = ``int8``/``int16``, INT32
``int32``, INT64 ``int64``, FLOAT32 ``float``, FLOAT64 ``double``, BOOLEAN ``bool``, STRING
``string``, BYTES ``bytes``; an array a ``repeated`` field; a map a repeated nested
``<Name>Entry`` message of ``key`` = 1 and ``value`` = 2; a nested struct a nested message; a
union struct (``io.confluent.connect.protobuf.Union.<name>``) a ``oneof``; a string with the
``io.confluent.connect.protobuf.Enum`` parameters an enum; Decimal ``confluent.type.Decimal``
(precision and scale in the field's meta), Date ``google.type.Date``, Time
``google.type.TimeOfDay``, Timestamp ``google.protobuf.Timestamp``. A primitive at the root is its
``google.protobuf`` wrapper message. With ``optional.for.nullables`` optional fields are proto3
``optional``, with ``wrapper.for.nullables`` their wrapper messages.

Protobuf to Connect reads every field as optional (proto3 has no required fields) with its tag in
the ``io.confluent.connect.protobuf.Tag`` parameter, oneofs as union structs named
``io.confluent.connect.protobuf.Union.<oneof>`` in a field ``<oneof>_<index>``
(``generate.index.for.unions``), enums as strings with their symbols as parameters, unsigned and
fixed 32-bit integers as INT64, and wrappers (at the root, ``wrapper.for.raw.primitives``) as
their primitive.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from cdk.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from cdk.errors import DataException

__all__: list[str] = []

NAMESPACE = "io.confluent.connect.protobuf"
DEFAULT_SCHEMA_NAME = "ConnectDefault"
PROTOBUF_TYPE_ENUM = NAMESPACE + ".Enum"
PROTOBUF_TYPE_UNION_PREFIX = NAMESPACE + ".Union."
PROTOBUF_TYPE_TAG = NAMESPACE + ".Tag"
PROTOBUF_TYPE_PROP = NAMESPACE + ".Type"
CONNECT_TYPE = "connect.type"
CONNECT_PRECISION = "connect.decimal.precision"
DECIMAL_TYPE = "confluent.type.Decimal"
DATE_TYPE = "google.type.Date"
TIME_TYPE = "google.type.TimeOfDay"
TIMESTAMP_TYPE = "google.protobuf.Timestamp"

_WRAPPERS = {
    SchemaType.INT8: "Int32Value",
    SchemaType.INT16: "Int32Value",
    SchemaType.INT32: "Int32Value",
    SchemaType.INT64: "Int64Value",
    SchemaType.FLOAT32: "FloatValue",
    SchemaType.FLOAT64: "DoubleValue",
    SchemaType.BOOLEAN: "BoolValue",
    SchemaType.STRING: "StringValue",
    SchemaType.BYTES: "BytesValue",
}
_UNWRAPPED = {
    "google.protobuf.DoubleValue": SchemaType.FLOAT64,
    "google.protobuf.FloatValue": SchemaType.FLOAT32,
    "google.protobuf.Int64Value": SchemaType.INT64,
    "google.protobuf.UInt64Value": SchemaType.INT64,
    "google.protobuf.Int32Value": SchemaType.INT32,
    "google.protobuf.UInt32Value": SchemaType.INT64,
    "google.protobuf.BoolValue": SchemaType.BOOLEAN,
    "google.protobuf.StringValue": SchemaType.STRING,
    "google.protobuf.BytesValue": SchemaType.BYTES,
}
_DEPENDENCY_FILES = {
    DECIMAL_TYPE: "confluent/type/decimal.proto",
    DATE_TYPE: "google/type/date.proto",
    TIME_TYPE: "google/type/timeofday.proto",
    TIMESTAMP_TYPE: "google/protobuf/timestamp.proto",
}
_WRAPPERS_FILE = "google/protobuf/wrappers.proto"
_META_FILE = "confluent/meta.proto"


@dataclass(frozen=True)
class ProtobufDataConfig:
    """How Connect schemas map to Protobuf."""

    enhanced_schema_support: bool = False
    scrub_invalid_names: bool = False
    int_for_enums: bool = False
    optional_for_nullables: bool = False
    wrapper_for_nullables: bool = False
    wrapper_for_raw_primitives: bool = True
    generate_index_for_unions: bool = True


def pb() -> Any:
    """The protobuf modules (descriptor_pb2, descriptor_pool, message_factory, ...)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    return descriptor_pb2, descriptor_pool, message_factory


def new_pool() -> Any:
    """A descriptor pool holding the well-known files Connect schemas import."""
    from confluent_kafka.schema_registry.confluent import meta_pb2
    from confluent_kafka.schema_registry.confluent.type import decimal_pb2
    from google.protobuf import descriptor_pb2, descriptor_pool, timestamp_pb2, wrappers_pb2
    from google.type import date_pb2, timeofday_pb2

    pool = descriptor_pool.DescriptorPool()
    for module in (
        descriptor_pb2,
        wrappers_pb2,
        timestamp_pb2,
        date_pb2,
        timeofday_pb2,
        decimal_pb2,
        meta_pb2,
    ):
        pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
    return pool


def scrub_name(name: str) -> str:
    """A Protobuf-valid name for ``name``: Confluent's scrubbing (URL-encode, then ``_``)."""
    valid = all(c.isascii() and (c.isalnum() or c == "_") for c in name)
    if name and valid and not name[0].isdigit() and name[0] != "_":
        return name
    encoded = quote(name, safe="")
    if encoded and (encoded[0].isdigit() or encoded[0] == "_"):
        encoded = "x" + encoded
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in encoded)


def _to_map_entry(name: str) -> str:
    if "_" in name:
        name = "".join(p[:1].upper() + p[1:].lower() for p in name.split("_"))
    return name + "Entry"


def is_union(schema: Schema) -> bool:
    """Whether ``schema`` is a union struct (a oneof)."""
    return schema.type is SchemaType.STRUCT and (schema.name or "").startswith(
        PROTOBUF_TYPE_UNION_PREFIX
    )


# -- Connect schema -> FileDescriptorProto --------------------------------------------------------
@dataclass
class _FromConnect:
    config: ProtobufDataConfig
    file: Any
    name_index: int = 0
    deps: set[str] = field(default_factory=set)

    def name_or_default(self, name: str | None) -> str:
        if name:
            return name
        self.name_index += 1
        return f"{DEFAULT_SCHEMA_NAME}{self.name_index}"

    def unqualified(self, name: str | None) -> str:
        return self.scrub(self.name_or_default(name).rsplit(".", 1)[-1])

    def scrub(self, name: str) -> str:
        return scrub_name(name) if self.config.scrub_invalid_names else name

    def dep(self, path: str) -> None:
        if path not in self.deps:
            self.deps.add(path)
            self.file.dependency.append(path)


def from_connect_schema(schema: Schema, config: ProtobufDataConfig) -> tuple[Any, str, list[int]]:
    """The FileDescriptorProto of a Connect schema, its message's full name and message index.

    Raises:
        DataException: the schema has no Protobuf form (an array or map at the root).
    """
    descriptor_pb2, _, _ = pb()
    if schema.type in _WRAPPERS:
        from google.protobuf import wrappers_pb2

        file = descriptor_pb2.FileDescriptorProto()
        file.ParseFromString(wrappers_pb2.DESCRIPTOR.serialized_pb)
        name = _WRAPPERS[schema.type]
        index = list(wrappers_pb2.DESCRIPTOR.message_types_by_name).index(name)
        return file, f"google.protobuf.{name}", [index]
    if schema.type is not SchemaType.STRUCT:
        raise DataException(f"Unsupported root schema of type {schema.type.name} for Protobuf")
    file = descriptor_pb2.FileDescriptorProto()
    file.syntax = "proto3"
    ctx = _FromConnect(config, file)
    full = ctx.name_or_default(schema.name)
    parts = [ctx.scrub(p) for p in full.split(".")]
    package, name = ".".join(parts[:-1]), parts[-1]
    if package:
        file.package = package
    file.name = f"{'/'.join(parts)}.proto"
    _message(ctx, file.message_type.add(), name, schema)
    return file, (f"{package}.{name}" if package else name), [0]


def _message(ctx: _FromConnect, message: Any, name: str, schema: Schema) -> None:
    message.name = name
    tag = 1
    for f in schema.fields:
        explicit = f.schema.parameters.get(PROTOBUF_TYPE_TAG)
        number = int(explicit) if explicit is not None else tag
        if explicit is None:
            tag += 1
        _field(ctx, message, f.schema, ctx.scrub(f.name), number, oneof_member=False)


def _field(
    ctx: _FromConnect,
    message: Any,
    fschema: Schema,
    name: str,
    number: int,
    oneof_member: bool,
    oneof_index: int | None = None,
) -> None:
    descriptor_pb2, _, _ = pb()
    fdp = descriptor_pb2.FieldDescriptorProto
    if fschema.type is SchemaType.STRUCT and is_union(fschema):
        union_name = ctx.unqualified((fschema.name or "")[len(PROTOBUF_TYPE_UNION_PREFIX) :])
        index = len(message.oneof_decl)
        message.oneof_decl.add().name = union_name
        used = {f.number for f in message.field}
        next_tag = max(used | {number}) + 1
        for member in fschema.fields:
            explicit = member.schema.parameters.get(PROTOBUF_TYPE_TAG)
            if explicit is not None:
                member_tag = int(explicit)
            else:
                member_tag, next_tag = next_tag, next_tag + 1
            _field(ctx, message, member.schema, ctx.scrub(member.name), member_tag, True, index)
        return
    label = fdp.LABEL_OPTIONAL
    element = fschema
    if fschema.type is SchemaType.ARRAY:
        label = fdp.LABEL_REPEATED
        element = fschema.value_schema
    elif fschema.type is SchemaType.MAP:
        label = fdp.LABEL_REPEATED
    out = message.field.add()
    out.name = name
    out.number = number
    out.label = label
    params: dict[str, str] = {}
    _field_type(ctx, message, out, element, name, params, oneof_member)
    if params:
        ctx.dep(_META_FILE)
        from confluent_kafka.schema_registry.confluent import meta_pb2

        meta = out.options.Extensions[_field_meta(meta_pb2)]
        for k, v in params.items():
            meta.params[k] = v
    if oneof_index is not None:
        out.oneof_index = oneof_index
    elif (
        ctx.config.optional_for_nullables
        and fschema.optional
        and fschema.type not in (SchemaType.ARRAY, SchemaType.MAP)
    ):
        out.proto3_optional = True
        out.oneof_index = len(message.oneof_decl)
        message.oneof_decl.add().name = f"_{name}"


def _field_type(
    ctx: _FromConnect,
    message: Any,
    out: Any,
    schema: Schema,
    field_name: str,
    params: dict[str, str],
    oneof_member: bool,
) -> None:
    descriptor_pb2, _, _ = pb()
    fdp = descriptor_pb2.FieldDescriptorProto
    logical = {
        Decimal.LOGICAL_NAME: DECIMAL_TYPE,
        Date.LOGICAL_NAME: DATE_TYPE,
        Time.LOGICAL_NAME: TIME_TYPE,
        Timestamp.LOGICAL_NAME: TIMESTAMP_TYPE,
    }.get(schema.name or "")
    if logical is not None:
        if logical == DECIMAL_TYPE:
            if CONNECT_PRECISION in schema.parameters:
                params["precision"] = schema.parameters[CONNECT_PRECISION]
            if Decimal.SCALE_FIELD in schema.parameters:
                params["scale"] = schema.parameters[Decimal.SCALE_FIELD]
        ctx.dep(_DEPENDENCY_FILES[logical])
        out.type = fdp.TYPE_MESSAGE
        out.type_name = "." + logical
        return
    stype = schema.type
    wrap = ctx.config.wrapper_for_nullables and schema.optional and not oneof_member
    if stype in (SchemaType.INT8, SchemaType.INT16):
        params[CONNECT_TYPE] = stype.name.lower()
    if stype is SchemaType.STRING and PROTOBUF_TYPE_ENUM in schema.parameters:
        enum_name = ctx.unqualified(schema.name)
        if not any(e.name == enum_name for e in message.enum_type):
            enum = message.enum_type.add()
            enum.name = enum_name
            prefix = PROTOBUF_TYPE_ENUM + "."
            for k, v in schema.parameters.items():
                if k.startswith(prefix):
                    value = enum.value.add()
                    value.name = k[len(prefix) :]
                    value.number = int(v)
        out.type = fdp.TYPE_ENUM
        out.type_name = enum_name
        return
    if wrap and stype in _WRAPPERS:
        ctx.dep(_WRAPPERS_FILE)
        out.type = fdp.TYPE_MESSAGE
        out.type_name = ".google.protobuf." + _WRAPPERS[stype]
        return
    scalar = {
        SchemaType.INT8: fdp.TYPE_INT32,
        SchemaType.INT16: fdp.TYPE_INT32,
        SchemaType.INT32: fdp.TYPE_INT32,
        SchemaType.INT64: fdp.TYPE_INT64,
        SchemaType.FLOAT32: fdp.TYPE_FLOAT,
        SchemaType.FLOAT64: fdp.TYPE_DOUBLE,
        SchemaType.BOOLEAN: fdp.TYPE_BOOL,
        SchemaType.STRING: fdp.TYPE_STRING,
        SchemaType.BYTES: fdp.TYPE_BYTES,
    }.get(stype)
    if scalar is not None:
        proto_type = schema.parameters.get(PROTOBUF_TYPE_PROP)
        if proto_type is not None and stype in (SchemaType.INT32, SchemaType.INT64):
            scalar = getattr(fdp, "TYPE_" + proto_type.upper(), scalar)
        out.type = scalar
        return
    if stype is SchemaType.MAP:
        entry_name = _to_map_entry(ctx.unqualified(schema.name))
        entry = message.nested_type.add()
        entry.name = entry_name
        _field(ctx, entry, schema.key_schema, "key", 1, False)
        _field(ctx, entry, schema.value_schema, "value", 2, False)
        out.type = fdp.TYPE_MESSAGE
        out.type_name = entry_name
        return
    if stype is SchemaType.STRUCT:
        type_name = ctx.unqualified(schema.name)
        if type_name == field_name:
            type_name += "Message"
        if not any(n.name == type_name for n in message.nested_type):
            _message(ctx, message.nested_type.add(), type_name, schema)
        out.type = fdp.TYPE_MESSAGE
        out.type_name = type_name
        return
    raise DataException(f"Array cannot be nested in an array for Protobuf ({field_name})")


# -- Connect value -> message ---------------------------------------------------------------------
def from_connect_data(descriptor: Any, schema: Schema, value: Any, cls: Any) -> Any:
    """A Protobuf message (of class ``cls``, for ``descriptor``) holding a Connect value."""
    message = cls()
    if schema.type in _WRAPPERS:
        message.value = _scalar_out(schema, value)
        return message
    _fill(message, schema, value)
    return message


def _fill(message: Any, schema: Schema, struct: Struct) -> None:
    desc = message.DESCRIPTOR
    for f in schema.fields:
        v = struct.get(f)
        if v is not None:
            fill_field(message, desc, f, v)


def fill_field(message: Any, desc: Any, f: Field, v: Any) -> None:
    """Set the message field of Connect field ``f`` to ``v`` (not ``None``)."""
    if is_union(f.schema):
        for member in f.schema.fields:
            mv = v.get(member)
            if mv is not None:
                set_field(message, desc.fields_by_name[scrub_name(member.name)], member.schema, mv)
                break
        return
    fd = find_field(desc, f.name)
    if fd is None:
        raise DataException(f"Cannot find field with name {f.name}")
    set_field(message, fd, f.schema, v)


def find_field(desc: Any, name: str) -> Any:
    """The field descriptor that a Connect field called ``name`` writes, or ``None``."""
    return desc.fields_by_name.get(name) or desc.fields_by_name.get(scrub_name(name))


def set_field(message: Any, fd: Any, schema: Schema, value: Any) -> None:
    """Set message field ``fd`` to the Connect value ``value`` of ``schema``."""
    if repeated(fd):
        if schema.type is SchemaType.MAP:
            container = getattr(message, fd.name)
            entry_desc = fd.message_type
            kfd, vfd = entry_desc.fields_by_name["key"], entry_desc.fields_by_name["value"]
            if entry_desc.GetOptions().map_entry:
                for k, v in value.items():
                    key = _plain(kfd, schema.key_schema, k)
                    if vfd.type == vfd.TYPE_MESSAGE:
                        _into(container[key], vfd, schema.value_schema, v)
                    else:
                        container[key] = _plain(vfd, schema.value_schema, v)
            else:
                for k, v in value.items():
                    entry = container.add()
                    set_field(entry, kfd, schema.key_schema, k)
                    if v is not None:
                        set_field(entry, vfd, schema.value_schema, v)
            return
        container = getattr(message, fd.name)
        element = schema.value_schema
        for item in value:
            if fd.type == fd.TYPE_MESSAGE:
                _into(container.add(), fd, element, item)
            else:
                container.append(_plain(fd, element, item))
        return
    if fd.type == fd.TYPE_MESSAGE:
        _into(getattr(message, fd.name), fd, schema, value)
    else:
        setattr(message, fd.name, _plain(fd, schema, value))


def _into(target: Any, fd: Any, schema: Schema, value: Any) -> None:
    full = fd.message_type.full_name
    if full == TIMESTAMP_TYPE:
        millis = Timestamp.from_logical(schema, value)
        target.seconds, rem = divmod(millis, 1000)
        target.nanos = rem * 1_000_000
    elif full == DATE_TYPE:
        target.year, target.month, target.day = value.year, value.month, value.day
    elif full == TIME_TYPE:
        target.hours, target.minutes, target.seconds = value.hour, value.minute, value.second
        target.nanos = (value.microsecond // 1000) * 1_000_000
    elif full == DECIMAL_TYPE:
        unscaled = Decimal.from_logical(schema, value)
        target.value = unscaled
        target.precision = len(value.as_tuple().digits)
        target.scale = Decimal.scale(schema)
    elif full in _UNWRAPPED:
        target.value = _scalar_out(schema, value)
    else:
        _fill(target, schema, value)
        target.SetInParent()


def _plain(fd: Any, schema: Schema, value: Any) -> Any:
    if fd.type == fd.TYPE_ENUM:
        prefix = PROTOBUF_TYPE_ENUM + "."
        if isinstance(value, str):
            tag = schema.parameters.get(prefix + value)
            if tag is not None:
                return int(tag)
            ev = fd.enum_type.values_by_name.get(value)
            if ev is None:
                raise DataException(f"{value!r} is not a symbol of enum {fd.enum_type.name}")
            return ev.number
        return int(value)
    return _scalar_out(schema, value)


def _scalar_out(schema: Schema, value: Any) -> Any:
    if schema.type is SchemaType.BYTES:
        return bytes(value)
    return value


# -- descriptor -> Connect schema ------------------------------------------------------------------
def to_connect_schema(descriptor: Any, config: ProtobufDataConfig, version: int | None) -> Schema:
    """The Connect schema of a message descriptor."""
    if config.wrapper_for_raw_primitives and descriptor.full_name in _UNWRAPPED:
        builder = SchemaBuilder.type(_UNWRAPPED[descriptor.full_name])
    else:
        builder = _struct_builder(descriptor, config, {})
    if version is not None:
        builder.version(version)
    return builder.build()


def _struct_builder(descriptor: Any, config: ProtobufDataConfig, seen: dict[str, int]) -> Any:
    if seen.get(descriptor.full_name, 0) > 0:
        raise DataException(f"recursive message {descriptor.full_name} has no Connect schema")
    seen[descriptor.full_name] = 1
    builder = SchemaBuilder.struct().name(
        descriptor.full_name if config.enhanced_schema_support else descriptor.name
    )
    for oneof in _real_oneofs(descriptor):
        union = SchemaBuilder.struct().name(
            PROTOBUF_TYPE_UNION_PREFIX
            + (oneof.full_name if config.enhanced_schema_support else oneof.name)
        )
        for fd in oneof.fields:
            union.field(fd.name, _field_schema(fd, config, seen, oneof_member=True))
        builder.field(_union_field_name(oneof, config), union.optional().build())
    for fd in descriptor.fields:
        if _real_oneof(fd) is None:
            builder.field(fd.name, _field_schema(fd, config, seen, oneof_member=False))
    seen[descriptor.full_name] = 0
    return builder


# by id of the descriptor, which the entry keeps alive (so the id is not reused)
_SYNTHETIC: dict[int, tuple[Any, frozenset[str]]] = {}


def _synthetic_fields(descriptor: Any) -> frozenset[str]:
    """The names of the proto3 ``optional`` fields of a message (their oneofs are synthetic)."""
    key = id(descriptor)
    entry = _SYNTHETIC.get(key)
    if entry is None:
        from google.protobuf import descriptor_pb2

        proto = descriptor_pb2.DescriptorProto()
        descriptor.CopyToProto(proto)
        entry = (descriptor, frozenset(f.name for f in proto.field if f.proto3_optional))
        _SYNTHETIC[key] = entry
    return entry[1]


def synthetic(fd: Any) -> bool:
    """Whether ``fd`` is a proto3 ``optional`` field."""
    return fd.containing_type is not None and fd.name in _synthetic_fields(fd.containing_type)


def _real_oneofs(descriptor: Any) -> list[Any]:
    synthetic = _synthetic_fields(descriptor)
    return [
        o for o in descriptor.oneofs if not (len(o.fields) == 1 and o.fields[0].name in synthetic)
    ]


def _real_oneof(fd: Any) -> Any:
    oneof = fd.containing_oneof
    if oneof is None:
        return None
    return oneof if oneof in _real_oneofs(fd.containing_type) else None


def _union_field_name(oneof: Any, config: ProtobufDataConfig) -> str:
    return f"{oneof.name}_{oneof.index}" if config.generate_index_for_unions else str(oneof.name)


def _meta_params(fd: Any) -> dict[str, str]:
    from confluent_kafka.schema_registry.confluent import meta_pb2

    options = fd.GetOptions()
    if not options.HasExtension(_field_meta(meta_pb2)):
        return {}
    return dict(options.Extensions[_field_meta(meta_pb2)].params)


def _field_meta(meta_pb2: Any) -> Any:
    """The ``confluent.field_meta`` extension (generated code mypy cannot see)."""
    return meta_pb2.field_meta


def _is_map(fd: Any) -> bool:
    if not repeated(fd) or fd.type != fd.TYPE_MESSAGE:
        return False
    entry = fd.message_type
    names = [f.name for f in entry.fields]
    return entry.name.endswith("Entry") and names == ["key", "value"]


def _field_schema(
    fd: Any, config: ProtobufDataConfig, seen: dict[str, int], oneof_member: bool
) -> Schema:
    t = fd.type
    builder: Any
    if t in (fd.TYPE_INT32, fd.TYPE_SINT32, fd.TYPE_SFIXED32):
        connect_type = _meta_params(fd).get(CONNECT_TYPE)
        if connect_type == "int8":
            builder = SchemaBuilder.int8()
        elif connect_type == "int16":
            builder = SchemaBuilder.int16()
        else:
            builder = SchemaBuilder.int32()
            if t != fd.TYPE_INT32:
                builder.parameter(PROTOBUF_TYPE_PROP, _type_name(fd))
    elif t in (
        fd.TYPE_UINT32,
        fd.TYPE_FIXED32,
        fd.TYPE_INT64,
        fd.TYPE_UINT64,
        fd.TYPE_SINT64,
        fd.TYPE_FIXED64,
        fd.TYPE_SFIXED64,
    ):
        builder = SchemaBuilder.int64()
        if t != fd.TYPE_INT64:
            builder.parameter(PROTOBUF_TYPE_PROP, _type_name(fd))
    elif t == fd.TYPE_FLOAT:
        builder = SchemaBuilder.float32()
    elif t == fd.TYPE_DOUBLE:
        builder = SchemaBuilder.float64()
    elif t == fd.TYPE_BOOL:
        builder = SchemaBuilder.boolean()
    elif t == fd.TYPE_STRING:
        builder = SchemaBuilder.string()
    elif t == fd.TYPE_BYTES:
        builder = SchemaBuilder.bytes()
    elif t == fd.TYPE_ENUM:
        enum = fd.enum_type
        builder = SchemaBuilder.int32() if config.int_for_enums else SchemaBuilder.string()
        builder.name(enum.full_name if config.enhanced_schema_support else enum.name)
        builder.parameter(PROTOBUF_TYPE_ENUM, enum.name)
        for ev in enum.values:
            builder.parameter(f"{PROTOBUF_TYPE_ENUM}.{ev.name}", str(ev.number))
        builder.optional()
    elif t == fd.TYPE_MESSAGE:
        full = fd.message_type.full_name
        if full == DECIMAL_TYPE:
            params = _meta_params(fd)
            builder = Decimal.builder(int(params.get("scale", "0") or 0))
            if "precision" in params:
                builder.parameter(CONNECT_PRECISION, params["precision"])
        elif full == DATE_TYPE:
            builder = Date.builder()
        elif full == TIME_TYPE:
            builder = Time.builder()
        elif full == TIMESTAMP_TYPE:
            builder = Timestamp.builder()
        elif config.wrapper_for_nullables and full in _UNWRAPPED:
            builder = SchemaBuilder.type(_UNWRAPPED[full])
        elif _is_map(fd):
            key, value = fd.message_type.fields
            entry_name = (
                fd.message_type.full_name
                if config.enhanced_schema_support
                else fd.message_type.name
            )
            builder = SchemaBuilder.map(
                _field_schema(key, config, seen, False), _field_schema(value, config, seen, False)
            ).name(_to_map_field(entry_name))
        else:
            builder = _struct_builder(fd.message_type, config, seen)
        builder.optional()
    else:  # pragma: no cover - groups
        raise DataException(f"Unsupported Protobuf field type {t} ({fd.name})")
    if repeated(fd) and not _is_map(fd):
        builder = SchemaBuilder.array(builder.optional().build()).optional()
    if (
        oneof_member
        or not config.wrapper_for_nullables
        or (config.optional_for_nullables and synthetic(fd))
    ):
        builder.optional()
    builder.parameter(PROTOBUF_TYPE_TAG, str(fd.number))
    built: Schema = builder.build()
    return built


def _type_name(fd: Any) -> str:
    names = {
        fd.TYPE_SINT32: "sint32",
        fd.TYPE_SFIXED32: "sfixed32",
        fd.TYPE_UINT32: "uint32",
        fd.TYPE_FIXED32: "fixed32",
        fd.TYPE_UINT64: "uint64",
        fd.TYPE_SINT64: "sint64",
        fd.TYPE_FIXED64: "fixed64",
        fd.TYPE_SFIXED64: "sfixed64",
    }
    return names.get(fd.type, "int64")


def _to_map_field(name: str) -> str:
    parts = name.split(".")
    last = parts[-1]
    if last.endswith("Entry"):
        last = last[: -len("Entry")]
        out = ""
        for i, c in enumerate(last):
            if c.isupper() and i > 0:
                out += "_"
            out += c.lower()
        parts[-1] = out
    return ".".join(parts)


# -- message -> Connect value ----------------------------------------------------------------------
def to_connect_data(schema: Schema, message: Any) -> Any:
    """The Connect value of a message, for the schema :func:`to_connect_schema` gave."""
    if schema.type is not SchemaType.STRUCT:
        return _scalar_in(schema, message.value)
    return _struct_in(schema, message)


def _struct_in(schema: Schema, message: Any) -> Struct:
    struct = Struct(schema)
    desc = message.DESCRIPTOR
    for f in schema.fields:
        v = field_in(message, desc, f)
        if v is not ABSENT:
            struct.put(f, v)
    return struct


#: What :func:`field_in` returns for a field the message does not hold.
ABSENT: Any = object()


def field_in(message: Any, desc: Any, f: Field) -> Any:
    """The Connect value of field ``f`` in the message (unvalidated), or :data:`ABSENT`."""
    if is_union(f.schema):
        oneof_name = f.name.rsplit("_", 1)[0] if f.name not in desc.oneofs_by_name else f.name
        which = message.WhichOneof(oneof_name) if oneof_name in desc.oneofs_by_name else None
        if which is None:
            return ABSENT
        member = f.schema.field(which)
        if member is None:
            return ABSENT
        return Struct(f.schema).put(
            member,
            _value_in(member.schema, desc.fields_by_name[which], getattr(message, which)),
        )
    fd = desc.fields_by_name.get(f.name)
    if fd is None:
        return ABSENT
    if fd.type == fd.TYPE_MESSAGE and not repeated(fd) and not message.HasField(fd.name):
        return ABSENT
    if synthetic(fd) and not message.HasField(fd.name):
        return ABSENT
    return _value_in(f.schema, fd, getattr(message, fd.name))


def _value_in(schema: Schema, fd: Any, value: Any) -> Any:
    if repeated(fd):
        if schema.type is SchemaType.MAP:
            kfd, vfd = fd.message_type.fields
            if fd.message_type.GetOptions().map_entry:
                return {
                    _single_in(schema.key_schema, kfd, k): _single_in(schema.value_schema, vfd, v)
                    for k, v in value.items()
                }
            return {
                _single_in(schema.key_schema, kfd, e.key): _single_in(
                    schema.value_schema, vfd, e.value
                )
                for e in value
            }
        return [_single_in(schema.value_schema, fd, v) for v in value]
    return _single_in(schema, fd, value)


def _single_in(schema: Schema, fd: Any, value: Any) -> Any:
    if fd.type == fd.TYPE_ENUM:
        if schema.type is SchemaType.STRING:
            ev = fd.enum_type.values_by_number.get(value)
            return ev.name if ev is not None else str(value)
        return int(value)
    if fd.type != fd.TYPE_MESSAGE:
        return _scalar_in(schema, value)
    full = fd.message_type.full_name
    if full == TIMESTAMP_TYPE:
        millis = value.seconds * 1000 + value.nanos // 1_000_000
        return Timestamp.to_logical(schema, millis)
    if full == DATE_TYPE:
        return _dt.date(value.year, value.month, value.day)
    if full == TIME_TYPE:
        return _dt.time(
            value.hours, value.minutes, value.seconds, (value.nanos // 1_000_000) * 1000
        )
    if full == DECIMAL_TYPE:
        unscaled = int.from_bytes(value.value, "big", signed=True) if value.value else 0
        return _decimal.Decimal(unscaled).scaleb(-value.scale)
    if full in _UNWRAPPED and schema.type is not SchemaType.STRUCT:
        return _scalar_in(schema, value.value)
    return _struct_in(schema, value)


def _scalar_in(schema: Schema, value: Any) -> Any:
    if schema.type is SchemaType.BYTES:
        return bytes(value)
    return value


def message_at(file_descriptor: Any, indexes: list[int]) -> Any:
    """The message descriptor a Confluent message-index list names in a file."""
    if not indexes:
        indexes = [0]
    types = list(file_descriptor.message_types_by_name.values())
    try:
        desc = types[indexes[0]]
        for i in indexes[1:]:
            desc = desc.nested_types[i]
    except IndexError:
        raise DataException(
            f"message index {indexes} is not in the schema ({file_descriptor.name})"
        ) from None
    return desc


def index_of(descriptor: Any) -> list[int]:
    """The Confluent message-index list of a message descriptor in its file."""
    path: list[int] = []
    current = descriptor
    while current.containing_type is not None:
        parent = current.containing_type
        path.insert(0, list(parent.nested_types).index(current))
        current = parent
    path.insert(0, list(current.file.message_types_by_name).index(current.name))
    return path


def repeated(fd: Any) -> bool:
    """Whether a field is repeated (``is_repeated`` in protobuf 6+, ``label`` before)."""
    flag = getattr(fd, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return bool(fd.label == fd.LABEL_REPEATED)
