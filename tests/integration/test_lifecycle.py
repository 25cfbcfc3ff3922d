"""Pause/resume, task failure and REST restart, reconfiguration and sink rebalances."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests._wait import wait_until
from tests.connectors.recording import read_connector_events, read_store
from tests.integration._support import (
    Connect,
    TopicReader,
    all_keys,
    generator_config,
    make_topic,
    reading,
    recording_config,
    unique,
    wait_store_keys,
)


def assert_stays(fn: Callable[[], int], seconds: float, interval: float = 0.05) -> int:
    """Check ``fn()`` keeps one value for ``seconds`` (failing as soon as it changes)."""
    first = fn()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        now = fn()
        assert now == first, f"changed from {first} to {now} while it should not"
        time.sleep(interval)
    return first


def settled(reader: TopicReader, quiet: float = 0.5, timeout: float = 15.0) -> int:
    """Wait until the reader's count stops changing for ``quiet`` seconds (in-flight drained)."""
    state = {"count": -1, "since": time.monotonic()}

    def quiet_now() -> bool:
        count = reader.poll(0.05)
        if count != state["count"]:
            state["count"], state["since"] = count, time.monotonic()
            return False
        return time.monotonic() - state["since"] >= quiet

    wait_until(quiet_now, timeout, 0.0, "the topic to stop growing")
    return len(reader.messages)


