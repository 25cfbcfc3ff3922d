"""SetSchemaMetadata: set the name and/or version of the key or value schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from cdk.config import ConfigDef, Importance, Type
from cdk.data import Schema, SchemaType, Struct
from cdk.errors import ConfigException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    R,
    Transformation,
    ValueMixin,
    attach_variants,
    require_schema,
    struct_get,
)

__all__ = ["SetSchemaMetadata", "update_schema_in"]

SCHEMA_NAME_CONFIG = "schema.name"
SCHEMA_VERSION_CONFIG = "schema.version"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"

CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(SCHEMA_NAME_CONFIG, Type.STRING, None, None, Importance.HIGH, "The schema name to set.")
    .define(
        SCHEMA_VERSION_CONFIG, Type.INT, None, None, Importance.HIGH, "The schema version to set."
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "When a Struct is copied onto the renamed schema, whether a null field that has a "
        "default value takes that default (true) or stays null (false).",
    )
)


def update_schema_in(
    key_or_value: Any, updated_schema: Schema, *, replace_null_with_default: bool = True
) -> Any:
    """Re-home a Struct onto ``updated_schema`` (same fields, new name/version).

    Any other value (``None`` included) is returned as is, since only a Struct refers to its
    schema. This is Kafka's ``SetSchemaMetadata.updateSchemaIn``.
    """
    if not isinstance(key_or_value, Struct):
        return key_or_value
    updated = Struct(updated_schema)
    for field in updated_schema.fields:
        updated.put(field, struct_get(key_or_value, field.name, replace_null_with_default))
    return updated


class SetSchemaMetadata(KeyOrValue, Transformation[R]):
    """Set the schema name, version, or both, on the key (``.Key``) or value (``.Value``) schema.

    A Struct key/value is copied onto the new schema. A record whose key/value and schema are
    both null passes unchanged; a schemaless non-null key/value is an error.

    Example::

        xform = SetSchemaMetadata.Value()
        xform.configure({"schema.name": "com.example.Order", "schema.version": "2"})
    """

    Key: ClassVar[type[SetSchemaMetadata[Any]]]
    Value: ClassVar[type[SetSchemaMetadata[Any]]]

    def __init__(self) -> None:
        self._name: str | None = None
        self._version: int | None = None
        self._replace_null_with_default = True

    def config(self) -> ConfigDef:
        """SetSchemaMetadata's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``schema.name``, ``schema.version`` and ``replace.null.with.default``.

        Raises:
            ConfigException: neither a name nor a version is set, or a value is malformed.
        """
        parsed = CONFIG_DEF.parse(configs)
        self._name = parsed[SCHEMA_NAME_CONFIG]
        self._version = parsed[SCHEMA_VERSION_CONFIG]
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        if self._name is None and self._version is None:
            raise ConfigException("Neither schema name nor version configured")

    def apply(self, record: R) -> R | None:
        """The record with the updated schema (and a Struct key/value moved onto it).

        Raises:
            DataException: the key/value is not null but has no schema.
        """
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None and schema is None:
            return record
        schema = require_schema(schema, "updating schema metadata")
        container = schema.type in (SchemaType.ARRAY, SchemaType.MAP)
        updated = Schema(
            schema.type,
            optional=schema.optional,
            name=self._name if self._name is not None else schema.name,
            version=self._version if self._version is not None else schema.version,
            doc=schema.doc,
            parameters=schema.parameters,
            fields=schema.fields if schema.type is SchemaType.STRUCT else None,
            key_schema=schema.key_schema if schema.type is SchemaType.MAP else None,
            value_schema=schema.value_schema if container else None,
        )
        default = schema.default_value
        if isinstance(default, Struct):
            # a Struct default must belong to the new schema, which only exists once built
            updated.default_value = update_schema_in(default, updated)
        elif default is not None:
            updated.default_value = default
        new_value = update_schema_in(
            value, updated, replace_null_with_default=self._replace_null_with_default
        )
        return self.new_record(record, updated, new_value)


class _Key(KeyMixin, SetSchemaMetadata[R]):
    """SetSchemaMetadata on the record key (Kafka's ``SetSchemaMetadata$Key``)."""


class _Value(ValueMixin, SetSchemaMetadata[R]):
    """SetSchemaMetadata on the record value (Kafka's ``SetSchemaMetadata$Value``)."""


attach_variants(SetSchemaMetadata, _Key, _Value)
