"""Connectors in Spark pipelines: rows/s of ``spark.read.format("cdk")`` against the worker.

In one run, for the FileStream source (N lines) and the SQLite source (N rows):

- raw: a plain Python loop reading the same data (lines of the file; ``SELECT *``);
- worker: the same connector under the embedded worker into Kafka (JsonConverter, schemas on),
  until N records are in the topic;
- spark: ``spark.read.format("cdk").load().count()`` on ``local[2]`` (session already started,
  after one warm-up read);

and the streaming pipeline end to end: SQLite source → ``readStream`` → ``writeStream`` →
SQLite sink (upsert), ``Trigger.AvailableNow``, until every row is stored (after one warm-up
run of the pipeline over 1,000 rows, as the reads are measured after a warm-up read).

Run with ``.venv/bin/python bench/spark_datasource.py [--records N] [--runs R]`` (medians);
``--only stream`` measures only the SQLite batch read and the streaming pipeline (the figure
streaming write / batch read, aim at least 0.8x).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import _results  # bench/, first on sys.path: the benchmark page's results
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from cdk.kafka import EmbeddedKafka
from cdk.runtime import EmbeddedWorker

JSON = "org.apache.kafka.connect.json.JsonConverter"


def make_data(work: Path, n: int) -> tuple[Path, Path]:
    work.mkdir(parents=True, exist_ok=True)
    lines = work / "in.txt"
    lines.write_text("".join(f"{i:08d} " + "x" * 140 + "\n" for i in range(n)))
    db = work / "src.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, name TEXT, amount REAL)")
        conn.executemany(
            "INSERT INTO rows VALUES (?, ?, ?)",
            ((i, f"name-{i}", i * 0.5) for i in range(1, n + 1)),
        )
    return lines, db


def raw(lines: Path, db: Path) -> dict[str, float]:
    start = time.perf_counter()
    with lines.open("rb") as f:
        count = sum(1 for _ in f)
    file_s = time.perf_counter() - start
    start = time.perf_counter()
    with sqlite3.connect(db) as conn:
        count_db = sum(1 for _ in conn.execute("SELECT * FROM rows ORDER BY id"))
    db_s = time.perf_counter() - start
    return {"file": count / file_s, "sqlite": count_db / db_s}


def _count_topic(bootstrap: str, topic: str, expected: int, timeout: float = 600) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    try:
        deadline = time.monotonic() + timeout
        while topic not in consumer.list_topics(timeout=10).topics:
            if time.monotonic() > deadline:
                raise TimeoutError(topic)
            time.sleep(0.05)
        parts = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
        seen = 0
        while seen < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{seen} of {expected} records in {topic}")
            seen += sum(1 for m in consumer.consume(10000, 0.2) if m.error() is None)
    finally:
        consumer.close()


def worker(kafka: EmbeddedKafka, work: Path, config: dict[str, str], topic: str, n: int) -> float:
    props = {
        "bootstrap.servers": kafka.bootstrap_servers,
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.storage.file.filename": str(work / f"offsets-{uuid.uuid4().hex}"),
    }
    with EmbeddedWorker(props, rest=False) as w:
        start = time.perf_counter()
        w.herder.put_connector_config(config["name"], config)
        _count_topic(kafka.bootstrap_servers, topic, n)
        return n / (time.perf_counter() - start)


def spark_read(spark: Any, options: dict[str, str], n: int) -> float:
    start = time.perf_counter()
    count = spark.read.format("cdk").options(**options).load().count()
    elapsed = time.perf_counter() - start
    assert count == n, (count, n)
    return n / elapsed


def streaming(spark: Any, work: Path, db: Path, n: int, name: str = "stream") -> float:
    out = work / f"{name}-out.db"
    start = time.perf_counter()
    query = (
        spark.readStream.format("cdk")
        .schema("id BIGINT, name STRING, amount DOUBLE")
        .option("connector.class", "SqliteSource")
        .option("connection.url", f"jdbc:sqlite:{db}")
        .option("topic.prefix", "s-")
        .option("batch.max.rows", "5000")
        .option("poll.interval.ms", "50")
        .option("cdk.max.records.per.batch", "50000")
        .load()
        .writeStream.format("cdk")
        .option("connector.class", "SqliteSink")
        .option("connection.url", f"jdbc:sqlite:{out}")
        .option("topics", "copy")
        .option("auto.create", "true")
        .option("insert.mode", "upsert")
        .option("pk.mode", "record_value")
        .option("pk.fields", "id")
        .option("batch.size", "5000")
        .option("cdk.batch.size", "5000")
        .option("checkpointLocation", str(work / f"{name}-chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    elapsed = time.perf_counter() - start
    with sqlite3.connect(out) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM copy").fetchone()[0]
    assert stored == n, (stored, n)
    return n / elapsed


FS_WORKER = "FileStream, embedded worker -> Kafka"
DB_WORKER = "SQLite, embedded worker -> Kafka"
FS_SPARK = "FileStream, spark.read.format('cdk')"
DB_SPARK = "SQLite, spark.read.format('cdk')"
STREAM = "SQLite -> readStream -> writeStream -> SQLite"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1, help="repeat; medians are printed")
    _results.add_option(parser, "spark_datasource")
    parser.add_argument(
        "--only",
        choices=["all", "stream"],
        default="all",
        help="stream: only the SQLite batch read and the streaming pipeline",
    )
    args = parser.parse_args()
    page = _results.Results.from_args("spark_datasource", args)
    n, runs = args.records, args.runs
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import cdk.spark

    load_before = os.getloadavg()[0]
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="cdk-bench-spark-") as tmp:
        work = Path(tmp)
        lines, db = make_data(work, n)
        file_source = {
            "connector.class": "FileStreamSource",
            "file": str(lines),
            "topic": "lines",
            "batch.size": "5000",
        }
        sqlite_source = {
            "connector.class": "SqliteSource",
            "connection.url": f"jdbc:sqlite:{db}",
            "topic.prefix": "db-",
            "batch.max.rows": "5000",
            "poll.interval.ms": "50",
        }
        raw_rates = raw(lines, db)
        results["raw file read (lines/s)"] = [raw_rates["file"]]
        results["raw SELECT (rows/s)"] = [raw_rates["sqlite"]]
        builder = SparkSession.builder.master("local[2]").appName("cdk-bench")
        for key, value in {**cdk.spark.session_conf(), "spark.ui.enabled": "false"}.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        try:
            cdk.spark.register(spark)
            spark_read(spark, file_source, n)  # warm-up: Python workers, imports
            _, small = make_data(work / "warm-up", 1000)
            streaming(spark, work, small, 1000, "warm-up")  # the pipeline's too
            with EmbeddedKafka() as kafka:
                # Each run measures the worker and Spark one after the other, so that the
                # ratios of a run compare the two under the same load.
                for run in range(runs):
                    page.run()
                    if args.only == "stream":
                        results.setdefault(DB_SPARK, []).append(spark_read(spark, sqlite_source, n))
                        results.setdefault(STREAM, []).append(
                            streaming(spark, work, db, n, f"stream{run}")
                        )
                        read_rate, stream_rate = results[DB_SPARK][-1], results[STREAM][-1]
                        print(
                            f"run {run}: batch read {read_rate:,.0f} rows/s, streaming "
                            f"{stream_rate:,.0f} rows/s, {stream_rate / read_rate:.2f}x "
                            f"[load {os.getloadavg()[0]:.1f}]",
                            flush=True,
                        )
                        continue
                    fs = {**file_source, "name": f"fs{run}", "topic": f"fs{run}-lines"}
                    results.setdefault(FS_WORKER, []).append(
                        worker(kafka, work, fs, f"fs{run}-lines", n)
                    )
                    results.setdefault(FS_SPARK, []).append(spark_read(spark, file_source, n))
                    sql = {**sqlite_source, "name": f"db{run}", "topic.prefix": f"w{run}-"}
                    results.setdefault(DB_WORKER, []).append(
                        worker(kafka, work, sql, f"w{run}-rows", n)
                    )
                    results.setdefault(DB_SPARK, []).append(spark_read(spark, sqlite_source, n))
                    results.setdefault(STREAM, []).append(
                        streaming(spark, work, db, n, f"stream{run}")
                    )
        finally:
            spark.stop()
    print(
        f"{n} records, local[2], medians of {runs} run(s), load average {load_before:.1f} "
        f"before, {os.getloadavg()[0]:.1f} after"
    )
    for name, rates in results.items():
        print(f"  {name:<50} {statistics.median(rates):>12,.0f} rows/s")

    def ratios(top: str, bottom: str) -> str:
        values = [a / b for a, b in zip(results[top], results[bottom], strict=True)]
        runs_text = ", ".join(f"{v:.2f}" for v in values)
        return f"{statistics.median(values):.2f}x" + (f" ({runs_text})" if runs > 1 else "")

    stream = (
        f"streaming pipeline / SQLite batch read {ratios(STREAM, DB_SPARK)} (aim: at least 0.8x)"
    )
    if args.only == "stream":
        print(stream)
    else:
        print(
            f"spark.read / the worker: FileStream {ratios(FS_SPARK, FS_WORKER)}, SQLite "
            f"{ratios(DB_SPARK, DB_WORKER)} (aim: at least 1.0x); {stream}"
        )

    page.ratios(  # the benchmark page (bench/report.py)
        results,
        [
            (
                "spark.read.filestream",
                "spark.read FileStream / the worker into Kafka",
                FS_SPARK,
                FS_WORKER,
                ">=",
                1.0,
            ),
            (
                "spark.read.sqlite",
                "spark.read SQLite / the worker into Kafka",
                DB_SPARK,
                DB_WORKER,
                ">=",
                1.0,
            ),
            (
                "spark.streaming_vs_batch",
                "Spark streaming write / SQLite batch read",
                STREAM,
                DB_SPARK,
                ">=",
                0.8,
            ),
        ],
        unit="rows/s",
        note=f"{n:,} records, local[2]",
    )
    page.write()


if __name__ == "__main__":
    main()
