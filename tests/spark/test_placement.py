"""The Spark placement on local[2]: two long-lived workers run every connector task.

Each test runs a driver (herder, assignments) whose workers are Spark tasks of the module's
``local[2]`` session: one worker per core, each running many connector tasks as threads. The
session outlives the drivers: a driver's stop ends its workers' jobs, and the next test's driver
starts its own.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cdk.runtime import DistributedWorker
from cdk.runtime.util import read_committed
from cdk.spark import SparkPlacement
from cdk.spark._session import build_session
from tests._wait import wait_until
from tests.integration._support import (
    all_keys,
    decode_key,
    generator_config,
    make_topic,
    reading,
    recording_config,
    wait_store_keys,
)
from tests.runtime.distributed._support import distributed_props, wait_states

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("spark-placement"),
    pytest.mark.timeout(600),
]

log = logging.getLogger(__name__)

KILLING_TASK = "tests.spark.connectors.KillingSourceTask"
SPARK_TIMEOUT = 120.0


@pytest.fixture(scope="module")
def session() -> Iterator[Any]:
    """A ``local[2]`` SparkSession (with task retries: ``local[2,8]``) for this module."""
    spark = build_session({"spark.master": "local[2]", "spark.ui.enabled": "false"})
    yield spark
    spark.stop()


Driver = Callable[..., DistributedWorker]


@pytest.fixture
def driver(kafka_bootstrap: str, session: Any) -> Iterator[Driver]:
    started: list[DistributedWorker] = []

    def start(**extra: str) -> DistributedWorker:
        props = distributed_props(kafka_bootstrap, prefix="place", **extra)
        worker = DistributedWorker(
            props,
            placement=SparkPlacement(props, session=session),
            rest=False,
            cluster_id_timeout=0,
        )
        started.append(worker)
        worker.start()
        assert worker.await_leader(60)
        wanted = worker.placement.workers() if worker.placement is not None else None
        wait_until(
            lambda: len(worker.herder.workers()) == wanted,
            SPARK_TIMEOUT,
            message=lambda: f"{wanted} workers to heartbeat, have {worker.herder.workers()}",
        )
        return worker

    yield start
    for worker in reversed(started):
        worker.stop()


def test_two_source_tasks_and_a_sink_run_on_two_cores(
    driver: Driver, kafka_bootstrap: str, tmp_path: Path
) -> None:
    worker = driver()
    assert worker.placement is not None
    assert worker.placement.workers() == 2  # one per core of local[2]
    herder = worker.herder
    topic = make_topic(kafka_bootstrap, partitions=2)
    with reading(kafka_bootstrap, topic) as reader:
        started = time.monotonic()
        herder.create_connector(
            "src",
            generator_config(topic, records=3000, partitions=2, tasks_max=2, batch_size=50),
        )
        reader.wait_for(1, timeout=SPARK_TIMEOUT)
        log.info("REST create -> first record: %.3f s", time.monotonic() - started)
        herder.create_connector("sink", recording_config(topic, tmp_path / "store"))
        status = wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"], SPARK_TIMEOUT)
        wait_states(worker, "sink", "RUNNING", ["RUNNING"], SPARK_TIMEOUT)
        # each task names the worker (slot, application, executor) that runs it
        assert all(t["worker_id"].startswith("w") for t in status["tasks"])
        assert len({t["worker_id"] for t in status["tasks"]}) == 2
        reader.wait_for(6000, timeout=SPARK_TIMEOUT)
    store = wait_store_keys(tmp_path / "store", all_keys(2, 3000), timeout=SPARK_TIMEOUT)
    assert sum(store.keys().values()) == 6000


def test_five_connectors_with_twenty_tasks_all_run(driver: Driver, kafka_bootstrap: str) -> None:
    worker = driver()
    herder = worker.herder
    for n in range(5):
        topic = make_topic(kafka_bootstrap, partitions=4)
        herder.create_connector(
            f"c{n}",
            generator_config(topic, records=-1, partitions=4, tasks_max=4, poll_interval_ms=500),
        )
    for n in range(5):
        wait_states(worker, f"c{n}", "RUNNING", ["RUNNING"] * 4, SPARK_TIMEOUT)
    loads = sorted(len(w["tasks"]) for w in herder.workers().values())
    assert loads == [10, 10]


def test_a_failed_task_stays_failed_while_the_rest_runs(
    driver: Driver, kafka_bootstrap: str
) -> None:
    worker = driver()
    herder = worker.herder
    topic = make_topic(kafka_bootstrap, partitions=2)
    herder.create_connector(
        "src",
        generator_config(
            topic, tasks_max=2, partitions=2, poll_interval_ms=100, fail_after=5, fail_stream="p1"
        ),
    )
    herder.create_connector(
        "other", generator_config(make_topic(kafka_bootstrap), poll_interval_ms=100)
    )
    wait_states(worker, "src", "RUNNING", ["RUNNING", "FAILED"], SPARK_TIMEOUT)
    wait_states(worker, "other", "RUNNING", ["RUNNING"], SPARK_TIMEOUT)
    assert "injected failure" in herder.task_status("src", 1)["trace"]
    herder.restart_connector_and_tasks("src", only_failed=True, include_tasks=True)
    wait_states(worker, "src", "RUNNING", ["RUNNING", "RUNNING"], SPARK_TIMEOUT)


def test_a_lost_python_worker_comes_back_and_nothing_is_lost(
    driver: Driver, kafka_bootstrap: str
) -> None:
    """The worker's process dies (as with its executor); Spark retries its job, tasks resume."""
    worker = driver()
    herder = worker.herder
    topic = make_topic(kafka_bootstrap, partitions=1)
    records = 4000
    with reading(kafka_bootstrap, topic) as reader:
        herder.create_connector(
            "src",
            generator_config(
                topic,
                records=records,
                batch_size=20,
                poll_interval_ms=10,
                task_class_override=KILLING_TASK,
                kill_after=500,
            ),
        )
        wait_states(worker, "src", "RUNNING", ["RUNNING"], SPARK_TIMEOUT)
        keys = reader.wait_for_keys(all_keys(1, records), timeout=SPARK_TIMEOUT)
    assert set(keys) == set(all_keys(1, records))
    # only what was sent after the last offset commit is sent again
    assert sum(keys.values()) - records <= 1500


