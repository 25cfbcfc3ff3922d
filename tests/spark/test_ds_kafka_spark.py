"""Kafka in Spark pipelines: the cdk-kafka format and the converter codecs (embedded broker)."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from typing import Any

import pytest
from pyspark.sql import functions as F

import cdk.spark
from cdk import Schema, SchemaBuilder, Struct
from cdk.converters import AvroConverter, JsonConverter
from cdk.kafka import EmbeddedKafka, NewTopicSpec, create_topics, new_producer, producer_config
from harness.providers.tls import TlsKafka
from tests._schema_registry import schema_registry
from tests.spark.conftest import SPARK_GROUP

pytestmark = [
    pytest.mark.xdist_group(f"{SPARK_GROUP}-kafka"),
    pytest.mark.slow,
    pytest.mark.timeout(900),
]


def _topic(kafka: EmbeddedKafka, partitions: int = 2) -> str:
    name = f"spark-{uuid.uuid4().hex[:8]}"
    create_topics(kafka.bootstrap_servers, [NewTopicSpec(name, partitions)])
    return name


def test_connect_json_bytes_written_by_the_kit_read_as_typed_columns(
    spark: Any, kafka: EmbeddedKafka
) -> None:
    topic = _topic(kafka)
    schema = (
        SchemaBuilder.struct()
        .field("id", Schema.INT64_SCHEMA)
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, False)
    producer = new_producer(producer_config(kafka.bootstrap_servers))
    for i in range(50):
        value = Struct(schema).put("id", i).put("name", f"n{i}")
        producer.produce(topic, converter.from_connect_data(topic, schema, value), partition=i % 2)
    assert producer.flush(30) == 0

    raw = (
        spark.read.format("cdk-kafka")
        .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
        .option("subscribe", topic)
        .load()
    )
    decode = cdk.spark.kafka_decoder("name STRING, id BIGINT", "json", topic=topic)
    rows = raw.select(decode("value").alias("v")).select("v.*").collect()
    assert sorted((r.id, r.name) for r in rows) == [(i, f"n{i}") for i in range(50)]


def test_typed_columns_through_kafka_and_back(spark: Any, kafka: EmbeddedKafka) -> None:
    topic = _topic(kafka)
    df = spark.createDataFrame(
        [
            (1, decimal.Decimal("12.50"), dt.date(2024, 2, 29), ["a", "b"]),
            (2, decimal.Decimal("-0.01"), dt.date(1970, 1, 1), []),
        ],
        "id BIGINT, amount DECIMAL(10,2), day DATE, tags ARRAY<STRING>",
    )
    encode = cdk.spark.kafka_encoder(df.schema, "json", topic=topic)
    (
        df.select(encode(F.struct(*df.columns)).alias("value"))
        .write.format("cdk-kafka")
        .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
        .option("topic", topic)
        .mode("append")
        .save()
    )
    raw = (
        spark.read.format("cdk-kafka")
        .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
        .option("subscribe", topic)
        .load()
    )
    decode = cdk.spark.kafka_decoder(df.schema, "json", topic=topic)
    back = raw.select(decode("value").alias("v")).select("v.*").orderBy("id").collect()
    assert [tuple(r) for r in back] == [tuple(r) for r in df.orderBy("id").collect()]


def test_avro_with_a_schema_registry_through_kafka_and_back(
    spark: Any, kafka: EmbeddedKafka
) -> None:
    """Avro bytes that Spark's Python workers write and read through a registry over HTTP are
    the bytes a Connect worker's AvroConverter reads."""
    topic = _topic(kafka)
    df = spark.createDataFrame(
        [
            (1, "a", decimal.Decimal("12.50"), dt.date(2024, 2, 29)),
            (2, None, decimal.Decimal("-0.01"), dt.date(1970, 1, 1)),
        ],
        "id BIGINT, name STRING, amount DECIMAL(10,2), day DATE",
    )
    with schema_registry() as url:
        config = {"schema.registry.url": url}
        encode = cdk.spark.kafka_encoder(df.schema, "avro", topic=topic, config=config)
        (
            df.select(encode(F.struct(*df.columns)).alias("value"))
            .write.format("cdk-kafka")
            .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
            .option("topic", topic)
            .mode("append")
            .save()
        )
        raw = (
            spark.read.format("cdk-kafka")
            .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
            .option("subscribe", topic)
            .load()
        )
        written = [bytes(r.value) for r in raw.collect()]
        assert all(v[:1] == b"\x00" for v in written)  # the wire format: magic byte, schema id
        connect = AvroConverter()
        connect.configure(config, False)
        read = sorted(
            (v.get("id"), v.get("name"), v.get("amount"), v.get("day"))
            for v in (connect.to_connect_data(topic, b).value for b in written)
        )
        assert read == [tuple(r) for r in df.orderBy("id").collect()]

        decode = cdk.spark.kafka_decoder(df.schema, "avro", topic=topic, config=config)
        back = raw.select(decode("value").alias("v")).select("v.*").orderBy("id").collect()
        assert [tuple(r) for r in back] == [tuple(r) for r in df.orderBy("id").collect()]


def test_an_unknown_converter_is_named() -> None:
    with pytest.raises(Exception, match=r"no\.such\.Converter"):
        cdk.spark.kafka_decoder("id BIGINT", "no.such.Converter")


def test_connectors_through_a_tls_broker(spark: Any, tls_kafka: TlsKafka, tmp_path: Any) -> None:
    """format("cdk") source -> cdk-kafka over TLS -> cdk-kafka over TLS -> format("cdk") sink.

    The cdk-kafka format takes Kafka's security settings as ``kafka.*`` options, as Spark's own
    Kafka source does.
    """
    import sqlite3

    security = {f"kafka.{k}": v for k, v in tls_kafka.client_config().items()}
    topic = f"spark-tls-{uuid.uuid4().hex[:8]}"
    admin = {"bootstrap.servers": tls_kafka.bootstrap_servers, **tls_kafka.client_config()}
    create_topics(admin, [NewTopicSpec(topic, 2)])
    source_file = tmp_path / "in.txt"
    source_file.write_text("".join(f"line {i}\n" for i in range(40)))
    lines = (
        spark.read.format("cdk")
        .option("connector.class", "FileStreamSource")
        .option("file", str(source_file))
        .option("topic", topic)
        .load()
    )
    (
        lines.select(F.col("value").cast("binary").alias("value"))
        .write.format("cdk-kafka")
        .option("kafka.bootstrap.servers", tls_kafka.bootstrap_servers)
        .options(**security)
        .option("topic", topic)
        .mode("append")
        .save()
    )
    raw = (
        spark.read.format("cdk-kafka")
        .option("kafka.bootstrap.servers", tls_kafka.bootstrap_servers)
        .options(**security)
        .option("subscribe", topic)
        .load()
    )
    out = tmp_path / "out.db"
    (
        raw.selectExpr("offset + partition * 1000 AS id", "CAST(value AS STRING) AS line")
        .write.format("cdk")
        .option("connector.class", "SqliteSink")
        .option("connection.url", f"jdbc:sqlite:{out}")
        .option("topics", "lines")
        .option("auto.create", "true")
        .option("insert.mode", "insert")
        .mode("append")
        .save()
    )
    with sqlite3.connect(out) as db:
        stored = sorted(line for (line,) in db.execute("SELECT line FROM lines"))
    assert stored == sorted(f"line {i}" for i in range(40))
