"""The cdk format's Arrow batches against its rows (no JVM).

``read()`` hands Spark Arrow record batches built column by column; the reference is the row
path it replaced: :class:`RowMaker`'s tuples converted by PySpark's own conversion of a data
source's tuples (``records_to_arrow_batches``, what Spark runs on rows). Both must give the same
batch for any records: nulls, defaults, decimals, timestamps (naive, UTC, other zones), nested
structs, arrays and maps, keys, headers, offsets, records of several schemas, tombstones, and
DataFrame schemas given by the user with other types.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T
from pyspark.sql.worker.plan_data_source_read import records_to_arrow_batches

from cdk import DataException, Decimal, Schema, SchemaBuilder, SourceRecord, Struct, Timestamp
from cdk.api import Header
from cdk.spark._datasource_arrow import ArrowBatchMaker, arrow_batches
from cdk.spark._datasource_options import canonical
from cdk.spark._datasource_rows import RowMaker, infer_schema
from harness.strategies import struct_schemas, values_for

UTC = dt.timezone.utc


class _Source:
    @staticmethod
    def name() -> str:
        return "cdk"


def _by_rows(records: Sequence[SourceRecord], schema: T.StructType) -> pa.Table:
    maker = RowMaker(schema)
    rows = iter([maker.row(r) for r in records])
    return pa.Table.from_batches(
        list(records_to_arrow_batches(rows, 10_000, schema, _Source())),
        schema=ArrowBatchMaker(schema).arrow_schema,
    )


def _by_columns(records: Sequence[SourceRecord], schema: T.StructType, rows: int = 7) -> pa.Table:
    return pa.Table.from_batches(
        list(arrow_batches(records, schema, rows)), schema=ArrowBatchMaker(schema).arrow_schema
    )


def _nan_free(value: Any) -> Any:
    """``value`` with NaN as a string, so that equal tables compare equal."""
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, dict):
        return {k: _nan_free(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nan_free(v) for v in value]
    return value


def _same(records: Sequence[SourceRecord], schema: T.StructType) -> None:
    """Both paths give the same table, or both fail (the columns with a DataException)."""
    try:
        expected = _by_rows(records, schema)
    except Exception:  # noqa: BLE001 - whatever PySpark raises for a bad row
        with pytest.raises(DataException):
            _by_columns(records, schema)
        return
    got = _by_columns(records, schema)
    assert got.schema.equals(expected.schema)
    assert _nan_free(got.to_pylist()) == _nan_free(expected.to_pylist())


def _mappable(schema: Schema) -> bool:
    if schema.name == Decimal.LOGICAL_NAME:
        return Decimal.scale(schema) >= 0
    if schema.type.name == "STRUCT":
        return all(_mappable(f.schema) for f in schema.fields)
    if schema.type.name == "ARRAY":
        return _mappable(schema.value_schema)
    if schema.type.name == "MAP":
        return _mappable(schema.key_schema) and _mappable(schema.value_schema)
    return True


_KEYS = st.one_of(
    st.tuples(st.none(), st.none()),
    st.tuples(st.just(Schema.STRING_SCHEMA), st.text(max_size=5)),
    st.tuples(st.just(Schema.OPTIONAL_INT64_SCHEMA), st.one_of(st.none(), st.integers(0, 99))),
    st.tuples(st.none(), st.text(max_size=3)),
)
_HEADERS = st.lists(
    st.one_of(
        st.builds(Header, st.text(max_size=3), st.just(Schema.STRING_SCHEMA), st.text(max_size=3)),
        st.builds(Header, st.text(max_size=3), st.just(Schema.INT32_SCHEMA), st.integers(0, 9)),
    ),
    max_size=2,
)


@st.composite
def _records(draw: Any) -> tuple[list[SourceRecord], T.StructType]:
    schema = draw(struct_schemas(max_depth=2).filter(_mappable))
    partition = {"table": draw(st.sampled_from(["a", "b"]))}
    records = []
    for seq in range(draw(st.integers(1, 8))):
        key_schema, key = draw(_KEYS)
        records.append(
            SourceRecord(
                partition if draw(st.booleans()) else dict(partition),
                {"seq": seq, "at": draw(st.sampled_from(["x", "ü", "\u2028"]))},
                draw(st.sampled_from(["t", "u"])),
                None,
                key_schema,
                key,
                schema,
                draw(values_for(schema, allow_nan=True, allow_infinity=True)),
                draw(st.one_of(st.none(), st.integers(0, 4_102_444_800_000))),
                draw(_HEADERS),
            )
        )
    return records, infer_schema(records)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_records())
def test_arrow_batches_hold_what_the_rows_hold(case: Any) -> None:
    records, schema = case
    _same(records, schema)


_NESTED = (
    SchemaBuilder.struct()
    .field("x", Schema.INT32_SCHEMA)
    .field("tags", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional())
)
_VALUE = (
    SchemaBuilder.struct()
    .name("v")
    .field("id", Schema.INT64_SCHEMA)
    .field("name", Schema.OPTIONAL_STRING_SCHEMA)
    .field("qty", SchemaBuilder.int32().default_value(7).build())
    .field("price", Decimal.builder(2).optional().build())
    .field("at", Timestamp.builder().optional().build())
    .field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
    .field("inner", _NESTED.optional().build())
    .field(
        "attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA).optional()
    )
    .build()
)


def _value(i: int, **changes: Any) -> Struct:
    inner = Struct(_VALUE.field("inner").schema).put("x", i).put("tags", ["a", None])
    values = {
        "id": i,
        "name": None if i % 3 == 0 else f"n{i}",
        "qty": None if i % 2 else i,  # None: the default
        "price": None if i % 4 == 0 else decimal.Decimal(i).scaleb(-2),
        "at": dt.datetime(2026, 1, 1, 12, 0, i % 60, 123456, tzinfo=UTC),
        "blob": bytearray(b"\x00\xff") if i % 2 else b"ab",
        "inner": None if i % 5 == 0 else inner,
        "attrs": {"k": i, "none": None},
        **changes,
    }
    struct = Struct(_VALUE)
    for name, value in values.items():
        struct._values[_VALUE.field(name).index] = value  # defaults and all, as stored
    struct.validate()
    return struct


def _record(value: Any, schema: Schema | None = _VALUE, **extra: Any) -> SourceRecord:
    return SourceRecord({"p": 1}, {"o": 1}, "t", None, value_schema=schema, value=value, **extra)


def test_nulls_defaults_decimals_timestamps_nested_values() -> None:
    records = [_record(_value(i), timestamp=1_700_000_000_000 + i) for i in range(12)]
    schema = infer_schema(records)
    _same(records, schema)
    table = _by_columns(records, schema)
    assert table.column("qty").to_pylist()[:2] == [0, 7]
    assert table.column("price").to_pylist()[:2] == [None, decimal.Decimal("0.01")]
    assert table.column("blob").to_pylist()[:2] == [b"ab", b"\x00\xff"]
    assert table.column("inner").to_pylist()[1] == {"x": 1, "tags": ["a", None]}


def test_timestamps_naive_utc_and_other_zones_are_the_same_instants() -> None:
    plus_two = dt.timezone(dt.timedelta(hours=2))
    stamps = [
        dt.datetime(2026, 1, 1, 12, 0),  # naive: UTC, as for the mapping
        dt.datetime(2026, 1, 1, 12, 0, tzinfo=UTC),
        dt.datetime(2026, 1, 1, 14, 0, tzinfo=plus_two),
    ]
    records = [_record(_value(i, at=stamp)) for i, stamp in enumerate(stamps, 1)]
    schema = infer_schema(records)
    _same(records, schema)
    assert set(_by_columns(records, schema).column("at").to_pylist()) == {
        dt.datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    }


def test_records_of_several_schemas_and_tombstones() -> None:
    other = SchemaBuilder.struct().name("v").version(2).field("id", Schema.INT64_SCHEMA).build()
    records = [
        _record(_value(1)),
        _record(Struct(other).put("id", 2), other),
        _record(None, None),
        _record("text", Schema.STRING_SCHEMA),
        _record(_value(3)),
    ]
    schema = infer_schema([records[0]])
    _same(records, schema)
    _same(records[2:3], schema)


def test_a_required_null_is_named_as_the_rows_name_it() -> None:
    broken = _value(1)
    broken._values[_VALUE.field("id").index] = None
    schema = infer_schema([_record(_value(1))])
    with pytest.raises(DataException, match="Field 'id' is required but the value is null"):
        _by_rows([_record(broken)], schema)
    with pytest.raises(DataException, match="Field 'id' is required but the value is null"):
        _by_columns([_record(broken)], schema)


def test_a_schema_of_the_users_own_takes_the_rows_conversion() -> None:
    """Columns typed otherwise than the mapping: PySpark's coercions, as for the rows."""
    records = [_record(_value(i), key=i, key_schema=Schema.INT64_SCHEMA) for i in range(1, 6)]
    schema = T.StructType(
        [
            T.StructField("id", T.StringType()),  # an int64 field as a string: coerced
            T.StructField("name", T.StringType()),
            T.StructField("price", T.DecimalType(10, 4)),  # another scale
            T.StructField("missing", T.LongType()),  # no such field: null
            T.StructField("_key", T.StringType()),  # an int64 key as a string
            T.StructField("_timestamp", T.TimestampType()),
            T.StructField("_source_offset", T.StringType()),
        ]
    )
    _same(records, schema)
    table = _by_columns(records, schema)
    assert table.column("id").to_pylist()[0] == "1"
    assert table.column("_key").to_pylist()[0] == "1"
    assert table.column("missing").to_pylist() == [None] * 5


