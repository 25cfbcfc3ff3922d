"""Flatten: turn nested structs or maps into one level (Kafka's ``Flatten``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic

from cdk.config import ConfigDef, Importance, Type
from cdk.data import Schema, SchemaBuilder, SchemaType, Struct
from cdk.errors import DataException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    R,
    SchemaCache,
    Transformation,
    ValueMixin,
    attach_variants,
    copy_schema_basics,
    copy_schema_metadata,
    require_map,
    require_struct,
)

__all__ = ["Flatten"]

DELIMITER_CONFIG = "delimiter"
DELIMITER_DEFAULT = "."
_PURPOSE = "flattening"

CONFIG_DEF: ConfigDef = ConfigDef().define(
    DELIMITER_CONFIG,
    Type.STRING,
    DELIMITER_DEFAULT,
    None,
    Importance.MEDIUM,
    "Text put between the names of a nested field and its parents to form the name of the "
    "flattened field.",
)


class Flatten(Transformation[R], KeyOrValue, Generic[R]):
    """Flatten nested Structs (or maps) of the key (``Flatten.Key``) or value (``Flatten.Value``).

    A field ``b`` inside a field ``a`` becomes ``a.b`` (with the configured delimiter). Arrays and
    maps with a schema are kept as they are; without a schema, nested maps are flattened too.
    A field under an optional struct becomes optional, and a struct's default value supplies the
    defaults of the fields taken out of it. A null key/value passes through unchanged.
    """

    Key: ClassVar[type[Flatten[Any]]]
    Value: ClassVar[type[Flatten[Any]]]

    def __init__(self) -> None:
        self._delimiter = DELIMITER_DEFAULT
        self._cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """Flatten's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``delimiter``."""
        parsed = CONFIG_DEF.parse(configs)
        self._delimiter = parsed[DELIMITER_CONFIG]
        self._cache = SchemaCache()

    def apply(self, record: R) -> R:
        """The record with its key/value flattened."""
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, _PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        struct = require_struct(value, _PURPOSE)
        updated_schema = self._cache.get_or_compute(schema, self._flattened_schema)
        updated = Struct(updated_schema)
        self._flatten_struct(struct, "", updated)
        return self.new_record(record, updated_schema, updated)

    def _flattened_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_metadata(schema, SchemaBuilder.struct())
        default = schema.default_value if isinstance(schema.default_value, Struct) else None
        self._flatten_schema(schema, "", builder, schema.optional, default)
        return builder.build()

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else f"{prefix}{self._delimiter}{name}"

    def _flatten_map(self, value: Mapping[Any, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, item in value.items():
            name = self._name(prefix, str(key))
            if item is None:
                out[name] = None
                continue
            if isinstance(item, Mapping):
                self._flatten_map(item, name, out)
            elif isinstance(item, Struct):
                raise DataException(
                    f"Flatten transformation does not support class Struct for record without "
                    f"schemas (for field {name}).",
                    field=name,
                )
            elif isinstance(
                item, (str, bool, int, float, bytes, bytearray, memoryview, list, tuple)
            ):
                out[name] = item
            else:
                raise DataException(
                    f"Flatten transformation was passed a value of type class "
                    f"{type(item).__name__} which is not supported by Connect's data API",
                    field=name,
                )

    def _flatten_schema(
        self,
        schema: Schema,
        prefix: str,
        builder: SchemaBuilder,
        optional: bool,
        parent_default: Struct | None,
    ) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default: Any = None
            if field.schema.default_value is not None:
                default = field.schema.default_value
            elif parent_default is not None:
                default = parent_default.get(field.name)
            if field.schema.type is SchemaType.STRUCT:
                self._flatten_schema(
                    field.schema,
                    name,
                    builder,
                    field_optional,
                    default if isinstance(default, Struct) else None,
                )
            else:
                builder.field(name, _converted(field.schema, field_optional, default))

    def _flatten_struct(self, struct: Struct, prefix: str, out: Struct) -> None:
        for field in struct.schema.fields:
            name = self._name(prefix, field.name)
            value = struct.get(field)
            if field.schema.type is SchemaType.STRUCT:
                if value is not None:
                    self._flatten_struct(value, name, out)
            else:
                out.put(name, value)


def _converted(original: Schema, optional: bool, default: Any) -> Schema:
    builder = copy_schema_basics(original)
    if optional and not original.optional:
        builder.optional()
    if default is not None:
        builder.default_value(default)
    return builder.build()


class _Key(KeyMixin, Flatten[R]):
    """Flatten on the record key (Kafka's ``Flatten$Key``)."""


class _Value(ValueMixin, Flatten[R]):
    """Flatten on the record value (Kafka's ``Flatten$Value``)."""


attach_variants(Flatten, _Key, _Value)
