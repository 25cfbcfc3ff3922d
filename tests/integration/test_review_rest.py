"""REST restart/offsets semantics against Kafka Connect's ConnectorsResource."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cdk.api import SourceRecord, Task
from cdk.errors import ConnectException
from cdk.runtime.standalone._worker import EmbeddedWorker
from tests._wait import wait_until
from tests.integration.test_review_runtime import IdleSourceTask, _Source, _unique, _worker

MOD = __name__

#: Connector / task names (by test) that must fail the first time they start.
FAIL_ONCE: set[str] = set()
_LOCK = threading.Lock()


def _fail_once(key: str) -> None:
    with _LOCK:
        if key in FAIL_ONCE:
            FAIL_ONCE.discard(key)
            raise ConnectException(f"planned failure of {key}")


class FailOnceTask(IdleSourceTask):
    def start(self, props: dict[str, str]) -> None:
        _fail_once("task:" + props["name"])


class FailOnceTaskSource(_Source):
    task = FailOnceTask


class FailOnceStartSource(_Source):
    def start(self, props: dict[str, str]) -> None:
        self.props = props
        _fail_once("connector:" + props["name"])


class RecordsSourceTask(IdleSourceTask):
    def poll(self) -> list[SourceRecord] | None:
        return [SourceRecord({"p": 0}, {"n": 1}, self.props["topic"], value="v")]


class RecordsSource(_Source):
    task: type[Task] = RecordsSourceTask


@pytest.fixture
def connect(kafka_bootstrap: str, tmp_path: Path) -> Iterator[EmbeddedWorker]:
    FAIL_ONCE.clear()
    worker = _worker(kafka_bootstrap, tmp_path).start()
    try:
        yield worker
    finally:
        worker.stop()


@pytest.fixture
def http(connect: EmbeddedWorker) -> Iterator[httpx.Client]:
    assert connect.rest_url is not None
    with httpx.Client(base_url=connect.rest_url, timeout=8) as client:
        yield client


def _status(http: httpx.Client, name: str) -> dict[str, Any]:
    r = http.get(f"/connectors/{name}/status")
    assert r.status_code == 200, r.text
    return dict(r.json())


def _wait(http: httpx.Client, name: str, connector: str, tasks: list[str]) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        body = _status(http, name)
        states = [t["state"] for t in sorted(body["tasks"], key=lambda t: t["id"])]
        return body if body["connector"]["state"] == connector and states == tasks else None

    return wait_until(
        reached, 10, 0.05, lambda: f"{name}: {connector} {tasks}; {_status(http, name)}"
    )


def _create(http: httpx.Client, name: str, cls: str, **extra: str) -> None:
    config = {"connector.class": f"{MOD}.{cls}", **extra}
    r = http.post("/connectors", json={"name": name, "config": config})
    assert r.status_code == 201, r.text


def test_restart_only_failed_tasks(http: httpx.Client) -> None:
    """POST .../restart?includeTasks=true&onlyFailed=true: 202, the plan shows only the failed
    task RESTARTING, and the task ends RUNNING."""
    name = _unique("only-failed")
    FAIL_ONCE.add("task:" + name)
    _create(http, name, "FailOnceTaskSource")
    failed = _wait(http, name, "RUNNING", ["FAILED"])
    assert "planned failure" in failed["tasks"][0]["trace"]
    r = http.post(f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true")
    assert r.status_code == 202, r.text
    plan = r.json()
    assert plan["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in plan["tasks"]] == ["RESTARTING"]
    _wait(http, name, "RUNNING", ["RUNNING"])


def test_restart_only_failed_nothing_failed_is_202(http: httpx.Client) -> None:
    """onlyFailed=true with nothing failed: 202 with the current states, nothing restarted."""
    name = _unique("only-failed-none")
    _create(http, name, "_Source")
    _wait(http, name, "RUNNING", ["RUNNING"])
    r = http.post(f"/connectors/{name}/restart?onlyFailed=true")
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in body["tasks"]] == ["RUNNING"]


def test_connector_start_raises_then_restart(http: httpx.Client) -> None:
    """A connector whose start() raises is FAILED with the trace; a restart brings it and its
    task up."""
    name = _unique("start-raises")
    FAIL_ONCE.add("connector:" + name)
    r = http.post(
        "/connectors",
        json={"name": name, "config": {"connector.class": f"{MOD}.FailOnceStartSource"}},
    )
    assert r.status_code in (201, 500), r.text
    body = _wait(http, name, "FAILED", [])
    assert "planned failure" in body["connector"]["trace"]
    r = http.post(f"/connectors/{name}/restart")
    assert r.status_code == 204, r.text
    _wait(http, name, "RUNNING", ["RUNNING"])


def test_offsets_only_when_stopped(http: httpx.Client, kafka_bootstrap: str) -> None:
    """PATCH/DELETE .../offsets answer 400 unless the connector is STOPPED (also when PAUSED);
    once STOPPED they succeed and GET shows the result."""
    name = _unique("offsets")
    topic = _unique("offsets-topic")
    _create(http, name, "RecordsSource", topic=topic)
    _wait(http, name, "RUNNING", ["RUNNING"])
    body = {"offsets": [{"partition": {"p": 0}, "offset": {"n": 42}}]}
    assert http.patch(f"/connectors/{name}/offsets", json=body).status_code == 400
    assert http.delete(f"/connectors/{name}/offsets").status_code == 400
    assert http.put(f"/connectors/{name}/pause").status_code == 202
    _wait(http, name, "PAUSED", ["PAUSED"])
    r = http.patch(f"/connectors/{name}/offsets", json=body)
    assert r.status_code == 400, r.text
    assert "STOPPED" in r.json()["message"]
    assert http.put(f"/connectors/{name}/stop").status_code == 204
    _wait(http, name, "STOPPED", [])
    r = http.patch(f"/connectors/{name}/offsets", json=body)
    assert r.status_code == 200, r.text
    r = http.get(f"/connectors/{name}/offsets")
    assert r.status_code == 200
    assert r.json() == {"offsets": [{"partition": {"p": 0}, "offset": {"n": 42}}]}
    r = http.delete(f"/connectors/{name}/offsets")
    assert r.status_code == 200, r.text
    assert http.get(f"/connectors/{name}/offsets").json() == {"offsets": []}


def test_delete_running_connector_then_recreate(http: httpx.Client) -> None:
    """DELETE of a RUNNING connector: 204, then 404 everywhere, and the name can be reused."""
    name = _unique("delete")
    topic = _unique("delete-topic")
    _create(http, name, "RecordsSource", topic=topic)
    _wait(http, name, "RUNNING", ["RUNNING"])
    assert http.delete(f"/connectors/{name}").status_code == 204
    assert http.get(f"/connectors/{name}").status_code == 404
    assert http.get(f"/connectors/{name}/status").status_code == 404
    assert http.get(f"/connectors/{name}/tasks/0/status").status_code == 404
    assert name not in http.get("/connectors").json()
    _create(http, name, "RecordsSource", topic=topic)
    _wait(http, name, "RUNNING", ["RUNNING"])


def test_task_restart_unknown_task_404(http: httpx.Client) -> None:
    name = _unique("task404")
    _create(http, name, "_Source")
    _wait(http, name, "RUNNING", ["RUNNING"])
    r = http.post(f"/connectors/{name}/tasks/7/restart")
    assert r.status_code == 404, r.text
    assert r.json()["error_code"] == 404