def test_a_value_that_does_not_fit_its_column_is_named() -> None:
    records = [_record(_value(1))]
    schema = T.StructType([T.StructField("id", T.ByteType())])  # 1 fits
    _same(records, schema)
    records = [_record(_value(1000))]
    with pytest.raises(DataException, match=r"Column 'id' \(tinyint\)") as info:
        _by_columns(records, schema)
    assert info.value.field == "id"


def test_non_struct_values_fill_the_value_column() -> None:
    records = [_record(f"line {i}", Schema.STRING_SCHEMA) for i in range(3)]
    schema = infer_schema(records)
    _same(records, schema)
    assert _by_columns(records, schema).column("value").to_pylist() == [
        "line 0",
        "line 1",
        "line 2",
    ]


def test_batches_split_at_the_row_limit_and_an_empty_read_yields_none() -> None:
    records = [_record(f"{i}", Schema.STRING_SCHEMA) for i in range(25)]
    schema = infer_schema(records)
    assert [b.num_rows for b in arrow_batches(records, schema, 10)] == [10, 10, 5]
    assert list(arrow_batches([], schema)) == []


@settings(max_examples=500)
@given(
    st.one_of(
        st.dictionaries(st.text(), st.one_of(st.integers(), st.text())),
        st.dictionaries(
            st.text(), st.one_of(st.integers(), st.text(), st.booleans(), st.none(), st.floats())
        ),
        st.dictionaries(st.integers(), st.text()),
        st.lists(st.integers()),
        st.none(),
    )
)
def test_canonical_is_json_dumps_with_sorted_keys(value: Any) -> None:
    """Checkpoints hold these texts: the fast path writes exactly what json.dumps writes."""
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    assert canonical(value) == expected


