"""The testcontainers provider on a real Docker engine (started here when none runs)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdk.kafka import BrokerUnreachableException, check_connection, create_topics
from harness.providers._docker import DockerEngine, DockerUnavailableError, dockerd_installed, ping
from harness.providers.kafka import TestcontainersKafka, consume_all, produce, tansu_image

ENGINE_ANSWERS = any(
    ping(host)
    for host in filter(None, [os.environ.get("DOCKER_HOST"), "unix:///var/run/docker.sock"])
)
pytestmark = [
    pytest.mark.docker,
    # one Docker engine on the machine (harness/providers/_docker.py): its tests run one at a time
    pytest.mark.xdist_group("exclusive"),
    pytest.mark.skipif(
        not dockerd_installed() and not ENGINE_ANSWERS,
        reason="no Docker engine answers and dockerd is not installed (apt-get install docker.io)",
    ),
]


@pytest.fixture(scope="module")
def engine() -> Iterator[DockerEngine]:
    with DockerEngine() as docker_engine:
        yield docker_engine


def roundtrip(bootstrap: str, topic: str) -> None:
    create_topics(bootstrap, [topic], partitions=2)
    produce(bootstrap, topic, [("k1", "v1"), ("k2", "v2"), ("k3", "v3")])
    records = consume_all(bootstrap, topic, min_records=3)
    assert sorted((r.key, r.value) for r in records) == [
        (b"k1", b"v1"),
        (b"k2", b"v2"),
        (b"k3", b"v3"),
    ]


def test_testcontainers_kafka_start_produce_consume_stop(engine: DockerEngine) -> None:
    # The engine's data directory outlives it (~/.cache), so a run killed earlier may have left
    # containers behind: what matters is that this provider leaves none of its own.
    client = engine.client()
    try:
        before = {c.id for c in client.containers.list(all=True)}
    finally:
        client.close()
    provider = TestcontainersKafka(engine=engine)
    with provider:
        assert provider.running
        assert provider.bootstrap_servers.startswith("127.0.0.1:")
        assert provider.image in (tansu_image(), "apache/kafka:3.9.0")
        assert check_connection(provider.bootstrap_servers) == provider.cluster_id
        roundtrip(provider.bootstrap_servers, "tc-roundtrip")
        bootstrap = provider.bootstrap_servers
    assert not provider.running
    with pytest.raises(BrokerUnreachableException):
        check_connection(bootstrap, timeout=1)
    client = engine.client()
    try:
        left = client.containers.list(all=True, filters={"ancestor": provider.image})
        assert [c for c in left if c.id not in before] == []
    finally:
        client.close()
    assert engine.host  # the shared engine still runs


def test_local_tansu_image_is_cached(engine: DockerEngine) -> None:
    with TestcontainersKafka(engine=engine, prefer_official=False) as first:
        assert first.image == tansu_image()
    client = engine.client()
    try:
        image_id = client.images.get(tansu_image()).id
    finally:
        client.close()
    with TestcontainersKafka(engine=engine, prefer_official=False) as second:
        roundtrip(second.bootstrap_servers, "tc-cached")
    client = engine.client()
    try:
        assert client.images.get(tansu_image()).id == image_id
    finally:
        client.close()


def test_provider_with_its_own_engine_stops_it(tmp_path: Path) -> None:
    # A fresh engine root: the provider starts dockerd, and stops it with the container.
    engine = DockerEngine(tmp_path / "docker", reuse=False)
    with TestcontainersKafka(engine=engine) as provider:
        assert engine.started_here
        roundtrip(provider.bootstrap_servers, "tc-own-engine")
    # the caller's engine is not the provider's to stop
    assert engine.started_here
    engine.stop()
    assert not ping(f"unix://{engine.socket_path}")


def test_engine_without_dockerd_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("harness.providers._docker.find_dockerd", lambda: None)
    with pytest.raises(DockerUnavailableError, match=r"apt-get install -y docker\.io"):
        DockerEngine(tmp_path / "docker", reuse=False).start()
