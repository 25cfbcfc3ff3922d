"""Distributed mode end to end: a driver on a 2-worker standalone Spark cluster and the broker.

Each test runs a :class:`DistributedWorker` (the herder, the REST API, the state topics) whose
workers are long-lived Spark tasks on the module's cluster (2 Spark workers started from the
pyspark wheel, 2 cores each: 4 workers, one per core), and what Spark loses: a Spark worker
killed mid-stream, the driver restarted. A killed Spark worker's connector tasks run on the
workers that are left as soon as the leader misses their heartbeats.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cdk.runtime import DistributedWorker
from cdk.runtime._status import TargetState
from cdk.spark import distributed_worker
from harness.providers.spark import SparkProvider, StandaloneSpark
from tests._wait import wait_until
from tests.integration._support import (
    all_keys,
    generator_config,
    make_topic,
    reading,
    recording_config,
    unique,
    wait_store_keys,
)
from tests.runtime.distributed._support import distributed_props
from tests.runtime.distributed._support import wait_states as wait_for_states
from tests.runtime.rest.test_rest import replay

pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark-e2e"), pytest.mark.timeout(600)]

#: Seconds for Spark to schedule a generation on a loaded 2-core machine.
SPARK_TIMEOUT = 180.0


def driver_props(bootstrap: str, spark: SparkProvider, **extra: str) -> dict[str, str]:
    """A cluster of its own on ``spark`` (the Spark provider's properties)."""
    return distributed_props(
        bootstrap,
        prefix="e2e",
        **{**spark.spark_properties(), "spark.task.maxFailures": "8", **extra},
    )


Driver = Callable[..., DistributedWorker]


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneSpark]:
    """The module's cluster: 2 workers of 2 task slots each (see the module docstring)."""
    workdir = tmp_path_factory.mktemp("spark-e2e")
    with StandaloneSpark(2, cores=2, memory="1g", workdir=workdir) as cluster:
        yield cluster


@pytest.fixture
def props(kafka_bootstrap: str, spark_cluster: StandaloneSpark) -> dict[str, str]:
    return driver_props(kafka_bootstrap, spark_cluster)


@pytest.fixture
def driver(props: dict[str, str], spark_cluster: StandaloneSpark) -> Iterator[Driver]:
    """Start drivers on ``props`` (the Spark placement); all stopped at teardown.

    A test that kills a Spark worker starts it again before the next test.
    """
    started: list[DistributedWorker] = []

    def start(*, rest: bool = False) -> DistributedWorker:
        worker = distributed_worker(props, rest=rest)
        started.append(worker)
        return worker.start()

    yield start
    for worker in reversed(started):
        worker.stop()
    for worker in spark_cluster.workers:
        spark_cluster.start_worker(worker.index)


def wait_states(
    worker: DistributedWorker, name: str, connector: str, tasks: list[str]
) -> dict[str, Any]:
    return wait_for_states(worker, name, connector, tasks, SPARK_TIMEOUT)


def test_source_with_two_tasks_and_a_sink_move_every_record(
    driver: Driver, kafka_bootstrap: str, spark_cluster: StandaloneSpark, tmp_path: Path
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2)
    worker = driver()
    herder = worker.herder
    placement = worker.placement
    assert placement is not None
    # a worker per core of both Spark workers' executors, which register one by one
    wait_until(
        lambda: len(herder.workers()) >= spark_cluster.cores,
        SPARK_TIMEOUT,
        0.5,
        lambda: f"{spark_cluster.cores} workers, have {sorted(herder.workers())}",
    )
    records = 2000
    herder.create_connector(
        "src",
        generator_config(topic, records=records, partitions=2, tasks_max=2, poll_interval_ms=10),
    )
    # its consumer group is the broker's: a name of its own
    herder.create_connector(unique("sink"), recording_config(topic, tmp_path / "store"))
    status = wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
    # the tasks run on the cluster's executors, and say so
    executors = {t["worker_id"] for t in status["tasks"]}
    assert all(spark_cluster.worker_of_executor(e) is not None for e in executors), executors
    store = wait_store_keys(tmp_path / "store", all_keys(2, records), timeout=SPARK_TIMEOUT)
    keys = store.keys()
    assert set(keys) == set(all_keys(2, records))  # no loss
    assert sum(keys.values()) == 2 * records  # nothing delivered twice on a quiet cluster


def test_a_killed_spark_worker_s_tasks_run_elsewhere_and_the_balance_comes_back(
    driver: Driver, kafka_bootstrap: str, spark_cluster: StandaloneSpark
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=4)
    worker = driver()
    herder = worker.herder
    wait_until(lambda: len(herder.workers()) >= spark_cluster.cores, SPARK_TIMEOUT, 0.5)
    records = 3000
    herder.create_connector(
        "src",
        generator_config(
            topic, records=records, partitions=4, tasks_max=4, poll_interval_ms=10, batch_size=20
        ),
    )
    status = wait_states(worker, "src", "RUNNING", ["RUNNING"] * 4)
    first = status["tasks"][0]["worker_id"]
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(1000, timeout=SPARK_TIMEOUT)
        killed = spark_cluster.worker_of_executor(first)
        assert killed is not None, first
        lost = {
            t["worker_id"]
            for t in status["tasks"]
            if spark_cluster.worker_of_executor(t["worker_id"]) == killed
        }
        spark_cluster.kill_worker(killed)

        def moved() -> bool:
            tasks = worker.herder.connector_status("src")["tasks"]
            return all(t["state"] == "RUNNING" and t["worker_id"] not in lost for t in tasks)

        wait_until(moved, SPARK_TIMEOUT, 0.2, "every task RUNNING on the workers left")
        # by key: the duplicates would make a count of messages reach 4 * records early
        keys = reader.wait_for_keys(all_keys(4, records), timeout=SPARK_TIMEOUT)
    duplicates = sum(keys.values()) - 4 * records
    assert set(keys) == set(all_keys(4, records))  # no loss
    # only what was produced after the last offset commit (300 ms at a few thousand records/s)
    assert 0 <= duplicates <= 3000, duplicates
    spark_cluster.start_worker(killed)
    # capacity is back: the lost workers run again and the leader evens the load out
    wait_until(
        lambda: sorted(len(w["tasks"]) for w in herder.workers().values()) == [1, 1, 1, 1],
        SPARK_TIMEOUT,
        0.5,
        lambda: f"one task per worker, have {herder.workers()}",
    )


