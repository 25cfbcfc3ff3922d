"""The Spark session the placement tests share (one per test module's xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cdk.spark._session import build_session


@pytest.fixture(scope="session")
def spark_local() -> Iterator[Any]:
    """A ``local[4]`` SparkSession (with task retries: ``local[4,8]``), stopped at the end."""
    session = build_session({"spark.master": "local[4]", "spark.ui.enabled": "false"})
    yield session
    session.stop()
