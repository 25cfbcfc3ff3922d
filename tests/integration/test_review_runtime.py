"""Runtime behaviour a connector author relies on (hangs, topics.regex, secrets).

The small connectors below are loaded by importable class path
(``tests.integration.test_review_runtime.<Class>``); their hooks block on module-level events so
that a test can make ``start()``/``stop()`` hang and release them afterwards.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Producer

from cdk.api import (
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    TopicPartition,
)
from cdk.config import ConfigDef, Importance, Type
from cdk.kafka import create_topics
from cdk.runtime.standalone._worker import EmbeddedWorker
from tests._wait import wait_until

MOD = __name__
JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"

#: Released by the tests' ``finally`` blocks so hung hooks end.
RELEASE = threading.Event()
STOP_ENTERED = threading.Event()
START_ENTERED = threading.Event()

SINK_PUT: list[tuple[str, int]] = []
SINK_OPENED: set[TopicPartition] = set()


def _unique(prefix: str) -> str:
    import uuid

    return f"{prefix}-{uuid.uuid4().hex[:10]}"


# ---------------------------------------------------------------------------------------- tasks
class IdleSourceTask(SourceTask):
    """Emits nothing; poll returns quickly."""

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def poll(self) -> list[SourceRecord] | None:
        time.sleep(0.02)
        return None

    def stop(self) -> None:
        pass


class HangingStopSourceTask(IdleSourceTask):
    """``stop()`` blocks until the test releases it (a badly behaved connector)."""

    def stop(self) -> None:
        STOP_ENTERED.set()
        RELEASE.wait(60)


class BlockingPollSourceTask(IdleSourceTask):
    """``poll()`` blocks until released; ``stop()`` does not unblock it."""

    def poll(self) -> list[SourceRecord] | None:
        START_ENTERED.set()
        RELEASE.wait(60)
        return None


class _Plain:
    """The connector methods the small test connectors share; ``task`` names the task class."""

    task: type[Task] = IdleSourceTask

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[Task]:
        return self.task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()

    def version(self) -> str:
        return "1.0"


class _Source(_Plain, SourceConnector):
    pass


class HangingStopTaskSource(_Source):
    task = HangingStopSourceTask


class BlockingPollSource(_Source):
    task = BlockingPollSourceTask


class HangingConnectorStopSource(_Source):
    """The connector's own ``stop()`` hangs."""

    def stop(self) -> None:
        STOP_ENTERED.set()
        RELEASE.wait(60)


class HangingConnectorStartSource(_Source):
    """The connector's ``start()`` hangs (e.g. waiting on an unreachable external system)."""

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        START_ENTERED.set()
        RELEASE.wait(60)


SECRET_CONFIG = (
    ConfigDef()
    .define("db.user", Type.STRING, "u", importance=Importance.HIGH, documentation="User.")
    .define("db.password", Type.PASSWORD, importance=Importance.HIGH, documentation="Password.")
)


class SecretSource(_Source):
    """A source with a PASSWORD setting; its task configs carry the secret."""

    def config(self) -> ConfigDef:
        return SECRET_CONFIG


class RecordingSinkTask(SinkTask):
    """Records which partitions it was opened with and which records it received."""

    def start(self, props: dict[str, str]) -> None:
        pass

    def open(self, partitions: Any) -> None:
        SINK_OPENED.update(partitions)

    def put(self, records: Any) -> None:
        for record in records:
            assert isinstance(record, SinkRecord)
            SINK_PUT.append((record.topic, record.kafka_offset))

    def stop(self) -> None:
        pass


class RecordingSink(_Plain, SinkConnector):
    task = RecordingSinkTask


# -------------------------------------------------------------------------------------- fixtures
@pytest.fixture
def events() -> Iterator[None]:
    RELEASE.clear()
    STOP_ENTERED.clear()
    START_ENTERED.clear()
    SINK_PUT.clear()
    SINK_OPENED.clear()
    try:
        yield
    finally:
        RELEASE.set()


def _worker(bootstrap: str, tmp_path: Path, **extra: str) -> EmbeddedWorker:
    props = {
        "bootstrap.servers": bootstrap,
        "key.converter": STRING,
        "value.converter": STRING,
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "offset.flush.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
        "task.shutdown.graceful.timeout.ms": "1000",
        "consumer.session.timeout.ms": "6000",
        "consumer.heartbeat.interval.ms": "500",
        **extra,
    }
    return EmbeddedWorker(props)