def _failed_spark_tasks(session: Any) -> int:
    """How many task attempts of the running Spark stages failed (a worker's job is one)."""
    tracker = session.sparkContext.statusTracker()
    stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
    return sum(stage.numFailedTasks for stage in stages if stage is not None)


def test_exactly_once_across_a_kill_9_of_the_python_worker_holding_the_task(
    driver: Driver, kafka_bootstrap: str, session: Any, tmp_path: Path
) -> None:
    """An exactly-once source task on a Spark executor, whose Python worker gets ``kill -9``.

    The task (``exactly.once.support=required``, a transaction every 300 ms) kills its own
    Python worker with SIGKILL mid-stream, a transaction open. Spark runs the worker's job
    again; the task starts there again, its producer's ``init_transactions`` fences the dead
    one (the open transaction is aborted) and it resumes from the offsets committed with the
    last transaction. The kit's marker-aware reader (what a ``read_committed`` consumer gets on
    Kafka) must find each record once.
    """
    worker = driver(**{"exactly.once.source.support": "enabled"})
    failed_before = _failed_spark_tasks(session)
    topic = make_topic(kafka_bootstrap, partitions=1)
    records = 3000  # at most 1,000 a second: the kill (after 1.5 s) comes mid-stream
    killed = tmp_path / "killed"
    config = generator_config(
        topic,
        records=records,
        batch_size=10,
        poll_interval_ms=10,
        task_class_override=KILLING_TASK,
        kill_after=500,
        kill_signal="KILL",
        kill_once_file=killed,
        eos_support="SUPPORTED",
        **{
            "exactly.once.support": "required",
            "transaction.boundary": "interval",
            "transaction.boundary.interval.ms": "300",
        },
    )
    worker.herder.create_connector("src", config)
    wait_states(worker, "src", "RUNNING", ["RUNNING"], SPARK_TIMEOUT)
    host, port = kafka_bootstrap.split(",")[0].rsplit(":", 1)

    def committed() -> list[str]:
        return [decode_key(m.key()) for m in read_committed(host, int(port), topic, 0, 30)]

    wait_until(
        lambda: _failed_spark_tasks(session) > failed_before,
        SPARK_TIMEOUT,
        message="the task's Python worker to be killed",
    )
    pid, polled = killed.read_text(encoding="utf-8").split()
    log.info("Python worker %s killed after %s records", pid, polled)
    assert int(polled) < records  # mid-stream
    wait_until(
        lambda: len(committed()) >= records,
        SPARK_TIMEOUT,
        1.0,
        message=lambda: f"{records} committed records, have {len(committed())}",
    )
    wait_states(worker, "src", "RUNNING", ["RUNNING"], SPARK_TIMEOUT)
    keys = Counter(committed())
    duplicates = sorted(k for k, n in keys.items() if n > 1)
    assert not duplicates, f"{len(duplicates)} duplicated: {duplicates[:10]}"
    assert keys == all_keys(1, records)


def test_one_worker_when_the_setting_says_one(driver: Driver, kafka_bootstrap: str) -> None:
    worker = driver(**{"spark.cdk.workers": "1"})
    assert worker.placement is not None
    assert worker.placement.workers() == 1
    worker.herder.create_connector(
        "src",
        generator_config(
            make_topic(kafka_bootstrap, partitions=3), partitions=3, tasks_max=3, records=-1
        ),
    )
    wait_states(worker, "src", "RUNNING", ["RUNNING"] * 3, SPARK_TIMEOUT)
    assert len(worker.herder.workers()) == 1
