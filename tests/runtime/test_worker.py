"""Worker: connectors and tasks started, paused, stopped and failed, against the embedded broker."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from cdk.api import SinkConnector, SinkRecord, SinkTask, SourceConnector, SourceRecord, SourceTask
from cdk.config import ConfigDef
from cdk.errors import ConnectException, NotFoundException
from cdk.kafka import create_topics
from cdk.runtime._status import ConnectorTaskId, State, StatusStore, TargetState
from cdk.runtime._worker import Worker
from cdk.runtime._worker_config import WorkerConfig
from cdk.runtime.isolation._plugins import Plugins
from cdk.runtime.storage import MemoryOffsetBackingStore, OffsetStorageReaderImpl
from tests._wait import wait_until

MODULE = __name__
RECEIVED: dict[str, list[Any]] = {}
_LOCK = threading.Lock()


class CountSourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.total = int(props["total"])
        self.partition = {"task": props["task.id"]}
        offset = self.context.offset_storage_reader.offset(self.partition)
        self.next = 0 if offset is None else int(offset["n"]) + 1
        self.stopping = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if props_fail.get(self.topic):
            raise RuntimeError("source task exploded")
        if self.next >= self.total:
            self.stopping.wait(0.02)
            return None
        end = min(self.total, self.next + 100)
        out = [
            SourceRecord(self.partition, {"n": n}, self.topic, None, None, None, None, n)
            for n in range(self.next, end)
        ]
        self.next = end
        return out

    def stop(self) -> None:
        self.stopping.set()


props_fail: dict[str, bool] = {}


#: Connector lifecycle calls by connector name ("initialize", "start", "stop").
CALLS: dict[str, list[str]] = {}


class CountSource(SourceConnector):
    initializations = 0

    def initialize(self, context: Any) -> None:
        super().initialize(context)
        self.initializations += 1

    def start(self, props: dict[str, str]) -> None:
        CALLS.setdefault(props["name"], []).append("start")
        if props.get("fail.start") == "true":
            raise ConnectException("cannot start")
        self.props = props

    def task_class(self) -> type[SourceTask]:
        return CountSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        count = int(self.props.get("generate.tasks", str(max_tasks)))
        return [
            {"topic": self.props["topic"], "total": self.props["total"], "task.id": str(i)}
            for i in range(count)
        ]

    def stop(self) -> None:
        CALLS.setdefault(self.props["name"], []).append("stop")
        if self.props.get("fail.stop") == "true":
            raise ConnectException("cannot stop")

    def config(self) -> ConfigDef:
        return ConfigDef()


class CollectSinkTask(SinkTask):
    def start(self, props: dict[str, str]) -> None:
        self.name = props["collect.into"]

    def put(self, records: Sequence[SinkRecord]) -> None:
        with _LOCK:
            RECEIVED.setdefault(self.name, []).extend(r.value for r in records)

    def stop(self) -> None:
        pass


class CollectSink(SinkConnector):
    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type[SinkTask]:
        return CollectSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"collect.into": self.props["collect.into"]} for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()


class Listener:
    def __init__(self) -> None:
        self.reconfigurations: list[str] = []
        self.errors: list[tuple[str, BaseException]] = []

    def request_task_reconfiguration(self, connector: str) -> None:
        self.reconfigurations.append(connector)

    def raise_error(self, connector: str, error: BaseException) -> None:
        self.errors.append((connector, error))


@pytest.fixture
def worker(kafka_bootstrap: str) -> Iterator[Worker]:
    config = WorkerConfig(
        {
            "bootstrap.servers": kafka_bootstrap,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "offset.flush.interval.ms": "200",
            "task.shutdown.graceful.timeout.ms": "10000",
        }
    )
    w = Worker(
        config, Plugins(), MemoryOffsetBackingStore(), StatusStore(), worker_id="127.0.0.1:8083"
    )
    w.start()
    yield w
    w.stop()


def source_props(name: str, topic: str, total: int = 200, **extra: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": f"{MODULE}:CountSource",
        "tasks.max": "2",
        "topic": topic,
        "total": str(total),
        **extra,
    }


def start_all(worker: Worker, name: str, props: dict[str, str], listener: Listener) -> None:
    worker.start_connector(name, props, listener, TargetState.STARTED)
    for i, task_props in enumerate(worker.connector_task_configs(name, props)):
        worker.start_task(ConnectorTaskId(name, i), props, task_props, TargetState.STARTED)


def state(worker: Worker, name: str, task: int | None = None) -> State | None:
    status = (
        worker.status.connector(name)
        if task is None
        else worker.status.task(ConnectorTaskId(name, task))
    )
    return None if status is None else status.state


def committed(worker: Worker, name: str, task: int) -> Any:
    reader = OffsetStorageReaderImpl(worker.offset_store, name)
    return reader.offset({"task": str(task)})


def test_source_and_sink_connectors_end_to_end(worker: Worker, kafka_bootstrap: str) -> None:
    topic = f"w-{uuid.uuid4().hex[:8]}"
    create_topics(kafka_bootstrap, [topic], partitions=2)
    listener = Listener()
    start_all(worker, "src", source_props("src", topic), listener)
    assert worker.connector_type("src") == "source"
    assert worker.is_running("src")
    assert state(worker, "src") is State.RUNNING
    wait_until(lambda: committed(worker, "src", 0) == {"n": 199}, message="task 0 offsets")
    wait_until(lambda: committed(worker, "src", 1) == {"n": 199}, message="task 1 offsets")
    assert state(worker, "src", 0) is State.RUNNING
    thread = worker.task_thread(ConnectorTaskId("src", 0))
    assert thread is not None
    assert thread.name == "cdk-task-src-0"

    into = uuid.uuid4().hex
    sink = {
        "name": "snk",
        "connector.class": f"{MODULE}:CollectSink",
        "tasks.max": "1",
        "topics": topic,
        "collect.into": into,
    }
    start_all(worker, "snk", sink, listener)
    assert worker.connector_type("snk") == "sink"
    wait_until(lambda: len(RECEIVED.get(into, [])) == 400, message="400 records in the sink")
    assert sorted(RECEIVED[into]) == sorted(list(range(200)) * 2)
    assert worker.task_ids() == {
        ConnectorTaskId("src", 0),
        ConnectorTaskId("src", 1),
        ConnectorTaskId("snk", 0),
    }
    worker.stop_tasks(worker.task_ids())
    assert worker.task_ids() == set()
    assert state(worker, "src", 0) is State.UNASSIGNED
    worker.stop_connector("src")
    assert "src" not in worker.connector_names()


def test_connector_task_configs_add_task_class_and_sink_topics(worker: Worker) -> None:
    listener = Listener()
    props = source_props("cfg", "t", tasks_max="3")
    props["tasks.max"] = "3"
    worker.start_connector("cfg", props, listener, TargetState.STARTED)
    configs = worker.connector_task_configs("cfg", props)
    assert len(configs) == 3
    assert {c["task.class"] for c in configs} == {f"{MODULE}.CountSourceTask"}
    sink = {
        "name": "cfgsink",
        "connector.class": f"{MODULE}:CollectSink",
        "tasks.max": "2",
        "topics.regex": "a.*",
        "collect.into": "x",
    }
    worker.start_connector("cfgsink", sink, listener, TargetState.STARTED)
    configs = worker.connector_task_configs("cfgsink", sink)
    assert [c["topics.regex"] for c in configs] == ["a.*", "a.*"]
    assert configs[0]["task.class"] == f"{MODULE}.CollectSinkTask"


def test_too_many_task_configs_fail_the_connector(worker: Worker) -> None:
    props = source_props("many", "t", generate_tasks="1")
    props["generate.tasks"] = "5"
    worker.start_connector("many", props, Listener(), TargetState.STARTED)
    with pytest.raises(ConnectException, match="failed to generate task configs"):
        worker.connector_task_configs("many", props)
    status = worker.status.connector("many")
    assert status is not None
    assert status.state is State.FAILED
    assert "has generated 5 tasks, which is greater than 2" in (status.trace or "")


def test_connector_start_failure_is_a_failed_status(worker: Worker) -> None:
    props = source_props("bad", "t")
    props["fail.start"] = "true"
    worker.start_connector("bad", props, Listener(), TargetState.STARTED)
    status = worker.status.connector("bad")
    assert status is not None
    assert status.state is State.FAILED
    assert "cannot start" in (status.trace or "")
    assert not worker.is_running("bad")
    unknown = source_props("unknown", "t")
    unknown["connector.class"] = "no.such.Connector"
    worker.start_connector("unknown", unknown, Listener(), TargetState.STARTED)
    assert state(worker, "unknown") is State.FAILED
    with pytest.raises(NotFoundException):
        worker.connector_type("nope")


def test_task_build_failure_is_a_failed_status(worker: Worker) -> None:
    props = source_props("badconv", "t", total=1)
    props["value.converter"] = "no.such.Converter"
    worker.start_connector("badconv", props, Listener(), TargetState.STARTED)
    task_props = worker.connector_task_configs("badconv", props)[0]
    worker.start_task(ConnectorTaskId("badconv", 0), props, task_props, TargetState.STARTED)
    status = worker.status.task(ConnectorTaskId("badconv", 0))
    assert status is not None
    assert status.state is State.FAILED
    assert "no.such.Converter" in (status.trace or "")
    assert worker.task_ids() == set()


def test_task_failure_reports_failed_with_trace(worker: Worker, kafka_bootstrap: str) -> None:
    topic = f"w-{uuid.uuid4().hex[:8]}"
    props_fail[topic] = True
    try:
        start_all(worker, "boom", source_props("boom", topic, tasks_max="1"), Listener())
        wait_until(lambda: state(worker, "boom", 0) is State.FAILED, message="task FAILED")
        trace = worker.status.task(ConnectorTaskId("boom", 0)).trace  # type: ignore[union-attr]
        assert "RuntimeError: source task exploded" in (trace or "")
    finally:
        props_fail.pop(topic)


def test_pause_resume_and_stop(worker: Worker, kafka_bootstrap: str) -> None:
    topic = f"w-{uuid.uuid4().hex[:8]}"
    props = source_props("pr", topic, total=10)
    start_all(worker, "pr", props, Listener())
    wait_until(lambda: state(worker, "pr", 1) is State.RUNNING, message="RUNNING")
    connector = worker._connectors["pr"].connector
    assert isinstance(connector, CountSource)
    assert CALLS["pr"] == ["start"]
    worker.set_target_state("pr", TargetState.PAUSED)
    assert state(worker, "pr") is State.PAUSED
    # As Kafka's WorkerConnector: pausing stops the connector instance; its tasks only pause.
    assert CALLS["pr"] == ["start", "stop"]
    assert not worker.is_running("pr")
    wait_until(
        lambda: state(worker, "pr", 0) is State.PAUSED and state(worker, "pr", 1) is State.PAUSED,
        message="tasks PAUSED",
    )
    worker.set_target_state("pr", TargetState.PAUSED)  # already paused: no second stop()
    assert CALLS["pr"] == ["start", "stop"]
    worker.set_target_state("pr", TargetState.STARTED)
    assert state(worker, "pr") is State.RUNNING
    # Resuming starts the same instance again, without a new initialize().
    assert CALLS["pr"] == ["start", "stop", "start"]
    assert worker._connectors["pr"].connector is connector
    assert connector.initializations == 1
    assert worker.is_running("pr")
    wait_until(lambda: state(worker, "pr", 0) is State.RUNNING, message="tasks RUNNING")
    worker.set_target_state("pr", TargetState.STOPPED)
    assert state(worker, "pr") is State.STOPPED
    assert CALLS["pr"] == ["start", "stop", "start", "stop"]
    assert worker.status.tasks("pr") == {}
    assert worker.task_ids() == set()
    assert not worker.is_running("pr")
    worker.set_target_state("pr", TargetState.STARTED)
    assert state(worker, "pr") is State.RUNNING
    assert worker.is_running("pr")


def test_stop_raising_while_pausing_fails_the_connector(worker: Worker) -> None:
    props = source_props("pausefail", "t", **{"fail.stop": "true"})
    worker.start_connector("pausefail", props, Listener(), TargetState.STARTED)
    worker.set_target_state("pausefail", TargetState.PAUSED)
    status = worker.status.connector("pausefail")
    assert status is not None
    assert status.state is State.FAILED
    assert "cannot stop" in (status.trace or "")
    worker.set_target_state("pausefail", TargetState.STARTED)  # a failed connector stays failed
    assert state(worker, "pausefail") is State.FAILED
    assert CALLS["pausefail"] == ["start", "stop"]


def test_stop_raising_while_stopping_still_stops(worker: Worker) -> None:
    props = source_props("stopfail", "t", **{"fail.stop": "true"})
    worker.start_connector("stopfail", props, Listener(), TargetState.STARTED)
    worker.set_target_state("stopfail", TargetState.STOPPED)
    assert state(worker, "stopfail") is State.STOPPED


def test_connector_context_calls_reach_the_listener(worker: Worker) -> None:
    listener = Listener()
    worker.start_connector("ctx", source_props("ctx", "t"), listener, TargetState.STARTED)
    connector = worker._connectors["ctx"].connector
    assert connector is not None
    connector.context.request_task_reconfiguration()
    assert listener.reconfigurations == ["ctx"]
    connector.context.raise_error(ValueError("broken input"))
    assert listener.errors[0][0] == "ctx"
    status = worker.status.connector("ctx")
    assert status is not None
    assert status.state is State.FAILED
    assert "ValueError: broken input" in (status.trace or "")


def test_paused_target_starts_tasks_paused(worker: Worker, kafka_bootstrap: str) -> None:
    topic = f"w-{uuid.uuid4().hex[:8]}"
    props = source_props("startpaused", topic, total=5)
    worker.start_connector("startpaused", props, Listener(), TargetState.PAUSED)
    assert state(worker, "startpaused") is State.PAUSED
    assert "startpaused" not in CALLS  # created paused: never started (Kafka: INIT -> PAUSED)
    assert not worker.is_running("startpaused")
    with pytest.raises(ConnectException, match="is not running"):
        worker.connector_task_configs("startpaused", props)
    task_class = f"{CountSourceTask.__module__}.{CountSourceTask.__qualname__}"
    config = {"topic": topic, "total": "5", "task.id": "0", "task.class": task_class}
    worker.start_task(ConnectorTaskId("startpaused", 0), props, config, TargetState.PAUSED)
    wait_until(lambda: state(worker, "startpaused", 0) is State.PAUSED, message="task PAUSED")
    assert committed(worker, "startpaused", 0) is None