def test_a_restarted_driver_recovers_target_states_task_configs_and_offsets(
    driver: Driver, kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap)
    first = driver()
    herder = first.herder
    herder.create_connector(
        "run", generator_config(topic, records=600, poll_interval_ms=20, batch_size=5)
    )
    herder.create_connector(
        "paused", generator_config(make_topic(kafka_bootstrap), poll_interval_ms=200)
    )
    herder.pause_connector("paused")
    herder.create_connector(
        "stopped", generator_config(make_topic(kafka_bootstrap), poll_interval_ms=200), "STOPPED"
    )
    wait_states(first, "run", "RUNNING", ["RUNNING"])
    wait_states(first, "paused", "PAUSED", ["PAUSED"])
    task_configs = herder.task_configs("run")
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(50, timeout=SPARK_TIMEOUT)
        first.stop()
        second = driver()
        again = second.herder
        assert sorted(again.connectors()) == ["paused", "run", "stopped"]
        assert again.target_state("paused") is TargetState.PAUSED
        assert again.target_state("stopped") is TargetState.STOPPED
        assert again.task_configs("run") == task_configs
        wait_states(second, "run", "RUNNING", ["RUNNING"])
        wait_states(second, "paused", "PAUSED", ["PAUSED"])
        wait_states(second, "stopped", "STOPPED", [])
        reader.wait_for(600, timeout=SPARK_TIMEOUT)
        keys = reader.keys()
    assert set(keys) == set(all_keys(1, 600))
    assert sum(keys.values()) == 600  # resumed from the offsets committed at the clean stop


def test_tasks_max_one_two_one_loses_nothing(driver: Driver, kafka_bootstrap: str) -> None:
    topic = make_topic(kafka_bootstrap)
    worker = driver()
    herder = worker.herder
    config = generator_config(topic, records=400, partitions=2, poll_interval_ms=30, batch_size=5)
    herder.create_connector("src", config)
    wait_states(worker, "src", "RUNNING", ["RUNNING"])
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(20, timeout=SPARK_TIMEOUT)
        herder.put_connector_config("src", {**config, "tasks.max": "2"})
        wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"])
        reader.wait_for(len(reader.messages) + 20, timeout=SPARK_TIMEOUT)
        herder.put_connector_config("src", {**config, "tasks.max": "1"})
        wait_states(worker, "src", "RUNNING", ["RUNNING"])
        keys = reader.wait_for_keys(all_keys(2, 400), timeout=SPARK_TIMEOUT)
    assert set(keys) == set(all_keys(2, 400))
    # graceful ends commit first: a key is seen again only within the uncommitted window
    assert sum(keys.values()) - 800 <= 400


def test_pause_resume_stop_and_delete_on_the_cluster(
    driver: Driver, kafka_bootstrap: str, spark_cluster: StandaloneSpark
) -> None:
    topic = make_topic(kafka_bootstrap)
    worker = driver(rest=True)
    assert worker.rest_url is not None
    with httpx.Client(base_url=worker.rest_url, timeout=30) as rest:
        config = generator_config(topic, records=-1, poll_interval_ms=200)
        assert rest.post("/connectors", json={"name": "src", "config": config}).status_code == 201
        wait_states(worker, "src", "RUNNING", ["RUNNING"])
        assert rest.put("/connectors/src/pause").status_code == 202
        wait_states(worker, "src", "PAUSED", ["PAUSED"])
        with reading(kafka_bootstrap, topic) as reader:
            reader.poll()
            paused_at = len(reader.messages)
            assert rest.put("/connectors/src/resume").status_code == 202
            wait_states(worker, "src", "RUNNING", ["RUNNING"])
            reader.wait_for(paused_at + 3, timeout=SPARK_TIMEOUT)
        assert rest.put("/connectors/src/stop").status_code == 204
        wait_states(worker, "src", "STOPPED", [])
        assert rest.get("/connectors/src/offsets").json()["offsets"]
        assert rest.delete("/connectors/src").status_code == 204
        wait_until(
            lambda: rest.get("/connectors/src").status_code == 404, SPARK_TIMEOUT, 0.2, "deleted"
        )
    assert len(spark_cluster.alive_workers()) == 2


def test_rest_exchanges_answer_as_kafka_connect_in_distributed_mode(
    driver: Driver, tmp_path: Path
) -> None:
    worker = driver(rest=True)
    assert worker.rest_url is not None
    with httpx.Client(base_url=worker.rest_url, timeout=30) as client:
        replay(client, tmp_path, timeout=SPARK_TIMEOUT)
