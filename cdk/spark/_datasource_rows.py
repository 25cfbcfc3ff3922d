"""Records ⇄ rows of the ``cdk`` format.

A source record becomes one row: the value's fields as columns (a value that is not a struct is
one column, ``value``), then the metadata columns ``_topic``, ``_key``, ``_timestamp``,
``_headers``, ``_source_partition`` and ``_source_offset`` (the last two as canonical JSON). A
row written to a sink becomes one :class:`SinkRecord`: the columns that are not metadata form the
value (one column named ``value`` is the value itself), ``_key``, ``_topic``, ``_timestamp`` and
``_headers`` fill the record's, when present.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any

from cdk.api import SinkRecord, SourceRecord, TimestampType
from cdk.data import Schema, SchemaType, Values
from cdk.errors import DataException
from cdk.spark._datasource_options import canonical
from cdk.spark._lazy import spark_types
from cdk.spark._schema_map import (
    connect_to_spark,
    millis,
    spark_to_connect,
    to_connect_value,
    to_spark_value,
)

__all__ = [
    "METADATA_COLUMNS",
    "RowMaker",
    "SinkRecordMaker",
    "infer_schema",
    "key_value",
]

TOPIC, KEY, TIMESTAMP, HEADERS = "_topic", "_key", "_timestamp", "_headers"
SOURCE_PARTITION, SOURCE_OFFSET = "_source_partition", "_source_offset"
METADATA_COLUMNS = (TOPIC, KEY, TIMESTAMP, HEADERS, SOURCE_PARTITION, SOURCE_OFFSET)
VALUE = "value"
_UTC = _dt.timezone.utc


def _value_fields(schema: Schema | None) -> list[tuple[str, Schema]]:
    if schema is None:
        raise DataException(
            "The record has no value schema, so it has no columns: give the DataFrame's schema "
            'with .schema("...") or use a converter/connector that emits schemas'
        )
    if schema.type is SchemaType.STRUCT:
        return [(f.name, f.schema) for f in schema.fields]
    return [(VALUE, schema)]


def _metadata_fields(key_type: Any) -> list[Any]:
    t = spark_types()
    header = t.StructType(
        [t.StructField("key", t.StringType(), False), t.StructField("value", t.StringType())]
    )
    return [
        t.StructField(TOPIC, t.StringType(), True),
        t.StructField(KEY, key_type, True),
        t.StructField(TIMESTAMP, t.TimestampType(), True),
        t.StructField(HEADERS, t.ArrayType(header, False), True),
        t.StructField(SOURCE_PARTITION, t.StringType(), True),
        t.StructField(SOURCE_OFFSET, t.StringType(), True),
    ]


def infer_schema(records: Sequence[SourceRecord]) -> Any:
    """The DataFrame schema for these records (their value fields merged by name, then metadata).

    Raises:
        DataException: no records, a record without a value schema, or a field whose type
            differs between records (named).
    """
    t = spark_types()
    if not records:
        raise DataException(
            "The connector emitted no records to infer the DataFrame's schema from: give it "
            'with .schema("...") (the value columns, optionally the metadata columns)'
        )
    columns: dict[str, Any] = {}
    key_type: Any = None
    for record in records:
        for name, schema in _value_fields(record.value_schema):
            dtype = connect_to_spark(schema, name)
            seen = columns.setdefault(name, dtype)
            if seen != dtype:
                raise DataException(
                    f"Field {name!r} has type {seen.simpleString()} in one record and "
                    f"{dtype.simpleString()} in another: give the DataFrame's schema with "
                    '.schema("...")',
                    field=name,
                )
        if record.key_schema is not None and key_type is None:
            key_type = connect_to_spark(record.key_schema, KEY)
    fields = [t.StructField(n, d, True) for n, d in columns.items()]
    return t.StructType(fields + _metadata_fields(key_type or t.StringType()))


class RowMaker:
    """Turns source records into tuples in the order of the DataFrame's schema."""

    def __init__(self, schema: Any) -> None:
        self._names = [f.name for f in schema.fields]
        self._index = {n: i for i, n in enumerate(self._names)}
        self._key_is_string = (
            KEY in self._index
            and type(schema.fields[self._index[KEY]].dataType).__name__ == "StringType"
        )

    def row(self, record: SourceRecord) -> tuple[Any, ...]:
        """The row for one record; columns the record lacks are null."""
        out: list[Any] = [None] * len(self._names)
        index = self._index
        schema = record.value_schema
        if record.value is not None:
            if schema is not None and schema.type is SchemaType.STRUCT:
                value = record.value
                for f in schema.fields:
                    i = index.get(f.name)
                    if i is not None:
                        out[i] = to_spark_value(f.schema, value.get(f), f.name)
            elif VALUE in index:
                out[index[VALUE]] = (
                    to_spark_value(schema, record.value, VALUE)
                    if schema is not None
                    else record.value
                )
        self._metadata(record, out)
        return tuple(out)

    def _metadata(self, record: SourceRecord, out: list[Any]) -> None:
        index = self._index
        if TOPIC in index:
            out[index[TOPIC]] = record.topic
        if KEY in index and record.key is not None:
            out[index[KEY]] = key_value(record, self._key_is_string)
        if TIMESTAMP in index and record.timestamp is not None:
            out[index[TIMESTAMP]] = _dt.datetime.fromtimestamp(record.timestamp / 1000, _UTC)
        if HEADERS in index:
            out[index[HEADERS]] = [
                (h.key, Values.convert_to_string(h.schema, h.value)) for h in record.headers
            ]
        if SOURCE_PARTITION in index:
            out[index[SOURCE_PARTITION]] = canonical(record.source_partition)
        if SOURCE_OFFSET in index:
            out[index[SOURCE_OFFSET]] = canonical(record.source_offset)