def test_a_micro_batch_hands_over_the_records_a_replay_would_give(tmp_path: Any) -> None:
    """Streaming reads: the records the driver's task polled for a batch travel with its
    partitions; a replay of the task from the batch's start (a restarted query) gives the same
    rows."""
    from pyspark.sql.streaming.datasource import ReadMaxRows

    from cdk.spark._datasource_options import parse_options
    from cdk.spark._datasource_stream import ConnectorStreamReader

    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(25)))
    options = parse_options(
        {
            "connector.class": "FileStreamSource",
            "file": str(source),
            "topic": "t",
            "batch.size": "4",
            "cdk.max.records.per.batch": "10",
        }
    )
    schema = T.StructType(
        [T.StructField("value", T.StringType()), T.StructField("_source_offset", T.StringType())]
    )
    reader = ConnectorStreamReader(options, schema)
    reader.prepareForTriggerAvailableNow()
    try:
        start = reader.initialOffset()
        seen = []
        while (end := reader.latestOffset(start, ReadMaxRows(10))) != start:
            (handed,) = reader.partitions(start, end)
            assert handed.data is not None
            rows = pa.Table.from_batches(list(reader.read(handed))).to_pylist()
            handed.data = None  # as a partition planned again from the checkpoint
            assert pa.Table.from_batches(list(reader.read(handed))).to_pylist() == rows
            seen += [r["value"] for r in rows]
            start = end
        assert seen == [f"line {i}" for i in range(25)]
    finally:
        reader.stop()


def test_a_batch_asked_for_again_drops_the_polls_ahead(tmp_path: Any) -> None:
    """The next batch is polled in the background; asked for a batch from another start (as
    when Spark plans a batch again), the reader drops those polls and restarts its tasks."""
    from pyspark.sql.streaming.datasource import ReadMaxRows

    from cdk.spark._datasource_options import parse_options
    from cdk.spark._datasource_stream import ConnectorStreamReader

    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(30)))
    options = parse_options(
        {
            "connector.class": "FileStreamSource",
            "file": str(source),
            "topic": "t",
            "batch.size": "5",
        }
    )
    schema = T.StructType([T.StructField("value", T.StringType())])
    reader = ConnectorStreamReader(options, schema)
    try:
        start = reader.initialOffset()
        first = reader.latestOffset(start, ReadMaxRows(10))
        second = reader.latestOffset(first, ReadMaxRows(10))  # taken from the polls ahead
        assert first != second
        again = reader.latestOffset(first, ReadMaxRows(10))  # from an earlier start: restarted
        assert again == second
        (part,) = reader.partitions(first, again)
        values = [r["value"] for r in pa.Table.from_batches(list(reader.read(part))).to_pylist()]
        assert values == [f"line {i}" for i in range(10, 20)]
    finally:
        reader.stop()
