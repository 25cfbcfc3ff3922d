"""Exactly-once source tasks in distributed mode (KIP-618), the workers on threads (no Spark).

A driver with ``exactly.once.source.support=enabled`` runs each source task with a transactional
producer (``<group.id>-<connector>-<task>``) that writes the records and their offsets in one
transaction; a ``read_committed`` reader sees each record once, a restarted cluster resumes
exactly after the last committed record, an open transaction is invisible, and a task whose
producer was fenced fails. Tansu hides nothing that was aborted (see
``tests/integration/test_tansu_transactions.py``), so no test here depends on an abort being
hidden: the kill -9 guarantees need a real Kafka broker.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer

from cdk.runtime import DistributedWorker
from cdk.runtime._eos_source_runner import (
    ExactlyOnceWorkerSourceTask,
    murmur2,
    murmur2_partition,
)
from cdk.runtime._status import ConnectorTaskId
from cdk.runtime.storage import offset_key
from tests._wait import wait_until
from tests.integration._support import all_keys, generator_config, make_topic, reading
from tests.runtime.distributed._support import distributed_props, states, wait_states
from tests.runtime.distributed._thread_placement import ThreadPlacement
from tests.runtime.storage.test_kafka_stores import _records

pytestmark = pytest.mark.slow

Driver = Callable[..., DistributedWorker]


@pytest.fixture
def props(kafka_bootstrap: str) -> dict[str, str]:
    return distributed_props(
        kafka_bootstrap, prefix="eos", **{"exactly.once.source.support": "enabled"}
    )


@pytest.fixture
def driver(props: dict[str, str]) -> Iterator[Driver]:
    """Start drivers on ``props`` (one worker thread each); all stopped at teardown."""
    started: list[DistributedWorker] = []

    def start(**overrides: str) -> DistributedWorker:
        worker = DistributedWorker(
            {**props, **overrides}, placement=ThreadPlacement(1), rest=False, cluster_id_timeout=0
        )
        started.append(worker)
        worker.start()
        assert worker.await_leader(60), "no driver of the cluster took the lead"
        return worker

    yield start
    for worker in reversed(started):
        worker.stop()


def _runner(worker: DistributedWorker, connector: str, task: int = 0) -> Any:
    placement = worker.placement
    assert isinstance(placement, ThreadPlacement)
    for cluster_worker in placement.cluster_workers:
        if cluster_worker is not None and cluster_worker.worker is not None:
            runner = cluster_worker.worker.task_runner(ConnectorTaskId(connector, task))
            if runner is not None:
                return runner
    return None


def _committed_offsets(bootstrap: str, topic: str) -> dict[str, Any]:
    """The offsets topic read ``read_committed``: key JSON → value JSON (the last of each)."""
    out: dict[str, Any] = {}
    for _partition, key, value in _records(bootstrap, topic):
        assert key is not None
        out[key.decode()] = None if value is None else json.loads(value)
    return out


def test_records_and_offsets_commit_together_and_a_restart_resumes_exactly(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2)
    config = generator_config(topic, tasks_max=2, partitions=2, records=600, batch_size=50)
    worker = driver()
    worker.herder.create_connector("gen", config)
    wait_states(worker, "gen", "RUNNING", ["RUNNING", "RUNNING"])
    runner = wait_until(lambda: _runner(worker, "gen", 1), 30, message="task gen-1 to run")
    assert isinstance(runner, ExactlyOnceWorkerSourceTask)
    assert runner.transactional_id == f"{props['group.id']}-gen-1"
    with reading(kafka_bootstrap, topic) as reader:
        keys = reader.wait_for_keys(all_keys(2, 600))
        assert keys == all_keys(2, 600)  # each record once
    wait_until(
        lambda: (
            _committed_offsets(kafka_bootstrap, props["offset.storage.topic"]).get(
                '["gen",{"partition":"p1"}]'
            )
            == {"seq": 599}
        ),
        30,
        message="the last offset of p1 committed",
    )
    assert set(runner.transaction_sizes) <= {50}  # boundary=poll: one batch per transaction
    worker.stop()

    # the same cluster again, more records: it resumes after the last committed one
    again = driver()
    wait_until(lambda: again.leading, 60, message="the restarted driver to lead")
    again.herder.put_connector_config("gen", {**config, "records": "900"}, allow_replace=True)
    with reading(kafka_bootstrap, topic) as reader:
        keys = reader.wait_for_keys(all_keys(2, 900))
        assert keys == all_keys(2, 900)


def test_offsets_go_to_the_partition_kafka_s_partitioner_picks(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap)
    worker = driver()
    worker.herder.create_connector("part", generator_config(topic, partitions=3, records=10))
    offsets_topic = props["offset.storage.topic"]
    wanted = {offset_key("part", {"partition": f"p{i}"}) for i in range(3)}

    def written() -> dict[bytes, int]:
        return {k: p for p, k, _v in _records(kafka_bootstrap, offsets_topic) if k in wanted}

    found = wait_until(lambda: len(written()) == 3 and written(), 30, message="3 offsets")
    partitions = int(props["offset.storage.partitions"])
    assert found == {key: murmur2_partition(key, partitions) for key in wanted}


@pytest.mark.parametrize(
    ("data", "expected"),
    [  # Kafka's UtilsTest.testMurmur2 vectors
        (b"21", -973932308),
        (b"foobar", -790332482),
        (b"a-little-bit-long-string", -985981536),
        (b"a-little-bit-longer-string", -1486304829),
        (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        (b"abc", 479470107),
    ],
)
def test_murmur2_is_kafka_s(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected
    assert murmur2_partition(data, 25) == (expected & 0x7FFFFFFF) % 25


def test_interval_boundaries_commit_many_polls_at_once(
    driver: Driver, kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap)
    worker = driver()
    config = generator_config(
        topic,
        records=2000,
        batch_size=10,
        poll_interval_ms=5,
        **{"transaction.boundary": "interval", "transaction.boundary.interval.ms": "500"},
    )
    worker.herder.create_connector("intv", config)
    with reading(kafka_bootstrap, topic) as reader:
        assert reader.wait_for_keys(all_keys(1, 2000)) == all_keys(1, 2000)
    runner = _runner(worker, "intv")
    assert isinstance(runner, ExactlyOnceWorkerSourceTask)
    assert runner.transaction_sizes
    assert max(runner.transaction_sizes) > 10  # several polls in one transaction


def test_connector_boundaries_commit_where_the_task_asks_and_an_open_one_is_invisible(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap)
    worker = driver()
    able = {"transaction.boundary": "connector", "eos.boundaries": "SUPPORTED"}
    worker.herder.create_connector(
        "conn", generator_config(topic, records=1000, batch_size=64, eos_commit_every=250, **able)
    )
    with reading(kafka_bootstrap, topic) as reader:
        assert reader.wait_for_keys(all_keys(1, 1000)) == all_keys(1, 1000)
    runner = _runner(worker, "conn")
    assert runner.transaction_sizes == [250, 250, 250, 250]
    placement = worker.placement
    assert isinstance(placement, ThreadPlacement)
    cluster_worker = placement.cluster_workers[0]
    assert cluster_worker is not None
    assert cluster_worker.worker is not None
    snapshot = cluster_worker.worker.metrics.snapshot()
    tags = {"connector": "conn", "task": "0"}
    for stat in ("min", "max", "avg"):  # Kafka's source-task-metrics of exactly-once tasks
        assert snapshot.value("source-task-metrics", f"transaction-size-{stat}", **tags) == 250

    # a task that never asks to commit: its records stay in an open transaction
    never = make_topic(kafka_bootstrap)
    worker.herder.create_connector(
        "never", generator_config(never, records=300, batch_size=100, **able)
    )
    wait_states(worker, "never", "RUNNING", ["RUNNING"])
    with reading(kafka_bootstrap, never, "read_uncommitted") as everything:
        everything.wait_for_keys(all_keys(1, 300))
    with reading(kafka_bootstrap, never) as committed:
        assert committed.poll(1.0) == 0
    assert (
        _committed_offsets(kafka_bootstrap, props["offset.storage.topic"]).get(
            '["never",{"partition":"p0"}]'
        )
        is None
    )


def test_a_task_whose_producer_is_fenced_fails(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap)
    worker = driver()
    worker.herder.create_connector(
        "fenced", generator_config(topic, batch_size=10, poll_interval_ms=50)
    )
    wait_states(worker, "fenced", "RUNNING", ["RUNNING"])
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(20)
    zombie_killer = Producer(
        {
            "bootstrap.servers": kafka_bootstrap,
            "transactional.id": f"{props['group.id']}-fenced-0",
        }
    )
    zombie_killer.init_transactions(30)  # a newer epoch: the task's producer is fenced
    wait_until(
        lambda: states(worker, "fenced")[1] == ["FAILED"],
        60,
        message=lambda: f"the fenced task to fail, states {states(worker, 'fenced')}",
    )
    trace = worker.herder.connector_status("fenced")["tasks"][0]["trace"]
    assert "Failed to flush offsets and/or records for task fenced-0" in trace


def _config_records(bootstrap: str, topic: str, key: str) -> list[bytes | None]:
    return [value for _p, k, value in _records(bootstrap, topic) if k == key.encode()]


def test_a_new_generation_fences_the_zombies_of_the_one_before(
    driver: Driver, props: dict[str, str], kafka_bootstrap: str
) -> None:
    topic = make_topic(kafka_bootstrap, partitions=2)
    worker = driver()
    config = generator_config(topic, tasks_max=2, partitions=2, batch_size=10, poll_interval_ms=50)
    worker.herder.create_connector("zc", config)
    wait_states(worker, "zc", "RUNNING", ["RUNNING", "RUNNING"])
    # the first generation: nothing to fence, its task count written as Kafka writes it
    config_topic = props["config.storage.topic"]
    assert _config_records(kafka_bootstrap, config_topic, "tasks-fencing-zc") == [
        b'{"task-count":2}'
    ]

    # a zombie of task 1 (as a frozen worker's task that wakes up): it can still commit...
    zombie = Producer(
        {"bootstrap.servers": kafka_bootstrap, "transactional.id": f"{props['group.id']}-zc-1"}
    )
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie's first", b"z1")
    zombie.commit_transaction(30)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie's second", b"z2")
    zombie.flush(30)

    # ...until the next generation: the leader fences both tasks of this one first
    worker.herder.put_connector_config("zc", {**config, "tasks.max": "1"}, allow_replace=True)
    wait_until(
        lambda: (
            _config_records(kafka_bootstrap, config_topic, "tasks-fencing-zc")[-1:]
            == [b'{"task-count":1}']
        ),
        60,
        message="the task count of the second generation",
    )
    wait_states(worker, "zc", "RUNNING", ["RUNNING"])
    # Kafka answers the zombie's EndTxn with PRODUCER_FENCED; Tansu 0.6.0 does not answer it
    # (librdkafka times out): either way the zombie commits nothing
    with pytest.raises(KafkaException) as caught:
        zombie.commit_transaction(10)
    assert caught.value.args[0].code() in (
        KafkaError.PRODUCER_FENCED,
        KafkaError._FENCED,
        KafkaError._TIMED_OUT,
    )
    # the old generation stopped before it was fenced: its tasks committed and did not fail
    assert states(worker, "zc") == ("RUNNING", ["RUNNING"])
