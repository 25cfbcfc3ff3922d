"""spark.readStream.format("cdk"): offsets in the checkpoint, restart and replay of a batch."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.spark.conftest import SPARK_GROUP

pytestmark = [
    pytest.mark.xdist_group(f"{SPARK_GROUP}-stream"),
    pytest.mark.slow,
    pytest.mark.timeout(900),
]


class Recorder:
    """A foreachBatch function appending each batch's values to a JSON-lines file.

    ``fail_batch``: the batch id whose first attempt is recorded as an attempt and then fails.
    """

    def __init__(self, out: Path, column: str, fail_batch: int | None = None) -> None:
        self.out = out
        self.column = column
        self.fail_batch = fail_batch

    def __call__(self, df: Any, batch_id: int) -> None:
        values = [r[self.column] for r in df.collect()]
        failing = batch_id == self.fail_batch
        with self.out.open("a") as f:
            f.write(json.dumps({"batch": batch_id, "values": values, "failed": failing}) + "\n")
        if failing:
            raise RuntimeError(f"injected failure of micro-batch {batch_id}")

    def batches(self) -> list[dict[str, Any]]:
        if not self.out.exists():
            return []
        return [json.loads(line) for line in self.out.read_text().splitlines()]

    def delivered(self) -> list[Any]:
        return [v for b in self.batches() if not b["failed"] for v in b["values"]]


def _run(spark: Any, reader: Any, recorder: Recorder, checkpoint: Path) -> None:
    query = (
        reader.load()
        .writeStream.foreachBatch(recorder)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(240)
    finally:
        query.stop()


def _file_reader(spark: Any, path: Path) -> Any:
    return (
        spark.readStream.format("cdk")
        .schema("value STRING, _source_offset STRING")
        .option("connector.class", "FileStreamSource")
        .option("file", str(path))
        .option("topic", "lines")
        .option("batch.size", "40")
        .option("cdk.max.records.per.batch", "100")
    )


def test_filestream_restarts_from_its_checkpoint_and_replays_a_failed_batch(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "in.txt"
    checkpoint = tmp_path / "chk"
    recorder = Recorder(tmp_path / "out.jsonl", "value", fail_batch=3)
    path.write_text("".join(f"line {i}\n" for i in range(250)))
    _run(spark, _file_reader(spark, path), Recorder(recorder.out, "value"), checkpoint)
    assert recorder.delivered() == [f"line {i}" for i in range(250)]
    assert len(recorder.batches()) >= 3  # at most 100 records per micro-batch

    # New lines; the restarted query fails in its batch 3, then runs again and replays it.
    with path.open("a") as f:
        f.write("".join(f"line {i}\n" for i in range(250, 400)))
    with pytest.raises(Exception, match="injected failure"):
        _run(spark, _file_reader(spark, path), recorder, checkpoint)
    _run(spark, _file_reader(spark, path), Recorder(recorder.out, "value"), checkpoint)

    assert recorder.delivered() == [f"line {i}" for i in range(400)]  # nothing lost or doubled
    failed = [b for b in recorder.batches() if b["failed"]]
    assert len(failed) == 1
    replayed = [b for b in recorder.batches() if b["batch"] == 3 and not b["failed"]]
    assert replayed[0]["values"] == failed[0]["values"]  # the replay yields the same records


def _sqlite_reader(spark: Any, db: Path) -> Any:
    return (
        spark.readStream.format("cdk")
        .schema("id BIGINT, name STRING, _topic STRING")
        .option("connector.class", "SqliteSource")
        .option("connection.url", f"jdbc:sqlite:{db}")
        .option("topic.prefix", "db-")
        .option("tasks.max", "2")
        .option("poll.interval.ms", "50")
        .option("batch.max.rows", "30")
        .option("cdk.max.records.per.batch", "70")
    )


def _insert(db: Path, table: str, ids: range) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany(f"INSERT INTO {table} VALUES (?, ?)", [(i, f"{table}{i}") for i in ids])


def test_sqlite_source_restarts_with_no_loss_and_no_duplicate(spark: Any, tmp_path: Path) -> None:
    db = tmp_path / "src.db"
    checkpoint = tmp_path / "chk"
    _insert(db, "a", range(1, 101))
    _insert(db, "b", range(1, 41))
    recorder = Recorder(tmp_path / "out.jsonl", "name", fail_batch=1)
    with pytest.raises(Exception, match="injected failure"):
        _run(spark, _sqlite_reader(spark, db), recorder, checkpoint)
    _insert(db, "a", range(101, 151))
    _run(spark, _sqlite_reader(spark, db), Recorder(recorder.out, "name"), checkpoint)
    expected = [f"a{i}" for i in range(1, 151)] + [f"b{i}" for i in range(1, 41)]
    assert sorted(recorder.delivered()) == sorted(expected)
    failed = next(b for b in recorder.batches() if b["failed"])
    replayed = next(b for b in recorder.batches() if b["batch"] == 1 and not b["failed"])
    assert sorted(replayed["values"]) == sorted(failed["values"])
