"""Source -> Kafka -> sink, end to end, with JSON (schemas on) and Avro; exact record sets.

Also Kafka's file quickstart (FileStreamSource -> Kafka -> FileStreamSink) on the embedded worker,
and a sink whose consumer's fetches skip records, as the embedded broker's sometimes do.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests._fetch_skip import SkippingConsumer, skipping_factory
from tests._wait import wait_until
from tests.connectors.recording import read_store
from tests.integration._support import (
    AVRO,
    JSON,
    Connect,
    all_keys,
    expected_store_records,
    generator_config,
    make_topic,
    reading,
    recording_config,
    store_records,
    unique,
    wait_store_keys,
)

STREAMS = 3
RECORDS = 200


def converters(kind: str) -> dict[str, str]:
    if kind == "json":
        return {"key.converter": JSON, "value.converter": JSON}
    url = f"mock://{unique('it')}"  # in-process mock registry, shared by source and sink
    return {
        "key.converter": AVRO,
        "key.converter.schema.registry.url": url,
        "value.converter": AVRO,
        "value.converter.schema.registry.url": url,
    }


def run_pipeline(worker: Connect, bootstrap: str, tmp_path: Path, kind: str) -> None:
    topic = make_topic(bootstrap, partitions=2)
    store = tmp_path / unique("store")
    conv = converters(kind)
    source, sink = unique("gen"), unique("rec")
    worker.rest.create(
        source,
        generator_config(topic, records=RECORDS, partitions=STREAMS, tasks_max=2, batch_size=50)
        | conv,
    )
    worker.rest.create(sink, recording_config(topic, store, tasks_max=1) | conv)
    worker.rest.wait_state(source, "RUNNING", tasks=2)
    worker.rest.wait_state(sink, "RUNNING", tasks=1)

    with reading(bootstrap, topic) as reader:
        reader.wait_for(STREAMS * RECORDS)
        reader.poll(0.3)
        if kind == "json":
            assert reader.keys() == all_keys(STREAMS, RECORDS)
        assert len(reader.messages) == STREAMS * RECORDS
        # headers travel through the header converter
        assert all(dict(m.headers).get("gen.stream") for m in reader.messages)

    wait_store_keys(store, all_keys(STREAMS, RECORDS))
    got = read_store(store)
    assert store_records(got) == expected_store_records(STREAMS, RECORDS)
    assert max(got.coordinates().values()) == 1  # no duplicates
    assert {r["topic"] for r in got.records} == {topic}


def test_records_a_fetch_skipped_reach_the_sink_once_and_in_order(
    connect: Callable[..., Connect],
    kafka_bootstrap: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sink task's consumer leaves records out of its first fetches, while a source writes.

    Partition 0 loses offsets 20-34 from one fetch, partition 1 the first 10 records of its
    very first fetch (the task reads it from the log start). The records are on the broker: the
    task reads them again, puts every record once and in offset order, and reports the healed
    gaps in its ``fetch-gap-heal-total`` metric (``GET /metrics`` too).
    """
    topic = make_topic(kafka_bootstrap, partitions=2)
    made: list[SkippingConsumer] = []
    # the sink task builds its consumer with cdk.kafka.new_consumer when it starts
    monkeypatch.setattr(
        "cdk.kafka.new_consumer", skipping_factory([(topic, 0, 20, 15), (topic, 1, 0, 10)], made)
    )
    worker = connect()
    store = tmp_path / unique("store")
    source, sink = unique("gen"), unique("rec")
    worker.rest.create(sink, recording_config(topic, store, tasks_max=1))
    worker.rest.wait_state(sink, "RUNNING", tasks=1)
    worker.rest.create(
        source,
        generator_config(topic, records=RECORDS, partitions=STREAMS, tasks_max=1, batch_size=20),
    )
    wait_store_keys(store, all_keys(STREAMS, RECORDS))
    got = read_store(store)
    assert max(got.coordinates().values()) == 1  # no duplicates
    offsets: dict[int, list[int]] = {}
    for r in got.records:
        offsets.setdefault(r["partition"], []).append(r["offset"])
    assert {p: o == list(range(len(o))) for p, o in offsets.items()} == {0: True, 1: True}
    assert sorted(len(c.left_out) for c in made if c.left_out) == [25]
    snapshot = worker.worker.metrics()
    assert snapshot.value("sink-task-metrics", "fetch-gap-heal-total", connector=sink, task=0) == 2
    text = worker.rest.call("GET", "/metrics", 200).text
    line = f'kafka_connect_sink_task_metrics_fetch_gap_heal_total{{connector="{sink}",task="0"}}'
    assert f"{line} 2.0" in text


