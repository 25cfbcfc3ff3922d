"""Worker throughput against hand-written confluent-kafka loops, on the embedded broker.

(a) source: the generator test connector -> JsonConverter (schemas on) -> Kafka through the
    embedded worker, vs a loop that builds the same Struct records, serializes key, value and
    header the same way and produces them with the same producer settings.
(b) sink: Kafka -> JsonConverter -> a no-op sink through the worker, vs a consumer loop that
    deserializes key, value and header the same way.

Run with ``make bench`` (or ``.venv/bin/python bench/worker_throughput.py [--records N]``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # the test connectors live in tests/connectors

import _results  # noqa: E402  (bench/, first on sys.path: the page's results)
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition  # noqa: E402

from cdk.converters import JsonConverter, SimpleHeaderConverter  # noqa: E402
from cdk.data import Schema  # noqa: E402
from cdk.kafka import EmbeddedKafka, create_topics, new_producer  # noqa: E402

JSON = "org.apache.kafka.connect.json.JsonConverter"
BATCH = 500  # records per generator poll (and per stream)
GROUP = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
FLUSH_INTERVAL_S = 60.0  # the worker's offset.flush.interval.ms (its default)
#: CPU microseconds per record of the latest measurement of each pipeline, by name: this
#: process's CPU time (every thread) from the start to the end of the measurement. Unlike the
#: rates, it hardly moves when other processes load the machine.
CPU_US: dict[str, float] = {}


# ---------------------------------------------------------------------------------- counting
def count_topic(bootstrap: str, topic: str, expected: int) -> None:
    """Child process: count the topic's records; print the wall time when ``expected`` arrived."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"count-{uuid.uuid4().hex}", **GROUP}
    )
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    print("ready", flush=True)
    seen = 0
    while seen < expected:
        for msg in consumer.consume(10000, 0.2):
            if msg.error() is None:
                seen += 1
    print(f"done {time.time():.6f} {seen}", flush=True)
    consumer.close()


