"""Spark through PySpark: distributed mode and connectors inside Spark pipelines.

Distributed mode: :func:`distributed_worker` is a driver whose tasks run on Spark;
:class:`SparkPlacement` runs connector tasks as long-lived Spark tasks.

Connectors in pipelines: :func:`register` adds the ``cdk`` format to a SparkSession, so any
source connector reads into a DataFrame (``spark.read.format("cdk")``,
``spark.readStream.format("cdk")``) and any sink connector writes one
(``df.write.format("cdk")``, ``df.writeStream.format("cdk")``); ``cdk-kafka`` reads and writes
Kafka topics, :func:`kafka_decoder`/:func:`kafka_encoder` turn converter bytes into typed
columns and back. The Connect ⇄ Spark schema mapping (:func:`connect_to_spark`,
:func:`spark_to_connect`) is documented in the user guide.

PySpark and PyArrow are optional dependencies (``pip install 'connect-cdk[spark]'``), imported
lazily: this package imports without them, and using Spark says what to install.
"""

from __future__ import annotations

from cdk.spark._driver import distributed_worker, spark_placement
from cdk.spark._kafka_codec import CONVERTER_ALIASES, kafka_decoder, kafka_encoder
from cdk.spark._placement import SparkPlacement
from cdk.spark._register import FORMAT, KAFKA_FORMAT, register, session_conf
from cdk.spark._schema_map import (
    DECIMAL_PRECISION_PARAMETER,
    connect_to_spark,
    spark_to_connect,
    to_connect_value,
    to_spark_value,
)
from cdk.spark._session import session_settings

__all__ = [
    # distributed mode
    "distributed_worker",
    "spark_placement",
    "SparkPlacement",
    "session_settings",
    # connectors in pipelines
    "register",
    "session_conf",
    "FORMAT",
    "KAFKA_FORMAT",
    # Kafka bytes written by Connect converters
    "kafka_decoder",
    "kafka_encoder",
    "CONVERTER_ALIASES",
    # schema mapping
    "connect_to_spark",
    "spark_to_connect",
    "to_spark_value",
    "to_connect_value",
    "DECIMAL_PRECISION_PARAMETER",
]
