"""InsertHeader: add a header with a literal value to every record (Kafka's ``InsertHeader``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type, validators
from cdk.data import SchemaAndValue, Values
from cdk.transforms._base import R, Transformation

__all__ = ["InsertHeader"]

HEADER_CONFIG = "header"
VALUE_LITERAL_CONFIG = "value.literal"

CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        HEADER_CONFIG,
        Type.STRING,
        NO_DEFAULT,
        validators.NonNullValidator(),
        Importance.HIGH,
        "Name of the header to add.",
    )
    .define(
        VALUE_LITERAL_CONFIG,
        Type.STRING,
        NO_DEFAULT,
        validators.NonNullValidator(),
        Importance.HIGH,
        "Value of the header, as a literal; its type is inferred the way header values are "
        "parsed from strings (e.g. 1 becomes an INT8, true a BOOLEAN, text a STRING).",
    )
)


class InsertHeader(Transformation[R]):
    """Append a header named ``header`` with the value ``value.literal`` to each record.

    The literal is typed with :meth:`cdk.data.Values.parse_string`. Existing headers of the same
    name are kept: the new header is added after them.

    Example::

        xform = InsertHeader()
        xform.configure({"header": "source", "value.literal": "crm"})
    """

    def __init__(self) -> None:
        self._header = ""
        self._value = SchemaAndValue(None, None)

    def config(self) -> ConfigDef:
        """InsertHeader's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``header`` and parse ``value.literal``.

        Raises:
            ConfigException: a setting is missing or null.
        """
        parsed = CONFIG_DEF.parse(configs)
        self._header = parsed[HEADER_CONFIG]
        self._value = Values.parse_string(parsed[VALUE_LITERAL_CONFIG])

    def apply(self, record: R) -> R | None:
        """The record with the header appended."""
        headers = record.headers.duplicate()
        headers.add(self._header, self._value)
        return record.new_record(headers=headers)