@pytest.fixture
def connect(kafka_bootstrap: str, tmp_path: Path, events: None) -> Iterator[EmbeddedWorker]:
    worker = _worker(kafka_bootstrap, tmp_path).start()
    try:
        yield worker
    finally:
        RELEASE.set()
        worker.stop()


def _client(worker: EmbeddedWorker, timeout: float = 6.0) -> httpx.Client:
    assert worker.rest_url is not None
    return httpx.Client(base_url=worker.rest_url, timeout=timeout)


def _wait_task_running(http: httpx.Client, name: str) -> None:
    def running() -> bool:
        r = http.get(f"/connectors/{name}/status")
        if r.status_code != 200:
            return False
        body = r.json()
        return body["connector"]["state"] == "RUNNING" and [t["state"] for t in body["tasks"]] == [
            "RUNNING"
        ]

    wait_until(running, 10, 0.05, f"{name} and its task RUNNING")


# ------------------------------------------------------------------------------------ hang tests
def test_hanging_source_task_stop_does_not_block_delete(connect: EmbeddedWorker) -> None:
    """Kafka calls SourceTask.stop() on the task's own thread (AbstractWorkerSourceTask.close),
    so a stop() that hangs is bounded by task.shutdown.graceful.timeout.ms; DELETE returns."""
    name = _unique("hang-stop")
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={"name": name, "config": {"connector.class": f"{MOD}.HangingStopTaskSource"}},
        )
        assert r.status_code == 201, r.text
        _wait_task_running(http, name)
        started = time.monotonic()
        try:
            r = http.delete(f"/connectors/{name}")
        except httpx.TimeoutException:
            pytest.fail("DELETE hung: SourceTask.stop() blocks the herder (graceful timeout 1 s)")
        assert r.status_code == 204
        assert time.monotonic() - started < 5


def test_hanging_source_task_stop_does_not_block_other_requests(
    connect: EmbeddedWorker,
) -> None:
    """While a task is being stopped, other REST requests are still answered."""
    name = _unique("hang-stop2")
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={"name": name, "config": {"connector.class": f"{MOD}.HangingStopTaskSource"}},
        )
        assert r.status_code == 201, r.text
        _wait_task_running(http, name)
        deleter = threading.Thread(
            target=lambda: httpx.delete(f"{connect.rest_url}/connectors/{name}", timeout=70)
        )
        deleter.start()
        try:
            assert STOP_ENTERED.wait(5)
            try:
                r = http.get("/connectors", timeout=4)
            except httpx.TimeoutException:
                pytest.fail("GET /connectors hung while a SourceTask.stop() was hanging")
            assert r.status_code == 200
        finally:
            RELEASE.set()
            deleter.join(30)


def test_blocking_poll_does_not_block_delete(connect: EmbeddedWorker) -> None:
    """A poll() that never returns: DELETE still completes after the graceful timeout."""
    name = _unique("block-poll")
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={"name": name, "config": {"connector.class": f"{MOD}.BlockingPollSource"}},
        )
        assert r.status_code == 201, r.text
        assert START_ENTERED.wait(10)
        try:
            r = http.delete(f"/connectors/{name}")
        except httpx.TimeoutException:
            pytest.fail("DELETE hung while the task's poll() blocks")
        assert r.status_code == 204
        assert http.get(f"/connectors/{name}/status").status_code == 404


def test_hanging_connector_stop_does_not_block_delete(connect: EmbeddedWorker) -> None:
    """Kafka stops a connector on its own thread and waits at most 5 s
    (Worker.stopAndAwaitConnector); a Connector.stop() that hangs must not hang DELETE."""
    name = _unique("hang-cstop")
    connect.worker.connector_stop_timeout_s = 1.0  # Kafka's is 5 s; keep the test well inside
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={
                "name": name,
                "config": {"connector.class": f"{MOD}.HangingConnectorStopSource"},
            },
        )
        assert r.status_code == 201, r.text
        _wait_task_running(http, name)
        try:
            r = http.delete(f"/connectors/{name}")
        except httpx.TimeoutException:
            pytest.fail("DELETE hung: Connector.stop() runs on the herder with its lock held")
        assert r.status_code == 204


def test_hanging_connector_start_does_not_block_the_api(connect: EmbeddedWorker) -> None:
    """Kafka starts connectors on the worker's executor: while one connector's start() hangs,
    the REST API still answers GET /connectors and GET .../status."""
    name = _unique("hang-cstart")
    creator = threading.Thread(
        target=lambda: httpx.post(
            f"{connect.rest_url}/connectors",
            json={
                "name": name,
                "config": {"connector.class": f"{MOD}.HangingConnectorStartSource"},
            },
            timeout=70,
        )
    )
    creator.start()
    try:
        assert START_ENTERED.wait(10)
        with _client(connect, timeout=4.0) as http:
            try:
                r = http.get("/connectors")
            except httpx.TimeoutException:
                pytest.fail("GET /connectors hung while a Connector.start() was hanging")
            assert r.status_code == 200
    finally:
        RELEASE.set()
        creator.join(30)


