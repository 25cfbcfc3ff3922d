"""Records → Arrow record batches: the ``cdk`` format hands Spark columns, not rows.

PySpark's Python data source API takes ``pyarrow.RecordBatch`` objects from ``read()``; they go
to the JVM as they are, where rows (tuples) are converted column by column in Python first. A
:class:`ArrowBatchMaker` builds each column of a batch of records with one list comprehension and
one ``pyarrow.array`` call, using the Connect → Spark value mapping of :mod:`._schema_map`.

Every value is the one the row path (:class:`~cdk.spark._datasource_rows.RowMaker` and PySpark's
own conversion of its tuples) gives. The columnar path covers the common case: records whose
values are structs of one schema (or all non-struct values of one schema), each column of the
type the Connect → Spark mapping gives its field. A column whose DataFrame type differs (a
schema given with ``.schema(...)``), and every column of a batch whose records do not share a
value schema (a schema change, a tombstone), is converted exactly as the row path converts it:
:class:`RowMaker`'s values through PySpark's converter for the column's type.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from cdk.api import Headers, SourceRecord
from cdk.data import Schema, SchemaType, Struct, Values
from cdk.errors import DataException
from cdk.spark._datasource_options import canonical
from cdk.spark._datasource_rows import (
    HEADERS,
    KEY,
    METADATA_COLUMNS,
    SOURCE_OFFSET,
    SOURCE_PARTITION,
    TIMESTAMP,
    TOPIC,
    VALUE,
    RowMaker,
    key_value,
)
from cdk.spark._lazy import require
from cdk.spark._schema_map import _spark_decimal, connect_to_spark, to_spark_value

__all__ = ["BATCH_ROWS", "ArrowBatchMaker", "arrow_batches"]

#: Records per Arrow batch (Spark's ``spark.sql.execution.arrow.maxRecordsPerBatch`` default).
BATCH_ROWS = 10_000

_Column = Callable[[Sequence[SourceRecord]], Any]


def arrow_batches(
    records: Iterable[SourceRecord], schema: Any, rows: int = BATCH_ROWS
) -> Iterator[Any]:
    """The records as Arrow record batches of the DataFrame's ``schema``, ``rows`` at most each."""
    maker: ArrowBatchMaker | None = None
    iterator = iter(records)
    while chunk := list(itertools.islice(iterator, rows)):
        if maker is None:
            maker = ArrowBatchMaker(schema)
        yield maker.batch(chunk)


