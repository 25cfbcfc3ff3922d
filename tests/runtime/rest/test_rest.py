"""The REST API over real HTTP (httpx), compared with recorded Kafka Connect 3.9 exchanges."""

from __future__ import annotations

import base64
import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cdk.runtime.standalone._worker import EmbeddedWorker
from tests._wait import wait_until
from tests.runtime.standalone.test_herder import SECRET, TinySourceConnector

# 30 exchanges recorded with an Apache Kafka Connect 3.9.0 worker (test data, not code)
EXCHANGES = Path(__file__).parent / "data" / "kafka-connect-rest-exchanges.json"

# keys whose values must equal the recorded ones (others differ by nature: ids, paths, versions)
CHECKED_VALUES = {"state", "type", "error_code", "message", "connector", "task", "id"}


def worker_props(bootstrap: str, **extra: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "key.converter": "JsonConverter",
        "value.converter": "JsonConverter",
        "listeners": "http://127.0.0.1:0",
        "offset.flush.interval.ms": "100",
        **extra,
    }


@pytest.fixture
def worker(kafka_bootstrap: str) -> Iterator[EmbeddedWorker]:
    with EmbeddedWorker(
        worker_props(kafka_bootstrap), extra_plugins=[TinySourceConnector]
    ) as running:
        yield running


@pytest.fixture
def client(worker: EmbeddedWorker) -> Iterator[httpx.Client]:
    assert worker.rest_url is not None
    with httpx.Client(base_url=worker.rest_url, timeout=30) as http:
        yield http


def same_shape(recorded: Any, ours: Any, path: str = "$") -> None:
    if isinstance(recorded, dict):
        assert isinstance(ours, dict), f"{path}: expected an object, got {ours!r}"
        assert set(ours) - {"trace"} == set(recorded), (
            f"{path}: keys {set(ours)} != {set(recorded)}"
        )
        for key, value in recorded.items():
            if key in CHECKED_VALUES and not isinstance(value, (dict, list)):
                assert ours[key] == value, f"{path}.{key}: {ours[key]!r} != {value!r}"
            same_shape(value, ours[key], f"{path}.{key}")
    elif isinstance(recorded, list):
        assert isinstance(ours, list), f"{path}: expected a list, got {ours!r}"
        assert len(ours) == len(recorded), f"{path}: {len(ours)} items != {len(recorded)}"
        for i, (want, got) in enumerate(zip(recorded, ours, strict=True)):
            same_shape(want, got, f"{path}[{i}]")
    else:
        assert (recorded is None) == (ours is None) or isinstance(ours, type(recorded)), path


def test_replays_the_recorded_kafka_exchanges(kafka_bootstrap: str, tmp_path: Path) -> None:
    # the recorded worker had only the FileStream connectors: the plugin list is compared on those
    with EmbeddedWorker(worker_props(kafka_bootstrap)) as worker:
        assert worker.rest_url is not None
        with httpx.Client(base_url=worker.rest_url, timeout=30) as client:
            replay(client, tmp_path)


