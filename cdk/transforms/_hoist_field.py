"""HoistField: wrap the key or value in a one-field Struct or map (Kafka's ``HoistField``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    R,
    SchemaCache,
    Transformation,
    ValueMixin,
    attach_variants,
)

__all__ = ["HoistField"]

FIELD_CONFIG = "field"

CONFIG_DEF: ConfigDef = ConfigDef().define(
    FIELD_CONFIG,
    Type.STRING,
    NO_DEFAULT,
    None,
    Importance.MEDIUM,
    "Name of the one field of the Struct (with a schema) or map (without) that the key or value "
    "is wrapped in.",
)


class HoistField(Transformation[R], KeyOrValue, Generic[R]):
    """Wrap the key (``HoistField.Key``) or value (``HoistField.Value``) in a single field.

    With a schema the result is a Struct whose one field has the original schema; without, a
    one-entry dict. Null values are wrapped too.

    Example::

        xform = HoistField.Value()
        xform.configure({"field": "line"})   # "hello" -> {"line": "hello"}
    """

    Key: ClassVar[type[HoistField[Any]]]
    Value: ClassVar[type[HoistField[Any]]]

    def __init__(self) -> None:
        self._field = ""
        self._cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """HoistField's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``field``."""
        parsed = CONFIG_DEF.parse(configs)
        self._field = parsed[FIELD_CONFIG]
        self._cache = SchemaCache()

    def apply(self, record: R) -> R:
        """The record with its key/value wrapped."""
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self._field: value})
        updated_schema = self._cache.get_or_compute(
            schema, lambda s: SchemaBuilder.struct().field(self._field, s).build()
        )
        return self.new_record(
            record, updated_schema, Struct(updated_schema).put(self._field, value)
        )


class _Key(KeyMixin, HoistField[R]):
    """HoistField on the record key (Kafka's ``HoistField$Key``)."""


class _Value(ValueMixin, HoistField[R]):
    """HoistField on the record value (Kafka's ``HoistField$Value``)."""


attach_variants(HoistField, _Key, _Value)
