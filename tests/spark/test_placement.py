"""The Spark placement on local[4]: generations driven through the state topics, no herder.

Each test writes config-topic records as the distributed herder would (``_cluster_records``),
launches generations on a :class:`SparkPlacement` and checks what reached Kafka and the status
topic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from cdk.runtime._status import TargetState
from cdk.spark import SparkPlacement
from cdk.spark._session import build_session
from tests._wait import wait_until
from tests.integration._support import STRING, TopicReader, make_topic, unique
from tests.spark._support import Listener, StateTopics, worker_props

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("spark")]

GENERATOR_TASK = "tests.connectors.generator.GeneratorSourceTask"
KILLING_TASK = "tests.spark.connectors.KillingSourceTask"
STUCK_TASK = "tests.spark.connectors.StuckSourceTask"
RECORDING_TASK = "tests.connectors.recording.RecordingSinkTask"


class Cluster:
    """A placement on the shared session, its listener and its state topics."""

    def __init__(self, bootstrap: str, session: Any, **props: str) -> None:
        self.props = worker_props(bootstrap, **props)
        self.topics = StateTopics(self.props)
        self.listener = Listener()
        self.placement = SparkPlacement(self.props, session=session)
        self.placement.start(self.listener)

    def close(self) -> None:
        self.placement.close(30)
        self.topics.close()


@pytest.fixture(scope="module")
def local_session() -> Iterator[Any]:
    """A ``local[4]`` SparkSession (with task retries: ``local[4,8]``) for this module."""
    session = build_session({"spark.master": "local[4]", "spark.ui.enabled": "false"})
    yield session
    session.stop()


@pytest.fixture
def cluster(kafka_bootstrap: str, local_session: Any) -> Iterator[Cluster]:
    c = Cluster(kafka_bootstrap, local_session)
    yield c
    c.close()


def source_configs(
    name: str, topic: str, streams: list[list[str]], task_class: str = GENERATOR_TASK, **extra: str
) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The configs of a generator connector and its tasks; ``extra`` keys are the generator's
    with dots spelled as underscores (``batch_size="10"`` is ``batch.size``)."""
    connector = {
        "name": name,
        "connector.class": "tests.connectors.generator.GeneratorSourceConnector",
        "topic": topic,
        "tasks.max": str(len(streams)),
        "key.converter": STRING,
        **{key.replace("_", "."): value for key, value in extra.items()},
    }
    tasks = [
        {**connector, "task.class": task_class, "task.streams": ",".join(group)}
        for group in streams
    ]
    return connector, tasks


def drained(reader: TopicReader, timeout: float = 30.0) -> dict[str, Counter[int]]:
    """:func:`seqs_by_stream` once the reader has caught up: a poll of 1 s brings nothing new."""
    seen = [-1]

    def caught_up() -> bool:
        before, seen[0] = seen[0], reader.poll(1.0)
        return seen[0] == before

    wait_until(caught_up, timeout, message=lambda: f"the reader to catch up ({seen[0]} read)")
    return seqs_by_stream(reader)


def seqs_by_stream(reader: TopicReader) -> dict[str, Counter[int]]:
    reader.poll()
    out: dict[str, Counter[int]] = {}
    for message in reader.messages:
        stream, _, seq = (message.key or b"").decode().rpartition("-")
        out.setdefault(stream, Counter())[int(seq)] += 1
    return out


