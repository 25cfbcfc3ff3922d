"""spark.read.format("cdk") and df.write.format("cdk") on local[2] with the reference connectors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.spark.conftest import SPARK_GROUP

pytestmark = [
    pytest.mark.xdist_group(f"{SPARK_GROUP}-batch"),
    pytest.mark.slow,
    pytest.mark.timeout(900),
]


def test_filestream_lines_read_in_batch(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" for i in range(250)))
    df = (
        spark.read.format("cdk")
        .option("connector.class", "FileStreamSource")
        .option("file", str(path))
        .option("topic", "lines")
        .option("batch.size", "100")
        .load()
    )
    assert df.columns[0] == "value"
    rows = df.collect()
    assert [r.value for r in rows] == [f"line {i}" for i in range(250)]
    assert {r._topic for r in rows} == {"lines"}
    last = json.loads(rows[-1]._source_offset)
    assert last == {"position": path.stat().st_size}
    assert json.loads(rows[0]._source_partition) == {"filename": str(path)}


def _db(path: Path, tables: dict[str, int]) -> None:
    with sqlite3.connect(path) as db:
        for table, count in tables.items():
            db.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT, amount REAL)")
            db.executemany(
                f"INSERT INTO {table} VALUES (?, ?, ?)",
                [(i, f"{table}-{i}", i * 1.5) for i in range(1, count + 1)],
            )


def test_sqlite_tables_become_partitions(spark: Any, tmp_path: Path) -> None:
    db = tmp_path / "src.db"
    _db(db, {"a": 120, "b": 30})
    df = (
        spark.read.format("cdk")
        .option("connector.class", "SqliteSource")
        .option("connection.url", f"jdbc:sqlite:{db}")
        .option("topic.prefix", "db-")
        .option("tasks.max", "2")
        .option("poll.interval.ms", "100")
        .load()
    )
    assert df.rdd.getNumPartitions() == 2
    assert df.schema["id"].dataType.simpleString() == "bigint"
    rows = df.collect()
    assert sorted((r._topic, r.id) for r in rows) == sorted(
        [("db-a", i) for i in range(1, 121)] + [("db-b", i) for i in range(1, 31)]
    )
    assert {r.name for r in rows if r._topic == "db-b"} == {f"b-{i}" for i in range(1, 31)}


def test_sqlite_sink_writes_every_row(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out.db"
    df = spark.range(0, 500, numPartitions=3).selectExpr(
        "id", "concat('n-', id) AS name", "CAST(id AS DECIMAL(10,2)) / 4 AS amount"
    )
    (
        df.write.format("cdk")
        .option("connector.class", "SqliteSink")
        .option("connection.url", f"jdbc:sqlite:{out}")
        .option("topics", "people")
        .option("auto.create", "true")
        .option("insert.mode", "upsert")
        .option("pk.mode", "record_value")
        .option("pk.fields", "id")
        .mode("append")
        .save()
    )
    with sqlite3.connect(out) as db:
        rows = db.execute("SELECT id, name FROM people ORDER BY id").fetchall()
    assert rows == [(i, f"n-{i}") for i in range(500)]


def test_a_sink_connector_cannot_be_read(spark: Any) -> None:
    with pytest.raises(Exception, match="not a source connector"):
        spark.read.format("cdk").option("connector.class", "SqliteSink").load().collect()


def test_missing_connector_class_is_named(spark: Any) -> None:
    with pytest.raises(Exception, match=r"connector\.class"):
        spark.read.format("cdk").option("file", "x").load()


def test_a_session_on_another_master_is_refused_while_one_runs(spark: Any) -> None:
    """getOrCreate would hand back the running local[2] session: distributed mode refuses."""
    from cdk.errors import ConnectException
    from cdk.spark._session import build_session

    with pytest.raises(ConnectException, match=r"already runs a SparkSession on local\[2\]"):
        build_session({"spark.master": "spark://127.0.0.1:7077"})
    assert spark.sparkContext.master == "local[2]"  # still running
