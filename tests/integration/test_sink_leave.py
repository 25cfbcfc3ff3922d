"""How a sink's tasks leave their consumer group when a worker stops (``sink.tasks.leave.mode``).

On the embedded Tansu broker ``auto`` decides ``sequential`` (Tansu describes none of Kafka's
group coordinator settings): each task leaves after the others took its partitions over.
``concurrent`` (what ``auto`` picks on a Kafka cluster) stops them all at once: no task takes a
partition over, and each still commits what it consumed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from cdk.runtime._sink_runner import consumer_group_id
from tests._wait import wait_until
from tests.connectors.recording import read_store
from tests.integration._support import (
    STRING,
    Connect,
    create_topics,
    make_topic,
    recording_config,
    unique,
)

RECORDS_PER_PARTITION = 5


def _produce(bootstrap: str, topic: str, partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for p in range(partitions):
        for n in range(RECORDS_PER_PARTITION):
            producer.produce(topic, key=f"k{p}-{n}".encode(), value=b"{}", partition=p)
    assert producer.flush(30) == 0


def _opened(events: list[dict[str, Any]]) -> dict[str, set[tuple[str, int]]]:
    """Every partition each task instance was ever given."""
    out: dict[str, set[tuple[str, int]]] = {}
    for e in events:
        if e["event"] == "open":
            out.setdefault(e["instance"], set()).update((t, p) for t, p in e["partitions"])
    return out


def _committed(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        tps = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], 10)
        return [tp.offset for tp in tps]
    finally:
        consumer.close()


def _run_sink(
    connect: Callable[..., Connect], bootstrap: str, store: Path, tasks: int, mode: str | None
) -> tuple[Connect, str, str]:
    """A worker running a recording sink with ``tasks`` tasks, one partition each, all consumed."""
    worker = connect({"sink.tasks.leave.mode": mode} if mode else None)
    topic = make_topic(bootstrap, partitions=tasks)
    _produce(bootstrap, topic, tasks)
    name = unique("rec")
    config = recording_config(topic, store, tasks_max=tasks)
    config.update({"key.converter": STRING, "value.converter": STRING})
    worker.rest.create(name, config)
    worker.rest.wait_state(name, "RUNNING", tasks=tasks)

    def settled() -> bool:
        got = read_store(store)
        owners = [parts for parts in _opened(got.events).values() if parts]
        return len(owners) == tasks and len(got.records) == tasks * RECORDS_PER_PARTITION

    wait_until(settled, 60, 0.1, lambda: f"{tasks} tasks, a partition each: {read_store(store)}")
    return worker, name, topic


def _one_task_sink(worker: Connect, topic: str, tmp_path: Path) -> tuple[str, Path, dict[str, str]]:
    """A recording sink of one task on ``topic``, RUNNING: its name, store and config."""
    name = unique("rec")
    store = tmp_path / "store"
    config = recording_config(topic, store)
    config.update({"key.converter": STRING, "value.converter": STRING})
    worker.rest.create(name, config)
    worker.rest.wait_state(name, "RUNNING", tasks=1)
    return name, store, config


def test_auto_on_the_embedded_broker_stops_sink_tasks_one_at_a_time(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    """Tansu needs the sequential order: the tasks that stay take the leaver's partitions."""
    store = tmp_path / "store"
    worker, name, topic = _run_sink(connect, kafka_bootstrap, store, 3, None)
    assert worker.worker.worker.sink_tasks_leave_sequentially()
    before = _opened(read_store(store).events)
    worker.stop()

    after = _opened(read_store(store).events)
    everything = {(topic, p) for p in range(3)}
    took_over = [i for i, parts in after.items() if parts == everything]
    assert took_over, f"no task took over every partition before it left: {after} (was {before})"
    group = consumer_group_id(name)
    assert _committed(kafka_bootstrap, group, topic, 3) == [RECORDS_PER_PARTITION] * 3


@pytest.mark.parametrize("spelling", ["concurrent", "CONCURRENT"])
def test_concurrent_stops_every_sink_task_at_once(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path, spelling: str
) -> None:
    """Forced concurrent on Tansu: nobody takes a partition over, every offset is committed.

    With 4 tasks leaving one at a time a stop waits for 3 rebalances (about 3 s each on
    Tansu); together, it is over before the group could rebalance once.
    """
    store = tmp_path / "store"
    worker, name, topic = _run_sink(connect, kafka_bootstrap, store, 4, spelling)
    assert not worker.worker.worker.sink_tasks_leave_sequentially()
    before = _opened(read_store(store).events)
    started = time.monotonic()
    worker.stop()
    took = time.monotonic() - started

    events = read_store(store).events
    assert _opened(events) == before, "a task took a partition over: the tasks left one by one"
    stopped = {e["instance"] for e in events if e["event"] == "stop"}
    assert stopped == set(before)
    group = consumer_group_id(name)
    assert _committed(kafka_bootstrap, group, topic, 4) == [RECORDS_PER_PARTITION] * 4
    assert took < 10, f"stopping 4 sink tasks together took {took:.1f} s"


def test_a_sink_stopped_while_it_joins_leaves_a_group_the_next_task_can_join(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    """Tansu keeps a member that leaves mid-join, and the next member waits for it for ever.

    A sink reconfigured (or moved to another worker) right after it started would leave while
    its first join runs; the task finishes that join first, so its successor gets the
    partitions and every record.
    """
    worker = connect()
    topic = make_topic(kafka_bootstrap, partitions=1)
    _produce(kafka_bootstrap, topic, 1)
    name, store, config = _one_task_sink(worker, topic, tmp_path)
    # at once, while the first task's consumer is still joining: a new task replaces it
    worker.rest.put_config(name, {**config, "consumer.override.client.id": unique("again")})
    wait_until(
        lambda: len(read_store(store).records) >= RECORDS_PER_PARTITION,
        60,
        0.1,
        lambda: f"the replacing task's records, have {read_store(store)}",
    )


def test_a_sink_whose_topic_does_not_exist_stops_without_waiting_for_a_join(
    connect: Callable[..., Connect],
    kafka_bootstrap: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No subscribed topic exists, so librdkafka never asked to join: nothing to wait for.

    The task is reconfigured before its topic exists (its stop neither waits for a join nor
    runs into the graceful timeout), then the topic is created and its records all arrive:
    leaving without the wait did not leave the group stuck.
    """
    worker = connect()
    topic = unique("missing")
    name, store, config = _one_task_sink(worker, topic, tmp_path)
    caplog.set_level("WARNING", logger="cdk.runtime")
    worker.rest.put_config(name, {**config, "consumer.override.client.id": unique("again")})
    worker.rest.wait_state(name, "RUNNING", tasks=1)
    waited = [
        r.getMessage()
        for r in caplog.records
        if "Graceful stop" in r.getMessage() or "before its first join" in r.getMessage()
    ]
    assert not waited, waited
    create_topics(kafka_bootstrap, [topic], partitions=1)
    _produce(kafka_bootstrap, topic, 1)
    wait_until(
        lambda: len(read_store(store).records) >= RECORDS_PER_PARTITION,
        60,
        0.1,
        lambda: f"the records of the topic created later, have {read_store(store)}",
    )
