"""Active topics (KIP-558) over HTTP: ``GET /connectors/{c}/topics`` and ``PUT .../topics/reset``.

Real connectors on the embedded broker: the generator source and the recording sink. The
answers follow Kafka Connect 3.9's ``ConnectorsResource`` and ``ConnectorTopicsIntegrationTest``:
a source lists the topics Kafka acknowledged its records for (after the SMTs), a sink the topics
it consumed; an unknown or deleted connector has no topics (200, not 404); reset answers 202
with no body; ``topic.tracking.enable=false`` and ``topic.tracking.allow.reset=false`` answer 403.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from tests._wait import wait_until
from tests.integration._support import (
    Connect,
    Rest,
    generator_config,
    make_topic,
    recording_config,
    unique,
)


def topics(rest: Rest, name: str) -> list[str]:
    r = rest.http.get(f"/connectors/{name}/topics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = r.json()
    assert list(body) == [name]
    assert list(body[name]) == ["topics"]
    return sorted(body[name]["topics"])


def wait_topics(rest: Rest, name: str, expected: list[str], timeout: float = 30.0) -> None:
    wait_until(
        lambda: topics(rest, name) == sorted(expected),
        timeout,
        0.1,
        lambda: f"active topics of {name} == {sorted(expected)}; have {topics(rest, name)}",
    )


def test_sources_and_sinks_report_the_topics_they_used(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    worker = connect()
    rest = worker.rest
    foo, bar = make_topic(kafka_bootstrap), make_topic(kafka_bootstrap)
    routed = f"{foo}-routed"
    source, other, sink = unique("foo-source"), unique("bar-source"), unique("sink")

    # nothing yet: Kafka answers an empty list for a connector it does not know
    assert topics(rest, source) == []

    # the source's topic is the one its records went to, after the SMTs
    rest.create(
        source,
        generator_config(
            foo,
            records=5,
            transforms="route",
            **{
                "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.route.regex": "(.*)",
                "transforms.route.replacement": "$1-routed",
            },
        ),
    )
    wait_topics(rest, source, [routed])
    rest.create(other, generator_config(bar, records=5))
    wait_topics(rest, other, [bar])

    store = tmp_path / "store"
    rest.create(sink, recording_config(f"{routed},{bar}", store))
    wait_topics(rest, sink, [routed, bar], timeout=60)

    # deleting a connector resets its active topics
    rest.call("DELETE", f"/connectors/{other}", 204)
    assert topics(rest, other) == []

    # reset: 202 without a body; the sink has consumed everything, so nothing comes back...
    r = rest.http.put(f"/connectors/{sink}/topics/reset")
    assert r.status_code == 202, r.text
    assert r.content == b""
    assert topics(rest, sink) == []
    # ...until it consumes from a topic again: the running task records it anew
    late = b'{"schema": {"type": "string", "optional": false}, "payload": "late"}'
    with_producer(kafka_bootstrap, lambda p: p.produce(bar, late, late))
    wait_topics(rest, sink, [bar], timeout=60)
    assert topics(rest, source) == [routed]

    # reset of an unknown connector is accepted, as in Kafka
    assert rest.http.put(f"/connectors/{unique('nope')}/topics/reset").status_code == 202


def with_producer(bootstrap: str, send: Callable[[Producer], None]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    send(producer)
    assert producer.flush(30) == 0


def test_topic_tracking_disabled_is_forbidden(
    connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    worker = connect({"topic.tracking.enable": "false"})
    rest = worker.rest
    topic = make_topic(kafka_bootstrap)
    name = unique("gen")
    rest.create(name, generator_config(topic, records=3))
    rest.wait_state(name, "RUNNING", tasks=1)
    for method, path in [
        ("GET", f"/connectors/{name}/topics"),
        ("PUT", "/connectors/x/topics/reset"),
    ]:
        r = rest.http.request(method, path)
        assert r.status_code == 403, r.text
        assert r.json() == {"error_code": 403, "message": "Topic tracking is disabled."}
    # the tasks record nothing either
    wait_until(
        lambda: worker.worker.herder.connector_offsets(name)["offsets"], 30, message="offsets"
    )
    assert worker.worker.status.topics(name) == []


def test_topic_tracking_reset_disabled_is_forbidden(
    connect: Callable[..., Connect], kafka_bootstrap: str
) -> None:
    worker = connect({"topic.tracking.allow.reset": "false"})
    rest = worker.rest
    topic = make_topic(kafka_bootstrap)
    name = unique("gen")
    rest.create(name, generator_config(topic, records=3))
    wait_topics(rest, name, [topic])
    r = rest.http.put(f"/connectors/{name}/topics/reset")
    assert r.status_code == 403, r.text
    assert r.json() == {"error_code": 403, "message": "Topic tracking reset is disabled."}
    assert topics(rest, name) == [topic]