def test_source_generations_end_on_commit_and_resume_without_loss(cluster: Cluster) -> None:
    """Two tasks on two Spark tasks; a newer commit ends them gracefully; the next resumes."""
    topic = make_topic(cluster.topics.bootstrap, partitions=2, prefix="dspark")
    streams = [["p0"], ["p1"]]
    connector, tasks = source_configs("src", topic, streams, batch_size="10", poll_interval_ms="20")
    reader = TopicReader(cluster.topics.bootstrap, topic)
    gen1 = cluster.topics.commit_generation("src", connector, tasks)
    cluster.placement.launch(gen1)
    running = cluster.topics.wait_tasks("src", ["RUNNING", "RUNNING"])
    assert all(r.generation == gen1.generation for r in running.values())
    assert all(r.status.worker_id.endswith(":driver") for r in running.values())
    wait_until(
        lambda: all(len(seqs_by_stream(reader).get(s, ())) >= 200 for s in ("p0", "p1")),
        60,
        message="records of both streams in generation 1",
    )

    gen2 = cluster.topics.commit_generation("src", connector, tasks)
    assert cluster.placement.await_end("src", 30)
    assert cluster.listener.wait("src", gen1.generation) == {}
    cluster.topics.wait_tasks("src", ["UNASSIGNED", "UNASSIGNED"])
    # every record generation 1 sent, not just what the reader has fetched so far
    reached = {s: max(c) for s, c in drained(reader).items()}
    # generation 3 emits up to a bound past what generation 1 reached; generation 2, launched
    # after it was committed, reads that first and does not start
    bound = max(reached.values()) + 2000
    bounded = source_configs("src", topic, streams, records=str(bound), batch_size="200")
    gen3 = cluster.topics.commit_generation("src", *bounded)
    cluster.placement.launch(gen2)
    assert cluster.listener.wait("src", gen2.generation) == {}
    cluster.placement.launch(gen3)
    wait_until(
        lambda: all(len(seqs_by_stream(reader).get(s, ())) == bound for s in ("p0", "p1")),
        90,
        message=lambda: (
            f"every record of both streams up to {bound}: "
            + ", ".join(f"{s}: {len(c)} to {max(c)}" for s, c in seqs_by_stream(reader).items())
        ),
    )
    final = drained(reader)
    for stream in ("p0", "p1"):
        assert sorted(final[stream]) == list(range(bound)), stream
        assert max(final[stream].values()) == 1, f"duplicates in {stream}"
    cluster.topics.target_state("src", TargetState.STOPPED)
    assert cluster.placement.await_end("src", 30)
    assert cluster.listener.wait("src", gen3.generation) == {}


def test_pause_resume_and_delete(cluster: Cluster) -> None:
    """PAUSED/STARTED pause and resume the tasks in place; a connector tombstone ends them."""
    topic = make_topic(cluster.topics.bootstrap, prefix="dspark")
    connector, tasks = source_configs("pr", topic, [["p0"]], batch_size="10", poll_interval_ms="20")
    reader = TopicReader(cluster.topics.bootstrap, topic)
    gen = cluster.topics.commit_generation("pr", connector, tasks)
    cluster.placement.launch(gen)
    cluster.topics.wait_tasks("pr", ["RUNNING"])
    wait_until(lambda: reader.poll() > 50, 60)

    cluster.topics.target_state("pr", TargetState.PAUSED)
    cluster.topics.wait_tasks("pr", ["PAUSED"])
    paused_at = reader.poll(1.0)  # what was in flight when the task paused
    # nothing flows while paused: a record would show within this window (50 poll intervals)
    assert reader.poll(1.0) == paused_at

    cluster.topics.target_state("pr", TargetState.STARTED)
    cluster.topics.wait_tasks("pr", ["RUNNING"])
    wait_until(lambda: reader.poll() > paused_at + 50, 60, message="records after resume")

    cluster.topics.delete("pr")
    assert cluster.placement.await_end("pr", 30)
    assert cluster.listener.wait("pr", gen.generation) == {}
    cluster.topics.wait_tasks("pr", ["UNASSIGNED"])


def test_unassigned_connector_status_ends_generation(cluster: Cluster) -> None:
    """The herder's UNASSIGNED connector status (driver shutdown) ends the running tasks."""
    topic = make_topic(cluster.topics.bootstrap, prefix="dspark")
    connector, tasks = source_configs("un", topic, [["p0"]], batch_size="10", poll_interval_ms="50")
    gen = cluster.topics.commit_generation("un", connector, tasks)
    cluster.placement.launch(gen)
    cluster.topics.wait_tasks("un", ["RUNNING"])
    # an UNASSIGNED of an older generation (a previous driver's) does not end it
    cluster.topics.unassign("un", gen.generation - 1)
    cluster.topics.target_state("un", TargetState.PAUSED)
    cluster.topics.wait_tasks("un", ["PAUSED"])  # read after the stale UNASSIGNED: still there
    cluster.topics.unassign("un", gen.generation)
    assert cluster.placement.await_end("un", 30)
    assert cluster.listener.wait("un", gen.generation) == {}
    cluster.topics.wait_tasks("un", ["UNASSIGNED"])