# ------------------------------------------------------------------------------- topics.regex
def _produce(bootstrap: str, topic: str, value: bytes) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, value)
    assert producer.flush(10) == 0


def test_topics_regex_matches_whole_topic_names(
    connect: EmbeddedWorker, kafka_bootstrap: str
) -> None:
    """Kafka subscribes with Pattern.matcher(topic).matches(): topics.regex=X must not consume
    X-dlq (a sink would otherwise also read its own DLQ or unrelated topics)."""
    base = _unique("rx")
    other = f"{base}-dlq"
    create_topics(kafka_bootstrap, [base, other])
    _produce(kafka_bootstrap, other, b"must-not-be-read")
    _produce(kafka_bootstrap, base, b"wanted")
    name = _unique("regex-sink")
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={
                "name": name,
                "config": {"connector.class": f"{MOD}.RecordingSink", "topics.regex": base},
            },
        )
        assert r.status_code == 201, r.text
        wait_until(lambda: (base, 0) in SINK_PUT, 9, 0.05, f"the record of {base}")
    assert TopicPartition(other, 0) not in SINK_OPENED, SINK_OPENED
    assert all(topic == base for topic, _ in SINK_PUT), SINK_PUT


def test_topics_regex_java_syntax(connect: EmbeddedWorker, kafka_bootstrap: str) -> None:
    r"""A Java regex with \d (common in Kafka configs: topics.regex=orders-\d+) works."""
    base = _unique("rxd")
    topic = f"{base}-7"
    create_topics(kafka_bootstrap, [topic])
    _produce(kafka_bootstrap, topic, b"x")
    name = _unique("regex-sink-d")
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={
                "name": name,
                "config": {
                    "connector.class": f"{MOD}.RecordingSink",
                    "topics.regex": base + r"-\d+",
                },
            },
        )
        assert r.status_code == 201, r.text
        wait_until(lambda: (topic, 0) in SINK_PUT, 9, 0.05, f"the record of {topic}")


# ------------------------------------------------------------------------------------ secrets
def test_password_never_returned_or_logged(
    connect: EmbeddedWorker, caplog: pytest.LogCaptureFixture
) -> None:
    """PASSWORD values: hidden in every REST response and never in DEBUG logs."""
    secret = "s3cr3t-" + _unique("pw")
    name = _unique("secret")
    config = {"connector.class": f"{MOD}.SecretSource", "db.password": secret}
    caplog.set_level(logging.DEBUG)
    bodies: list[str] = []
    with _client(connect) as http:
        r = http.post("/connectors", json={"name": name, "config": config})
        assert r.status_code == 201, r.text
        bodies.append(r.text)
        _wait_task_running(http, name)
        for path in (
            f"/connectors/{name}",
            f"/connectors/{name}/config",
            f"/connectors/{name}/tasks",
            f"/connectors/{name}/tasks-config",
            f"/connectors/{name}/status",
            "/connectors?expand=info&expand=status",
        ):
            r = http.get(path)
            assert r.status_code == 200, (path, r.text)
            bodies.append(r.text)
        r = http.put(f"/connectors/{name}/config", json={**config, "db.user": "v"})
        bodies.append(r.text)
        r = http.patch(f"/connectors/{name}/config", json={"db.user": "w"})
        bodies.append(r.text)
        r = http.put(
            "/connector-plugins/SecretSource/config/validate",
            json={**config, "connector.class": f"{MOD}.SecretSource"},
        )
        bodies.append(r.text)
    for body in bodies:
        assert secret not in body, body
    leaked = [rec.getMessage() for rec in caplog.records if secret in rec.getMessage()]
    assert not leaked, leaked


# ----------------------------------------------------------------------- client config overrides
def test_java_producer_override_is_validated_or_runs(connect: EmbeddedWorker) -> None:
    """``producer.override.max.request.size`` is a valid Kafka producer setting. Kafka runs the
    connector; here the create must either reject it (400 naming the key) or the task runs —
    not accept it (201) and then fail every task at start."""
    name = _unique("override")
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={
                "name": name,
                "config": {
                    "connector.class": f"{MOD}._Source",
                    "producer.override.max.request.size": "2000000",
                },
            },
        )
        if r.status_code == 400:
            assert "max.request.size" in r.text
            return
        assert r.status_code == 201, r.text

        def settled() -> dict[str, Any] | None:
            body = http.get(f"/connectors/{name}/status").json()
            states = [t["state"] for t in body["tasks"]]
            return body if states and states[0] in ("RUNNING", "FAILED") else None

        body = wait_until(settled, 10, 0.05, "the task to settle")
        assert body["tasks"][0]["state"] == "RUNNING", body["tasks"][0].get("trace", "")[-600:]


