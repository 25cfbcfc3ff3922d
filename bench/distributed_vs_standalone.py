"""Distributed mode on Spark against standalone mode, in one run on one embedded broker.

The pipeline: the generator test source (JsonConverter, schemas on) -> a topic -> a no-op
sink (the counting test sink), run three ways in the same run:

- standalone: the embedded worker (``cdk standalone``'s engine, a thread per task);
- distributed on ``local[2]``: a distributed driver whose workers are Spark tasks in its own JVM
  (one per core, each running connector tasks as threads);
- distributed on a standalone Spark cluster of 2 workers (2 cores each) from the wheel.

For each: REST create -> first record in Kafka of the source, alone (once the driver and its
workers are up); the source's records/s from the first record in the topic to the N-th, with no
sink running beside it; then the sink, created once the topic holds every record: its records/s
from its POST to its group's commit of the N-th. The ratios are to standalone. On the cluster
also: the time from the SIGKILL of the Spark worker running a source task to that task RUNNING
on another worker, and to records flowing again. With ``--runs`` the figures are medians, and
the ratios of each run are printed too (the machine is shared; a run's ratios compare modes
measured minutes apart, the medians smooth that).

Run with ``.venv/bin/python bench/distributed_vs_standalone.py [--records N] [--runs R]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # the test connectors live in tests/connectors

import _results  # noqa: E402  (bench/, first on sys.path: the page's results)
import httpx  # noqa: E402
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition  # noqa: E402

from cdk.kafka import EmbeddedKafka, create_topics  # noqa: E402
from cdk.runtime import EmbeddedWorker  # noqa: E402
from cdk.spark import distributed_worker  # noqa: E402
from harness.providers.spark import LocalSpark, SparkProvider, StandaloneSpark  # noqa: E402

JSON = "org.apache.kafka.connect.json.JsonConverter"
GENERATOR = "tests.connectors.generator.GeneratorSourceConnector"
COUNTING = "tests.connectors.counting.CountingSinkConnector"
GROUP = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"}
TIMEOUT = 600.0


def _wait(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


class Counter:
    """Counts a topic's records without a group, noting when the first and the n-th arrived."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 20,
            }
        )
        self.consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        self.count = 0
        self.first: float | None = None
        self.first_created: float | None = None  # the first record's timestamp (CreateTime)

    def until(self, n: int, timeout: float = TIMEOUT) -> float:
        """Read until ``n`` records were read; return the monotonic time of the n-th."""
        deadline = time.monotonic() + timeout
        while self.count < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.count} of {n} records within {timeout:g}s")
            for msg in self.consumer.consume(1000, timeout=0.05):
                if msg.error() is None:
                    self.count += 1
                    if self.first is None:
                        self.first = time.monotonic()
                        self.first_created = msg.timestamp()[1] / 1000.0
        return time.monotonic()

    def close(self) -> None:
        self.consumer.close()


