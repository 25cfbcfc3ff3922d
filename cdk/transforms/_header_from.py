"""HeaderFrom: copy or move fields of the key or value into headers (Kafka's ``HeaderFrom``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from cdk.config import NO_DEFAULT, ConfigDef, Importance, Type, validators
from cdk.data import Schema, SchemaBuilder, Struct
from cdk.errors import ConfigException, DataException
from cdk.transforms._base import (
    KeyMixin,
    KeyOrValue,
    NonEmptyListValidator,
    R,
    SchemaCache,
    Transformation,
    ValueMixin,
    attach_variants,
    copy_schema_basics,
    require_map,
    require_struct,
    struct_get,
)

__all__ = ["HeaderFrom"]

FIELDS_CONFIG = "fields"
HEADERS_CONFIG = "headers"
OPERATION_CONFIG = "operation"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
MOVE = "move"
COPY = "copy"

CONFIG_DEF: ConfigDef = (
    ConfigDef()
    .define(
        FIELDS_CONFIG,
        Type.LIST,
        NO_DEFAULT,
        NonEmptyListValidator(),
        Importance.HIGH,
        "Names of the fields whose values go into headers.",
    )
    .define(
        HEADERS_CONFIG,
        Type.LIST,
        NO_DEFAULT,
        NonEmptyListValidator(),
        Importance.HIGH,
        "Names of the headers to write, one for each entry of 'fields', in the same order.",
    )
    .define(
        OPERATION_CONFIG,
        Type.STRING,
        NO_DEFAULT,
        validators.ValidString.of(MOVE, COPY),
        Importance.HIGH,
        "<code>move</code> removes the fields from the key/value after writing the headers; "
        "<code>copy</code> leaves them in place.",
    )
    .define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        Type.BOOLEAN,
        True,
        None,
        Importance.MEDIUM,
        "Whether a null field that has a default value is read as that default (true) or as "
        "null (false).",
    )
)


class HeaderFrom(KeyOrValue, Transformation[R]):
    """Write fields of the key (``HeaderFrom.Key``) or value (``HeaderFrom.Value``) to headers.

    The i-th entry of ``fields`` goes to the header named by the i-th entry of ``headers``; with
    ``operation=move`` the fields are removed from the key/value. Headers carry the field's
    schema (none when the data is schemaless); existing headers of the same name are kept.

    Example::

        xform = HeaderFrom.Value()
        xform.configure({"fields": "id", "headers": "record-id", "operation": "copy"})
    """

    Key: ClassVar[type[HeaderFrom[Any]]]
    Value: ClassVar[type[HeaderFrom[Any]]]

    def __init__(self) -> None:
        self._fields: list[str] = []
        self._headers: list[str] = []
        self._operation = COPY
        self._replace_null_with_default = True
        self._move_schema_cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """HeaderFrom's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read ``fields``, ``headers``, ``operation`` and ``replace.null.with.default``.

        Raises:
            ConfigException: a missing/empty list, lists of different lengths, or an unknown
                operation.
        """
        parsed = CONFIG_DEF.parse(configs)
        fields: list[str] = parsed[FIELDS_CONFIG]
        headers: list[str] = parsed[HEADERS_CONFIG]
        if len(fields) != len(headers):
            raise ConfigException(
                HEADERS_CONFIG,
                headers,
                f"'{FIELDS_CONFIG}' config must have the same number of elements as "
                f"'{HEADERS_CONFIG}' config.",
            )
        self._fields = fields
        self._headers = headers
        self._operation = parsed[OPERATION_CONFIG]
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._move_schema_cache = SchemaCache()

    def apply(self, record: R) -> R | None:
        """The record with the headers added (and, for ``move``, the fields removed)."""
        schema = self.operating_schema(record)
        if schema is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record, schema)

    def _apply_with_schema(self, record: R, schema: Schema) -> R:
        value = require_struct(self.operating_value(record), f"header {self._operation}")
        headers = record.headers.duplicate()
        if self._operation == MOVE:
            updated_schema = self._move_schema(schema)
            updated_value = Struct(updated_schema)
            for field in updated_schema.fields:
                updated_value.put(field, self._field_value(value, field.name))
        else:
            updated_schema, updated_value = schema, value
        for field_name, header_name in zip(self._fields, self._headers, strict=True):
            source = schema.field(field_name)
            if source is None:
                raise DataException(
                    f"Field {field_name} does not exist in the schema {schema!r}", field=field_name
                )
            headers.add(header_name, self._field_value(value, field_name), source.schema)
        new = self.new_record(record, updated_schema, updated_value)
        new.headers = headers
        return new

    def _field_value(self, value: Struct, name: str) -> Any:
        if value.schema.field(name) is None:
            return None
        return struct_get(value, name, self._replace_null_with_default)

    def _move_schema(self, schema: Schema) -> Schema:
        return self._move_schema_cache.get_or_compute(schema, self._build_move_schema)

    def _build_move_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            if field.name not in self._fields:
                builder.field(field.name, field.schema)
        return builder.build()

    def _apply_schemaless(self, record: R) -> R:
        value = require_map(self.operating_value(record), f"header {self._operation}")
        headers = record.headers.duplicate()
        updated = dict(value)
        for field_name, header_name in zip(self._fields, self._headers, strict=True):
            if self._operation == MOVE:
                updated.pop(field_name, None)
            headers.add(header_name, value.get(field_name), None)
        new = self.new_record(record, None, updated)
        new.headers = headers
        return new


class _Key(KeyMixin, HeaderFrom[R]):
    """HeaderFrom on the record key (Kafka's ``HeaderFrom$Key``)."""


class _Value(ValueMixin, HeaderFrom[R]):
    """HeaderFrom on the record value (Kafka's ``HeaderFrom$Value``)."""


attach_variants(HeaderFrom, _Key, _Value)
