"""The cdk format's Arrow writes against its row writes (no JVM).

Spark hands an Arrow writer the record batches it would turn into rows for a row writer. The
reference is that row path: PySpark's rows (``ArrowSinkRecordMaker.rows``, PySpark's own
conversion) through :class:`SinkRecordMaker`. The records built column by column must be the
same, and a row the columns cannot build (a null where a field is required) must fail with the
row path's error; a partition written from batches stores what one written from rows stores,
skipping what the sink holds already.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import types as T

from cdk import DataException, Schema, SourceRecord, Struct
from cdk.api import Header
from cdk.spark._datasource_arrow import ArrowBatchMaker
from cdk.spark._datasource_arrow_write import ArrowSinkRecordMaker
from cdk.spark._datasource_options import parse_options
from cdk.spark._datasource_rows import infer_schema
from cdk.spark._datasource_tasks import write_arrow_partition, write_partition
from harness.strategies import struct_schemas, values_for
from tests._wait import wait_until

UTC = dt.timezone.utc
SINK = "tests.spark._offset_sink:OffsetSinkConnector"


def _mappable(schema: Schema) -> bool:
    name = schema.name or ""
    if name.endswith(".Decimal"):
        return int(schema.parameters["scale"]) >= 0
    if schema.type.name == "STRUCT":
        return all(_mappable(f.schema) for f in schema.fields)
    if schema.type.name == "ARRAY":
        return _mappable(schema.value_schema)
    if schema.type.name == "MAP":
        return _mappable(schema.key_schema) and _mappable(schema.value_schema)
    return True


def _plain(value: Any) -> Any:
    """A comparable form: structs as dicts, NaN as a string, headers as pairs."""
    if isinstance(value, Struct):
        return {f.name: _plain(value.get_without_default(f.name)) for f in value.schema.fields}
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _record_form(record: Any) -> tuple[Any, ...]:
    return (
        record.topic,
        record.kafka_partition,
        record.kafka_offset,
        record.key_schema,
        _plain(record.key),
        record.value_schema,
        _plain(record.value),
        record.timestamp,
        record.timestamp_type,
        [(h.key, h.schema, h.value) for h in record.headers],
    )


def _compare(batch: pa.RecordBatch, schema: T.StructType, topic: str = "default") -> None:
    maker = ArrowSinkRecordMaker(schema, topic)
    rows = list(maker.rows(batch))
    try:
        expected = [maker.row_maker.record(row, 3, 100 + i) for i, row in enumerate(rows)]
    except DataException:
        assert maker.records(batch, 3, 100) is None  # the rows decide, and word the error
        return
    got = maker.records(batch, 3, 100)
    assert got is not None
    assert [_record_form(r) for r in got] == [_record_form(r) for r in expected]


@st.composite
def _batches(draw: Any) -> tuple[pa.RecordBatch, T.StructType]:
    schema = draw(struct_schemas(max_depth=2).filter(_mappable))
    records = [
        SourceRecord(
            {"p": 1},
            {"o": i},
            draw(st.sampled_from(["t", "u"])),
            None,
            Schema.OPTIONAL_STRING_SCHEMA,
            draw(st.one_of(st.none(), st.text(max_size=3))),
            schema,
            draw(values_for(schema, allow_nan=True)),
            draw(st.one_of(st.none(), st.integers(0, 4_102_444_800_000))),
            draw(
                st.lists(
                    st.builds(
                        Header,
                        st.text(max_size=2),
                        st.just(Schema.OPTIONAL_STRING_SCHEMA),
                        st.one_of(st.none(), st.text(max_size=2)),
                    ),
                    max_size=2,
                )
            ),
        )
        for i in range(draw(st.integers(1, 6)))
    ]
    spark_schema = infer_schema(records)
    return ArrowBatchMaker(spark_schema).batch(records), spark_schema


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_batches())
def test_records_from_columns_are_the_records_from_rows(case: Any) -> None:
    batch, schema = case
    _compare(batch, schema)


def test_timestamps_decimals_binary_nested_and_metadata() -> None:
    schema = T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("name", T.StringType()),
            T.StructField("amount", T.DecimalType(10, 2)),
            T.StructField("at", T.TimestampType()),
            T.StructField("day", T.DateType()),
            T.StructField("blob", T.BinaryType()),
            T.StructField("tags", T.ArrayType(T.StringType())),
            T.StructField("attrs", T.MapType(T.StringType(), T.LongType())),
            T.StructField("inner", T.StructType([T.StructField("x", T.IntegerType())])),
            T.StructField("_topic", T.StringType()),
            T.StructField("_key", T.StringType()),
            T.StructField("_timestamp", T.TimestampType()),
        ]
    )
    at = dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    batch = pa.RecordBatch.from_pylist(
        [
            {
                "id": i,
                "name": None if i % 2 else f"n{i}",
                "amount": decimal.Decimal(i).scaleb(-2),
                "at": at,
                "day": dt.date(2026, 1, i + 1),
                "blob": b"\x00\xff",
                "tags": ["a", None],
                "attrs": [("k", i)],
                "inner": {"x": i},
                "_topic": None if i % 3 else "other",
                "_key": f"k{i}",
                "_timestamp": at - dt.timedelta(microseconds=i),
            }
            for i in range(6)
        ],
        schema=ArrowBatchMaker(schema).arrow_schema,
    )
    _compare(batch, schema)
    records = ArrowSinkRecordMaker(schema, "default").records(batch, 0, 0)
    assert records is not None
    assert records[0].value.get("at") == at.replace(microsecond=678000)  # Connect's millis
    assert [r.topic for r in records[:2]] == ["other", "default"]
    assert records[1].timestamp == 1767323045678  # floor to the millisecond


def test_a_null_in_a_required_field_fails_as_the_rows_fail() -> None:
    schema = T.StructType(
        [T.StructField("id", T.LongType(), False), T.StructField("n", T.StringType())]
    )
    # Spark would refuse the null before the writer; built by hand, it reaches the rows' check
    batch = pa.RecordBatch.from_pylist(
        [{"id": 1, "n": "a"}, {"id": None, "n": "b"}],
        schema=pa.schema([pa.field("id", pa.int64()), pa.field("n", pa.string())]),
    )
    maker = ArrowSinkRecordMaker(schema, "t")
    assert maker.records(batch, 0, 0) is None
    with pytest.raises(DataException, match="'id'"):
        [maker.row_maker.record(row, 0, i) for i, row in enumerate(maker.rows(batch))]


def _stored(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT topic, part, off, value FROM rows ORDER BY off").fetchall()


def test_a_partition_written_from_batches_stores_what_rows_store(tmp_path: Path) -> None:
    schema = T.StructType(
        [T.StructField("id", T.LongType()), T.StructField("_topic", T.StringType())]
    )
    arrow_schema = ArrowBatchMaker(schema).arrow_schema
    batches = [
        pa.RecordBatch.from_pylist(
            [{"id": i, "_topic": "a" if i % 4 else "b"} for i in range(start, start + 10)],
            schema=arrow_schema,
        )
        for start in (0, 10, 20)
    ]
    results = {}
    for kind in ("rows", "batches"):
        db = tmp_path / f"{kind}.db"
        options = parse_options(
            {"connector.class": SINK, "db": str(db), "topics": "t", "cdk.batch.size": "4"}
        )
        config = dict(options.config)
        maker = ArrowSinkRecordMaker(schema, "t")
        with sqlite3.connect(db) as conn:  # written before: topic a up to row 5
            conn.execute(
                "CREATE TABLE offsets (topic TEXT, part INT, next INT, PRIMARY KEY (topic, part))"
            )
            conn.execute("INSERT INTO offsets VALUES ('a', 2, ?)", ((7 << 32) | 6,))
        if kind == "rows":
            rows = [row for b in batches for row in maker.rows(b)]
            counts = write_partition(iter(rows), options, config, maker.row_maker, 7, 2)
        else:
            counts = write_arrow_partition(iter(batches), options, config, maker, 7, 2)
        results[kind] = (counts, _stored(db))
    assert results["rows"] == results["batches"]
    (written, skipped), stored = results["batches"]
    # rows 0..5 of topic a were written before (ids 1, 2, 3 and 5; 0 and 4 are topic b)
    assert (written, skipped) == (26, 4)
    assert {json.loads(v)["id"] for _, _, _, v in stored} == set(range(30)) - {1, 2, 3, 5}


def test_a_kept_sink_task_is_reused_skips_a_replay_and_is_stopped_on_failure_or_idle(
    tmp_path: Path,
) -> None:
    """Writes of one key share a started task; a replayed write id is skipped by it as by a new
    one; a failed write stops its task (nothing left); an idle task is stopped."""
    from cdk.spark._sink_cache import SINK_TASKS

    schema = T.StructType([T.StructField("id", T.LongType())])
    arrow_schema = ArrowBatchMaker(schema).arrow_schema
    db, events, fail = tmp_path / "out.db", tmp_path / "events", tmp_path / "fail-now"
    options = parse_options(
        {
            "connector.class": SINK,
            "db": str(db),
            "topics": "t",
            "events.file": str(events),
            "fail.flush.file": str(fail),
            "cdk.sink.idle.ms": "300",
        }
    )
    config = dict(options.config)
    maker = ArrowSinkRecordMaker(schema, "t")
    key = ("query", 0, "config")

    def write(batch_id: int) -> tuple[int, int]:
        rows = [{"id": batch_id * 10 + i} for i in range(10)]
        batch = pa.RecordBatch.from_pylist(rows, schema=arrow_schema)
        return write_arrow_partition(iter([batch]), options, config, maker, batch_id, 0, key)

    def lines(kind: str) -> list[str]:
        return [x for x in events.read_text().splitlines() if x.startswith(kind + " ")]

    assert [write(b) for b in range(3)] == [(10, 0)] * 3
    assert len(lines("start")) == 1  # one task for the three writes
    assert len(lines("open 0")) == 3  # its partition opened by each
    assert write(2) == (0, 10)  # the replay of write 2: open() gave the stored offset
    fail.touch()  # the next flush fails after the rows were stored
    with pytest.raises(Exception, match="injected failure in flush"):
        write(3)
    assert len(SINK_TASKS) == 0  # the failed write's task was not left
    assert len(lines("stop")) == 1  # but stopped
    assert write(3) == (0, 10)  # a new task skips what the failed write stored
    assert write(4) == (10, 0)
    assert len(lines("start")) == 2
    wait_until(lambda: len(lines("stop")) == 2, 30, message="the idle task stopped")
    assert len(SINK_TASKS) == 0
    assert sorted(json.loads(v)["id"] for _, _, _, v in _stored(db)) == list(range(50))
