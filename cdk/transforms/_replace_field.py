"""ReplaceField: keep, drop and rename fields (Kafka's ``ReplaceField``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar, Generic

from cdk.config import ConfigDef, Importance, Type
from cdk.config.validators import LambdaValidator
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    R,
    SchemaCache,
    Transformation,
    ValueMixin,
    attach_variants,
    copy_schema_metadata,
    require_map,
    require_struct,
    struct_get,
)

__all__ = ["ReplaceField"]

_log = logging.getLogger(__name__)

EXCLUDE_CONFIG = "exclude"
INCLUDE_CONFIG = "include"
RENAMES_CONFIG = "renames"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
_PURPOSE = "field replacement"
_REMOVED_KEYS = {"blacklist": EXCLUDE_CONFIG, "whitelist": INCLUDE_CONFIG}


def parse_renames(mappings: list[str]) -> dict[str, str]:
    """Parse ``old:new`` pairs.

    Raises:
        ConfigException: an entry that is not exactly two colon-separated names.
    """
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        if len(parts) != 2:
            raise ConfigException(RENAMES_CONFIG, mappings, f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


def _validate_renames(name: str, value: Any) -> None:
    parse_renames(list(value or []))


CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        EXCLUDE_CONFIG,
        Type.LIST,
        [],
        None,
        Importance.MEDIUM,
        "Fields to drop. Takes precedence over the fields to include.",
    )
    .define(
        INCLUDE_CONFIG,
        Type.LIST,
        [],
        None,
        Importance.MEDIUM,
        "Fields to keep; when set, every other field is dropped.",
    )
    .define(
        RENAMES_CONFIG,
        Type.LIST,
        [],
        LambdaValidator.of(
            _validate_renames, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"
        ),
        Importance.MEDIUM,
        "Field renames, as <code>old:new</code> pairs.",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "When a kept field is null and its schema has a default value: true copies the default, "
        "false keeps null.",
    )
)


class ReplaceField(Transformation[R], KeyOrValue, Generic[R]):
    """Drop, keep and rename fields of the key (``ReplaceField.Key``) or value (``.Value``).

    A field is kept when it is not excluded and ``include`` is empty or lists it; kept fields
    are then renamed. Tombstones (null key/value) pass through unchanged. Kafka's removed
    ``blacklist``/``whitelist`` keys are ignored, with a warning naming their replacements.

    Example::

        xform = ReplaceField.Value()
        xform.configure({"exclude": "password", "renames": "uid:user_id"})
    """

    Key: ClassVar[type[ReplaceField[Any]]]
    Value: ClassVar[type[ReplaceField[Any]]]

    def __init__(self) -> None:
        self._exclude: frozenset[str] = frozenset()
        self._include: frozenset[str] = frozenset()
        self._renames: dict[str, str] = {}
        self._reverse: dict[str, str] = {}
        self._replace_null_with_default = True
        self._cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """ReplaceField's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``exclude``, ``include``, ``renames`` and ``replace.null.with.default``."""
        for old, new in _REMOVED_KEYS.items():
            if old in configs:
                _log.warning(
                    "ReplaceField no longer supports '%s' (removed in Kafka 4.0); use '%s'",
                    old,
                    new,
                )
        parsed = CONFIG_DEF.parse(configs)
        self._exclude = frozenset(parsed[EXCLUDE_CONFIG])
        self._include = frozenset(parsed[INCLUDE_CONFIG])
        self._renames = parse_renames(parsed[RENAMES_CONFIG])
        self._reverse = {new: old for old, new in self._renames.items()}
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._cache = SchemaCache()

    def _keeps(self, name: str) -> bool:
        return name not in self._exclude and (not self._include or name in self._include)

    def _renamed(self, name: str) -> str:
        return self._renames.get(name, name)

    def apply(self, record: R) -> R:
        """The record with fields dropped and renamed."""
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            data = require_map(value, _PURPOSE)
            updated = {self._renamed(k): v for k, v in data.items() if self._keeps(k)}
            return self.new_record(record, None, updated)
        struct = require_struct(value, _PURPOSE)
        updated_schema = self._cache.get_or_compute(struct.schema, self._updated_schema)
        replaced = Struct(updated_schema)
        for field in updated_schema.fields:
            original = self._reverse.get(field.name, field.name)
            replaced.put(field, struct_get(struct, original, self._replace_null_with_default))
        return self.new_record(record, updated_schema, replaced)

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_metadata(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if self._keeps(field.name):
                builder.field(self._renamed(field.name), field.schema)
        return builder.build()


class _Key(KeyMixin, ReplaceField[R]):
    """ReplaceField on the record key (Kafka's ``ReplaceField$Key``)."""


class _Value(ValueMixin, ReplaceField[R]):
    """ReplaceField on the record value (Kafka's ``ReplaceField$Value``)."""


attach_variants(ReplaceField, _Key, _Value)
