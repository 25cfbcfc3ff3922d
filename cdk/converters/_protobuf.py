"""The :class:`ProtobufConverter`: Confluent's Protobuf wire format with a Schema Registry.

Compatible with ``io.confluent.connect.protobuf.ProtobufConverter``: the bytes are a magic byte
``0``, the 4-byte big-endian id of the writer schema in the registry, the message-index list
(zig-zag varints: the count then each index; ``[0]``, the first message of the file, as the
single byte ``0``), then the Protobuf binary encoding of the message. Connect schemas map to
Protobuf as Confluent's ``ProtobufData`` maps them (see :mod:`cdk.converters._protobuf_data`).

Schemas are registered as base64 serialized ``FileDescriptorProto`` (as confluent-kafka's
serializer registers them; the registry accepts that form) and read in that form
(``format=serialized``), so no ``.proto`` parser is needed. ``protobuf`` and
``googleapis-common-protos`` come with the ``protobuf`` extra and are imported on first use.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from cdk.converters import _protobuf_data as _data
from cdk.converters import _protobuf_plan as _plan
from cdk.converters import _registry as _reg
from cdk.converters._sr_base import RegistryConverter
from cdk.converters._sr_plan import Decode, Encode
from cdk.data import Schema, SchemaAndValue
from cdk.errors import DataException, MissingExtraError

if TYPE_CHECKING:
    from cdk.config import AbstractConfig, ConfigDef

__all__ = ["ProtobufConverter"]

ENHANCED_PROTOBUF_SCHEMA_SUPPORT_CONFIG = "enhanced.protobuf.schema.support"
SCRUB_INVALID_NAMES_CONFIG = "scrub.invalid.names"
INT_FOR_ENUMS_CONFIG = "int.for.enums"
OPTIONAL_FOR_NULLABLES_CONFIG = "optional.for.nullables"
WRAPPER_FOR_NULLABLES_CONFIG = "wrapper.for.nullables"
WRAPPER_FOR_RAW_PRIMITIVES_CONFIG = "wrapper.for.raw.primitives"
GENERATE_INDEX_FOR_UNIONS_CONFIG = "generate.index.for.unions"


def _import_protobuf() -> None:
    try:
        import google.protobuf
        import google.type  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError(
            "ProtobufConverter", "protobuf", "protobuf, googleapis-common-protos"
        ) from exc


def write_indexes(indexes: list[int]) -> bytes:
    """Confluent's message-index list: zig-zag varints, ``[0]`` as the single byte 0."""
    if indexes == [0]:
        return b"\x00"
    out = bytearray()
    for value in [len(indexes), *indexes]:
        z = (value << 1) ^ (value >> 63)
        while True:
            byte = z & 0x7F
            z >>= 7
            if z:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                break
    return bytes(out)


def read_indexes(body: memoryview) -> tuple[list[int], int]:
    """The message-index list at the start of ``body`` and how many bytes it took.

    Raises:
        DataException: the list is truncated or too long.
    """
    pos = 0

    def varint() -> int:
        nonlocal pos
        shift = result = 0
        while True:
            if pos >= len(body):
                raise DataException("the message-index list is truncated")
            byte = body[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)
            shift += 7
            if shift > 63:
                raise DataException("a message index is not a valid varint")

    count = varint()
    if count == 0:
        return [0], pos
    if count < 0 or count > 100:
        raise DataException(f"the message-index list has an invalid length {count}")
    return [varint() for _ in range(count)], pos