def test_java_client_settings_are_translated() -> None:
    """Common Java client settings map to librdkafka's; Java-only ones are dropped by name."""
    from cdk.kafka._clients import translate_client_config

    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="alice" password="s3\\"cret";'
    )
    translated = translate_client_config(
        {
            "max.request.size": "2000000",
            "buffer.memory": "33554432",
            "fetch.max.wait.ms": "100",
            "sasl.jaas.config": jaas,
            "ssl.truststore.type": "PEM",  # read with the store, never passed on or warned about
            "max.block.ms": "1000",
            "acks": "all",
            "linger.ms": "5",
            "message.max.bytes": "3000000",  # a librdkafka setting given explicitly wins
        }
    )
    assert translated.config == {
        "message.max.bytes": "3000000",
        "queue.buffering.max.kbytes": 32768,
        "fetch.wait.max.ms": "100",
        "sasl.username": "alice",
        "sasl.password": 's3"cret',
        "acks": "all",
        "linger.ms": "5",
    }
    assert translated.dropped == ["max.block.ms"]
    pem = translate_client_config(
        {"ssl.truststore.location": "/ca.pem", "ssl.truststore.type": "PEM"}
    )
    assert pem.config == {"ssl.ca.location": "/ca.pem"}


def test_java_client_settings_create_working_clients(caplog: pytest.LogCaptureFixture) -> None:
    """The factories apply the translation and warn once, naming the ignored settings."""
    from cdk.kafka import new_consumer, new_producer

    caplog.set_level(logging.WARNING, logger="cdk.kafka")
    new_producer(
        {
            "bootstrap.servers": "127.0.0.1:1",
            "max.request.size": "2000000",
            "buffer.memory": "33554432",
            "max.block.ms": "100",
            "partitioner.class": "org.example.Partitioner",
        }
    )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "max.block.ms" in warnings[0]
    assert "partitioner.class" in warnings[0]
    consumer = new_consumer(
        {"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "fetch.max.wait.ms": "100"}
    )
    consumer.close()


def test_client_override_librdkafka_rejects_is_a_validation_error(
    connect: EmbeddedWorker,
) -> None:
    """An override the client library would reject fails validation (400 naming the key)
    instead of being accepted and failing every task."""
    name = _unique("bad-override")
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={
                "name": name,
                "config": {
                    "connector.class": f"{MOD}._Source",
                    "producer.override.acks": "sometimes",
                    "producer.override.no.such.setting": "1",
                    "producer.override.max.block.ms": "1000",  # Java-only: ignored, not an error
                },
            },
        )
        assert r.status_code == 400, r.text
        message = r.json()["message"]
        assert "2 error(s)" in message, message
        assert "acks" in message
        assert "no.such.setting" in message
        r = http.put(
            "/connector-plugins/_Source/config/validate",
            json={"connector.class": f"{MOD}._Source", "producer.override.acks": "sometimes"},
        )
        assert r.status_code == 200
        errors = {
            c["value"]["name"]: c["value"]["errors"] for c in r.json()["configs"] if c["value"]
        }
        assert errors["producer.override.acks"], errors


def test_worker_java_client_settings_run_tasks(
    kafka_bootstrap: str, tmp_path: Path, events: None
) -> None:
    """Worker-level ``producer.*``/``consumer.*`` Java settings do not fail the tasks."""
    topic = _unique("javaprops")
    create_topics(kafka_bootstrap, [topic])
    _produce(kafka_bootstrap, topic, b"v")
    worker = _worker(
        kafka_bootstrap,
        tmp_path,
        **{
            "producer.buffer.memory": "33554432",
            "producer.max.request.size": "2000000",
            "consumer.fetch.max.wait.ms": "100",
            "consumer.max.poll.records": "100",
        },
    ).start()
    try:
        with _client(worker) as http:
            source, sink = _unique("jsrc"), _unique("jsink")
            config = {"connector.class": f"{MOD}._Source"}
            r = http.post("/connectors", json={"name": source, "config": config})
            assert r.status_code == 201, r.text
            config = {"connector.class": f"{MOD}.RecordingSink", "topics": topic}
            r = http.post("/connectors", json={"name": sink, "config": config})
            assert r.status_code == 201, r.text
            _wait_task_running(http, source)
            wait_until(lambda: (topic, 0) in SINK_PUT, 9, 0.05, f"the record of {topic}")
    finally:
        worker.stop()


