"""The simple converters: strings, raw bytes, and Kafka's number/boolean converters.

Each is both a :class:`~cdk.converters.Converter` and a :class:`~cdk.converters.HeaderConverter`
(headers are converted exactly like keys and values), as in Kafka:

* :class:`StringConverter` -- any value as its string form in ``converter.encoding`` (UTF-8);
  reads give ``Schema.OPTIONAL_STRING_SCHEMA``.
* :class:`ByteArrayConverter` -- ``bytes`` passed through unchanged; reads give
  ``Schema.OPTIONAL_BYTES_SCHEMA``.
* :class:`ShortConverter`, :class:`IntegerConverter`, :class:`LongConverter`,
  :class:`FloatConverter`, :class:`DoubleConverter` -- big-endian two's-complement / IEEE 754 bytes
  as Kafka's ``ShortSerializer`` ... ``DoubleSerializer``; reads give the optional schema of the
  type (``Schema.OPTIONAL_INT32_SCHEMA`` for integers).
* :class:`BooleanConverter` -- one byte, ``1`` for true and ``0`` for false.
"""

from __future__ import annotations

import codecs
import struct
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type, Width, validators
from cdk.converters._api import Converter, HeaderConverter
from cdk.data import Schema, SchemaAndValue, SchemaType
from cdk.errors import ConfigException, DataException

if TYPE_CHECKING:
    from cdk.api import Headers

__all__ = [
    "ByteArrayConverter",
    "BooleanConverter",
    "DoubleConverter",
    "FloatConverter",
    "IntegerConverter",
    "LongConverter",
    "ShortConverter",
    "StringConverter",
    "converter_config_def",
]

CONVERTER_TYPE_CONFIG = "converter.type"
_CONVERTER_TYPES = ("key", "value", "header")


def converter_config_def() -> ConfigDef:
    """A new ConfigDef holding the setting every converter has: ``converter.type``."""
    return ConfigDef().define(
        CONVERTER_TYPE_CONFIG,
        Type.STRING,
        NO_DEFAULT,
        validators.ValidString.of(*_CONVERTER_TYPES),
        Importance.LOW,
        "What the converter is used for: key, value or header. The worker sets it.",
    )


def with_type(configs: Mapping[str, Any], is_key: bool | None) -> dict[str, Any]:
    """The configs with ``converter.type`` set from ``is_key`` (``None``: header, if unset)."""
    conf = dict(configs)
    if is_key is not None:
        conf[CONVERTER_TYPE_CONFIG] = "key" if is_key else "value"
    else:
        conf.setdefault(CONVERTER_TYPE_CONFIG, "header")
    return conf


class _KeyValueHeaderConverter(Converter, HeaderConverter):
    """Shared plumbing: one ``configure`` for both roles, header methods delegate to data ones."""

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Configure for keys (``is_key=True``), values (``False``) or headers (omitted)."""
        self._configure(self.config().parse(with_type(configs, is_key)))

    def _configure(self, parsed: dict[str, Any]) -> None:
        """Apply parsed settings."""

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """Serialize a header value as a key/value would be."""
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        """Deserialize a header value as a key/value would be."""
        return self.to_connect_data(topic, value)


class StringConverter(_KeyValueHeaderConverter):
    """Values as strings in ``converter.encoding`` (default UTF-8); schemas are ignored.

    Non-string values are written as their string form (booleans as ``true``/``false``). Reading
    yields ``Schema.OPTIONAL_STRING_SCHEMA``; undecodable bytes become U+FFFD, as in Java.
    """

    ENCODING_CONFIG: ClassVar[str] = "converter.encoding"
    ENCODING_DEFAULT: ClassVar[str] = "UTF-8"

    def __init__(self) -> None:
        self._encoding = "utf-8"

    def config(self) -> ConfigDef:
        """``converter.type`` and ``converter.encoding``."""
        return converter_config_def().define(
            self.ENCODING_CONFIG,
            Type.STRING,
            self.ENCODING_DEFAULT,
            None,
            Importance.HIGH,
            "The character set used to turn strings into bytes and back.",
            width=Width.MEDIUM,
            display_name="Encoding",
        )

    def _configure(self, parsed: dict[str, Any]) -> None:
        name = parsed[self.ENCODING_CONFIG]
        try:
            self._encoding = codecs.lookup(name).name
        except LookupError as exc:
            raise ConfigException(self.ENCODING_CONFIG, name, "Unsupported encoding") from exc

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """The value's string form, encoded (``None`` stays ``None``)."""
        if value is None:
            return None
        if isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = value if isinstance(value, str) else str(value)
        return text.encode(self._encoding, errors="replace")

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """The decoded string with ``Schema.OPTIONAL_STRING_SCHEMA``."""
        if data is None:
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)
        return SchemaAndValue(
            Schema.OPTIONAL_STRING_SCHEMA, bytes(data).decode(self._encoding, errors="replace")
        )


