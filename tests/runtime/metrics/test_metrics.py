"""Kafka Connect's metrics: the registry's window statistics, and the values a real embedded
worker reports on the embedded broker (its API and ``GET /metrics``) as records flow."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from confluent_kafka import Producer
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

from cdk.kafka import create_topics
from cdk.runtime import EmbeddedWorker
from cdk.runtime._status import ConnectorTaskId, State
from cdk.runtime.metrics import (
    CONNECTOR_GROUP,
    ERROR_GROUP,
    SINK_TASK_GROUP,
    SOURCE_TASK_GROUP,
    TASK_GROUP,
    WORKER_GROUP,
    ConnectMetrics,
    MetricsSnapshot,
    SampledStat,
)
from cdk.runtime.metrics._prometheus import prometheus_name
from tests._wait import wait_until
from tests.connectors import GENERATOR

COUNTING = "tests.connectors.counting.CountingSinkConnector"
SECRET = "s3cr3t-Pa55word-never-shown"


# -- the window statistics (a fake clock) --------------------------------------------------------
def test_rate_counts_over_at_least_one_full_window_as_kafka() -> None:
    stat = SampledStat(window_s=30.0, num_samples=2)
    assert stat.rate(100.0) == 0.0
    assert math.isnan(stat.avg(100.0))
    assert math.isnan(stat.max(100.0))
    stat.record(300, 100.0)
    stat.record(300, 105.0)
    # 5 s of data, padded to num.samples - 1 = 1 full window: 600 / 35 s
    assert stat.rate(105.0) == pytest.approx(600 / 35.0)
    assert stat.avg(105.0) == 300
    assert stat.max(105.0) == 300
    assert stat.total == 600


def test_samples_roll_and_expire() -> None:
    stat = SampledStat(window_s=30.0, num_samples=2)
    stat.record(10, 0.0)
    stat.record(50, 31.0)  # a new sample: the first is one window old
    assert stat.max(40.0) == 50
    assert stat.avg(40.0) == 30
    assert stat.rate(40.0) == pytest.approx(60 / 40.0)
    stat.record(20, 62.0)  # a third sample: the first is dropped
    assert stat.avg(62.0) == 35
    assert math.isnan(stat.max(200.0))  # every sample older than 2 windows: nothing live
    assert stat.rate(200.0) == 0.0
    assert stat.total == 80  # totals are cumulative


def test_task_state_ratios_and_commit_fractions() -> None:
    now = [0.0]
    metrics = ConnectMetrics(30_000, 2, clock=lambda: now[0])
    task = metrics.task_metrics(ConnectorTaskId("c", 0), "sink")
    task.task.record_state(State.RUNNING)
    now[0] = 3.0
    task.task.record_state(State.PAUSED)
    now[0] = 4.0
    task.task.record_commit(0.002, success=True)
    task.task.record_commit(0.010, success=False)
    snapshot = metrics.snapshot()
    tags = {"connector": "c", "task": 0}
    assert snapshot.value(TASK_GROUP, "running-ratio", **tags) == pytest.approx(0.75)
    assert snapshot.value(TASK_GROUP, "pause-ratio", **tags) == pytest.approx(0.25)
    assert snapshot.value(TASK_GROUP, "status", **tags) == "paused"
    assert snapshot.value(TASK_GROUP, "offset-commit-success-percentage", **tags) == 0.5
    assert snapshot.value(TASK_GROUP, "offset-commit-failure-percentage", **tags) == 0.5
    # only successful commits are timed, as Kafka's
    assert snapshot.value(TASK_GROUP, "offset-commit-max-time-ms", **tags) == pytest.approx(2.0)
    with pytest.raises(KeyError, match="No metric sink-task-metrics/nope"):
        snapshot.value(SINK_TASK_GROUP, "nope", **tags)


# -- a real worker on the embedded broker --------------------------------------------------------
@pytest.fixture
def worker(kafka_bootstrap: str) -> Iterator[EmbeddedWorker]:
    props = {
        "bootstrap.servers": kafka_bootstrap,
        "key.converter": "JsonConverter",
        "value.converter": "JsonConverter",
        "listeners": "http://127.0.0.1:0",
        "offset.flush.interval.ms": "200",
        "consumer.session.timeout.ms": "6000",
    }
    with EmbeddedWorker(props) as running:
        yield running


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _value(worker: EmbeddedWorker, group: str, name: str, **tags: Any) -> Any:
    try:
        return worker.metrics().value(group, name, **tags)
    except KeyError:
        return None


def _await_value(
    worker: EmbeddedWorker, group: str, name: str, expected: Any, timeout: float = 60.0, **tags: Any
) -> MetricsSnapshot:
    wait_until(
        lambda: _value(worker, group, name, **tags) == expected,
        timeout=timeout,
        message=lambda: (
            f"{group}/{name} {tags} == {expected!r} (is {_value(worker, group, name, **tags)!r})"
        ),
    )
    return worker.metrics()


def _start_source(worker: EmbeddedWorker, name: str, topic: str, **extra: str) -> None:
    worker.herder.create_connector(
        name,
        {
            "connector.class": GENERATOR,
            "topic": topic,
            "records": "600",  # per stream
            "partitions": "2",
            "batch.size": "100",
            "tasks.max": "1",
            "generator.secret": SECRET,
            **extra,
        },
    )


def test_records_move_the_source_and_sink_metrics(
    worker: EmbeddedWorker, kafka_bootstrap: str
) -> None:
    topic = _name("metrics")
    create_topics(kafka_bootstrap, [topic], partitions=1)
    source, sink = _name("src"), _name("sink")
    _start_source(worker, source, topic)
    src = {"connector": source, "task": 0}
    snapshot = _await_value(worker, SOURCE_TASK_GROUP, "source-record-write-total", 1200, **src)
    assert snapshot.value(SOURCE_TASK_GROUP, "source-record-poll-total", **src) == 1200
    assert snapshot.value(SOURCE_TASK_GROUP, "source-record-active-count", **src) == 0
    assert snapshot.value(SOURCE_TASK_GROUP, "source-record-write-rate", **src) > 0
    assert snapshot.value(SOURCE_TASK_GROUP, "poll-batch-max-time-ms", **src) >= 0
    # two streams of 100 per poll: batches of 200
    assert snapshot.value(TASK_GROUP, "batch-size-max", **src) == 200
    assert snapshot.value(TASK_GROUP, "status", **src) == "running"
    assert snapshot.value(TASK_GROUP, "running-ratio", **src) > 0.5

    worker.herder.create_connector(
        sink, {"connector.class": COUNTING, "topics": topic, "tasks.max": "1"}
    )
    snk = {"connector": sink, "task": 0}
    snapshot = _await_value(worker, SINK_TASK_GROUP, "sink-record-send-total", 1200, **snk)
    assert snapshot.value(SINK_TASK_GROUP, "sink-record-read-total", **snk) == 1200
    assert snapshot.value(SINK_TASK_GROUP, "partition-count", **snk) == 1
    assert snapshot.value(SINK_TASK_GROUP, "sink-record-read-rate", **snk) > 0
    assert not math.isnan(snapshot.value(SINK_TASK_GROUP, "put-batch-avg-time-ms", **snk))
    assert snapshot.value(TASK_GROUP, "batch-size-max", **snk) <= 500  # max.poll.records
    # offsets are committed every 200 ms: the commits complete and nothing stays active
    _await_value(worker, SINK_TASK_GROUP, "sink-record-active-count", 0, **snk)
    snapshot = wait_until(
        lambda: (
            (s := worker.metrics()).value(SINK_TASK_GROUP, "offset-commit-completion-total", **snk)
            >= 1
            and s
        ),
        message="a completed sink offset commit",
    )
    assert snapshot.value(SINK_TASK_GROUP, "offset-commit-seq-no", **snk) >= 1
    assert snapshot.value(TASK_GROUP, "offset-commit-success-percentage", **snk) > 0
    assert snapshot.value(TASK_GROUP, "offset-commit-success-percentage", **src) > 0
    assert snapshot.value(ERROR_GROUP, "total-record-errors", **snk) == 0

    assert snapshot.value(WORKER_GROUP, "connector-count") == 2
    assert snapshot.value(WORKER_GROUP, "task-count") == 2
    assert snapshot.value(WORKER_GROUP, "connector-startup-success-total") == 2
    assert snapshot.value(WORKER_GROUP, "task-startup-success-total") == 2
    assert snapshot.value(WORKER_GROUP, "task-startup-success-percentage") == 1.0
    for name, kind in ((source, "source"), (sink, "sink")):
        assert snapshot.value(CONNECTOR_GROUP, "status", connector=name) == "running"
        assert snapshot.value(CONNECTOR_GROUP, "connector-type", connector=name) == kind
        assert snapshot.value(WORKER_GROUP, "connector-running-task-count", connector=name) == 1
    assert snapshot.value(CONNECTOR_GROUP, "connector-class", connector=sink) == (
        "tests.connectors.counting.CountingSinkConnector"
    )
    assert snapshot.value(CONNECTOR_GROUP, "connector-version", connector=sink) == "1.0.0-test"


def test_task_status_counts_follow_pause_resume_and_failure(
    worker: EmbeddedWorker, kafka_bootstrap: str
) -> None:
    topic = _name("metrics")
    create_topics(kafka_bootstrap, [topic], partitions=1)
    source = _name("src")
    _start_source(worker, source, topic, **{"records": "-1", "poll.interval.ms": "50"})
    count = {"connector": source}
    _await_value(worker, WORKER_GROUP, "connector-running-task-count", 1, **count)

    worker.herder.pause_connector(source)
    snapshot = _await_value(worker, WORKER_GROUP, "connector-paused-task-count", 1, **count)
    assert snapshot.value(WORKER_GROUP, "connector-running-task-count", **count) == 0
    assert snapshot.value(WORKER_GROUP, "connector-total-task-count", **count) == 1
    assert snapshot.value(TASK_GROUP, "status", connector=source, task=0) == "paused"
    assert snapshot.value(CONNECTOR_GROUP, "status", connector=source) == "paused"
    assert snapshot.value(TASK_GROUP, "pause-ratio", connector=source, task=0) > 0

    worker.herder.resume_connector(source)
    snapshot = _await_value(worker, WORKER_GROUP, "connector-running-task-count", 1, **count)
    assert snapshot.value(WORKER_GROUP, "connector-paused-task-count", **count) == 0

    failing = _name("fail")
    _start_source(worker, failing, topic, **{"records": "-1", "fail.after": "10"})
    snapshot = _await_value(
        worker, WORKER_GROUP, "connector-failed-task-count", 1, connector=failing
    )
    assert snapshot.value(WORKER_GROUP, "connector-running-task-count", connector=failing) == 0
    assert snapshot.value(TASK_GROUP, "status", connector=failing, task=0) == "failed"
    # a failed task keeps its metrics (as Kafka's) until it is restarted or removed
    assert snapshot.value(WORKER_GROUP, "task-count") == 2


def test_error_metrics_count_each_bad_record(worker: EmbeddedWorker, kafka_bootstrap: str) -> None:
    topic = _name("metrics-bad")
    create_topics(kafka_bootstrap, [topic], partitions=1)
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    good = b'{"schema":{"type":"string","optional":false},"payload":"ok"}'
    for index in range(20):
        producer.produce(topic, good if index % 4 else b"not json {")
    assert producer.flush(30) == 0
    sink = _name("sink")
    worker.herder.create_connector(
        sink,
        {
            "connector.class": COUNTING,
            "topics": topic,
            "errors.tolerance": "all",
            "errors.log.enable": "true",
        },
    )
    tags = {"connector": sink, "task": 0}
    _await_value(worker, SINK_TASK_GROUP, "sink-record-read-total", 20, **tags)
    # the batch's sends are counted when put() returns, after its reads: wait for them too
    snapshot = _await_value(worker, SINK_TASK_GROUP, "sink-record-send-total", 15, **tags)
    assert snapshot.value(SINK_TASK_GROUP, "sink-record-read-total", **tags) == 20
    assert snapshot.value(ERROR_GROUP, "total-record-errors", **tags) == 5
    assert snapshot.value(ERROR_GROUP, "total-record-failures", **tags) == 5
    assert snapshot.value(ERROR_GROUP, "total-records-skipped", **tags) == 5
    assert snapshot.value(ERROR_GROUP, "total-errors-logged", **tags) == 5
    assert snapshot.value(ERROR_GROUP, "deadletterqueue-produce-requests", **tags) == 0
    assert snapshot.value(ERROR_GROUP, "last-error-timestamp", **tags) > 1.7e12


def test_prometheus_endpoint(worker: EmbeddedWorker, kafka_bootstrap: str) -> None:
    topic = _name("metrics")
    create_topics(kafka_bootstrap, [topic], partitions=1)
    source = _name("src")
    _start_source(worker, source, topic)
    _await_value(
        worker, SOURCE_TASK_GROUP, "source-record-write-total", 1200, connector=source, task=0
    )
    assert worker.rest_url is not None
    with httpx.Client(base_url=worker.rest_url, timeout=30) as http:
        response = http.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=")
        text = response.text
        open_response = http.get(
            "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
        )
        config = http.get(f"/connectors/{source}/config").json()

    # the secret is set (and hidden by the REST API), and never reaches the metrics
    assert config["generator.secret"] != SECRET
    assert SECRET not in text
    assert SECRET not in open_response.text

    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    labels = (("connector", source), ("task", "0"))
    name = prometheus_name(SOURCE_TASK_GROUP, "source-record-write-total")
    assert name == "kafka_connect_source_task_metrics_source_record_write_total"
    assert samples[(name, labels)] == 1200
    rate = "kafka_connect_source_task_metrics_source_record_poll_rate"
    assert samples[(rate, labels)] > 0
    status = (("connector", source), ("status", "running"))
    assert samples[("kafka_connect_connector_metrics_status", status)] == 1
    assert samples[("kafka_connect_connect_worker_metrics_connector_count", ())] == 1
    task_status = tuple(sorted((*labels, ("status", "running"))))
    assert samples[("kafka_connect_connector_task_metrics_status", task_status)] == 1
    for _, label_pairs in samples:
        assert all(SECRET not in value for _, value in label_pairs)

    assert open_response.status_code == 200
    assert open_response.headers["content-type"].startswith("application/openmetrics-text")
    families = {f.name: f for f in openmetrics_families(open_response.text)}
    counter = families["kafka_connect_source_task_metrics_source_record_write"]
    assert counter.type == "counter"
    assert [s.value for s in counter.samples if s.name.endswith("_total")] == [1200]


def test_the_reference_page_lists_every_metric() -> None:
    from pathlib import Path

    from cdk.runtime.metrics._descriptions import _DESCRIPTIONS

    page = (Path(__file__).parents[3] / "docs" / "reference" / "metrics.rst").read_text()
    missing = sorted(
        f"{group}/{name}" for group, name in _DESCRIPTIONS if f"``{name}``" not in page
    )
    assert not missing, f"docs/reference/metrics.rst does not list {missing}"
    for group in {group for group, _ in _DESCRIPTIONS}:
        assert f"``{group}``" in page


def test_the_worker_window_settings_reach_the_registry(kafka_bootstrap: str) -> None:
    from cdk.errors import ConfigException

    props = {
        "bootstrap.servers": kafka_bootstrap,
        "key.converter": "JsonConverter",
        "value.converter": "JsonConverter",
        "metrics.sample.window.ms": "5000",
        "metrics.num.samples": "3",
    }
    with EmbeddedWorker(props, rest=False, cluster_id_timeout=0) as running:
        assert running.worker.metrics.window_s == 5.0
        assert running.worker.metrics.num_samples == 3
        snapshot = running.metrics()
        assert snapshot.value(WORKER_GROUP, "connector-count") == 0
        # Kafka's frequencies are 0 when nothing was attempted
        assert snapshot.value(WORKER_GROUP, "connector-startup-success-percentage") == 0.0
    with pytest.raises(ConfigException, match=r"metrics\.num\.samples"):
        EmbeddedWorker({**props, "metrics.num.samples": "0"})


def test_records_dropped_by_a_transformation_are_polled_not_written(
    worker: EmbeddedWorker, kafka_bootstrap: str
) -> None:
    topic = _name("metrics")
    create_topics(kafka_bootstrap, [topic], partitions=1)
    source = _name("src")
    _start_source(
        worker,
        source,
        topic,
        **{
            "transforms": "drop",
            "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.drop.predicate": "stream",
            "predicates": "stream",
            "predicates.stream.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
            "predicates.stream.name": "gen.stream",
        },
    )
    tags = {"connector": source, "task": 0}
    snapshot = _await_value(worker, SOURCE_TASK_GROUP, "source-record-poll-total", 1200, **tags)
    snapshot = _await_value(worker, SOURCE_TASK_GROUP, "source-record-active-count", 0, **tags)
    assert snapshot.value(SOURCE_TASK_GROUP, "source-record-write-total", **tags) == 0
    assert snapshot.value(ERROR_GROUP, "total-records-skipped", **tags) == 0