def replay(client: httpx.Client, tmp_path: Path, timeout: float = 30) -> None:
    """Send the recorded requests; each answer must have the recorded status and shape.

    States change asynchronously (pause, resume; in distributed mode, tasks report from their
    executors): a status read waits up to ``timeout`` seconds for the recorded states.
    """
    exchanges = json.loads(EXCHANGES.read_text(encoding="utf-8"))["exchanges"]
    source_file = tmp_path / "input-10.txt"
    source_file.write_text("".join(f"line {i}\n" for i in range(10)), encoding="utf-8")
    topic = f"rest-{uuid.uuid4().hex[:8]}"

    def localize(body: Any) -> Any:
        text = json.dumps(body)
        text = text.replace("/data/input-10.txt", str(source_file))
        text = text.replace("rest-1795347913", topic)
        return json.loads(text)

    for exchange in exchanges:
        method, _, path = exchange["request"].partition(" ")
        body = exchange["body"]

        def call(method: str = method, path: str = path, body: Any = body) -> httpx.Response:
            return client.request(method, path, json=localize(body) if body is not None else None)

        recorded = exchange["response"]
        if method == "GET" and "connector" in (recorded or {}) and exchange["status"] == 200:
            # states change asynchronously (pause, resume): wait for the recorded ones
            wanted = [recorded["connector"]["state"], [t["state"] for t in recorded["tasks"]]]
            wait_until(
                lambda call=call, wanted=wanted: (
                    (r := call().json())["connector"]["state"] == wanted[0]
                    and [t["state"] for t in r["tasks"]] == wanted[1]
                ),
                timeout,
                message=f"{exchange['request']} -> {wanted}",
            )
        if method == "GET" and "expand=status" in path and exchange["status"] == 200:

            def task_states(body: Any) -> dict[str, list[str]]:
                return {
                    name: [t["state"] for t in entry.get("status", {}).get("tasks", [])]
                    for name, entry in body.items()
                }

            expected = task_states(recorded)
            wait_until(
                lambda call=call, expected=expected: task_states(call().json()) == expected,
                timeout,
                message=f"{exchange['request']} -> {expected}",
            )
        if method == "GET" and "expand=status" in path and exchange["status"] == 200:
            # in distributed mode the tasks report their states themselves, a moment later
            wanted_all = {
                name: [entry["status"]["connector"]["state"]]
                + [t["state"] for t in entry["status"]["tasks"]]
                for name, entry in recorded.items()
                if "status" in entry
            }
            wait_until(
                lambda call=call, wanted_all=wanted_all: all(
                    [(e := call().json()[name]["status"])["connector"]["state"]]
                    + [t["state"] for t in e["tasks"]]
                    == states
                    for name, states in wanted_all.items()
                ),
                30,
                message=f"{exchange['request']} -> {wanted_all}",
            )
        if method == "GET" and path.endswith("/offsets"):
            wait_until(lambda call=call: call().json()["offsets"], timeout, message="offsets")
        response = call()
        context = f"{exchange['request']} ({exchange.get('note', '')})"
        assert response.status_code == exchange["status"], f"{context}: {response.text}"
        if recorded is None:
            assert response.content == b"", context
            continue
        assert response.headers["content-type"].startswith("application/json"), context
        ours = response.json()
        if path.startswith("/connector-plugins") and isinstance(ours, list):
            # the recorded worker had only the FileStream connectors; this one has more
            ours = [p for p in ours if "filestream" in p["class"].lower()]
        if path.endswith("/topics"):
            # The recording listed no topic: Kafka records a source's topic when the broker
            # acknowledges its first record, and the request came before that. Here the topic
            # may be listed already; it is the only one the connector may list.
            name = path.split("/")[2]
            assert ours[name]["topics"] in ([], [topic]), context
            ours = {name: {"topics": []}}
        same_shape(recorded, ours, context)


