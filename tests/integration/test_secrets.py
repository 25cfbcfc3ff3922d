"""No secret in clear anywhere a worker shows what it runs.

A distributed driver with passwords everywhere a deployment has them: REST basic auth, the
HTTPS listener's key and trust store passwords, the key store password of Kafka's mutual TLS
(unprefixed, ``producer.`` and ``consumer.``), and a connector's PASSWORD key. The test drives
every REST endpoint, scrapes the metrics, logs at DEBUG, reads the status topic and writes a
certification bundle over the same TLS broker, and looks for each secret in all of it.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cdk.runtime.distributed._worker import DistributedWorker
from harness.providers.kafka import consume_all
from harness.providers.tls import TlsKafka
from tests._tls import KEY_PASSWORD, STORE_PASSWORD, TlsFiles
from tests._wait import wait_until
from tests.runtime.distributed._support import distributed_props
from tests.runtime.distributed._thread_placement import ThreadPlacement
from tests.runtime.standalone.test_herder import TinySourceConnector, source_config

BASIC_PASSWORD = "basic-auth-pw-91c3"
CONNECTOR_SECRET = "connector-secret-47ad"


def secrets(kafka: TlsKafka) -> dict[str, str]:
    return {
        "basic auth": BASIC_PASSWORD,
        "REST key password": KEY_PASSWORD,
        "REST trust store password": STORE_PASSWORD,
        "Kafka key store password": kafka.CLIENT_STORE_PASSWORD,
        "connector PASSWORD": CONNECTOR_SECRET,
    }


@pytest.fixture
def driver(
    mtls_kafka: TlsKafka, tls_files: TlsFiles, caplog: pytest.LogCaptureFixture
) -> Iterator[DistributedWorker]:
    caplog.set_level(logging.DEBUG)  # from before the driver starts
    security = mtls_kafka.client_config()
    props = distributed_props(mtls_kafka.bootstrap_servers, f"sec-{uuid.uuid4().hex[:8]}")
    props.update(
        {
            **security,
            **{f"producer.{k}": v for k, v in security.items()},
            **{f"consumer.{k}": v for k, v in security.items()},
            "listeners": "https://127.0.0.1:0",
            "listeners.https.ssl.keystore.type": "PEM",
            "listeners.https.ssl.keystore.location": str(tls_files.server_pem),
            "listeners.https.ssl.key.password": KEY_PASSWORD,
            "listeners.https.ssl.truststore.type": "PKCS12",
            "listeners.https.ssl.truststore.location": str(tls_files.ca_p12),
            "listeners.https.ssl.truststore.password": STORE_PASSWORD,
            "listeners.https.ssl.client.auth": "required",
            "rest.basic.auth.user": "admin",
            "rest.basic.auth.password": BASIC_PASSWORD,
        }
    )
    worker = DistributedWorker(
        props, placement=ThreadPlacement(1), extra_plugins=[TinySourceConnector]
    )
    try:
        worker.start()
        assert worker.await_leader(60)
        yield worker
    finally:
        worker.stop()


def drive_the_rest_api(http: httpx.Client) -> list[httpx.Response]:
    """Every endpoint, with the connector's secret in what is sent; the responses."""
    answers: list[httpx.Response] = []

    def call(method: str, path: str, **kwargs: Any) -> httpx.Response:
        answer = http.request(method, path, **kwargs)
        answers.append(answer)
        return answer

    config = source_config(password=CONNECTOR_SECRET)
    plugin = "tests.runtime.standalone.test_herder:TinySourceConnector"
    call("GET", "/")
    call("GET", "/health")
    call("GET", "/connector-plugins", params={"connectorsOnly": "false"})
    call("GET", f"/connector-plugins/{plugin}/config")
    call("PUT", f"/connector-plugins/{plugin}/config/validate", json=config)
    call("PUT", f"/connector-plugins/{plugin}/config/validate", json={**config, "tasks.max": "x"})
    assert call("POST", "/connectors", json={"name": "c", "config": config}).status_code == 201
    call("POST", "/connectors", json={"name": "c", "config": config})  # 409: exists
    call("POST", "/connectors", json={"name": "bad", "config": {**config, "tasks.max": "x"}})
    failing = {**config, "fail.task": "true"}
    call("PUT", "/connectors/f/config", json=failing)
    wait_until(
        lambda: (
            call("GET", "/connectors/c/status").json().get("tasks", [{}])[0].get("state")
            == "RUNNING"
        ),
        60,
        0.2,
        "connector c to run",
    )
    wait_until(
        lambda: (
            call("GET", "/connectors/f/status").json().get("tasks", [{}])[0].get("state")
            == "FAILED"
        ),
        60,
        0.2,
        "connector f's task to fail",
    )
    for path in ("", "/config", "/status", "/tasks", "/tasks-config", "/tasks/0/status"):
        call("GET", f"/connectors/c{path}")
    call("GET", "/connectors", params=[("expand", "status"), ("expand", "info")])
    call("PUT", "/connectors/c/config", json={**config, "tasks.max": "1"})
    call("PATCH", "/connectors/c/config", json={"password": CONNECTOR_SECRET})
    call("POST", "/connectors/c/tasks/0/restart")
    call("POST", "/connectors/c/restart", params={"includeTasks": "true"})
    call("PUT", "/connectors/c/pause")
    call("PUT", "/connectors/c/resume")
    call("GET", "/connectors/c/topics")
    call("PUT", "/connectors/c/topics/reset")
    call("GET", "/connectors/c/offsets")
    call("PUT", "/connectors/c/stop")
    call("PATCH", "/connectors/c/offsets", json={"offsets": []})
    call("DELETE", "/connectors/c/offsets")
    call("GET", "/admin/loggers")
    call("GET", "/admin/loggers/cdk")
    call("PUT", "/admin/loggers/cdk.runtime", json={"level": "DEBUG"})
    call("GET", "/metrics")
    call("GET", "/metrics", headers={"Accept": "application/openmetrics-text"})
    call("DELETE", "/connectors/f")
    call("GET", "/connectors/nope")
    return answers


