"""Arrow record batches → sink records: the ``cdk`` format's writes take Spark's columns.

PySpark hands an Arrow writer (``DataSourceArrowWriter``, ``DataSourceStreamArrowWriter``) the
record batches it would otherwise turn into ``Row`` objects one value at a time. An
:class:`ArrowSinkRecordMaker` reads each column with one ``to_pylist()`` and builds the records'
structs with :meth:`~cdk.data.Struct.from_values`.

The records are those the row path (PySpark's rows and
:class:`~cdk.spark._datasource_rows.SinkRecordMaker`) gives: columns of the types whose values
PySpark hands over as Arrow gives them and :func:`~cdk.spark.to_connect_value` keeps (numbers,
booleans, strings, decimals, dates) are taken as they are; every other column (timestamps,
binary, times, structs, arrays, maps) is converted as the row path converts it, value by value.
A batch whose records cannot be built that way (a null where a field is required, a value that
does not fit) is done again row by row through the row path, whose error then names the field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from cdk.api import Header, Headers, SinkRecord, TimestampType
from cdk.data import Schema, Struct
from cdk.spark._datasource_rows import HEADERS, KEY, TIMESTAMP, TOPIC, SinkRecordMaker
from cdk.spark._lazy import require
from cdk.spark._schema_map import to_connect_value

__all__ = ["ArrowSinkRecordMaker"]

#: Spark types whose values PySpark's rows hold exactly as Arrow's ``to_pylist`` gives them,
#: and which ``to_connect_value`` keeps as they are.
_AS_IS = frozenset(
    {
        "ByteType",
        "ShortType",
        "IntegerType",
        "LongType",
        "FloatType",
        "DoubleType",
        "BooleanType",
        "StringType",
        "DecimalType",
        "DateType",
    }
)
_new_record = SinkRecord.__new__
_new_headers = Headers.__new__
_HEADER_SCHEMA = Schema.OPTIONAL_STRING_SCHEMA
_CREATE_TIME = TimestampType.CREATE_TIME
_NO_TIMESTAMP = TimestampType.NO_TIMESTAMP_TYPE


class ArrowSinkRecordMaker:
    """Builds the sink records of Arrow record batches of the DataFrame's schema.

    Args:
        schema: the DataFrame's schema.
        default_topic: the topic of rows without a ``_topic`` column (or with a null there).
    """

    def __init__(self, schema: Any, default_topic: str) -> None:
        conversion = require("pyspark.sql.conversion")
        self._rows = SinkRecordMaker(schema, default_topic)
        self._schema = schema
        self._topic = default_topic
        self._to_rows = conversion.ArrowTableToRowsConversion
        self._create_row = require("pyspark.sql.types")._create_row
        self._fields = schema.fieldNames()
        index = {n: i for i, n in enumerate(self._fields)}
        rows = self._rows
        self.value_schema = rows.value_schema
        self.key_schema = rows.key_schema
        self._value_positions = list(rows._value_positions)
        self._wrap = rows._wrap
        self._key = index.get(KEY)
        self._topic_column = index.get(TOPIC)
        self._timestamp = index.get(TIMESTAMP)
        self._headers = index.get(HEADERS)
        self._row_converters: list[Callable[[Any], Any]] | None = None
        # how to read each value column: None (as Arrow gives it) or a row-path converter
        value_schemas = (
            [f.schema for f in self.value_schema.fields] if self._wrap else [self.value_schema]
        )
        self._value_columns = [
            self._column(position, connect, name)
            for position, connect, name in zip(
                self._value_positions,
                value_schemas,
                [self._fields[p] for p in self._value_positions],
                strict=True,
            )
        ]

    def _column(self, position: int, schema: Any, path: str) -> Callable[[Any], list[Any]]:
        spark_type = self._schema.fields[position].dataType
        if type(spark_type).__name__ in _AS_IS:

            def as_is(batch: Any) -> list[Any]:
                values: list[Any] = batch.column(position).to_pylist()
                return values

            return as_is
        convert = self._to_rows._create_converter(spark_type, binary_as_bytes=True)

        def converted(batch: Any) -> list[Any]:
            return [
                to_connect_value(schema, convert(v), path)
                for v in self._to_rows._to_pylist(batch.column(position))
            ]

        return converted

    @property
    def row_maker(self) -> SinkRecordMaker:
        """The row path's maker (for the rows of a batch :meth:`records` cannot build)."""
        return self._rows

    def records(self, batch: Any, partition: int, first_offset: int) -> list[SinkRecord] | None:
        """The batch's records, the first at Kafka offset ``first_offset``, then one up each.

        None when a row cannot be built column by column (a null where a field is required, a
        value that does not fit): the caller then takes the batch's :meth:`rows` through the
        row path, which skips or writes each row as a row writer does and words the error.
        """
        try:
            return self._columns(batch, partition, first_offset)
        except Exception:  # noqa: BLE001 - the row path decides, and words the error
            return None

    def rows(self, batch: Any) -> Iterator[Any]:
        """The batch's rows, as PySpark hands a row writer them."""
        converters = self._row_converters
        if converters is None:
            converters = self._row_converters = [
                self._to_rows._create_converter(f.dataType, binary_as_bytes=True)
                for f in self._schema.fields
            ]
        columns = [self._to_rows._to_pylist(c) for c in batch.columns]
        for r in range(batch.num_rows):
            values = [converters[c](columns[c][r]) for c in range(len(columns))]
            yield self._create_row(fields=self._fields, values=values)

    def _columns(self, batch: Any, partition: int, first_offset: int) -> list[SinkRecord]:
        n = batch.num_rows
        columns = [column(batch) for column in self._value_columns]
        value_schema = self.value_schema
        values_of: Sequence[Any]
        if self._wrap:
            from_values = Struct.from_values  # validates as put() does; a failure: the rows
            values_of = [from_values(value_schema, row) for row in zip(*columns, strict=True)]
        else:
            values_of = columns[0]
            required = not value_schema.optional and value_schema.default_value is None
            if required and None in values_of:
                raise ValueError("a null value for a required schema")  # the rows word it
        keys: Sequence[Any] = (
            self._converted(batch, self._key, self.key_schema)
            if self._key is not None and self.key_schema is not None
            else [None] * n
        )
        topics: Sequence[Any] = (
            [
                self._topic if t is None else str(t)
                for t in batch.column(self._topic_column).to_pylist()
            ]
            if self._topic_column is not None
            else [self._topic] * n
        )
        stamps: Sequence[Any] = (
            [
                None if us is None else us // 1000  # floor, as millis() of the row's datetime
                for us in batch.column(self._timestamp).cast(_int64()).to_pylist()
            ]
            if self._timestamp is not None
            else [None] * n
        )
        if self._timestamp is not None and min(filter(None, stamps), default=0) < 0:
            raise ValueError("a timestamp before 1970")  # a record refuses it: the rows say so
        headers: Sequence[Any] = (
            self._header_lists(batch, self._headers) if self._headers is not None else [None] * n
        )
        key_schema = self.key_schema
        out = []
        offset = first_offset
        for topic, key, value, stamp, header in zip(
            topics, keys, values_of, stamps, headers, strict=True
        ):
            record: Any = _new_record(SinkRecord)
            record.topic = topic
            record.kafka_partition = partition
            record.key_schema = key_schema
            record.key = key
            record.value_schema = value_schema
            record.value = value
            record.kafka_offset = offset
            # KIP-793: a row's coordinates are its original ones (no transformation ran yet)
            record.original_topic = topic
            record.original_kafka_partition = partition
            record.original_kafka_offset = offset
            record.timestamp = stamp
            record.timestamp_type = _NO_TIMESTAMP if stamp is None else _CREATE_TIME
            if header is None:
                header = _new_headers(Headers)
                header._headers = []
            record.headers = header
            out.append(record)
            offset += 1
        return out

    def _converted(self, batch: Any, position: int, schema: Any) -> list[Any]:
        """A column's values as the row path makes them (PySpark's converter, the mapping)."""
        spark_type = self._schema.fields[position].dataType
        convert = self._to_rows._create_converter(spark_type, binary_as_bytes=True)
        name = self._fields[position]
        return [
            to_connect_value(schema, convert(v), name)
            for v in self._to_rows._to_pylist(batch.column(position))
        ]

    def _header_lists(self, batch: Any, position: int) -> list[Any]:
        """The ``_headers`` column as the row path reads it: ``(key, value)`` per header."""
        spark_type = self._schema.fields[position].dataType
        convert = self._to_rows._create_converter(spark_type, binary_as_bytes=True)
        out: list[Any] = []
        for v in self._to_rows._to_pylist(batch.column(position)):
            listed = convert(v)
            out.append(
                Headers([Header(h[0], _HEADER_SCHEMA, h[1]) for h in listed]) if listed else None
            )
        return out


def _int64() -> Any:
    return require("pyarrow").int64()
