"""The Spark placement on a standalone cluster of 2 one-core workers started from the wheel."""

from __future__ import annotations

from typing import Any

import pytest

from cdk.runtime._status import TargetState
from cdk.spark import SparkPlacement
from harness.providers.spark import StandaloneSpark
from tests._wait import wait_until
from tests.integration._support import TopicReader, make_topic
from tests.spark._support import Listener, StateTopics, worker_props
from tests.spark.test_placement import seqs_by_stream, source_configs

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]


def _worker_of(cluster: StandaloneSpark, worker_id: str) -> int:
    """The index of the Spark worker whose executor is ``<host>:<executor id>``."""
    executor = worker_id.rpartition(":")[2]
    for worker in cluster.workers:
        if any((cluster.workdir / f"worker-{worker.index}").glob(f"app-*/{executor}")):
            return worker.index
    raise AssertionError(f"no worker runs executor {executor}: {worker_id}")


def test_task_of_a_killed_worker_resumes_on_the_other(
    kafka_bootstrap: str, spark_cluster: StandaloneSpark
) -> None:
    """SIGKILL of the worker running a source task: Spark reschedules it, nothing is lost."""
    props = worker_props(kafka_bootstrap, **spark_cluster.spark_properties())
    topics = StateTopics(props)
    listener = Listener()
    placement = SparkPlacement(props)
    placement.start(listener)
    killed: int | None = None
    try:
        assert placement.slots() == 2
        topic = make_topic(kafka_bootstrap, partitions=2, prefix="dspark")
        records = 15000
        connector, tasks = source_configs(
            "moved",
            topic,
            [["p0", "p1"]],
            records=str(records),
            batch_size="20",
            poll_interval_ms="10",
        )
        reader = TopicReader(kafka_bootstrap, topic)
        gen = topics.commit_generation("moved", connector, tasks)
        placement.launch(gen)
        first = topics.wait_tasks("moved", ["RUNNING"], timeout=120)[0].status.worker_id
        wait_until(lambda: reader.poll() >= 2000, 60, message="records before the kill")
        killed = _worker_of(spark_cluster, first)
        spark_cluster.kill_worker(killed)

        def moved() -> Any:
            status = topics.task_statuses("moved").get(0)
            running = status is not None and str(status.status.state) == "RUNNING"
            return running and status.status.worker_id != first

        wait_until(moved, 120, 0.2, "task 0 RUNNING on another executor")
        wait_until(
            lambda: all(len(seqs_by_stream(reader).get(s, ())) == records for s in ("p0", "p1")),
            120,
            message="every record of both streams",
        )
        final = seqs_by_stream(reader)
        duplicates = 0
        for stream in ("p0", "p1"):
            assert sorted(final[stream]) == list(range(records)), stream
            duplicates += sum(n - 1 for n in final[stream].values())
        # only what was sent after the last offset commit (300 ms at ~4,000 records/s)
        assert duplicates <= 3000, duplicates
        topics.target_state("moved", TargetState.STOPPED)
        assert placement.await_end("moved", 30)
        assert listener.wait("moved", gen.generation) == {}
    finally:
        placement.close(30)
        topics.close()
        if killed is not None:
            spark_cluster.start_worker(killed)