def test_no_secret_in_clear_anywhere(
    driver: DistributedWorker,
    mtls_kafka: TlsKafka,
    tls_files: TlsFiles,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert driver.rest_url is not None
    context = tls_files.client_context(certificate=True)
    with httpx.Client(
        base_url=driver.rest_url, verify=context, auth=("admin", BASIC_PASSWORD), timeout=60
    ) as http:
        answers = drive_the_rest_api(http)
    assert len(answers) > 35
    assert {a.status_code for a in answers} >= {200, 201, 202, 204, 400, 404, 409}
    places: dict[str, str] = {
        f"{a.request.method} {a.request.url.path} -> {a.status_code}": (
            a.text + "\n" + "\n".join(f"{k}: {v}" for k, v in a.headers.items())
        )
        for a in answers
    }
    metrics = [a for a in answers if a.request.url.path == "/metrics"]
    assert "connector_count" in metrics[0].text  # the scrape worked (and is searched)
    logged = [*caplog.get_records("setup"), *caplog.records]  # the driver's start, then the test
    places["logs at DEBUG"] = "\n".join(f"{r.getMessage()}\n{r.exc_text or ''}" for r in logged)
    assert any(r.levelno == logging.DEBUG for r in logged)
    status_topic = driver.config.status_topic
    records = consume_all(
        mtls_kafka.bootstrap_servers, status_topic, client_config=mtls_kafka.client_config()
    )
    assert any(b"refuses to start" in (r.value or b"") for r in records)  # a FAILED trace
    places["status topic"] = "\n".join(
        f"{r.key!r} {r.value!r}" for r in records if r.value is not None
    )
    places.update(certification_bundle(mtls_kafka, tmp_path))
    for what, secret in secrets(mtls_kafka).items():
        for where, text in places.items():
            assert secret not in text, f"the {what} is in clear in: {where}"


def certification_bundle(kafka: TlsKafka, tmp_path: Path) -> dict[str, str]:
    """A certification run over the same mutual-TLS broker, its bundle read back, by file."""
    from harness.certify import Project, certify, write_bundle

    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "fs"\nversion = "1.0.0"\n\n[tool.cdk]\ndrivers = '
        '["reference_connectors.filestream.certify:FileStreamSourceDriver"]\n',
        encoding="utf-8",
    )
    run = certify(
        Project.load(root),
        kafka=kafka.bootstrap_servers,
        kafka_config=kafka.client_config(),
        only=["OFF-01"],
        workdir=tmp_path / "work",
    )
    assert [r.outcome.value for r in run.results] == ["passed"], [r.message for r in run.results]
    bundle = tmp_path / "bundle"
    write_bundle(run, bundle)
    return {
        f"bundle {p.relative_to(bundle)}": p.read_bytes().decode("utf-8", "replace")
        for p in bundle.rglob("*")
        if p.is_file()
    }