def key_value(record: SourceRecord, key_is_string: bool) -> Any:
    """The ``_key`` column's value of a record with a key (a string for a string column)."""
    if key_is_string and (
        record.key_schema is None or record.key_schema.type is not SchemaType.STRING
    ):
        return Values.convert_to_string(record.key_schema, record.key)
    if record.key_schema is not None:
        return to_spark_value(record.key_schema, record.key, KEY)
    return record.key


class SinkRecordMaker:
    """Turns Spark rows into sink records with the mapped Connect schemas.

    Args:
        schema: the DataFrame's schema.
        default_topic: the topic of rows without a ``_topic`` column.
    """

    def __init__(self, schema: Any, default_topic: str) -> None:
        t = spark_types()
        self._topic = default_topic
        names = [f.name for f in schema.fields]
        self._index = {n: i for i, n in enumerate(names)}
        value_fields = [f for f in schema.fields if f.name not in METADATA_COLUMNS]
        if not value_fields:
            raise DataException(
                "The DataFrame has no value columns (only metadata columns "
                f"{', '.join(METADATA_COLUMNS)}): nothing to write"
            )
        self._value_positions = [self._index[f.name] for f in value_fields]
        if len(value_fields) == 1 and value_fields[0].name == VALUE:
            f = value_fields[0]
            self.value_schema = spark_to_connect(f.dataType, f.nullable, VALUE)
            self._wrap = False
        else:
            self.value_schema = spark_to_connect(t.StructType(value_fields))
            self._wrap = True
        self.key_schema: Schema | None = None
        if KEY in self._index:
            f = schema.fields[self._index[KEY]]
            self.key_schema = spark_to_connect(f.dataType, True, KEY)

    def topic(self, row: Sequence[Any]) -> str:
        """The row's topic."""
        i = self._index.get(TOPIC)
        if i is not None and row[i] is not None:
            return str(row[i])
        return self._topic

    def record(self, row: Sequence[Any], partition: int, offset: int) -> SinkRecord:
        """The sink record for one row at these Kafka coordinates."""
        if self._wrap:
            value = to_connect_value(self.value_schema, [row[i] for i in self._value_positions])
        else:
            value = to_connect_value(self.value_schema, row[self._value_positions[0]], VALUE)
        key = None
        index = self._index
        if self.key_schema is not None:
            key = to_connect_value(self.key_schema, row[index[KEY]], KEY)
        timestamp = None
        if TIMESTAMP in index and row[index[TIMESTAMP]] is not None:
            timestamp = millis(row[index[TIMESTAMP]])
        headers: list[Any] = []
        if HEADERS in index and row[index[HEADERS]]:
            from cdk.api import Header

            headers = [
                Header(h[0], Schema.OPTIONAL_STRING_SCHEMA, h[1]) for h in row[index[HEADERS]]
            ]
        return SinkRecord(
            self.topic(row),
            partition,
            self.key_schema,
            key,
            self.value_schema,
            value,
            offset,
            timestamp,
            TimestampType.CREATE_TIME if timestamp is not None else TimestampType.NO_TIMESTAMP_TYPE,
            headers,
        )
