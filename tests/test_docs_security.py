"""The properties examples of docs/guide/security.rst run: ``cdk standalone`` with them, as written.

The paths, the broker address and the listener's port are replaced by certificates made for
the test, the TLS broker and a free port; every other line is the page's.
"""

from __future__ import annotations

import os
import re
import subprocess
import textwrap
import uuid
from pathlib import Path

import httpx

from cdk.config import parse_properties
from cdk.kafka import create_topics, new_admin
from cdk.kafka._clients import translate_client_config
from cdk.runtime import WorkerConfig
from harness.providers.kafka import consume_all
from harness.providers.tls import TlsKafka
from tests._tls import STORE_PASSWORD, TlsFiles
from tests._wait import wait_until
from tests.integration._support import (
    REPO_ROOT,
    cdk_command,
    free_port,
    stop_process,
    write_properties,
)

PAGE = REPO_ROOT / "docs" / "guide" / "security.rst"
KAFKA_PASSWORD = "kafka-pw-from-a-file-62be"
REST_PASSWORD = "rest-pw-from-the-env-0c4d"


def examples() -> dict[str, str]:
    """The page's ``properties`` blocks, by caption."""
    found: dict[str, str] = {}
    pattern = r"^\.\. code-block:: properties\n   :caption: (\S+)\n\n((?:   .*\n|\n)+)"
    for caption, body in re.findall(pattern, PAGE.read_text(encoding="utf-8"), flags=re.M):
        found[caption] = textwrap.dedent(body)
    return found


def test_the_page_has_the_examples() -> None:
    assert set(examples()) == {
        "worker-https.properties",
        "worker-kafka-tls.properties",
        "worker-kafka-sasl.properties",
        "worker-providers.properties",
    }


def _substituted(text: str, files: dict[str, str]) -> dict[str, str]:
    for old, new in files.items():
        text = text.replace(old, new)
    return parse_properties(text)


def test_cdk_standalone_runs_the_security_examples(
    tmp_path: Path, tls_files: TlsFiles, tls_kafka: TlsKafka
) -> None:
    secrets = tmp_path / "secrets.properties"
    secrets.write_text(f"keystore.password={STORE_PASSWORD}\nkafka.password={KAFKA_PASSWORD}\n")
    port = free_port()
    files = {
        "/etc/connect/tls/worker.p12": str(tls_files.server_p12),
        "/etc/connect/tls/ca.pem": str(tls_files.ca_pem),
        "/etc/connect/tls/kafka-ca.pem": str(tls_kafka.ca_file),
        "/etc/connect/secrets.properties": str(secrets),
        "kafka-1.example.internal:9093": tls_kafka.bootstrap_servers,
        "0.0.0.0:8443": f"127.0.0.1:{port}",
    }
    pages = examples()
    props = {
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "offset.flush.interval.ms": "200",
    }
    for name in ("worker-https.properties", "worker-kafka-tls.properties"):
        props.update(_substituted(pages[name], files))
    props.update(_substituted(pages["worker-providers.properties"], files))
    topic = f"docs-tls-{uuid.uuid4().hex[:8]}"
    security = tls_kafka.client_config()
    create_topics(
        new_admin({"bootstrap.servers": tls_kafka.bootstrap_servers, **security}), [topic]
    )
    source_file = tmp_path / "in.txt"
    source_file.write_text("secured line 1\nsecured line 2\n")
    worker_file = write_properties(tmp_path / "worker.properties", props)
    source = write_properties(
        tmp_path / "source.properties",
        {
            "name": "secured-source",
            "connector.class": "FileStreamSource",
            "file": str(source_file),
            "topic": topic,
        },
    )
    log = tmp_path / "worker.log"
    env = {**os.environ, "CONNECT_REST_PASSWORD": REST_PASSWORD}
    with log.open("ab") as out:
        proc = subprocess.Popen(
            cdk_command("standalone", str(worker_file), str(source)),
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )
    try:
        # the advertised URL names the advertised host; the test reaches it on loopback
        wait_until(
            lambda: "REST API at https://connect-1.example.internal:" in log.read_text(),
            60,
            0.1,
            lambda: f"the worker to start:\n{log.read_text()[-3000:]}",
        )
        context = tls_files.client_context(certificate=True)
        with httpx.Client(
            base_url=f"https://127.0.0.1:{port}",
            verify=context,
            auth=("admin", REST_PASSWORD),
            timeout=30,
        ) as http:

            def running() -> bool:
                answer = http.get("/connectors/secured-source/status")
                tasks = answer.json().get("tasks", []) if answer.status_code == 200 else []
                return bool(tasks) and tasks[0]["state"] == "RUNNING"

            wait_until(running, 60, 0.2, "the source to run")
            assert http.get("/connectors", auth=("admin", "wrong")).status_code == 401
        with httpx.Client(verify=tls_files.client_context(), timeout=10) as anonymous:
            try:
                refused = anonymous.get(f"https://127.0.0.1:{port}/connectors").status_code
            except httpx.TransportError:
                refused = None
            assert refused is None  # no client certificate: no TLS session at all
        records = consume_all(
            tls_kafka.bootstrap_servers, topic, min_records=2, client_config=security
        )
        assert sorted(r.value for r in records) == [b"secured line 1", b"secured line 2"]
    finally:
        stop_process(proc)
    text = log.read_text()
    for secret in (STORE_PASSWORD, REST_PASSWORD):
        assert secret not in text


def test_the_sasl_example_becomes_librdkafka_settings(tmp_path: Path) -> None:
    """Not runnable against the embedded broker (see the page): its translation is checked."""
    secrets = tmp_path / "secrets.properties"
    secrets.write_text(f"kafka.password={KAFKA_PASSWORD}\n")
    files = {"/etc/connect/secrets.properties": str(secrets)}
    pages = examples()
    config = WorkerConfig(
        {
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "config.providers": "file",
            "config.providers.file.class": (
                "org.apache.kafka.common.config.provider.FileConfigProvider"
            ),
            **_substituted(pages["worker-kafka-sasl.properties"], files),
        }
    )
    translated = translate_client_config(config.admin_props(), kind="admin").config
    assert translated["security.protocol"] == "SASL_SSL"
    assert translated["sasl.mechanism"] == "SCRAM-SHA-512"
    assert translated["sasl.username"] == "connect"
    assert translated["sasl.password"] == KAFKA_PASSWORD
    assert translated["ssl.ca.location"] == "/etc/connect/tls/kafka-ca.pem"
    assert "sasl.jaas.config" not in translated
    assert str(config.get_password("sasl.jaas.config")) == "[hidden]"  # never shown
