"""A Spark pipeline through connectors: the SQL source (SQLite) → Spark → the SQL sink.

Run it with ``python examples/spark_pipeline.py [workdir]`` (``pip install 'connect-cdk[spark]'``
and Java 17+). It creates ``orders.db`` with an ``orders`` table, reads the table with the
SQLite source connector into a DataFrame (``spark.read.format("cdk")``), sums the amounts per
customer with Spark, and writes the totals with the SQLite sink connector into ``totals.db``
(``df.write.format("cdk")``, upserts keyed by customer, so running it again changes nothing).
Then it streams the same table (``spark.readStream.format("cdk")``) into ``copy.db``, with
its source offsets in a checkpoint: rows added between two runs are copied once.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import cdk.spark


def make_orders(db: Path, first: int, count: int) -> None:
    """Orders ``first .. first + count - 1`` for five customers."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS orders "
            "(id INTEGER PRIMARY KEY, customer TEXT NOT NULL, amount REAL NOT NULL)"
        )
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?, ?)",
            [(i, f"customer-{i % 5}", float(i % 7) + 0.5) for i in range(first, first + count)],
        )


def run(workdir: Path) -> dict[str, float]:
    """Run the pipeline in ``workdir``; return the totals the sink stored."""
    orders, totals, copy = workdir / "orders.db", workdir / "totals.db", workdir / "copy.db"
    if not orders.exists():
        make_orders(orders, 1, 1000)
    # Spark's Python processes (the data source planner too) must run this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master("local[2]").appName("cdk-spark-pipeline")
    for key, value in {
        **cdk.spark.session_conf(),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
    }.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        cdk.spark.register(spark)
        source = {
            "connector.class": "SqliteSource",
            "connection.url": f"jdbc:sqlite:{orders}",
            "topic.prefix": "shop-",
            "poll.interval.ms": "100",
        }
        df = spark.read.format("cdk").options(**source).load()
        per_customer = df.groupBy("customer").agg(
            F.round(F.sum("amount"), 2).alias("total"), F.count("*").alias("orders")
        )
        (
            per_customer.write.format("cdk")
            .option("connector.class", "SqliteSink")
            .option("connection.url", f"jdbc:sqlite:{totals}")
            .option("topics", "totals")
            .option("auto.create", "true")
            .option("insert.mode", "upsert")
            .option("pk.mode", "record_value")
            .option("pk.fields", "customer")
            .mode("append")
            .save()
        )
        query = (
            spark.readStream.format("cdk")
            .schema("id BIGINT, customer STRING, amount DOUBLE")
            .options(**source)
            .load()
            .writeStream.format("cdk")
            .option("connector.class", "SqliteSink")
            .option("connection.url", f"jdbc:sqlite:{copy}")
            .option("topics", "orders_copy")
            .option("auto.create", "true")
            .option("insert.mode", "upsert")
            .option("pk.mode", "record_value")
            .option("pk.fields", "id")
            .option("checkpointLocation", str(workdir / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
    finally:
        spark.stop()
    with sqlite3.connect(totals) as conn:
        return dict(conn.execute("SELECT customer, total FROM totals ORDER BY customer"))


if __name__ == "__main__":
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="cdk-"))
    where.mkdir(parents=True, exist_ok=True)
    for customer, total in run(where).items():
        print(f"{customer}: {total}")
    print(f"(databases in {where})")