def test_failed_task_stays_failed_and_the_other_keeps_running(cluster: Cluster) -> None:
    """A task whose connector code raises is FAILED with its trace; its sibling runs on."""
    topic = make_topic(cluster.topics.bootstrap, prefix="dspark")
    connector, tasks = source_configs(
        "fl", topic, [["p0"], ["p1"]], batch_size="10", poll_interval_ms="20"
    )
    tasks[0]["fail.after"] = "30"
    reader = TopicReader(cluster.topics.bootstrap, topic)
    gen = cluster.topics.commit_generation("fl", connector, tasks)
    cluster.placement.launch(gen)
    statuses = cluster.topics.wait_tasks("fl", ["FAILED", "RUNNING"])
    assert "generator: injected failure after 30 records" in statuses[0].status.trace
    before = len(seqs_by_stream(reader).get("p1", ()))
    wait_until(lambda: len(seqs_by_stream(reader).get("p1", ())) > before + 50, 60)
    cluster.topics.target_state("fl", TargetState.STOPPED)
    assert cluster.placement.await_end("fl", 30)
    assert cluster.listener.wait("fl", gen.generation) == {}
    # the failed task keeps its FAILED status; the stopped one ends UNASSIGNED
    cluster.topics.wait_tasks("fl", ["FAILED", "UNASSIGNED"])


def test_overrunning_task_is_cancelled_through_its_job_group(cluster: Cluster) -> None:
    """A task that ignores stop() is cancelled when await_end's timeout passes."""
    topic = make_topic(cluster.topics.bootstrap, prefix="dspark")
    connector, tasks = source_configs("stuck", topic, [["p0"]], task_class=STUCK_TASK)
    gen = cluster.topics.commit_generation("stuck", connector, tasks)
    cluster.placement.launch(gen)
    cluster.topics.wait_tasks("stuck", ["RUNNING"])
    cluster.topics.target_state("stuck", TargetState.STOPPED)
    assert cluster.placement.await_end("stuck", 2.0) is False
    failures = cluster.listener.wait("stuck", gen.generation)
    assert list(failures) == [0]
    assert "did not stop within 2000 ms" in failures[0]
    assert "cdk-stuck-" in failures[0]


def test_killed_python_worker_is_retried_and_resumes_from_committed_offsets(
    cluster: Cluster,
) -> None:
    """The Python worker of a task exits mid-stream; Spark retries it; no record is lost."""
    topic = make_topic(cluster.topics.bootstrap, prefix="dspark")
    records = 2000
    connector, tasks = source_configs(
        "kill",
        topic,
        [["p0"], ["p1"]],
        task_class=KILLING_TASK,
        records=str(records),
        batch_size="20",
        poll_interval_ms="10",
    )
    tasks[1]["kill.after"] = "300"
    reader = TopicReader(cluster.topics.bootstrap, topic)
    gen = cluster.topics.commit_generation("kill", connector, tasks)
    cluster.placement.launch(gen)
    wait_until(
        lambda: all(len(seqs_by_stream(reader).get(s, ())) == records for s in ("p0", "p1")),
        120,
        message="every record of both streams",
    )
    final = seqs_by_stream(reader)
    for stream in ("p0", "p1"):
        assert sorted(final[stream]) == list(range(records)), stream
    assert max(final["p0"].values()) == 1
    duplicates = sum(n - 1 for n in final["p1"].values())
    # at most what the killed attempt sent after its last offset commit (300 ms at ~2,000/s)
    assert duplicates <= 1000, duplicates
    cluster.topics.target_state("kill", TargetState.STOPPED)
    assert cluster.placement.await_end("kill", 30)
    assert cluster.listener.wait("kill", gen.generation) == {}


def test_exhausted_retries_fail_the_task_and_abort_its_job(cluster: Cluster) -> None:
    """A task whose Python worker dies on every attempt: the listener hears Spark's reason."""
    topic = make_topic(cluster.topics.bootstrap, prefix="dspark")
    connector, tasks = source_configs(
        "doomed", topic, [["p0"], ["p1"]], task_class=KILLING_TASK, poll_interval_ms="20"
    )
    tasks[1]["kill.always"] = "true"
    gen = cluster.topics.commit_generation("doomed", connector, tasks)
    cluster.placement.launch(gen)
    failures = cluster.listener.wait("doomed", gen.generation, timeout=180)
    assert sorted(failures) == [0, 1]
    assert "The Spark task failed 8 times (spark.task.maxFailures)" in failures[1]
    assert "Python worker exited unexpectedly" in failures[1]
    assert "was aborted because task 1 failed" in failures[0]
    assert cluster.placement.await_end("doomed", 1)


