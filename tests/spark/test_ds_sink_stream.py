"""df.writeStream.format("cdk"): a replayed micro-batch is written once by an offset sink."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests._wait import wait_until
from tests.spark.conftest import SPARK_GROUP

pytestmark = [
    pytest.mark.xdist_group(f"{SPARK_GROUP}-sink-stream"),
    pytest.mark.slow,
    pytest.mark.timeout(900),
]

SINK = "tests.spark._offset_sink:OffsetSinkConnector"


def _stream(
    spark: Any,
    source: Path,
    db: Path,
    checkpoint: Path,
    fail: Path,
    source_options: dict[str, str] | None = None,
    **options: str,
) -> None:
    df = (
        spark.readStream.format("cdk")
        .schema("value STRING")
        .option("connector.class", "FileStreamSource")
        .option("file", str(source))
        .option("topic", "lines")
        .option("cdk.max.records.per.batch", "50")
        .options(**(source_options or {}))
        .load()
        .repartition(2)
    )
    query = (
        df.writeStream.format("cdk")
        .option("connector.class", SINK)
        .option("db", str(db))
        .option("fail.flush.file", str(fail))
        .option("topics", "out")
        .option("tasks.max", "2")
        .option("checkpointLocation", str(checkpoint))
        .options(**options)
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(240)
    finally:
        query.stop()


def _stored(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [json.loads(v) for (v,) in conn.execute("SELECT value FROM rows")]


def test_a_replayed_micro_batch_writes_nothing_twice(spark: Any, tmp_path: Path) -> None:
    source, db, checkpoint = tmp_path / "in.txt", tmp_path / "out.db", tmp_path / "chk"
    fail = tmp_path / "fail-now"
    source.write_text("".join(f"line {i}\n" for i in range(120)))
    fail.touch()  # the first flush fails after its partition's rows were stored
    with pytest.raises(Exception, match="injected failure in flush"):
        _stream(spark, source, db, checkpoint, fail)
    assert not fail.exists()
    stored_before = _stored(db)
    assert stored_before  # the failed batch stored rows (and their offsets)
    _stream(spark, source, db, checkpoint, fail)
    stored = _stored(db)
    assert sorted(stored) == sorted(f"line {i}" for i in range(120))  # each row once


def test_a_sink_task_lives_across_micro_batches_and_stops_when_idle(
    spark: Any, tmp_path: Path
) -> None:
    source, db, events = tmp_path / "in.txt", tmp_path / "out.db", tmp_path / "events"
    source.write_text("".join(f"line {i}\n" for i in range(400)))  # 8 micro-batches
    _stream(
        spark,
        source,
        db,
        tmp_path / "chk",
        tmp_path / "no-failure",
        {"batch.size": "50"},  # polls of 50 lines: a micro-batch each
        **{"events.file": str(events), "cdk.sink.idle.ms": "3000"},
    )
    assert sorted(_stored(db)) == sorted(f"line {i}" for i in range(400))  # each row once

    def tasks(kind: str) -> list[str]:
        lines = events.read_text().splitlines()
        return [line.split(" ", 1)[1] for line in lines if line.startswith(kind + " ")]

    opens, started = tasks("open"), tasks("start")
    assert len(opens) >= 16, opens  # each micro-batch opened both partitions
    # about one task per partition and Python worker (more when a gap between micro-batches
    # outlasted cdk.sink.idle.ms), not one per micro-batch and partition
    assert 2 * len(started) <= len(opens), (started, opens)
    # idle for cdk.sink.idle.ms once the query ended: every task stopped, each once
    wait_until(lambda: len(tasks("stop")) >= len(started), 60, message="the kept tasks stopped")
    assert sorted(tasks("stop")) == sorted(started)


def test_batch_write_through_the_offset_sink(spark: Any, tmp_path: Path) -> None:
    db = tmp_path / "out.db"
    df = spark.range(0, 300, numPartitions=3).selectExpr("CAST(id AS STRING) AS value")
    writer = (
        df.write.format("cdk")
        .option("connector.class", SINK)
        .option("db", str(db))
        .option("topics", "out")
        .option("cdk.write.id", "7")
        .mode("append")
    )
    writer.save()
    writer.save()  # the same write id again: every row is already stored
    assert sorted(_stored(db), key=int) == [str(i) for i in range(300)]
    with sqlite3.connect(db) as conn:
        offsets = conn.execute("SELECT part, next FROM offsets ORDER BY part").fetchall()
    assert offsets == [(p, (7 << 32) + 100) for p in range(3)]