def test_hanging_connector_start_does_not_block_delete(connect: EmbeddedWorker) -> None:
    """A connector whose start() hangs can still be deleted: the worker gives up on it after
    its connector stop timeout and the name is free again."""
    connect.worker.connector_stop_timeout_s = 0.5
    name = _unique("hang-cstart-del")
    config = {"connector.class": f"{MOD}.HangingConnectorStartSource"}
    creator = threading.Thread(
        target=lambda: httpx.post(
            f"{connect.rest_url}/connectors", json={"name": name, "config": config}, timeout=70
        )
    )
    creator.start()
    try:
        assert START_ENTERED.wait(10)
        with _client(connect, timeout=4.0) as http:
            r = http.get(f"/connectors/{name}/status")
            assert r.status_code == 200, r.text
            assert r.json()["connector"]["state"] == "UNASSIGNED"
            r = http.delete(f"/connectors/{name}")
            assert r.status_code == 204, r.text
            assert http.get(f"/connectors/{name}/status").status_code == 404
    finally:
        RELEASE.set()
        creator.join(30)
    with _client(connect) as http:
        # the abandoned start returned late: it reports nothing for the deleted connector
        assert http.get(f"/connectors/{name}/status").status_code == 404
        assert name not in http.get("/connectors").json()


def test_create_times_out_while_start_hangs_then_tasks_start(connect: EmbeddedWorker) -> None:
    """As Kafka: a create whose Connector.start() does not return in the request timeout
    answers 500 "Request timed out"; once start() returns the tasks are started."""
    connect.herder.request_timeout_s = 0.5
    name = _unique("hang-cstart-timeout")
    config = {"connector.class": f"{MOD}.HangingConnectorStartSource"}
    with _client(connect) as http:
        r = http.post("/connectors", json={"name": name, "config": config})
        assert r.status_code == 500, r.text
        assert r.json()["message"] == "Request timed out"
        assert START_ENTERED.is_set()
        assert name in http.get("/connectors").json()
        RELEASE.set()
        _wait_task_running(http, name)


def test_cancelled_source_task_closes_its_producer(connect: EmbeddedWorker) -> None:
    """A task whose poll() never returns is cancelled after the graceful timeout and its
    producer is closed (Kafka closes it on cancel) although the thread is still blocked."""
    from cdk.runtime import ConnectorTaskId

    name = _unique("cancel-close")
    with _client(connect) as http:
        r = http.post(
            "/connectors",
            json={"name": name, "config": {"connector.class": f"{MOD}.BlockingPollSource"}},
        )
        assert r.status_code == 201, r.text
        assert START_ENTERED.wait(10)
        runner = connect.worker._tasks[ConnectorTaskId(name, 0)]
        producer = runner._producer
        assert producer is not None
        assert http.delete(f"/connectors/{name}").status_code == 204
    thread = runner.thread
    assert thread.is_alive()  # still blocked in poll(): abandoned

    def closer_done() -> bool:
        return not any(t.name == f"cdk-task-close-{name}-0" for t in threading.enumerate())

    wait_until(closer_done, 10, 0.05, "the producer of the cancelled task closed")
    with pytest.raises(RuntimeError, match="closed"):
        producer.poll(0)
    RELEASE.set()
    thread.join(10)
    assert not thread.is_alive()


def test_topics_regex_picks_up_new_topics(connect: EmbeddedWorker, kafka_bootstrap: str) -> None:
    """Topics created after the sink started are consumed once they match topics.regex."""
    base = _unique("rxnew")
    first, second = f"{base}-1", f"{base}-2"
    create_topics(kafka_bootstrap, [first])
    _produce(kafka_bootstrap, first, b"a")
    name = _unique("regex-sink-new")
    with _client(connect) as http:
        config = {"connector.class": f"{MOD}.RecordingSink", "topics.regex": base + r"-\d+"}
        r = http.post("/connectors", json={"name": name, "config": config})
        assert r.status_code == 201, r.text
        wait_until(lambda: (first, 0) in SINK_PUT, 9, 0.05, f"the record of {first}")
        create_topics(kafka_bootstrap, [second])
        _produce(kafka_bootstrap, second, b"b")
        wait_until(lambda: (second, 0) in SINK_PUT, 15, 0.05, f"the record of {second}")