class ArrowBatchMaker:
    """Turns lists of source records into Arrow record batches of the DataFrame's schema.

    Args:
        schema: the DataFrame's schema (a ``StructType``).
    """

    def __init__(self, schema: Any) -> None:
        self._pa = require("pyarrow")
        to_arrow_schema = require("pyspark.sql.pandas.types").to_arrow_schema
        conversion = require("pyspark.sql.conversion")
        self._schema = schema
        self.arrow_schema = to_arrow_schema(schema, timezone="UTC")
        self._rows = RowMaker(schema)
        self._names: list[str] = [f.name for f in schema.fields]
        self._spark_types = [f.dataType for f in schema.fields]
        self._arrow_types = [f.type for f in self.arrow_schema]
        # PySpark's converter of each column (the row path's), built when first needed
        self._create_converter = conversion.LocalDataToArrowConversion._create_converter
        self._converters: dict[int, Callable[[Any], Any]] = {}
        self._metadata = {
            i: _metadata_column(
                name, self._spark_types[i], self._pa, functools.partial(self._converter, i)
            )
            for i, name in enumerate(self._names)
            if name in METADATA_COLUMNS
        }
        # value schema -> {column index: column builder} for the columns it fills
        self._plans: dict[Schema, dict[int, _Column | None]] = {}

    def batch(self, records: Sequence[SourceRecord]) -> Any:
        """One record batch holding ``records`` in order.

        Raises:
            DataException: a value that does not fit its column (named).
        """
        plan = self._plan(records)
        rows: list[tuple[Any, ...]] | None = None
        arrays = []
        for i, name in enumerate(self._names):
            build: _Column | None = None
            if plan is not None:
                build = plan[i] if i in plan else self._metadata.get(i, _nulls)
            try:
                values = build(records) if build is not None else None
                if values is None:  # the row path
                    if rows is None:
                        rows = [self._rows.row(r) for r in records]
                    convert = self._converter(i)
                    values = [convert(row[i]) for row in rows]
                arrays.append(
                    values
                    if isinstance(values, self._pa.Array)
                    else self._pa.array(values, type=self._arrow_types[i])
                )
            except DataException:
                raise
            except Exception as exc:  # Arrow's and PySpark's conversion errors
                raise DataException(
                    f"Column {name!r} ({self._spark_types[i].simpleString()}) cannot hold a "
                    f"value of the records: {exc}",
                    field=name,
                ) from exc
        return self._pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)

    def _converter(self, index: int) -> Callable[[Any], Any]:
        """PySpark's converter of column ``index`` for a data source's tuples (the row path)."""
        convert = self._converters.get(index)
        if convert is None:  # as PySpark makes them for a data source's tuples
            data_type = self._schema.fields[index].dataType
            convert = self._converters[index] = self._create_converter(data_type)
        return convert

    # -- value columns ---------------------------------------------------------------------------
    def _plan(self, records: Sequence[SourceRecord]) -> dict[int, _Column | None] | None:
        """The value columns' builders when every record has a value of one schema, else None.

        A column without a builder (None) takes the row path.
        """
        if not records:
            return {}
        schema = records[0].value_schema
        if schema is None:
            return None
        struct = schema.type is SchemaType.STRUCT
        for r in records:
            if r.value_schema is not schema:
                return None
            value = r.value
            if value is None or (
                struct and (type(value) is not Struct or value.schema is not schema)
            ):
                return None
        plan = self._plans.get(schema)
        if plan is None:
            plan = self._plans[schema] = self._build_plan(schema)
        return plan

    def _build_plan(self, schema: Schema) -> dict[int, _Column | None]:
        index = {name: i for i, name in enumerate(self._names)}
        if schema.type is SchemaType.STRUCT:
            fields = [(f.name, f.schema, f.index) for f in schema.fields]
        else:
            fields = [(VALUE, schema, -1)]
        plan: dict[int, _Column | None] = {}
        for name, field_schema, position in fields:
            i = index.get(name)
            if i is None:
                continue
            if name in METADATA_COLUMNS:  # a field the metadata may overwrite: as the rows do
                plan[i] = None
            else:
                plan[i] = self._field_column(field_schema, name, position, i)
        return plan

    def _field_column(self, schema: Schema, name: str, position: int, column: int) -> _Column:
        """The builder of column ``column``: the value field ``name``.

        ``position`` is the field's in the struct (-1: the value itself). The values are the
        ones ``to_spark_value`` and PySpark's converter make of them.
        """
        if position >= 0:

            def raw(records: Sequence[SourceRecord]) -> list[Any]:
                return [r.value._values[position] for r in records]

        else:

            def raw(records: Sequence[SourceRecord]) -> list[Any]:
                return [r.value for r in records]

        default = schema.default_value
        required = not schema.optional and default is None
        fast = _fast_kind(schema) and _maps_to(schema, name, self._spark_types[column])
        if fast:
            convert = _decimals(schema, name) if schema.name == _DECIMAL else None

            def column_values(records: Sequence[SourceRecord]) -> list[Any]:
                values = raw(records)
                if default is not None:
                    values = [default if v is None else v for v in values]  # as Struct.get
                elif required and None in values:
                    to_spark_value(schema, None, name)  # raises the rows' error
                return convert(values) if convert is not None else values

            return column_values
        spark = self._converter(column)

        def converted(records: Sequence[SourceRecord]) -> list[Any]:
            values = raw(records)
            if default is not None:
                values = [default if v is None else v for v in values]
            return [spark(to_spark_value(schema, v, name)) for v in values]

        return converted


