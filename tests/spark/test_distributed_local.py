"""The whole of distributed mode on local[4]: the driver, its REST API, its workers on Spark.

A generator source with 2 tasks and a recording sink move their records through the embedded
broker; the connectors pause and resume; the driver restarts and finds both connectors in their
target states with their offsets (the source carries on where it was, nothing lost).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdk.spark import SparkPlacement, distributed_worker
from tests._wait import wait_until
from tests.connectors.recording import read_store
from tests.integration._support import (
    Rest,
    all_keys,
    generator_config,
    make_topic,
    recording_config,
    unique,
    wait_store_keys,
)
from tests.runtime.distributed._support import distributed_props

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark-local")]


def _props(bootstrap: str) -> dict[str, str]:
    return distributed_props(
        bootstrap, prefix="dspark", **{"spark.master": "local[4]", "spark.ui.enabled": "false"}
    )


@pytest.fixture
def drivers() -> Iterator[list[Any]]:
    """What a test started (drivers and REST clients): stopped and closed at teardown."""
    started: list[Any] = []
    yield started
    for item in reversed(started):
        if isinstance(item, Rest):
            item.close()
        else:
            item.stop()


def _start(props: dict[str, str], started: list[Any]) -> tuple[Any, Rest]:
    driver = distributed_worker(props, cluster_id_timeout=0)
    started.append(driver)
    driver.start()
    assert isinstance(driver.placement, SparkPlacement)
    assert driver.rest_url is not None
    rest = Rest(driver.rest_url)
    started.append(rest)
    return driver, rest


def test_pipeline_pause_resume_and_driver_restart(
    kafka_bootstrap: str, tmp_path: Path, drivers: list[Any]
) -> None:
    props = _props(kafka_bootstrap)
    topic = make_topic(kafka_bootstrap, partitions=2, prefix="dspark-e2e")
    store = tmp_path / "store"
    driver, rest = _start(props, drivers)
    source = generator_config(
        topic, partitions=2, tasks_max=2, records=3000, batch_size=20, poll_interval_ms=20
    )
    rest.create("src", source)
    sink = unique("sink")  # its consumer group is the broker's: a name of its own
    rest.create(sink, recording_config(topic, store))
    status = rest.wait_state("src", "RUNNING", tasks=2, timeout=120)
    workers = {t["worker_id"] for t in status["tasks"]}
    assert all(w.endswith(":driver") for w in workers), workers  # local mode: the driver's JVM
    rest.wait_state(sink, "RUNNING", tasks=1, timeout=120)
    wait_until(lambda: len(read_store(store).records) >= 500, 120, message="500 records sunk")

    rest.call("PUT", "/connectors/src/pause", 202)
    rest.wait_state("src", "PAUSED", tasks=2, timeout=60)
    rest.call("PUT", "/connectors/src/resume", 202)
    rest.wait_state("src", "RUNNING", tasks=2, timeout=60)

    # the driver restarts: the connectors come back from the topics alone
    rest.close()
    drivers.remove(rest)
    driver.stop()
    drivers.remove(driver)
    driver, rest = _start(props, drivers)
    rest.wait_state("src", "RUNNING", tasks=2, timeout=120)
    rest.wait_state(sink, "RUNNING", tasks=1, timeout=120)
    got = wait_store_keys(store, all_keys(2, 3000), timeout=180)
    duplicates = sum(n - 1 for n in got.keys().values())
    # duplicates only from the uncommitted window of the restart (300 ms offset flushes)
    assert duplicates <= 1500, duplicates
    rest.call("DELETE", "/connectors/src", 204)
    rest.call("DELETE", f"/connectors/{sink}", 204)