def test_errors_have_kafka_bodies(client: httpx.Client) -> None:
    response = client.post(
        "/connectors",
        content=b'{"name": "x", "config": {',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["error_code"] == 400
    assert "Malformed JSON" in response.json()["message"]
    assert "line 1 column" in response.json()["message"]
    response = client.post("/connectors", content=b"name=x", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415
    assert response.json() == {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"}
    response = client.delete("/connector-plugins")
    assert response.status_code == 405
    assert response.json() == {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}
    response = client.get("/no/such/path")
    assert response.status_code == 404
    assert response.json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
    response = client.post("/connectors", json={"config": {"connector.class": "TinySource"}})
    assert response.status_code == 400
    assert response.json()["message"] == "Connector name is required"
    response = client.post("/connectors", json={"name": "x", "config": {"connector.class": "Nope"}})
    assert response.status_code == 400
    assert "which name matches Nope" in response.json()["message"]
    assert "Did you mean" not in response.json()["message"]  # nothing is close to Nope
    response = client.post(
        "/connectors", json={"name": "x", "config": {"connector.class": "TinySorce"}}
    )
    assert response.status_code == 400
    assert response.json()["message"].endswith(" Did you mean TinySource?")
    response = client.post("/connectors", json=["not", "an", "object"])
    assert response.status_code == 400
    response = client.get("/connectors/x/tasks/abc/status")
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "message"),
    [
        ("GET", "/connectors/ghost", "Connector ghost not found"),
        ("GET", "/connectors/ghost/config", "Connector ghost not found"),
        ("GET", "/connectors/ghost/status", "No status found for connector ghost"),
        ("GET", "/connectors/ghost/tasks", "Connector ghost not found"),
        ("GET", "/connectors/ghost/tasks/0/status", "No status found for task ghost-0"),
        ("POST", "/connectors/ghost/restart", "Connector ghost not found"),
        ("POST", "/connectors/ghost/restart?includeTasks=true", "Unknown connector: ghost"),
        ("POST", "/connectors/ghost/tasks/0/restart", "Connector ghost not found"),
        ("PUT", "/connectors/ghost/pause", "Unknown connector ghost"),
        ("PUT", "/connectors/ghost/resume", "Unknown connector ghost"),
        ("PUT", "/connectors/ghost/stop", "Unknown connector ghost"),
        ("DELETE", "/connectors/ghost", "Connector ghost not found"),
        ("GET", "/connectors/ghost/offsets", "Connector ghost not found"),
        ("DELETE", "/connectors/ghost/offsets", "Connector ghost not found"),
        ("GET", "/connector-plugins/Ghost/config", "Unknown plugin Ghost."),
    ],
)
def test_unknown_connector(client: httpx.Client, method: str, path: str, message: str) -> None:
    response = client.request(method, path)
    assert response.status_code == 404
    assert response.json() == {"error_code": 404, "message": message}


def test_validate_lists_each_error(client: httpx.Client) -> None:
    config = {
        "connector.class": "TinySource",
        "tasks.max": "zero",
        "required.thing": "bad",
        "errors.tolerance": "some",
        "password": SECRET,
    }
    response = client.put("/connector-plugins/TinySource/config/validate", json=config)
    assert response.status_code == 200
    result = response.json()
    assert result["name"].endswith("TinySourceConnector")
    errors = {
        c["value"]["name"]: c["value"]["errors"]
        for c in result["configs"]
        if c["value"] and c["value"]["errors"]
    }
    assert set(errors) == {"name", "tasks.max", "required.thing", "errors.tolerance"}
    assert result["error_count"] == sum(len(e) for e in errors.values())
    assert errors["tasks.max"][0] == (
        "Invalid value zero for configuration tasks.max: Not a number of type INT"
    )
    assert SECRET not in response.text
    password = next(c for c in result["configs"] if c["value"] and c["value"]["name"] == "password")
    assert password["value"]["value"] == "[hidden]"
    assert password["definition"]["type"] == "PASSWORD"
    response = client.put(
        "/connector-plugins/FileStreamSink/config/validate", json={"connector.class": "TinySource"}
    )
    assert response.status_code == 400
    assert "does not match request type" in response.json()["message"]
    response = client.post("/connectors", json={"name": "v", "config": config})
    assert response.status_code == 400
    assert response.json()["message"].startswith(
        "Connector configuration is invalid and contains the following "
    )
    assert SECRET not in response.text


def test_secrets_are_never_echoed(
    client: httpx.Client, worker: EmbeddedWorker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="cdk")
    config = {
        "connector.class": "TinySource",
        "topic": f"s-{uuid.uuid4().hex[:8]}",
        "password": SECRET,
    }
    texts = [client.post("/connectors", json={"name": "sec", "config": config}).text]
    wait_until(
        lambda: client.get("/connectors/sec/status").json()["tasks"], 20, message="sec tasks"
    )
    texts += [
        client.get(path).text
        for path in (
            "/connectors/sec",
            "/connectors/sec/config",
            "/connectors/sec/tasks",
            "/connectors/sec/tasks-config",
            "/connectors/sec/status",
            "/connectors?expand=info&expand=status",
        )
    ]
    texts.append(client.put("/connectors/sec/config", json={**config, "tasks.max": "1"}).text)
    texts.append(client.patch("/connectors/sec/config", json={"tasks.max": None}).text)
    texts.append(
        client.put(
            "/connector-plugins/TinySource/config/validate", json={**config, "name": "s"}
        ).text
    )
    assert client.get("/connectors/sec/config").json()["password"] == "[hidden]"
    for text in texts:
        assert SECRET not in text
    assert SECRET not in caplog.text
    assert worker.herder.raw_connector_config("sec")["password"] == SECRET


def test_lifecycle_endpoints(client: httpx.Client, tmp_path: Path) -> None:
    name = "my connector/ü"
    quoted = "my%20connector%2F%C3%BC"
    config = {"connector.class": "TinySource", "topic": f"l-{uuid.uuid4().hex[:8]}"}
    response = client.put(f"/connectors/{quoted}/config", json=config)
    assert response.status_code == 201
    assert response.json()["name"] == name
    assert response.headers["location"] == f"/connectors/{quoted}"
    response = client.put(f"/connectors/{quoted}/config", json={**config, "tasks.max": "2"})
    assert response.status_code == 200
    assert len(response.json()["tasks"]) == 2
    assert client.get("/connectors").json() == [name]
    response = client.post(
        "/connectors", json={"name": "x", "config": config, "initial_state": "STOPPED"}
    )
    assert response.status_code == 201
    assert client.get("/connectors/x/status").json()["connector"]["state"] == "STOPPED"
    assert client.get("/connectors/x/offsets").json() == {"offsets": []}
    response = client.patch(
        "/connectors/x/offsets",
        json={"offsets": [{"partition": {"p": 0}, "offset": {"n": 42}}]},
    )
    assert response.status_code == 200, response.text
    assert "altered successfully" in response.json()["message"]
    assert client.get("/connectors/x/offsets").json() == {
        "offsets": [{"partition": {"p": 0}, "offset": {"n": 42}}]
    }
    response = client.delete("/connectors/x/offsets")
    assert response.status_code == 200
    assert "reset successfully" in response.json()["message"]
    response = client.patch(f"/connectors/{quoted}/offsets", json={"offsets": [{"partition": {}}]})
    assert response.status_code == 400
    assert "STOPPED state" in response.json()["message"]
    reset = client.put("/connectors/x/topics/reset")
    assert (reset.status_code, reset.content) == (202, b"")  # Kafka: 202 Accepted, no body
    assert client.get("/connectors/x/topics").json() == {"x": {"topics": []}}
    assert client.get("/connector-plugins?connectorsOnly=false").status_code == 200
    keys = client.get("/connector-plugins/TinySource/config").json()
    assert keys[0]["name"] == "topic"
    assert client.delete(f"/connectors/{quoted}").status_code == 204
    assert client.get("/connectors").json() == ["x"]
    health = client.get("/health")
    assert health.status_code == 200
    assert health.json()["status"] == "healthy"


def test_sink_offsets_from_the_consumer_group(
    client: httpx.Client, kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = f"sink-{uuid.uuid4().hex[:8]}"
    name = f"snk-{uuid.uuid4().hex[:8]}"  # its own consumer group (connect-<name>)
    source = {"connector.class": "TinySource", "topic": topic}
    assert client.post("/connectors", json={"name": "src", "config": source}).status_code == 201
    sink = {
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(tmp_path / "out.txt"),
        "consumer.override.session.timeout.ms": "6000",
    }
    assert client.post("/connectors", json={"name": name, "config": sink}).status_code == 201
    wait_until(
        lambda: client.get(f"/connectors/{name}/offsets").json()["offsets"],
        30,
        message="sink commit",
    )
    assert client.get(f"/connectors/{name}/offsets").json() == {
        "offsets": [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": 0},
                "offset": {"kafka_offset": 1},
            }
        ]
    }
    assert client.put(f"/connectors/{name}/stop").status_code == 204
    body = {
        "offsets": [
            {
                "partition": {"kafka_topic": topic, "kafka_partition": 0},
                "offset": {"kafka_offset": 0},
            }
        ]
    }
    response = client.patch(f"/connectors/{name}/offsets", json=body)
    assert response.status_code == 200, response.text
    assert client.get(f"/connectors/{name}/offsets").json() == body
    bad = {"offsets": [{"partition": {"topic": topic}, "offset": {"kafka_offset": 0}}]}
    response = client.patch(f"/connectors/{name}/offsets", json=bad)
    assert response.status_code == 400
    assert "must contain the keys 'kafka_topic' and 'kafka_partition'" in response.json()["message"]
    response = client.delete(f"/connectors/{name}/offsets")
    assert response.status_code == 200, response.text
    assert client.get(f"/connectors/{name}/offsets").json() == {"offsets": []}


def test_basic_auth(kafka_bootstrap: str) -> None:
    props = worker_props(
        kafka_bootstrap, **{"rest.basic.auth.user": "admin", "rest.basic.auth.password": "pw"}
    )
    with EmbeddedWorker(props, cluster_id_timeout=0) as worker:
        assert worker.rest_url is not None
        with httpx.Client(base_url=worker.rest_url) as http:
            response = http.get("/connectors")
            assert response.status_code == 401
            assert response.json()["error_code"] == 401
            assert response.headers["www-authenticate"].startswith("Basic")
            assert http.get("/connectors", auth=("admin", "nope")).status_code == 401
            token = base64.b64encode(b"admin:pw").decode()
            response = http.get("/connectors", headers={"Authorization": f"Basic {token}"})
            assert response.status_code == 200
            assert http.get("/", auth=("admin", "pw")).json()["kafka_cluster_id"] is None


def test_port_in_use_is_a_clear_error(worker: EmbeddedWorker, kafka_bootstrap: str) -> None:
    assert worker.rest is not None
    props = worker_props(kafka_bootstrap, listeners=f"http://127.0.0.1:{worker.rest.port}")
    with pytest.raises(Exception, match="Could not bind the REST API"):
        EmbeddedWorker(props, cluster_id_timeout=0).start()