def _nulls(records: Sequence[SourceRecord]) -> list[Any]:
    return [None] * len(records)


def _maps_to(schema: Schema, name: str, spark_type: Any) -> bool:
    """Whether the column has the type the Connect → Spark mapping gives the field."""
    try:
        return bool(connect_to_spark(schema, name) == spark_type)
    except DataException:
        return False


_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_FAST_LOGICAL = frozenset(
    {
        _DECIMAL,
        "org.apache.kafka.connect.data.Date",
        "org.apache.kafka.connect.data.Time",
        "org.apache.kafka.connect.data.Timestamp",
    }
)


def _fast_kind(schema: Schema) -> bool:
    """Whether ``pyarrow.array`` takes the field's Connect values as they are (save Decimals).

    Numbers, booleans and strings are what PySpark's converters keep; bytes, ``bytearray`` and
    ``memoryview`` become the same binary; dates and times of day are kept; a Timestamp is an
    instant for Arrow as for the mapping (a naive one is UTC), which PySpark's converter keeps
    (``astimezone(utc)``). Decimals are rescaled as the mapping does. Containers and structs
    take the converters.
    """
    if schema.name is not None and schema.name.startswith("org.apache.kafka.connect.data."):
        return schema.name in _FAST_LOGICAL
    return schema.type.is_primitive


def _decimals(schema: Schema, name: str) -> Callable[[list[Any]], list[Any]]:
    def convert(values: list[Any]) -> list[Any]:
        return [None if v is None else _spark_decimal(schema, v, name) for v in values]

    return convert


# -- metadata columns ----------------------------------------------------------------------------
def _metadata_column(
    name: str, spark_type: Any, pa: Any, convert: Callable[[], Callable[[Any], Any]]
) -> _Column | None:
    """The builder of a metadata column (None: the row path, for a type of the user's own).

    ``convert`` gives PySpark's converter of the column (built on first use).
    """
    simple = spark_type.simpleString()
    if name == TOPIC and simple == "string":
        return lambda records: [r.topic for r in records]
    if name == KEY:
        string = simple == "string"

        def key_column(records: Sequence[SourceRecord]) -> list[Any]:
            spark = convert()
            return [
                None
                if r.key is None
                else r.key
                if type(r.key) is str and string and _plain_string(r.key_schema)
                else spark(key_value(r, string))
                for r in records
            ]

        return key_column
    if name == TIMESTAMP and simple == "timestamp":
        millis = pa.timestamp("ms", tz="UTC")
        micros = pa.timestamp("us", tz="UTC")

        def timestamp_column(records: Sequence[SourceRecord]) -> Any:
            return pa.array([r.timestamp for r in records], type=millis).cast(micros)

        return timestamp_column
    if name == HEADERS and simple == "array<struct<key:string,value:string>>":
        return _headers_column
    if name in (SOURCE_PARTITION, SOURCE_OFFSET) and simple == "string":
        attribute = "source_partition" if name == SOURCE_PARTITION else "source_offset"
        return _canonical_column(attribute)
    return None


def _plain_string(schema: Schema | None) -> bool:
    return schema is None or schema.type is SchemaType.STRING


def _headers_column(records: Sequence[SourceRecord]) -> list[Any]:
    return [
        [] if type(h := r.headers) is Headers and not h._headers else _header_pairs(h)
        for r in records
    ]


def _header_pairs(headers: Any) -> list[tuple[str, str | None]]:
    return [(h.key, Values.convert_to_string(h.schema, h.value)) for h in headers]


def _canonical_column(attribute: str) -> _Column:
    def column(records: Sequence[SourceRecord]) -> list[Any]:
        out = []
        last: Any = _UNSET
        text = ""
        for r in records:
            value = getattr(r, attribute)
            if value is not last and value != last:  # records of a poll share their partition
                last, text = value, canonical(value)
            out.append(text)
        return out

    return column


_UNSET: Any = object()
