"""A pipeline run on a standalone cluster (its own process: one SparkContext per process).

Usage: python -m tests.spark._cluster_job <properties.json> <source.db> <sink.db> <checkpoint>
Reads the SQLite source in batch (2 tasks → 2 partitions on 2 workers), writes it through the
SQLite sink, and streams it (availableNow) into the sink's second table; prints a JSON summary.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession

from cdk.spark import register


def main(properties: str, source: str, sink: str, checkpoint: str) -> None:
    builder = SparkSession.builder.appName("cdk-spark-ds-cluster")
    for key, value in json.loads(properties).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        register(spark)
        options = {
            "connector.class": "SqliteSource",
            "connection.url": f"jdbc:sqlite:{source}",
            "topic.prefix": "t-",
            "tasks.max": "2",
            "poll.interval.ms": "50",
        }
        df = spark.read.format("cdk").options(**options).load()
        hosts = df.rdd.mapPartitions(lambda rows: [sum(1 for _ in rows)]).collect()
        sink_options = {
            "connector.class": "SqliteSink",
            "connection.url": f"jdbc:sqlite:{sink}",
            "auto.create": "true",
            "insert.mode": "upsert",
            "pk.mode": "record_value",
            "pk.fields": "id",
        }
        df.select("id", "name").write.format("cdk").options(**sink_options).option(
            "topics", "batch_out"
        ).mode("append").save()
        query = (
            spark.readStream.format("cdk")
            .schema("id BIGINT, name STRING")
            .options(**options)
            .load()
            .writeStream.format("cdk")
            .options(**sink_options)
            .option("topics", "stream_out")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
        query.stop()
        print(json.dumps({"partition_rows": hosts}))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
