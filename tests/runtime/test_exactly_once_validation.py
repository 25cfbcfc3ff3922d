"""Exactly-once preflight validation as Kafka 3.9, over real HTTP, in both modes.

``PUT /connector-plugins/{type}/config/validate``, ``POST /connectors`` and
``PUT /connectors/{name}/config`` answer the same errors on ``exactly.once.support``,
``transaction.boundary`` and a connector's ``offsets.storage.topic``: Kafka's texts in
distributed mode; in standalone mode (which has no exactly-once, as Kafka's) ``required`` is
refused with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from cdk.runtime import DistributedWorker
from cdk.runtime._exactly_once import (
    BOUNDARIES_UNSUPPORTED,
    NO_PREFLIGHT,
    STANDALONE_NOT_SUPPORTED,
    UNSUPPORTED,
    WORKER_NOT_ENABLED,
)
from cdk.runtime._key_notes import CONNECTOR_KEY_NOTES, no_effect_message
from cdk.runtime.standalone._worker import EmbeddedWorker
from tests.integration._support import JSON, generator_config, make_topic
from tests.runtime.distributed._support import distributed_props
from tests.runtime.distributed._thread_placement import ThreadPlacement

VALIDATE = "/connector-plugins/GeneratorSourceConnector/config/validate"
EOS_KEYS = ("exactly.once.support", "transaction.boundary", "offsets.storage.topic")

Http = Callable[..., httpx.Client]


@pytest.fixture
def http() -> Iterator[Http]:
    """Open a client on a worker's REST URL; closed at teardown."""
    clients: list[httpx.Client] = []

    def open_client(url: str | None) -> httpx.Client:
        assert url is not None
        client = httpx.Client(base_url=url, timeout=30)
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        client.close()


@pytest.fixture
def standalone(kafka_bootstrap: str, http: Http) -> Iterator[httpx.Client]:
    props = {
        "bootstrap.servers": kafka_bootstrap,
        "key.converter": JSON,
        "value.converter": JSON,
        "listeners": "http://127.0.0.1:0",
    }
    with EmbeddedWorker(props, cluster_id_timeout=0) as worker:
        yield http(worker.rest_url)


def _distributed(kafka_bootstrap: str, **extra: str) -> DistributedWorker:
    worker = DistributedWorker(
        distributed_props(kafka_bootstrap, prefix="eosv", **extra),
        placement=ThreadPlacement(1),
        cluster_id_timeout=0,
    )
    worker.start()
    assert worker.await_leader(60), "the driver did not take the lead"
    return worker


@pytest.fixture
def distributed(kafka_bootstrap: str, http: Http) -> Iterator[httpx.Client]:
    worker = _distributed(kafka_bootstrap)
    try:
        yield http(worker.rest_url)
    finally:
        worker.stop()


def _errors(answer: dict[str, Any]) -> dict[str, list[str]]:
    return {
        c["value"]["name"]: c["value"]["errors"]
        for c in answer["configs"]
        if c["value"] and c["value"]["name"] in EOS_KEYS
    }


def _config(kafka_bootstrap: str, **extra: str) -> dict[str, str]:
    return {"name": "eos", **generator_config(make_topic(kafka_bootstrap)), **extra}


def _refused_everywhere(
    client: httpx.Client, config: dict[str, str], key: str, expected: list[str]
) -> None:
    """validate, create and PUT config all refuse ``config`` with ``expected`` on ``key``."""
    answer = client.put(VALIDATE, json=config)
    assert answer.status_code == 200, answer.text
    assert _errors(answer.json())[key] == expected
    assert answer.json()["error_count"] == len(expected)
    created = client.post("/connectors", json={"name": config["name"], "config": config})
    assert created.status_code == 400, created.text
    assert all(text in created.json()["message"] for text in expected), created.text
    put = client.put(f"/connectors/{config['name']}/config", json=config)
    assert put.status_code == 400, put.text
    assert all(text in put.json()["message"] for text in expected), put.text
    assert client.get("/connectors").json() == []