class ByteArrayConverter(_KeyValueHeaderConverter):
    """Raw bytes passed through unchanged; the schema, if any, must be BYTES."""

    def config(self) -> ConfigDef:
        """``converter.type`` only."""
        return converter_config_def()

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """The value itself (``bytes``, ``bytearray`` or ``memoryview``)."""
        if schema is not None and schema.type is not SchemaType.BYTES:
            raise DataException(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is None:
            return None
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataException(
                f"ByteArrayConverter is not compatible with objects of type {type(value)}"
            )
        return bytes(value)

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """The bytes with ``Schema.OPTIONAL_BYTES_SCHEMA``."""
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, None if data is None else bytes(data))


class _NumberConverter(_KeyValueHeaderConverter):
    """Kafka's ``NumberConverter``: fixed-width big-endian values of one type."""

    TYPE_NAME: ClassVar[str]
    SCHEMA: ClassVar[Schema]
    _FORMAT: ClassVar[struct.Struct]
    _DESERIALIZER: ClassVar[str]

    def config(self) -> ConfigDef:
        """``converter.type`` only."""
        return converter_config_def()

    def _check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise DataException(f"Failed to serialize to {self.TYPE_NAME} (was {type(value)})")
        return value

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """The value's big-endian bytes (``None`` stays ``None``)."""
        if value is None:
            return None
        checked = self._check(value)
        try:
            return self._FORMAT.pack(checked)
        except (struct.error, OverflowError) as exc:
            raise DataException(f"Failed to serialize to {self.TYPE_NAME}: {exc}") from exc

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """The number with the type's optional schema."""
        if data is None:
            return SchemaAndValue(self.SCHEMA, None)
        if len(data) != self._FORMAT.size:
            raise DataException(
                f"Failed to deserialize {self.TYPE_NAME}: Size of data received by "
                f"{self._DESERIALIZER} is not {self._FORMAT.size}"
            )
        return SchemaAndValue(self.SCHEMA, self._FORMAT.unpack(bytes(data))[0])


class ShortConverter(_NumberConverter):
    """INT16 values as 2 big-endian bytes."""

    TYPE_NAME = "short"
    SCHEMA = Schema.OPTIONAL_INT16_SCHEMA
    _FORMAT = struct.Struct(">h")
    _DESERIALIZER = "ShortDeserializer"


class IntegerConverter(_NumberConverter):
    """INT32 values as 4 big-endian bytes."""

    TYPE_NAME = "integer"
    SCHEMA = Schema.OPTIONAL_INT32_SCHEMA
    _FORMAT = struct.Struct(">i")
    _DESERIALIZER = "IntegerDeserializer"


class LongConverter(_NumberConverter):
    """INT64 values as 8 big-endian bytes."""

    TYPE_NAME = "long"
    SCHEMA = Schema.OPTIONAL_INT64_SCHEMA
    _FORMAT = struct.Struct(">q")
    _DESERIALIZER = "LongDeserializer"


class _FloatingConverter(_NumberConverter):
    def _check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataException(f"Failed to serialize to {self.TYPE_NAME} (was {type(value)})")
        return float(value)


class FloatConverter(_FloatingConverter):
    """FLOAT32 values as 4 big-endian IEEE 754 bytes."""

    TYPE_NAME = "float"
    SCHEMA = Schema.OPTIONAL_FLOAT32_SCHEMA
    _FORMAT = struct.Struct(">f")
    _DESERIALIZER = "Deserializer"


class DoubleConverter(_FloatingConverter):
    """FLOAT64 values as 8 big-endian IEEE 754 bytes."""

    TYPE_NAME = "double"
    SCHEMA = Schema.OPTIONAL_FLOAT64_SCHEMA
    _FORMAT = struct.Struct(">d")
    _DESERIALIZER = "Deserializer"


class BooleanConverter(_NumberConverter):
    """BOOLEAN values as one byte: ``1`` true, ``0`` false; the schema, if any, must be BOOLEAN."""

    TYPE_NAME = "boolean"
    SCHEMA = Schema.OPTIONAL_BOOLEAN_SCHEMA
    _FORMAT = struct.Struct(">?")
    _DESERIALIZER = "BooleanDeserializer"

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """One byte, 1 for true and 0 for false (``None`` stays ``None``)."""
        if schema is not None and schema.type is not SchemaType.BOOLEAN:
            raise DataException(f"Invalid schema type for BooleanConverter: {schema.type.name}")
        if value is None:
            return None
        if not isinstance(value, bool):
            raise DataException(
                f"BooleanConverter is not compatible with objects of type {type(value)}"
            )
        return b"\x01" if value else b"\x00"

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """``True``/``False`` with ``Schema.OPTIONAL_BOOLEAN_SCHEMA``."""
        if data is not None and len(data) == 1 and data[0] not in (0, 1):
            raise DataException(
                f"Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: "
                f"{data[0] - 256 if data[0] > 127 else data[0]}"
            )
        return super().to_connect_data(topic, data, headers)
