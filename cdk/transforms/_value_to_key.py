"""ValueToKey: build the record key from fields of the value (Kafka's ``ValueToKey``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import DataException
from cdk.transforms._base import (
    NonEmptyListValidator,
    R,
    SchemaCache,
    Transformation,
    require_map,
    require_struct,
    struct_get,
)

__all__ = ["ValueToKey"]

FIELDS_CONFIG = "fields"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
_PURPOSE = "copying fields from value to key"


CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        FIELDS_CONFIG,
        Type.LIST,
        NO_DEFAULT,
        NonEmptyListValidator(),
        Importance.HIGH,
        "Names of the value's fields that make up the new key.",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "When a copied field is null and its schema has a default value: true copies the "
        "default, false keeps null.",
    )
)


class ValueToKey(Transformation[R], Generic[R]):
    """Replace the record key with a Struct (or map) of fields copied from the value.

    The value is left as it is. With a schema the key schema is a struct of the copied fields'
    schemas (cached per value schema); a field missing from the value schema is an error.

    Example::

        xform = ValueToKey()
        xform.configure({"fields": "user_id,region"})
    """

    def __init__(self) -> None:
        self._fields: list[str] = []
        self._replace_null_with_default = True
        self._cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """ValueToKey's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``fields`` and ``replace.null.with.default``."""
        parsed = CONFIG_DEF.parse(configs)
        self._fields = list(parsed[FIELDS_CONFIG])
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._cache = SchemaCache()

    def apply(self, record: R) -> R:
        """The record with its key built from the value."""
        if record.value_schema is None:
            data = require_map(record.value, _PURPOSE)
            key = {name: data.get(name) for name in self._fields}
            return _with_key(record, None, key)
        struct = require_struct(record.value, _PURPOSE)
        key_schema = self._cache.get_or_compute(struct.schema, self._key_schema)
        key_struct = Struct(key_schema)
        for name in self._fields:
            key_struct.put(name, struct_get(struct, name, self._replace_null_with_default))
        return _with_key(record, key_schema, key_struct)

    def _key_schema(self, value_schema: Schema) -> Schema:
        builder = SchemaBuilder.struct()
        for name in self._fields:
            field = value_schema.field(name)
            if field is None:
                raise DataException(f"Field does not exist: {name}", field=name)
            builder.field(name, field.schema)
        return builder.build()


def _with_key(record: R, schema: Schema | None, key: Any) -> R:
    return record.new_record(key_schema=schema, key=key)