@pytest.mark.parametrize("kind", ["json", "avro"])
def test_source_to_sink_exact_records(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path, kind: str
) -> None:
    run_pipeline(connect(), kafka_bootstrap, tmp_path, kind)


def _docker_available() -> str | None:
    if os.environ.get("DOCKER_HOST") or Path("/var/run/docker.sock").exists():
        return None
    if shutil.which("dockerd") is None:
        return "dockerd is not installed and no Docker engine is running (DOCKER_HOST unset)"
    return None


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.xdist_group("exclusive")  # one Docker engine on the machine
def test_source_to_sink_on_testcontainers(connect: Callable[..., Connect], tmp_path: Path) -> None:
    reason = _docker_available()
    if reason:
        pytest.skip(f"testcontainers provider needs a Docker engine: {reason}")
    from harness.providers.kafka import kafka_provider

    with kafka_provider("testcontainers") as kafka:
        worker = connect({"bootstrap.servers": kafka.bootstrap_servers})
        try:
            run_pipeline(worker, kafka.bootstrap_servers, tmp_path, "json")
        finally:
            worker.stop()  # before the broker goes away


def test_filestream_sink_lines_arrive_without_waiting_for_the_offset_flush(
    connect: Callable[..., Connect], kafka_bootstrap: str, tmp_path: Path
) -> None:
    """The tail of the output appears as soon as it is consumed, not at the next offset commit.

    The offset flush interval is 10 minutes; every line (the last ones too, which used to stay in
    the sink's write buffer until the next flush) must be in the file within seconds.
    """
    worker = connect({"offset.flush.interval.ms": "600000"})
    topic = make_topic(kafka_bootstrap)
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = [f"line {i} {'x' * 20}" for i in range(200)] + ["café ☕ 😀", "the last line"]
    source_file.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    source, sink = unique("file-source"), unique("file-sink")
    worker.rest.create(
        source, {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
    )
    worker.rest.create(
        sink, {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic}
    )
    worker.rest.wait_state(sink, "RUNNING", tasks=1)

    def written() -> list[str]:
        return sink_file.read_text(encoding="utf-8").splitlines() if sink_file.exists() else []

    wait_until(
        lambda: written() == lines,
        timeout=30.0,  # the group join takes ~3 s; the offset flush would come after 600 s
        message=lambda: f"{len(lines)} lines in {sink_file}; last written: {written()[-3:]}",
    )


def test_a_sink_subscribed_before_its_topic_exists_gets_its_records_within_seconds(
    connect: Callable[..., Connect], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The quickstart pattern at its worst: the sink subscribes before the source creates the topic.

    The sink's consumer finds the topic missing (``Subscribed topic not available``); librdkafka
    only looks again at its next metadata refresh (``topic.metadata.refresh.interval.ms``, five
    minutes by default), so the records used to wait minutes. They must arrive within seconds.
    """
    worker = connect()
    topic = unique("not-yet")  # created by the source's producer (the broker auto-creates it)
    source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = [f"line {i}" for i in range(20)]
    source_file.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    source, sink = unique("file-source"), unique("file-sink")
    worker.rest.create(
        sink, {"connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic}
    )
    with caplog.at_level(logging.WARNING, logger="cdk.runtime.sink"):
        # the consumer found the topic missing: librdkafka may look again only at its next
        # metadata refresh, five minutes later
        wait_until(
            lambda: f"Subscribed topic not available: {topic}" in caplog.text,
            30,
            message=lambda: "the sink's consumer to find the topic missing; log:\n" + caplog.text,
        )
    worker.rest.create(
        source, {"connector.class": "FileStreamSource", "file": str(source_file), "topic": topic}
    )

    def written() -> list[str]:
        return sink_file.read_text(encoding="utf-8").splitlines() if sink_file.exists() else []

    wait_until(
        lambda: written() == lines,
        timeout=20.0,
        message=lambda: f"{len(lines)} lines in {sink_file}; written: {written()[-3:]}",
    )
