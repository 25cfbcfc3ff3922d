"""The REST API over HTTP with httpx: errors, validation and secrets, as Kafka Connect answers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.connectors import GENERATOR
from tests.integration._support import Connect, generator_config, make_topic, unique

SECRET = "s3cr3t-never-echoed"


@pytest.fixture
def worker(connect: Callable[..., Connect]) -> Connect:
    return connect()


def error_body(response, status: int) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == status
    assert isinstance(body["message"], str)
    assert body["message"]
    return str(body["message"])


@pytest.mark.parametrize(
    "body",
    [b'{"name": "x", "config": {', b"not json at all", b'{"name": "x", "config": {"a": 1,}}'],
)
def test_malformed_json_is_a_client_error(worker: Connect, body: bytes) -> None:
    http = worker.rest.http
    r = http.post("/connectors", content=body, headers={"Content-Type": "application/json"})
    # Kafka answers through its exception mapper: a JSON error body with the status code
    assert r.status_code in (400, 500), r.text
    error_body(r, r.status_code)
    r = http.put("/connectors/x/config", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code in (400, 500), r.text
    assert http.get("/connectors").json() == []  # nothing was created


def test_unknown_connector_answers_404_with_kafka_messages(worker: Connect) -> None:
    http = worker.rest.http
    assert (
        error_body(http.get("/connectors/does-not-exist/status"), 404)
        == "No status found for connector does-not-exist"
    )
    assert (
        error_body(http.put("/connectors/does-not-exist/pause"), 404)
        == "Unknown connector does-not-exist"
    )
    for method, path in [
        ("GET", "/connectors/does-not-exist"),
        ("GET", "/connectors/does-not-exist/config"),
        ("GET", "/connectors/does-not-exist/tasks"),
        ("PUT", "/connectors/does-not-exist/resume"),
        ("POST", "/connectors/does-not-exist/restart"),
        ("DELETE", "/connectors/does-not-exist"),
    ]:
        error_body(http.request(method, path), 404)


def test_duplicate_create_is_409(worker: Connect, kafka_bootstrap: str) -> None:
    name = unique("gen")
    config = generator_config(make_topic(kafka_bootstrap), records=1)
    worker.rest.create(name, config)
    r = worker.rest.http.post("/connectors", json={"name": name, "config": config})
    assert error_body(r, 409) == f"Connector {name} already exists"


def test_validate_lists_each_error(worker: Connect) -> None:
    r = worker.rest.http.put(
        f"/connector-plugins/{GENERATOR}/config/validate",
        json={
            "connector.class": GENERATOR,
            "name": "v",
            "batch.size": "0",
            "records": "many",
            "tasks.max": "-1",
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    errors = {
        c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]
    }
    assert set(errors) == {"topic", "batch.size", "records", "tasks.max"}, errors
    assert body["error_count"] == 5  # as Kafka: every message counts
    assert errors["topic"] == ['Missing required configuration "topic" which has no default value.']
    # as Kafka's ConfigDef: the validator still runs on the unparsable (null) value
    assert errors["records"] == [
        "Invalid value many for configuration records: Not a number of type LONG",
        "Invalid value null for configuration records: Value must be non-null",
    ]
    assert errors["batch.size"] == [
        "Invalid value 0 for configuration batch.size: Value must be at least 1"
    ]
    assert body["name"] == GENERATOR
    names = [c["definition"]["name"] for c in body["configs"]]
    assert "topic" in names
    assert "connector.class" in names  # the framework's keys are validated too


def test_secrets_are_never_echoed(worker: Connect, kafka_bootstrap: str) -> None:
    http = worker.rest.http
    name = unique("gen-secret")
    config = generator_config(make_topic(kafka_bootstrap), records=1)
    config["generator.secret"] = SECRET
    responses = [
        http.post("/connectors", json={"name": name, "config": config}),
        http.get(f"/connectors/{name}"),
        http.get(f"/connectors/{name}/config"),
        http.get("/connectors?expand=info&expand=status"),
        http.put(f"/connector-plugins/{GENERATOR}/config/validate", json=config),
    ]
    worker.rest.wait_state(name, "RUNNING", tasks=1)
    responses.append(http.get(f"/connectors/{name}/tasks"))
    responses.append(http.put(f"/connectors/{name}/config", json=config))
    responses.append(http.patch(f"/connectors/{name}/config", json={"records": "2"}))
    for r in responses:
        assert r.status_code < 300, (r.request.url, r.status_code, r.text)
        assert SECRET not in r.text, (r.request.url, r.text)
    assert "generator.secret" in responses[2].json()  # the key is there, its value masked


def test_root_and_health(worker: Connect) -> None:
    r = worker.rest.http.get("/")
    assert r.status_code == 200
    assert set(r.json()) >= {"version", "commit", "kafka_cluster_id"}
    r = worker.rest.http.get("/health")
    assert r.status_code == 200, r.text
