"""Spark for tests and certification: one interface, three backends, picked by name.

``spark_provider(spec)`` returns a (not yet started) :class:`SparkProvider`:

- ``"local"`` or ``"local[N]"``: Spark in the driver's JVM (:class:`LocalSpark`);
- ``"standalone"`` or ``"standalone[N]"``: a master and N one-core workers on loopback started
  from the pyspark wheel's ``spark-class`` (:class:`StandaloneSpark`), whose workers can be
  killed (SIGKILL of the worker, its executor and Python workers) and started again;
- ``"testcontainers"`` or ``"testcontainers[N]"``: a master and N worker containers
  (:class:`TestcontainersSpark`): the official ``apache/spark`` image where a registry answers
  and its Python matches the driver's, otherwise an image built here;
- a master URL (``spark://host:port``, ``yarn``, ``k8s://...``): an existing cluster.

Every provider gives the master URL and the ``spark.*`` properties a ``cdk distributed`` driver
on this machine needs (:meth:`SparkProvider.spark_properties`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from cdk.errors import ConfigException
from harness.providers._spark_base import (
    ExternalSpark,
    LocalSpark,
    SparkProvider,
    spark_home,
    spark_version,
)
from harness.providers._spark_containers import TestcontainersSpark, spark_image
from harness.providers._spark_standalone import StandaloneSpark, WorkerProcess

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

_NAMED = re.compile(r"^(?P<name>local|standalone|testcontainers)(?:\[(?P<n>\d+)\])?$")


def spark_provider(spec: str = "local[2]", **options: Any) -> SparkProvider:
    """Return the (not yet started) provider named by ``spec``.

    Args:
        spec: ``local[N]``, ``standalone[N]``, ``testcontainers[N]`` (N: threads or workers;
            2 when left out), or the master URL of an existing cluster.
        options: keyword arguments for the provider's constructor.

    Raises:
        ConfigException: ``spec`` is none of these.
    """
    text = spec.strip()
    match = _NAMED.match(text)
    if match is not None:
        count = int(match["n"]) if match["n"] is not None else 2
        if count < 1:
            raise ConfigException("spark provider", spec, "the number in brackets must be >= 1")
        if match["name"] == "local":
            return LocalSpark(count, **options)
        if match["name"] == "standalone":
            return StandaloneSpark(count, **options)
        return TestcontainersSpark(count, **options)
    if text == "local[*]":
        return LocalSpark(os.cpu_count() or 1, **options)
    if re.match(r"^(spark|k8s|mesos)://\S+$|^yarn$", text):
        return ExternalSpark(text, **options)
    raise ConfigException(
        "spark provider",
        spec,
        "expected local[N], standalone[N], testcontainers[N] or a master URL "
        "(spark://host:port, yarn, k8s://...)",
    )
