"""DropHeaders: remove headers by name (Kafka's ``DropHeaders``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdk.api import Headers
from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type
from cdk.transforms._base import NonEmptyListValidator, R, Transformation

__all__ = ["DropHeaders"]

HEADERS_CONFIG = "headers"


CONFIG_DEF: ConfigDef = ConfigDef().define(
    HEADERS_CONFIG,
    Type.LIST,
    NO_DEFAULT,
    NonEmptyListValidator(),
    Importance.HIGH,
    "Names of the headers to remove; every header with one of these names is dropped.",
)


class DropHeaders(Transformation[R]):
    """Remove every header whose name is listed in ``headers``.

    Example::

        xform = DropHeaders()
        xform.configure({"headers": "trace-id,debug"})
    """

    def __init__(self) -> None:
        self._headers: frozenset[str] = frozenset()

    def config(self) -> ConfigDef:
        """DropHeaders' ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``headers``.

        Raises:
            ConfigException: ``headers`` is missing or empty.
        """
        self._headers = frozenset(CONFIG_DEF.parse(configs)[HEADERS_CONFIG])

    def apply(self, record: R) -> R | None:
        """The record without the configured headers."""
        kept = Headers(h for h in record.headers if h.key not in self._headers)
        return record.new_record(headers=kept)