def _cpu_by_process() -> dict[int, tuple[str, float]]:
    """Every process's program (java, python, the broker, other) and CPU seconds, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, tuple[str, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        program = (
            "java"
            if name == "java"
            else "broker"
            if "tansu" in name
            else "python"
            if name.startswith("python")
            else "other"
        )
        out[int(entry)] = (program, (int(fields[11]) + int(fields[12])) / tick)
    return out


def _cpu_shares(before: dict[int, tuple[str, float]], seconds: float) -> dict[str, float]:
    """CPU used by each program since ``before``, in % of the machine over ``seconds``."""
    used: dict[str, float] = {}
    for pid, (program, cpu) in _cpu_by_process().items():
        used[program] = used.get(program, 0.0) + cpu - before.get(pid, (program, 0.0))[1]
    capacity = max(seconds, 1e-9) * (os.cpu_count() or 1)
    return {p: 100.0 * used.get(p, 0.0) / capacity for p in ("python", "java", "broker")}


def committed(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        offsets = consumer.committed([TopicPartition(topic, 0)], timeout=10)
    finally:
        consumer.close()
    return max(0, offsets[0].offset)


def worker_props(bootstrap: str, tmp: Path, spark: SparkProvider | None) -> dict[str, str]:
    props = {
        "bootstrap.servers": bootstrap,
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.flush.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
        "task.shutdown.graceful.timeout.ms": "10000",
        **{f"consumer.{k}": v for k, v in GROUP.items()},
    }
    if spark is None:
        props["offset.storage.file.filename"] = str(tmp / f"offsets-{uuid.uuid4().hex}")
        return props
    group = f"bench-{uuid.uuid4().hex[:8]}"
    props.update(
        {
            "group.id": group,
            "config.storage.topic": f"{group}-configs",
            "offset.storage.topic": f"{group}-offsets",
            "status.storage.topic": f"{group}-status",
            **spark.spark_properties(),
            "spark.task.maxFailures": "8",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
        }
    )
    return props


def measure(
    name: str, bootstrap: str, records: int, spark: SparkProvider | None, *, kill: bool = True
) -> dict[str, Any]:
    """Run the pipeline once; return its figures."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-dist-"))
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic], partitions=1)
    props = worker_props(bootstrap, tmp, spark)
    worker: Any = EmbeddedWorker(props) if spark is None else distributed_worker(props)
    started = time.monotonic()
    worker.start()
    if spark is not None:
        wanted = worker.placement.workers() or 1
        _wait(lambda: len(worker.herder.workers()) >= wanted, TIMEOUT, "the workers' heartbeats")
    ready = time.monotonic() - started
    counter = Counter(bootstrap, topic)
    out: dict[str, Any] = {"mode": name, "driver start (s)": ready}
    try:
        rest = httpx.Client(base_url=worker.rest_url, timeout=60)
        source = {
            "connector.class": GENERATOR,
            "topic": topic,
            "tasks.max": "1",
            "records": str(records),
            "batch.size": "500",
            "poll.interval.ms": "0",
        }
        sink = {"connector.class": COUNTING, "topics": topic, "tasks.max": "1"}
        created, created_wall = time.monotonic(), time.time()
        answer = rest.post("/connectors", json={"name": "src", "config": source})
        answer.raise_for_status()
        counter.until(1)
        assert counter.first is not None
        assert counter.first_created is not None
        out["create -> first record produced (s)"] = counter.first_created - created_wall
        out["create -> first record read (s)"] = counter.first - created
        cpu_before = _cpu_by_process()
        last = counter.until(records)
        out["source rec/s"] = records / max(last - counter.first, 1e-9)
        for program, share in _cpu_shares(cpu_before, last - counter.first).items():
            out[f"source window: {program} CPU (% of the machine)"] = share
        # the sink once the topic holds every record: its rate is its own, not the source's
        sink_created = time.monotonic()
        rest.post("/connectors", json={"name": "sink", "config": sink}).raise_for_status()
        done = _wait(
            lambda: committed(bootstrap, "connect-sink", topic) >= records and time.monotonic(),
            TIMEOUT,
            "the sink's commit of every record",
            interval=0.1,
        )
        out["sink rec/s"] = records / max(done - sink_created, 1e-9)
        if kill and isinstance(spark, StandaloneSpark):
            for name in ("src", "sink"):
                rest.delete(f"/connectors/{name}").raise_for_status()
            _wait(lambda: rest.get("/connectors").json() == [], TIMEOUT, "the connectors deleted")
            out.update(_kill_and_recover(rest, spark, bootstrap))
        rest.close()
    finally:
        counter.close()
        worker.stop()
    return out