def test_distributed_required_on_a_worker_without_exactly_once(
    distributed: httpx.Client, kafka_bootstrap: str
) -> None:
    supported = _config(
        kafka_bootstrap, **{"exactly.once.support": "required", "eos.support": "SUPPORTED"}
    )
    _refused_everywhere(distributed, supported, "exactly.once.support", [WORKER_NOT_ENABLED])
    silent = _config(kafka_bootstrap, **{"exactly.once.support": "REQUIRED"})
    _refused_everywhere(
        distributed, silent, "exactly.once.support", [WORKER_NOT_ENABLED, NO_PREFLIGHT]
    )
    unsupported = _config(
        kafka_bootstrap, **{"exactly.once.support": "required", "eos.support": "UNSUPPORTED"}
    )
    _refused_everywhere(
        distributed, unsupported, "exactly.once.support", [WORKER_NOT_ENABLED, UNSUPPORTED]
    )


def test_distributed_connector_boundaries_need_the_connector_s_support(
    distributed: httpx.Client, kafka_bootstrap: str
) -> None:
    config = _config(kafka_bootstrap, **{"transaction.boundary": "connector"})
    _refused_everywhere(distributed, config, "transaction.boundary", [BOUNDARIES_UNSUPPORTED])
    able = {**config, "eos.boundaries": "SUPPORTED"}
    answer = distributed.put(VALIDATE, json=able).json()
    assert answer["error_count"] == 0, _errors(answer)
    bad = distributed.put(VALIDATE, json={**config, "transaction.boundary": "sometimes"}).json()
    assert bad["error_count"] == 1
    assert "transaction.boundary" in _errors(bad)


def test_standalone_refuses_required_and_says_why(
    standalone: httpx.Client, kafka_bootstrap: str
) -> None:
    config = _config(
        kafka_bootstrap, **{"exactly.once.support": "required", "eos.support": "SUPPORTED"}
    )
    _refused_everywhere(standalone, config, "exactly.once.support", [STANDALONE_NOT_SUPPORTED])
    requested = standalone.put(VALIDATE, json={**config, "exactly.once.support": "requested"})
    assert requested.json()["error_count"] == 0
    boundary = _config(kafka_bootstrap, **{"transaction.boundary": "connector"})
    _refused_everywhere(standalone, boundary, "transaction.boundary", [BOUNDARIES_UNSUPPORTED])


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_a_connector_s_own_offsets_topic_is_refused(
    mode: str, request: pytest.FixtureRequest, kafka_bootstrap: str
) -> None:
    client: httpx.Client = request.getfixturevalue(mode)
    config = _config(kafka_bootstrap, **{"offsets.storage.topic": "my-offsets"})
    note = CONNECTOR_KEY_NOTES["offsets.storage.topic"]
    refused = no_effect_message("offsets.storage.topic", note, mode)
    _refused_everywhere(client, config, "offsets.storage.topic", [refused])


def test_distributed_required_on_a_worker_with_exactly_once(
    kafka_bootstrap: str, http: Http
) -> None:
    worker = _distributed(kafka_bootstrap, **{"exactly.once.source.support": "enabled"})
    try:
        client = http(worker.rest_url)
        supported = _config(
            kafka_bootstrap, **{"exactly.once.support": "required", "eos.support": "SUPPORTED"}
        )
        answer = client.put(VALIDATE, json=supported).json()
        assert answer["error_count"] == 0, _errors(answer)
        unsupported = {**supported, "eos.support": "UNSUPPORTED"}
        _refused_everywhere(client, unsupported, "exactly.once.support", [UNSUPPORTED])
        created = client.post("/connectors", json={"name": "eos", "config": supported})
        assert created.status_code == 201, created.text
    finally:
        worker.stop()
