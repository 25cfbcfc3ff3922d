"""Registering the ``cdk`` format with a SparkSession (PySpark imported on first use)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["FORMAT", "KAFKA_FORMAT", "register", "session_conf"]

#: The format name: ``spark.read.format(FORMAT)``.
FORMAT = "cdk"
#: The Kafka topic format on confluent-kafka: ``spark.read.format(KAFKA_FORMAT)``.
KAFKA_FORMAT = "cdk-kafka"


def session_conf() -> dict[str, str]:
    """Spark settings the ``cdk`` format needs: Python workers on this interpreter.

    Spark's data source planner starts its Python process from the ``PYSPARK_PYTHON``
    environment variable: set it to ``sys.executable`` too before the session starts.
    """
    return {"spark.pyspark.python": sys.executable, "spark.pyspark.driver.python": sys.executable}


def register(spark: SparkSession) -> Any:
    """Register the ``cdk`` and ``cdk-kafka`` formats with ``spark``; return the ``cdk`` class.

    The Python workers must run an interpreter with the kit and the connectors installed (see
    :func:`session_conf`); PySpark's Python Data Source API needs PyArrow.

    Raises:
        ConnectException: PySpark or PyArrow is missing (install ``connect-cdk[spark]``).
    """
    from cdk.spark._lazy import require

    require("pyarrow")
    from cdk.spark._datasource import ConnectorDataSource
    from cdk.spark._kafka_source import KafkaDataSource

    spark.dataSource.register(ConnectorDataSource)
    spark.dataSource.register(KafkaDataSource)
    return ConnectorDataSource
