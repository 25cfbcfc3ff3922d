"""The converter interfaces: :class:`Converter` (keys and values) and :class:`HeaderConverter`."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cdk.data import Schema, SchemaAndValue

if TYPE_CHECKING:
    from cdk.api import Headers
    from cdk.config import ConfigDef

__all__ = ["Converter", "HeaderConverter"]


class Converter(abc.ABC):
    """Turns Connect data into bytes for Kafka and back.

    The worker creates one instance per connector for keys and one for values, calls
    :meth:`configure` once with the converter's settings (the ``key.converter.``/
    ``value.converter.`` prefixed keys, prefix stripped) and then uses it from the task threads.
    """

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:  # noqa: B027
        """Configure the converter; ``is_key`` tells whether it converts record keys."""

    @abc.abstractmethod
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize a Connect value (``None`` for a tombstone stays ``None``)."""

    @abc.abstractmethod
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize bytes read from Kafka into a schema and value."""

    def config(self) -> ConfigDef:
        """The converter's ConfigDef (for docs and validation)."""
        from cdk.config import ConfigDef

        return ConfigDef()

    def close(self) -> None:  # noqa: B027
        """Release resources."""


class HeaderConverter(abc.ABC):
    """Turns one header value into bytes and back."""

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027
        """Configure the header converter."""

    @abc.abstractmethod
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        """Serialize one header value."""

    @abc.abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        """Deserialize one header value."""

    def config(self) -> ConfigDef:
        """The header converter's ConfigDef."""
        from cdk.config import ConfigDef

        return ConfigDef()

    def close(self) -> None:  # noqa: B027
        """Release resources."""