def test_pause_stops_the_flow_and_resume_restarts_it(
    connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    worker = connect()
    topic = make_topic(kafka_bootstrap)
    name = unique("gen")
    worker.rest.create(name, generator_config(topic, batch_size=10, poll_interval_ms=10))
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(100)
        worker.rest.call("PUT", f"/connectors/{name}/pause", 202)
        worker.rest.wait_state(name, "PAUSED", tasks=1)
        paused_at = settled(reader)
        # the generator makes ~1000 records/s: a second of silence means it is really paused
        assert_stays(lambda: reader.poll(0.05), 1.0)

        worker.rest.call("PUT", f"/connectors/{name}/resume", 202)
        worker.rest.wait_state(name, "RUNNING", tasks=1)
        reader.wait_for(paused_at + 200)


def test_pausing_a_sink_stops_its_connector_and_resuming_starts_it_again(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    """As Kafka's WorkerConnector: PAUSED calls the connector's stop(), STARTED its start().

    The tasks only pause and resume (same task instance); records produced while paused are
    delivered after the resume, none lost and none twice.
    """
    worker = connect()
    before, during = make_topic(kafka_bootstrap), make_topic(kafka_bootstrap)
    store = tmp_path / unique("store")
    sink = unique("rec")
    worker.rest.create(sink, recording_config(f"{before},{during}", store))
    worker.rest.wait_state(sink, "RUNNING", tasks=1)
    assert [e["event"] for e in read_connector_events(store)] == ["start"]

    def received(topic: str) -> int:
        return sum(1 for r in read_store(store).records if r["topic"] == topic)

    worker.rest.create(unique("gen"), generator_config(before, records=100, batch_size=20))
    wait_until(lambda: received(before) == 100, 60, 0.1, f"100 records of {before} received")

    worker.rest.call("PUT", f"/connectors/{sink}/pause", 202)
    worker.rest.wait_state(sink, "PAUSED", tasks=1)
    events = read_connector_events(store)
    assert [e["event"] for e in events] == ["start", "stop"]

    worker.rest.create(unique("gen"), generator_config(during, records=100, batch_size=20))
    with reading(kafka_bootstrap, during) as reader:
        reader.wait_for(100)
    assert_stays(lambda: received(during), 1.0)  # paused: nothing is delivered
    assert received(during) == 0

    worker.rest.call("PUT", f"/connectors/{sink}/resume", 202)
    worker.rest.wait_state(sink, "RUNNING", tasks=1)
    events = read_connector_events(store)
    assert [e["event"] for e in events] == ["start", "stop", "start"]
    assert len({e["instance"] for e in events}) == 1  # the same instance, started again
    wait_until(lambda: received(during) == 100, 60, 0.1, f"100 records of {during} received")

    got = read_store(store)
    coordinates = got.coordinates()
    assert len(coordinates) == 200
    assert max(coordinates.values()) == 1  # nothing twice
    assert len(got.events_named("start")) == 1  # the task was paused, never restarted


def test_task_failure_then_rest_restart_recovers_without_loss(
    connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    worker = connect()
    topic = make_topic(kafka_bootstrap)
    name = unique("gen-fail")
    worker.rest.create(name, generator_config(topic, records=400, batch_size=25, fail_after=100))

    def failed_task() -> dict[str, Any] | None:
        status = worker.rest.status(name)
        tasks = status["tasks"]
        return tasks[0] if tasks and tasks[0]["state"] == "FAILED" else None

    task = wait_until(failed_task, 30, 0.1, lambda: worker.rest.raw_status(name))
    assert "injected failure after 100 records" in task["trace"]
    assert worker.rest.status(name)["connector"]["state"] == "RUNNING"
    r = worker.rest.call("GET", f"/connectors/{name}/tasks/0/status", 200)
    assert r.json()["state"] == "FAILED"
    assert "trace" in r.json()

    worker.rest.call("POST", f"/connectors/{name}/tasks/0/restart", (202, 204))
    worker.rest.wait_state(name, "RUNNING", tasks=1)
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(400)
        wait_until(lambda: reader.poll() and set(reader.keys()) == set(all_keys(1, 400)), 30)
        assert set(reader.keys()) == set(all_keys(1, 400))


def test_tasks_max_change_reassigns_streams_without_loss(
    connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    worker = connect()
    topic = make_topic(kafka_bootstrap, partitions=2)
    name = unique("gen")
    config = generator_config(
        topic, records=800, partitions=4, tasks_max=1, batch_size=10, poll_interval_ms=10
    )
    worker.rest.create(name, config)
    worker.rest.wait_state(name, "RUNNING", tasks=1)
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(200)
        worker.rest.put_config(name, {**config, "tasks.max": "4"})
        status = worker.rest.wait_state(name, "RUNNING", tasks=4)
        assert sorted(t["id"] for t in status["tasks"]) == [0, 1, 2, 3]
        r = worker.rest.call("GET", f"/connectors/{name}/tasks", 200)
        assert sorted(t["config"]["task.streams"] for t in r.json()) == ["p0", "p1", "p2", "p3"]
        reader.wait_for(4 * 800)
        settled(reader, quiet=0.3)
        assert reader.keys() == all_keys(4, 800)  # no loss, no duplicates (clean handover)


def test_request_task_reconfiguration_adds_streams_without_loss(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    worker = connect()
    topic = make_topic(kafka_bootstrap, partitions=2)
    streams = tmp_path / "streams"
    streams.write_text("2")
    name = unique("gen")
    worker.rest.create(
        name,
        generator_config(
            topic,
            records=600,
            tasks_max=4,
            batch_size=10,
            poll_interval_ms=10,
            streams_file=streams,
        ),
    )
    worker.rest.wait_state(name, "RUNNING", tasks=2)
    with reading(kafka_bootstrap, topic) as reader:
        reader.wait_for(100)
    streams.write_text("4")  # the connector notices and asks for new task configs
    worker.rest.wait_state(name, "RUNNING", tasks=4)

    def committed() -> dict[str, int]:
        r = worker.rest.call("GET", f"/connectors/{name}/offsets", 200)
        return {o["partition"]["partition"]: o["offset"]["seq"] for o in r.json()["offsets"]}

    # The worker commits a record's offset only once Kafka acknowledged it and every record
    # before it: every stream committed up to its last record means all of them are written.
    last = {f"p{s}": 599 for s in range(4)}
    wait_until(lambda: committed() == last, 60, 0.1, lambda: f"offsets {last}: {committed()}")
    # Judged by reading the topic once the tasks are done. A reader that follows the topic
    # while the 4 producers write can be skipped past a batch by the embedded broker (the
    # batch is there for the next reader; tests/stress/fetch_gap.py shows it with raw clients).
    with reading(kafka_bootstrap, topic) as reader:
        try:
            reader.wait_for(4 * 600, timeout=20)
        except AssertionError as exc:  # name the missing records
            missing = sorted((all_keys(4, 600) - reader.keys()).elements())
            raise AssertionError(f"{exc}; missing keys: {missing[:20]}") from exc
        settled(reader, quiet=0.3)
        assert reader.keys() == all_keys(4, 600)


def _assignments(events: list[dict[str, Any]]) -> dict[str, set[tuple[str, int]]]:
    """Each sink task instance's current partitions, replaying its open/close calls."""
    out: dict[str, set[tuple[str, int]]] = {}
    for e in events:
        current = out.setdefault(e["instance"], set())
        parts = {(t, p) for t, p in e["partitions"]}
        if e["event"] == "open":
            current |= parts
        elif e["event"] in ("close", "stop"):
            current -= parts
            if e["event"] == "stop":
                current.clear()
    return out


def test_sink_rebalance_calls_close_and_open(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    worker = connect()
    topic = make_topic(kafka_bootstrap, partitions=4)
    store = tmp_path / "store"
    source, sink = unique("gen"), unique("rec")
    worker.rest.create(
        source, generator_config(topic, partitions=2, batch_size=10, poll_interval_ms=20)
    )
    sink_config = recording_config(topic, store, tasks_max=1)
    worker.rest.create(sink, sink_config)
    everything = {(topic, p) for p in range(4)}

    def one_owner() -> bool:
        live = [a for a in _assignments(read_store(store).events).values() if a]
        return live == [everything]

    wait_until(one_owner, 30, 0.1, lambda: str(read_store(store).events))
    first = read_store(store)
    wait_until(lambda: len(read_store(store).records) > 50, 30)

    worker.rest.put_config(sink, {**sink_config, "tasks.max": "2"})
    worker.rest.wait_state(sink, "RUNNING", tasks=2)

    def two_owners() -> list[set[tuple[str, int]]] | None:
        live = [a for a in _assignments(read_store(store).events).values() if a]
        if len(live) == 2 and live[0] | live[1] == everything and not live[0] & live[1]:
            return live
        return None

    wait_until(two_owners, 40, 0.1, lambda: str(read_store(store).events))
    events = read_store(store).events
    [old] = {e["instance"] for e in first.events}
    closed = [e for e in events if e["instance"] == old and e["event"] == "close"]
    assert closed, "the first task's partitions were never closed"
    assert {tuple(p) for p in closed[-1]["partitions"]} == everything

    # the flow goes on through the new tasks, with nothing lost
    worker.rest.call("PUT", f"/connectors/{source}/pause", 202)
    worker.rest.wait_state(source, "PAUSED", tasks=1)
    with reading(kafka_bootstrap, topic) as reader:
        settled(reader)
        keys = reader.keys()
    store_keys = wait_store_keys(store, keys).keys()
    assert set(store_keys) == set(keys)


def test_sink_scaled_down_leaves_the_group_one_task_at_a_time(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    """tasks.max 2 -> 1, twice: the one new task gets every partition each time.

    The old tasks leave the consumer group one at a time: the one that stays takes over every
    partition before it leaves too (each instance records its own calls, in order). Had both
    left in the same rebalance, the embedded Tansu would keep the departed leader and never
    assign the partitions to the new task.
    """
    worker = connect()
    topic = make_topic(kafka_bootstrap, partitions=4)
    store = tmp_path / "store"
    sink = unique("rec")
    sink_config = recording_config(topic, store, tasks_max=2)
    everything = {(topic, p) for p in range(4)}

    def owners() -> list[set[tuple[str, int]]]:
        return [a for a in _assignments(read_store(store).events).values() if a]

    worker.rest.create(sink, sink_config)
    for cycle in (1, 2):
        if cycle > 1:
            worker.rest.put_config(sink, sink_config)  # back to two tasks
        wait_until(lambda: len(owners()) == 2, 40, 0.1, lambda: str(owners()))
        before = {e["instance"] for e in read_store(store).events}
        worker.rest.put_config(sink, {**sink_config, "tasks.max": "1"})
        wait_until(lambda: owners() == [everything], 40, 0.1, lambda: str(owners()))
        history = [e for e in read_store(store).events if e["instance"] in before]
        stopped = {e["instance"] for e in history if e["event"] == "stop"}
        assert stopped == before, f"cycle {cycle}: not every old task stopped: {history}"
        took_over = [
            e
            for e in history
            if e["event"] == "open" and {tuple(p) for p in e["partitions"]} == everything
        ]
        assert took_over, (
            f"cycle {cycle}: no old task took over every partition before it stopped (they "
            f"left the group together): {history}"
        )
