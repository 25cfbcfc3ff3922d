"""Kept importable for earlier users: the Spark providers are :mod:`harness.providers.spark`."""

from __future__ import annotations

from harness.providers.spark import (
    ExternalSpark,
    LocalSpark,
    SparkProvider,
    StandaloneSpark,
    TestcontainersSpark,
    WorkerProcess,
    spark_home,
    spark_image,
    spark_provider,
    spark_version,
)

__all__ = [
    "ExternalSpark",
    "LocalSpark",
    "SparkProvider",
    "StandaloneSpark",
    "TestcontainersSpark",
    "WorkerProcess",
    "spark_home",
    "spark_image",
    "spark_provider",
    "spark_version",
]
