"""InsertField: add record metadata or a static value as fields (Kafka's ``InsertField``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, NamedTuple

from cdk.config import ConfigDef, Importance, Type
from cdk.data import Schema, SchemaBuilder, Struct, Timestamp
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
    require_sink_record,
    require_struct,
    struct_get,
)

__all__ = ["InsertField"]

TOPIC_FIELD = "topic.field"
PARTITION_FIELD = "partition.field"
OFFSET_FIELD = "offset.field"
TIMESTAMP_FIELD = "timestamp.field"
STATIC_FIELD = "static.field"
STATIC_VALUE = "static.value"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
_PURPOSE = "field insertion"

_OPTIONALITY = (
    "End the name with <code>!</code> to make the field required, or with <code>?</code> to keep "
    "it optional (the default)."
)


def _field_key(config: ConfigDef, name: str, what: str) -> ConfigDef:
    return config.define(
        name, Type.STRING, None, None, Importance.MEDIUM, f"{what}\n{_OPTIONALITY}"
    )


CONFIG_DEF: ConfigDef = ConfigDef()
for _name, _what in (
    (TOPIC_FIELD, "Name of the field that receives the record's Kafka topic."),
    (PARTITION_FIELD, "Name of the field that receives the record's Kafka partition."),
    (
        OFFSET_FIELD,
        "Name of the field that receives the record's Kafka offset (sink connectors only).",
    ),
    (TIMESTAMP_FIELD, "Name of the field that receives the record's timestamp."),
    (STATIC_FIELD, "Name of the field that receives the static value."),
):
    _field_key(CONFIG_DEF, _name, _what)
CONFIG_DEF.define(
    STATIC_VALUE,
    Type.STRING,
    None,
    None,
    Importance.MEDIUM,
    "The value of the static field, when one is named.",
).define(
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    Type.BOOLEAN,
    True,
    None,
    Importance.MEDIUM,
    "When a copied field is null and its schema has a default value: true copies the default, "
    "false keeps null.",
)

_OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()


class InsertionSpec(NamedTuple):
    """A field to insert: its name and whether its schema is optional."""

    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> InsertionSpec | None:
        """``name?`` or ``name`` is optional, ``name!`` required; ``None`` stays ``None``."""
        if spec is None:
            return None
        if spec.endswith("?"):
            return InsertionSpec(spec[:-1], True)
        if spec.endswith("!"):
            return InsertionSpec(spec[:-1], False)
        return InsertionSpec(spec, True)


class InsertField(Transformation[R], KeyOrValue, Generic[R]):
    """Insert the topic, partition, offset, timestamp or a static value as fields.

    ``InsertField.Key`` works on the key, ``InsertField.Value`` on the value, which must be a
    Struct (with a schema) or a map (without). Tombstones (null key/value) pass through unchanged.
    With a schema, the partition is an int32 field, the offset int64, the timestamp a
    Timestamp, topic and static value strings; without, the raw values are put in the map.

    Example::

        xform = InsertField.Value()
        xform.configure({"topic.field": "topic!", "offset.field": "offset"})
    """

    Key: ClassVar[type[InsertField[Any]]]
    Value: ClassVar[type[InsertField[Any]]]

    def __init__(self) -> None:
        self._topic: InsertionSpec | None = None
        self._partition: InsertionSpec | None = None
        self._offset: InsertionSpec | None = None
        self._timestamp: InsertionSpec | None = None
        self._static: InsertionSpec | None = None
        self._static_value: str | None = None
        self._replace_null_with_default = True
        self._cache: SchemaCache[Schema, Schema] = SchemaCache()

    def config(self) -> ConfigDef:
        """InsertField's ConfigDef."""
        return CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Read the field names, ``static.value`` and ``replace.null.with.default``.

        Raises:
            ConfigException: no field to insert, or a static field without a value.
        """
        parsed = CONFIG_DEF.parse(configs)
        self._topic = InsertionSpec.parse(parsed[TOPIC_FIELD])
        self._partition = InsertionSpec.parse(parsed[PARTITION_FIELD])
        self._offset = InsertionSpec.parse(parsed[OFFSET_FIELD])
        self._timestamp = InsertionSpec.parse(parsed[TIMESTAMP_FIELD])
        self._static = InsertionSpec.parse(parsed[STATIC_FIELD])
        self._static_value = parsed[STATIC_VALUE]
        self._replace_null_with_default = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        specs = (self._topic, self._partition, self._offset, self._timestamp, self._static)
        if all(spec is None for spec in specs):
            raise ConfigException("No field insertion configured")
        if self._static is not None and self._static_value is None:
            raise ConfigException(
                STATIC_VALUE, None, f"No value specified for static field: {self._static.name}"
            )
        self._cache = SchemaCache()

    def apply(self, record: R) -> R:
        """The record with the configured fields inserted."""
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            return self._apply_schemaless(record, value)
        return self._apply_with_schema(record, value)

    def _apply_schemaless(self, record: R, value: Any) -> R:
        updated = dict(require_map(value, _PURPOSE))
        if self._topic is not None:
            updated[self._topic.name] = record.topic
        if self._partition is not None and record.kafka_partition is not None:
            updated[self._partition.name] = record.kafka_partition
        if self._offset is not None:
            updated[self._offset.name] = require_sink_record(record, _PURPOSE).kafka_offset
        if self._timestamp is not None and record.timestamp is not None:
            updated[self._timestamp.name] = record.timestamp
        if self._static is not None and self._static_value is not None:
            updated[self._static.name] = self._static_value
        return self.new_record(record, None, updated)

    def _apply_with_schema(self, record: R, value: Any) -> R:
        struct = require_struct(value, _PURPOSE)
        schema = self._cache.get_or_compute(struct.schema, self._updated_schema)
        updated = Struct(schema)
        for field in struct.schema.fields:
            updated.put(field.name, struct_get(struct, field, self._replace_null_with_default))
        if self._topic is not None:
            updated.put(self._topic.name, record.topic)
        if self._partition is not None and record.kafka_partition is not None:
            updated.put(self._partition.name, record.kafka_partition)
        if self._offset is not None:
            updated.put(self._offset.name, require_sink_record(record, _PURPOSE).kafka_offset)
        if self._timestamp is not None and record.timestamp is not None:
            updated.put(
                self._timestamp.name, Timestamp.to_logical(Timestamp.SCHEMA, record.timestamp)
            )
        if self._static is not None and self._static_value is not None:
            updated.put(self._static.name, self._static_value)
        return self.new_record(record, schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_metadata(schema, SchemaBuilder.struct())
        for field in schema.fields:
            builder.field(field.name, field.schema)
        for spec, optional, required in (
            (self._topic, Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
            (self._partition, Schema.OPTIONAL_INT32_SCHEMA, Schema.INT32_SCHEMA),
            (self._offset, Schema.OPTIONAL_INT64_SCHEMA, Schema.INT64_SCHEMA),
            (self._timestamp, _OPTIONAL_TIMESTAMP_SCHEMA, Timestamp.SCHEMA),
            (self._static, Schema.OPTIONAL_STRING_SCHEMA, Schema.STRING_SCHEMA),
        ):
            if spec is not None:
                builder.field(spec.name, optional if spec.optional else required)
        return builder.build()


class _Key(KeyMixin, InsertField[R]):
    """InsertField on the record key (Kafka's ``InsertField$Key``)."""


class _Value(ValueMixin, InsertField[R]):
    """InsertField on the record value (Kafka's ``InsertField$Value``)."""


attach_variants(InsertField, _Key, _Value)