def test_sink_task_commits_its_consumer_offsets(cluster: Cluster, tmp_path: Any) -> None:
    """A sink generation consumes a topic, commits to connect-<name>, and ends on a commit."""
    from tests.connectors.recording import read_store

    bootstrap = cluster.topics.bootstrap
    topic = make_topic(bootstrap, prefix="dspark")
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(500):
        producer.produce(topic, key=f"k{i}".encode(), value=b'"v"')
    assert producer.flush(10) == 0
    name = unique("sink")
    connector = {
        "name": name,
        "connector.class": "tests.connectors.recording.RecordingSinkConnector",
        "topics": topic,
        "store.dir": str(tmp_path),
        "tasks.max": "1",
        "key.converter": STRING,
        "value.converter": STRING,
    }
    tasks = [{**connector, "task.class": RECORDING_TASK}]
    gen = cluster.topics.commit_generation(name, connector, tasks)
    cluster.placement.launch(gen)
    wait_until(lambda: len(read_store(tmp_path).records) >= 500, 60, message="500 records")
    cluster.topics.commit_generation(name, connector, [])
    assert cluster.placement.await_end(name, 30)
    assert cluster.listener.wait(name, gen.generation) == {}
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"connect-{name}"})
    try:
        committed = consumer.committed([TopicPartition(topic, 0)], timeout=10)
    finally:
        consumer.close()
    assert committed[0].offset == 500


def _held(store: Any) -> list[int]:
    """How many partitions each recording sink task instance holds now (open minus close)."""
    import json
    from pathlib import Path

    held = []
    for file in sorted(Path(store).glob("*.jsonl")):
        current: set[tuple[str, int]] = set()
        for line in file.read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            tps = {tuple(tp) for tp in event.get("partitions", ())}
            if event.get("event") == "open":
                current |= tps
            elif event.get("event") in ("close", "stop"):
                current -= tps if event.get("event") == "close" else current
        held.append(len(current))
    return sorted(held)


def test_two_sink_tasks_hand_over_to_the_next_generation(cluster: Cluster, tmp_path: Any) -> None:
    """Both tasks of a sink leave their group at a generation's end; the next one consumes."""
    from confluent_kafka import Producer

    from tests.connectors.recording import read_store

    bootstrap = cluster.topics.bootstrap
    topic = make_topic(bootstrap, partitions=2, prefix="dspark")
    producer = Producer({"bootstrap.servers": bootstrap})

    def produce(start: int, count: int) -> None:
        for i in range(start, start + count):
            producer.produce(topic, key=f"k{i}".encode(), value=b'"v"', partition=i % 2)
        assert producer.flush(10) == 0

    name = unique("sink2")
    connector = {
        "name": name,
        "connector.class": "tests.connectors.recording.RecordingSinkConnector",
        "topics": topic,
        "store.dir": str(tmp_path),
        "tasks.max": "2",
        "key.converter": STRING,
        "value.converter": STRING,
    }
    tasks = [{**connector, "task.class": RECORDING_TASK} for _ in range(2)]
    produce(0, 200)
    gen1 = cluster.topics.commit_generation(name, connector, tasks)
    cluster.placement.launch(gen1)
    wait_until(lambda: len(read_store(tmp_path).keys()) >= 200, 90, message="200 records")
    # the group is formed (one partition each) before the generation ends, as in production
    wait_until(lambda: _held(tmp_path) == [1, 1], 60, message=lambda: f"held {_held(tmp_path)}")
    gen2 = cluster.topics.commit_generation(name, connector, tasks)
    assert cluster.placement.await_end(name, 30)
    assert cluster.listener.wait(name, gen1.generation) == {}
    produce(200, 200)
    cluster.placement.launch(gen2)
    wait_until(
        lambda: len(read_store(tmp_path).keys()) >= 400,
        90,
        message=lambda: f"400 records, got {len(read_store(tmp_path).keys())}",
    )
    cluster.topics.target_state(name, TargetState.STOPPED)
    assert cluster.placement.await_end(name, 30)


def test_slots_count_the_executor_cores(cluster: Cluster) -> None:
    assert cluster.placement.slots() == 4
