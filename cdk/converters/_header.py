"""The default header converter: :class:`SimpleHeaderConverter`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from cdk.converters._api import HeaderConverter
from cdk.data import Schema, SchemaAndValue, Values

if TYPE_CHECKING:
    from cdk.config import ConfigDef

__all__ = ["SimpleHeaderConverter"]

_LOG = logging.getLogger(__name__)


class SimpleHeaderConverter(HeaderConverter):
    """Writes header values as UTF-8 text and reads them back with schema inference.

    Kafka's default header converter: :meth:`Values.convert_to_string` on the way out,
    :meth:`Values.parse_string` on the way in, so ``42`` comes back as an INT8, ``[1,2]`` as an
    ARRAY and ``2019-08-23`` as a Date. ``None`` stays ``None``. Bytes that are not valid UTF-8
    come back unchanged as BYTES.
    """

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """The value's string form, UTF-8 encoded (``None`` for ``None``)."""
        if value is None:
            return None
        text = Values.convert_to_string(schema, value)
        return None if text is None else text.encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        """The schema and value parsed from the header bytes."""
        if value is None:
            return SchemaAndValue.NULL
        try:
            text = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            _LOG.warning(
                "Failed to deserialize value for header '%s' on topic '%s', so using byte array",
                header_key,
                topic,
            )
            return SchemaAndValue(Schema.BYTES_SCHEMA, bytes(value))
        if text == "":
            return SchemaAndValue(Schema.STRING_SCHEMA, text)
        return Values.parse_string(text)

    def config(self) -> ConfigDef:
        """An empty ConfigDef: this converter has no settings."""
        from cdk.config import ConfigDef

        return ConfigDef()
