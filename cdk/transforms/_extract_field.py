"""ExtractField: replace the key or value with one of its fields (Kafka's ``ExtractField``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type
from cdk.errors import ConfigException, DataException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    R,
    Transformation,
    ValueMixin,
    attach_variants,
    require_map,
    require_struct,
)
from cdk.transforms._field_path import FieldSyntaxVersion, SingleFieldPath

__all__ = ["ExtractField"]

FIELD_CONFIG = "field"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
_PURPOSE = "field extraction"

CONFIG_DEF: ConfigDef = FieldSyntaxVersion.append_config_to(
    ConfigDef()
    .define(
        FIELD_CONFIG,
        Type.STRING,
        NO_DEFAULT,
        None,
        Importance.MEDIUM,
        "Name (or, with field syntax V2, path) of the field whose value becomes the new key or "
        "value.",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "When the extracted field is null and its schema has a default value: true returns the "
        "default, false returns null.",
    )
)


class ExtractField(Transformation[R], KeyOrValue, Generic[R]):
    """Replace the key (``ExtractField.Key``) or value (``ExtractField.Value``) with one field.

    Works on a Struct (the new schema is the field's schema) or, without a schema, on a map.
    A null key/value stays null; a field missing from a map gives null, one missing from a
    schema is an error.

    Example::

        xform = ExtractField.Value()
        xform.configure({"field": "id"})
    """

    Key: ClassVar[type[ExtractField[Any]]]
    Value: ClassVar[type[ExtractField[Any]]]

    def __init__(self) -> None:
        self._path = SingleFieldPath("", FieldSyntaxVersion.V1)
        self._replace_null_with_default = True

    def config(self) -> ConfigDef:
        """ExtractField's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``field``, ``field.syntax.version`` and ``replace.null.with.default``."""
        parsed = CONFIG_DEF.parse(configs)
        version = FieldSyntaxVersion.from_config(parsed)
        field = parsed[FIELD_CONFIG]
        try:
            self._path = SingleFieldPath(field, version)
        except ConfigException as exc:
            raise ConfigException(FIELD_CONFIG, field, str(exc)) from exc
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def apply(self, record: R) -> R:
        """The record with its key/value replaced by the configured field."""
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            data = None if value is None else require_map(value, _PURPOSE)
            return self.new_record(record, None, self._path.value_from_map(data))
        struct = None if value is None else require_struct(value, _PURPOSE)
        field = self._path.field_from(schema)
        if field is None:
            raise DataException(f"Unknown field: {self._path.path}", field=self._path.path)
        extracted = self._path.value_from_struct(
            struct, with_default=self._replace_null_with_default
        )
        return self.new_record(record, field.schema, extracted)


class _Key(KeyMixin, ExtractField[R]):
    """ExtractField on the record key (Kafka's ``ExtractField$Key``)."""


class _Value(ValueMixin, ExtractField[R]):
    """ExtractField on the record value (Kafka's ``ExtractField$Value``)."""


attach_variants(ExtractField, _Key, _Value)