class _Writer:
    """A Protobuf schema: its file, the message, its class and the message-index list."""

    __slots__ = (
        "connect",
        "decoders",
        "descriptor",
        "file",
        "indexes",
        "message_class",
        "name",
        "prefix",
    )

    def __init__(self, file_proto: Any, full_name: str | None, indexes: list[int] | None) -> None:
        _, _, message_factory = _data.pb()
        pool = _data.new_pool()
        try:
            self.file = pool.Add(file_proto)
        except (TypeError, ValueError, KeyError) as exc:
            raise DataException(f"Invalid Protobuf schema: {exc}") from exc
        if full_name is not None:
            self.descriptor = pool.FindMessageTypeByName(full_name)
            self.indexes = _data.index_of(self.descriptor)
        else:
            self.descriptor = _data.message_at(self.file, indexes or [0])
            self.indexes = indexes or [0]
        self.name = self.descriptor.full_name
        self.message_class = message_factory.GetMessageClass(self.descriptor)
        self.prefix = write_indexes(self.indexes)
        self.connect: dict[tuple[int, int | None], Schema] = {}
        # (message-index bytes, version) -> the plan reading such payloads (None: none)
        self.decoders: dict[tuple[bytes, int | None], Decode | None] = {}


class ProtobufConverter(RegistryConverter[_Writer]):
    """Converts Connect data to Confluent's Protobuf wire format and back, via a registry.

    Settings (the ``key.converter.``/``value.converter.`` prefixed keys): see :meth:`config`;
    ``schema.registry.url`` is required. Every registry call ends in bounded time (see
    :mod:`cdk.converters._registry`).

    Args:
        schema_registry: a Schema Registry client to use instead of creating one from the
            configuration.
    """

    FORMAT = "Protobuf"
    SCHEMA_TYPE = "PROTOBUF"
    EXTRA = "protobuf"

    def __init__(self, schema_registry: Any = None) -> None:
        super().__init__(schema_registry)
        self._data_config = _data.ProtobufDataConfig()
        self._files: dict[int, _Writer] = {}

    def _format_config_def(self, base: ConfigDef) -> ConfigDef:
        from cdk.config import Importance, Type

        flags = (
            (
                ENHANCED_PROTOBUF_SCHEMA_SUPPORT_CONFIG,
                False,
                "Name Connect schemas read from Protobuf after the full names of messages and "
                "enums (with the package), not the short names.",
            ),
            (
                SCRUB_INVALID_NAMES_CONFIG,
                False,
                "Replace characters Protobuf does not allow in message and field names instead "
                "of failing the conversion.",
            ),
            (INT_FOR_ENUMS_CONFIG, False, "Read Protobuf enums as INT32 instead of strings."),
            (
                OPTIONAL_FOR_NULLABLES_CONFIG,
                False,
                "Write optional Connect fields as proto3 optional fields.",
            ),
            (
                WRAPPER_FOR_NULLABLES_CONFIG,
                False,
                "Write optional primitive Connect fields as google.protobuf wrapper messages, "
                "and read wrappers as optional primitives.",
            ),
            (
                WRAPPER_FOR_RAW_PRIMITIVES_CONFIG,
                True,
                "Read a google.protobuf wrapper message at the root as its primitive.",
            ),
            (
                GENERATE_INDEX_FOR_UNIONS_CONFIG,
                True,
                "Name the Connect field of a oneof <oneof>_<index> instead of <oneof>.",
            ),
        )
        for name, default, doc in flags:
            base = base.define(name, Type.BOOLEAN, default, None, Importance.LOW, doc)
        return base

    def _configure_format(self, cfg: AbstractConfig) -> None:
        _import_protobuf()
        self._data_config = _data.ProtobufDataConfig(
            enhanced_schema_support=cfg.get_boolean(ENHANCED_PROTOBUF_SCHEMA_SUPPORT_CONFIG),
            scrub_invalid_names=cfg.get_boolean(SCRUB_INVALID_NAMES_CONFIG),
            int_for_enums=cfg.get_boolean(INT_FOR_ENUMS_CONFIG),
            optional_for_nullables=cfg.get_boolean(OPTIONAL_FOR_NULLABLES_CONFIG),
            wrapper_for_nullables=cfg.get_boolean(WRAPPER_FOR_NULLABLES_CONFIG),
            wrapper_for_raw_primitives=cfg.get_boolean(WRAPPER_FOR_RAW_PRIMITIVES_CONFIG),
            generate_index_for_unions=cfg.get_boolean(GENERATE_INDEX_FOR_UNIONS_CONFIG),
        )

    def _writer_from_connect(self, schema: Schema) -> tuple[str, str | None, _Writer]:
        file_proto, full_name, _ = _data.from_connect_schema(schema, self._data_config)
        writer = _Writer(file_proto, full_name, None)
        text = base64.standard_b64encode(file_proto.SerializeToString()).decode("ascii")
        return text, full_name, writer

    def _fetch_schema(self, registry: _reg.Registry, schema_id: int) -> Any:
        return registry.client.get_schema(schema_id, fmt="serialized")

    def _writer_from_registry(self, text: str, schema_id: int) -> _Writer:
        descriptor_pb2, _, _ = _data.pb()
        file_proto = descriptor_pb2.FileDescriptorProto()
        try:
            file_proto.ParseFromString(base64.standard_b64decode(text.encode("ascii")))
        except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
            raise DataException(
                f"schema id {schema_id} is not a serialized Protobuf FileDescriptorProto (the "
                f"registry answers .proto text; this converter asks it for format=serialized, "
                f"which Confluent's registry supports): {exc}"
            ) from exc
        except Exception as exc:  # protobuf's DecodeError
            raise DataException(
                f"schema id {schema_id} is not a valid Protobuf schema: {exc}"
            ) from exc
        writer = _Writer(file_proto, None, [0])
        self._files[schema_id] = writer
        return writer

    def _record_name(self, writer: _Writer) -> str | None:
        return str(writer.name)

    def _encode(self, writer: _Writer, schema: Schema, value: Any) -> bytes:
        message = _data.from_connect_data(writer.descriptor, schema, value, writer.message_class)
        body: bytes = message.SerializeToString()
        return writer.prefix + body

    def _compile_encoder(self, writer: _Writer, schema: Schema, header: bytes) -> Encode | None:
        return _plan.compile_encoder(
            writer.descriptor, writer.message_class, schema, header + writer.prefix
        )

    def _compile_decoder(
        self, writer: _Writer, version: int | None, body: memoryview
    ) -> tuple[bytes, Decode] | None:
        indexes, used = read_indexes(body)
        start = bytes(body[:used])
        key = (start, version)
        if key in writer.decoders:
            decoder = writer.decoders[key]
        else:
            descriptor, schema, cls = self._message_type(writer, version, indexes)
            decoder = _plan.compile_decoder(descriptor, cls, schema, _reg.HEADER.size + used)
            writer.decoders[key] = decoder
        return None if decoder is None else (start, decoder)

    def _message_type(
        self, writer: _Writer, version: int | None, indexes: list[int]
    ) -> tuple[Any, Schema, Any]:
        """The descriptor, Connect schema and message class of the message at ``indexes``."""
        if indexes != writer.indexes:
            descriptor = _data.message_at(writer.file, indexes)
        else:
            descriptor = writer.descriptor
        key = (hash(descriptor.full_name), version)
        schema = writer.connect.get(key)
        if schema is None:
            schema = _data.to_connect_schema(descriptor, self._data_config, version)
            writer.connect[key] = schema
        _, _, message_factory = _data.pb()
        cls = (
            writer.message_class
            if descriptor is writer.descriptor
            else (message_factory.GetMessageClass(descriptor))
        )
        return descriptor, schema, cls

    def _decode(self, writer: _Writer, version: int | None, body: memoryview) -> SchemaAndValue:
        indexes, used = read_indexes(body)
        _, schema, cls = self._message_type(writer, version, indexes)
        message = cls()
        try:
            message.ParseFromString(bytes(body[used:]))
        except Exception as exc:  # protobuf's DecodeError
            raise DataException(f"Error deserializing Protobuf message: {exc}") from exc
        return SchemaAndValue(schema, _data.to_connect_data(schema, message))