def _kill_and_recover(
    rest: httpx.Client, cluster: StandaloneSpark, bootstrap: str
) -> dict[str, float]:
    """Kill the Spark worker of a running endless source's task; time its recovery."""
    topic = f"bench-kill-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic], partitions=1)
    config = {
        "connector.class": GENERATOR,
        "topic": topic,
        "tasks.max": "1",
        "records": "-1",
        "batch.size": "100",
        "poll.interval.ms": "50",
    }
    rest.post("/connectors", json={"name": "endless", "config": config}).raise_for_status()

    def task() -> dict[str, Any] | None:
        body = rest.get("/connectors/endless/status").json()
        tasks = body.get("tasks") or [{}]
        return tasks[0] if tasks[0].get("state") == "RUNNING" else None

    first = _wait(task, TIMEOUT, "the endless source RUNNING")["worker_id"]
    index = cluster.worker_of_executor(first)
    assert index is not None, first
    counter = Counter(bootstrap, topic)
    try:
        counter.until(200)
        killed = time.monotonic()
        cluster.kill_worker(index, wait=False)
        _wait(
            lambda: (t := task()) is not None and t["worker_id"] != first, TIMEOUT, "the task moved"
        )
        running = time.monotonic() - killed
        before = counter.count
        flowing_at = _flowing(counter, before)
        flowing = flowing_at - killed
    finally:
        counter.close()
        cluster.start_worker(index)
    return {"kill -> task RUNNING elsewhere (s)": running, "kill -> records flowing (s)": flowing}


def _flowing(counter: Counter, before: int) -> float:
    counter.until(before + 50)
    return time.monotonic()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1, help="runs of the three modes (medians)")
    _results.add_option(parser, "distributed_vs_standalone")
    args = parser.parse_args()
    page = _results.Results.from_args("distributed_vs_standalone", args)
    # a SIGTERM stops the run through the finally blocks, which stop the Spark JVMs
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    runs: list[list[dict[str, Any]]] = []
    with EmbeddedKafka() as kafka:
        bootstrap = kafka.bootstrap_servers
        for run in range(args.runs):
            page.run()
            last = run == args.runs - 1
            load = os.getloadavg()[0]
            rows = [measure("standalone", bootstrap, args.records, None)]
            with LocalSpark(2) as local:
                rows.append(measure("distributed local[2]", bootstrap, args.records, local))
            with StandaloneSpark(2, cores=2) as cluster:
                rows.append(
                    measure(
                        "distributed 2-worker cluster", bootstrap, args.records, cluster, kill=last
                    )
                )
            runs.append(rows)
            ratios = ", ".join(
                f"{row['mode']} source {row['source rec/s'] / rows[0]['source rec/s']:.2f}x "
                f"sink {row['sink rec/s'] / rows[0]['sink rec/s']:.2f}x"
                for row in rows[1:]
            )
            print(f"run {run + 1} [load {load:.1f}]: {ratios}", flush=True)
    rows = [{"mode": modes[0]["mode"], **_medians(modes)} for modes in zip(*runs, strict=True)]
    base = rows[0]
    print(
        f"\n{args.records} records, generator -> Tansu -> no-op sink, JsonConverter, "
        f"medians of {args.runs} run(s)\n"
    )
    keys = [k for row in rows for k in row if k != "mode"]
    keys = list(dict.fromkeys(keys))
    print("| figure | " + " | ".join(r["mode"] for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for key in keys:
        cells = []
        for row in rows:
            value = row.get(key)
            if value is None:
                cells.append("")
                continue
            text = f"{value:,.0f}" if "rec/s" in key else f"{value:.2f}"
            if "rec/s" in key and row is not base:
                text += f" ({value / base[key]:.2f}x)"
            cells.append(text)
        print(f"| {key} | " + " | ".join(cells) + " |")
    for index, key in ((1, "local2"), (2, "cluster")):
        page.figure(
            f"distributed.source.{key}",
            f"source task, {runs[0][index]['mode']} / standalone",
            "rec/s",
            [modes[index]["source rec/s"] for modes in runs],
            baseline=[modes[0]["source rec/s"] for modes in runs],
            baseline_name="standalone (the embedded worker)",
            kit_name=runs[0][index]["mode"],
            aim=_results.ratio_aim(">=", 0.9),
            note=f"{args.records:,} records, generator -> Tansu",
        )
    page.write()


def _medians(rows: tuple[dict[str, Any], ...]) -> dict[str, float]:
    keys = dict.fromkeys(k for row in rows for k in row if k != "mode")
    return {k: statistics.median(row[k] for row in rows if k in row) for k in keys}


if __name__ == "__main__":
    main()
