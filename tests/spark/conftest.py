"""A local[2] SparkSession for the Spark pipeline tests, one per module.

Per module, not per test session: a process holds one SparkContext, and a session left running
would be handed to (or refuse) the next module that starts Spark on another master.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdk.spark import register, session_conf

#: The prefix of the xdist groups of the modules that use the module's local SparkSession: a group
#: per module (``f"{SPARK_GROUP}-batch"``), so that its tests share the session on one worker
#: while the modules spread over the workers (one group for all of them put a third of the Spark
#: phase on one worker).
SPARK_GROUP = "spark-ds"


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local[2] session with the ``cdk`` format registered; stopped at the end."""
    from pyspark.sql import SparkSession

    root = str(Path(__file__).resolve().parents[2])
    patch = pytest.MonkeyPatch()
    # The Python workers import the test connectors (tests.spark._offset_sink) from the checkout.
    patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    patch.setenv("PYSPARK_PYTHON", session_conf()["spark.pyspark.python"])
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("cdk-spark-ds-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.streaming.checkpointLocation", str(tmp_path_factory.mktemp("chk")))
    )
    for key, value in session_conf().items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    register(session)
    try:
        yield session
    finally:
        session.stop()
        patch.undo()