class Counter:
    """A counting consumer in another process (so it takes no CPU time from the GIL we measure)."""

    def __init__(self, bootstrap: str, topic: str, expected: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--count", bootstrap, topic, str(expected)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"counter did not start: {line!r}")

    def finished_at(self, timeout: float = 300.0) -> float:
        """Wall-clock time at which the counter saw every expected record."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        self.proc.wait(timeout)
        if not line or line[0] != "done":
            raise RuntimeError(f"counter failed: {line!r}")
        return float(line[1])


# ----------------------------------------------------------------------------------- records
def converters() -> tuple[JsonConverter, JsonConverter, SimpleHeaderConverter]:
    key, value, header = JsonConverter(), JsonConverter(), SimpleHeaderConverter()
    key.configure({}, is_key=True)
    value.configure({}, is_key=False)
    header.configure({})
    return key, value, header


def hand_source(bootstrap: str, topic: str, records: int, producer_props: dict[str, Any]) -> float:
    """The hand-written producer loop: same Structs, same serialization; records/s."""
    from tests.connectors.generator import KEY_SCHEMA, VALUE_SCHEMA, expected_key, expected_value

    counter = Counter(bootstrap, topic, records)
    start = time.time()
    cpu = time.process_time()
    key_conv, value_conv, header_conv = converters()
    producer = new_producer(producer_props)
    acked = 0

    def on_delivery(err: KafkaError | None, msg: Any) -> None:
        nonlocal acked
        if err is None:
            acked += 1

    for seq in range(records):
        key = key_conv.from_connect_data(topic, KEY_SCHEMA, expected_key("p0", seq))
        value = value_conv.from_connect_data(topic, VALUE_SCHEMA, expected_value("p0", seq))
        header = header_conv.from_connect_header(topic, "gen.stream", Schema.STRING_SCHEMA, "p0")
        while True:
            try:
                producer.produce(
                    topic, value, key, headers=[("gen.stream", header)], on_delivery=on_delivery
                )
                break
            except BufferError:
                producer.poll(0.05)
        if seq % BATCH == BATCH - 1:
            producer.poll(0)  # serve delivery reports once per batch, as the worker does
    producer.flush(60)
    assert acked == records, f"only {acked} of {records} acknowledged"
    CPU_US["hand source"] = (time.process_time() - cpu) * 1e6 / records
    return records / (counter.finished_at() - start)


def hand_sink(topic: str, records: int, consumer_props: dict[str, Any]) -> float:
    """The hand-written consumer loop: same deserialization; records/s after the first batch.

    The window runs from the end of the first batch to the end of the last, as the worker's
    (the counting sink stamps each ``put``, which comes after the batch was converted).
    """
    cpu = time.process_time()
    key_conv, value_conv, header_conv = converters()
    consumer = Consumer({**consumer_props, "group.id": f"hand-{uuid.uuid4().hex}"})
    consumer.subscribe([topic])
    seen = 0
    first: float | None = None
    last = 0.0
    next_commit = time.monotonic() + FLUSH_INTERVAL_S
    while seen < records:
        batch = consumer.consume(BATCH, 0.5)
        if not batch:
            continue
        for msg in batch:
            if msg.error() is not None:
                continue
            t = msg.topic()
            key_conv.to_connect_data(t, msg.key())
            value_conv.to_connect_data(t, msg.value())
            for name, raw in msg.headers() or []:
                header_conv.to_connect_header(t, name, raw)
            seen += 1
        last = time.monotonic()
        if first is None:
            first = last
        if last >= next_commit:  # commit as often as the worker does (offset.flush.interval.ms)
            consumer.commit(asynchronous=True)
            next_commit = last + FLUSH_INTERVAL_S
    CPU_US["hand sink"] = (time.process_time() - cpu) * 1e6 / records
    consumer.commit(asynchronous=False)
    consumer.close()
    assert first is not None
    return records / (last - first)


# ------------------------------------------------------------------------------------ worker
class Worker:
    """An embedded worker with its REST API on a free port."""

    def __init__(self, bootstrap: str, workdir: Path) -> None:
        import httpx

        from cdk.kafka import free_port
        from cdk.runtime.standalone._worker import EmbeddedWorker

        port = free_port()
        self.props = {
            "bootstrap.servers": bootstrap,
            "key.converter": JSON,
            "value.converter": JSON,
            "offset.storage.file.filename": str(workdir / "offsets"),
            "listeners": f"http://127.0.0.1:{port}",
            **{f"consumer.{k}": str(v) for k, v in GROUP.items()},
        }
        self.worker: Any = EmbeddedWorker(self.props)
        self.worker.start()
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)

    def create(self, name: str, config: dict[str, str]) -> None:
        r = self.http.post("/connectors", json={"name": name, "config": config})
        if r.status_code != 201:
            raise RuntimeError(f"create {name}: {r.status_code} {r.text}")

    def delete(self, name: str) -> None:
        """Delete a measured connector, so that it does not run during the next measurements."""
        r = self.http.delete(f"/connectors/{name}")
        if r.status_code not in (200, 204):
            raise RuntimeError(f"delete {name}: {r.status_code} {r.text}")

    def stop(self) -> None:
        self.http.close()
        self.worker.stop()


def worker_source(worker: Worker, bootstrap: str, topic: str, records: int) -> float:
    from tests.connectors import GENERATOR

    name = f"bench-source-{uuid.uuid4().hex[:8]}"
    counter = Counter(bootstrap, topic, records)
    start = time.time()
    cpu = time.process_time()
    worker.create(
        name,
        {
            "connector.class": GENERATOR,
            "topic": topic,
            "records": str(records),
            "batch.size": str(BATCH),
        },
    )
    rate = records / (counter.finished_at() - start)
    CPU_US["worker source"] = (time.process_time() - cpu) * 1e6 / records
    worker.delete(name)
    return rate


def worker_sink(worker: Worker, topic: str, records: int) -> float:
    from tests.connectors.counting import progress

    name = f"bench-sink-{uuid.uuid4().hex[:8]}"
    cpu = time.process_time()
    worker.create(
        name,
        {"connector.class": "tests.connectors.counting.CountingSinkConnector", "topics": topic},
    )
    deadline = time.monotonic() + 300
    while progress(name).count < records:
        if time.monotonic() > deadline:
            raise RuntimeError(f"sink saw {progress(name).count} of {records} records")
        time.sleep(0.05)  # the window comes from the task's own timestamps
    CPU_US["worker sink"] = (time.process_time() - cpu) * 1e6 / records
    p = progress(name)
    assert p.first is not None
    assert p.last is not None
    worker.delete(name)
    return records / (p.last - p.first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000, help="records per measurement")
    parser.add_argument("--runs", type=int, default=1, help="repeat; report the best of each")
    parser.add_argument("--bootstrap", help="an existing broker (default: an embedded one)")
    parser.add_argument("--count", nargs=3, help=argparse.SUPPRESS)
    _results.add_option(parser, "worker_throughput")
    args = parser.parse_args()
    if args.count:
        count_topic(args.count[0], args.count[1], int(args.count[2]))
        return
    results = _results.Results.from_args("worker_throughput", args)
    every: list[list[float]] = []  # each run's measured

    n = args.records
    broker = None if args.bootstrap else EmbeddedKafka().start()
    bootstrap = args.bootstrap or broker.bootstrap_servers  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            worker = Worker(bootstrap, Path(tmp))
            try:
                from cdk.runtime._sink_runner import CONSUMER_DEFAULTS
                from cdk.runtime._source_runner import PRODUCER_DEFAULTS
                from cdk.runtime._worker_config import WorkerConfig

                # exactly the settings the worker's source and sink tasks use
                config = WorkerConfig(worker.props)
                producer_props = {**PRODUCER_DEFAULTS, **config.producer_props()}
                consumer_props = {**CONSUMER_DEFAULTS, **config.consumer_props("hand")}
                best = [0.0, 0.0, 0.0, 0.0]  # source hand, source worker, sink hand, sink worker
                for run in range(args.runs):
                    results.run()
                    hand_topic, worker_topic = (f"bench-{uuid.uuid4().hex[:8]}" for _ in range(2))
                    create_topics(bootstrap, [hand_topic, worker_topic], partitions=1)
                    hand_first = run % 2 == 0  # alternate who goes first: the broker keeps data
                    measured = [0.0, 0.0, 0.0, 0.0]
                    for index in (0, 1) if hand_first else (1, 0):
                        if index == 0:
                            measured[0] = hand_source(bootstrap, hand_topic, n, producer_props)
                        else:
                            measured[1] = worker_source(worker, bootstrap, worker_topic, n)
                    for index in (2, 3) if hand_first else (3, 2):
                        if index == 2:
                            measured[2] = hand_sink(hand_topic, n, consumer_props)
                        else:
                            measured[3] = worker_sink(worker, hand_topic, n)
                    best = [max(b, m) for b, m in zip(best, measured, strict=True)]
                    every.append(measured)
                    print(
                        f"run {run + 1}: source {measured[1]:,.0f}/{measured[0]:,.0f} "
                        f"({measured[1] / measured[0]:.0%}), sink {measured[3]:,.0f}/"
                        f"{measured[2]:,.0f} ({measured[3] / measured[2]:.0%}) (worker/loop); "
                        f"CPU us/record: source {CPU_US['worker source']:.1f}/"
                        f"{CPU_US['hand source']:.1f}, sink {CPU_US['worker sink']:.1f}/"
                        f"{CPU_US['hand sink']:.1f}",
                        file=sys.stderr,
                        flush=True,
                    )
                rows = [
                    ("source: generator -> JsonConverter -> Kafka", best[0], best[1]),
                    ("sink: Kafka -> JsonConverter -> no-op sink", best[2], best[3]),
                ]
            finally:
                worker.stop()
    finally:
        if broker is not None:
            broker.stop()

    print(f"Worker throughput, {n:,} records of a 9-field Struct (JsonConverter, schemas on),")
    print("embedded Tansu broker, one partition; hand-written confluent-kafka loop in the same run")
    print(f"(best of {args.runs} run(s))")
    print()
    print("| pipeline | hand-written loop (records/s) | worker (records/s) | worker / loop |")
    print("|---|---:|---:|---:|")
    for name, hand, work in rows:
        print(f"| {name} | {hand:,.0f} | {work:,.0f} | {work / hand:.0%} |")
    for key, title, hand_index in (
        ("source", "generator source under the worker / hand-written loop", 0),
        ("sink", "no-op sink under the worker / hand-written consume loop", 2),
    ):
        results.figure(
            f"worker.{key}",
            title,
            "rec/s",
            [m[hand_index + 1] for m in every],
            baseline=[m[hand_index] for m in every],
            baseline_name="hand-written confluent-kafka loop",
            kit_name="worker",
            aim=_results.ratio_aim(">=", 0.8),
            note=f"{n:,} records of a 9-field Struct, one partition (the table above: best of "
            "each column; the page: every run)",
        )
    results.write()


if __name__ == "__main__":
    main()
