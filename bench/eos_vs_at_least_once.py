"""Exactly-once source throughput against the same source at least once, in one run.

The generator test source (JsonConverter, schemas on, ``batch.size`` records per ``poll()``)
writes N records to a fresh topic on a distributed driver whose one worker runs on a thread of
this process (no Spark: the exactly-once machinery is the driver's and the worker's), on the
embedded broker, three ways, alternating, each on a cluster of its own:

- ``at-least-once``: ``exactly.once.source.support=disabled`` (the at-least-once runner);
- ``eos poll``: ``enabled``, ``transaction.boundary=poll`` (a transaction per ``poll()``);
- ``eos interval 1s``: ``enabled``, ``transaction.boundary=interval``,
  ``transaction.boundary.interval.ms=1000``.

Throughput is N records over the time from the connector's creation (REST create, through the
herder) to the N-th record read by a ``read_committed`` consumer (so an exactly-once record
counts once its transaction committed, and a transaction that holds many polls is not credited
with the time before its commit); the start of the task (for exactly-once, its producer's
``init_transactions``) is in it, so take N large. The aims of issue
28: eos poll >= 0.7x, eos interval >= 0.9x of at-least-once. With ``--runs`` the figures are
medians.

Run with ``.venv/bin/python bench/eos_vs_at_least_once.py [--records N] [--batch B] [--runs R]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # the test connectors live in tests/connectors

import _results  # noqa: E402  (bench/, first on sys.path: the benchmark page's results)
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition  # noqa: E402

from cdk.kafka import EmbeddedKafka, create_topics  # noqa: E402
from cdk.runtime import DistributedWorker  # noqa: E402
from harness.certify._eos_worker import ThreadPlacement  # noqa: E402

JSON = "org.apache.kafka.connect.json.JsonConverter"
GENERATOR = "tests.connectors.generator.GeneratorSourceConnector"
TIMEOUT = 600.0
MODES: dict[str, tuple[str, dict[str, str]]] = {
    "at-least-once": ("disabled", {}),
    "eos poll": ("enabled", {"transaction.boundary": "poll"}),
    "eos interval 1s": (
        "enabled",
        {"transaction.boundary": "interval", "transaction.boundary.interval.ms": "1000"},
    ),
}


def _wait(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.05)


def _props(bootstrap: str, support: str) -> dict[str, str]:
    group = f"bench-eos-{uuid.uuid4().hex[:8]}"
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "5",
        "status.storage.partitions": "1",
        "key.converter": JSON,
        "value.converter": JSON,
        "offset.flush.interval.ms": "1000",
        "exactly.once.source.support": support,
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
    }


def run_once(bootstrap: str, mode: str, records: int, batch: int) -> float:
    """The records/s of one run of ``mode``."""
    support, extra = MODES[mode]
    topic = f"bench-eos-{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic], partitions=1)
    driver = DistributedWorker(
        _props(bootstrap, support), placement=ThreadPlacement(), rest=False, cluster_id_timeout=0
    )
    driver.start()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "fetch.wait.max.ms": 20,
        }
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    try:
        _wait(lambda: driver.await_leader(1) and driver.leading, 60, "the driver to lead")
        _wait(lambda: driver.herder.workers(), 60, "the worker to heartbeat")
        started = time.monotonic()
        driver.herder.create_connector(
            "gen",
            {
                "connector.class": GENERATOR,
                "tasks.max": "1",
                "topic": topic,
                "records": str(records),
                "batch.size": str(batch),
                **extra,
            },
        )
        count = 0
        deadline = time.monotonic() + TIMEOUT
        while count < records:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{mode}: {count} of {records} records after {TIMEOUT:g}s")
            for message in consumer.consume(10000, 0.1):
                if message.error() is None:
                    count += 1
        return records / (time.monotonic() - started)
    finally:
        consumer.close()
        driver.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    _results.add_option(parser, "eos_vs_at_least_once")
    args = parser.parse_args()
    page = _results.Results.from_args("eos_vs_at_least_once", args)
    results: dict[str, list[float]] = {mode: [] for mode in MODES}
    with EmbeddedKafka() as kafka:
        for run in range(args.runs):
            page.run()
            for mode in MODES:
                rate = run_once(kafka.bootstrap_servers, mode, args.records, args.batch)
                results[mode].append(rate)
                print(f"run {run + 1} {mode:>16}: {rate:10.0f} rec/s", flush=True)
    base = statistics.median(results["at-least-once"])
    print(f"\n{args.records} records, {args.batch} per poll, medians of {args.runs}:")
    for mode, rates in results.items():
        median = statistics.median(rates)
        print(f"{mode:>16}: {median:10.0f} rec/s  {median / base:5.2f}x")

    page.ratios(  # the benchmark page (bench/report.py)
        results,
        [
            (
                "eos.poll",
                "exactly once (transaction.boundary=poll) / at least once",
                "eos poll",
                "at-least-once",
                ">=",
                0.7,
            ),
            (
                "eos.interval",
                "exactly once (transaction.boundary=interval, 1 s) / at least once",
                "eos interval 1s",
                "at-least-once",
                ">=",
                0.9,
            ),
        ],
        unit="rec/s",
        note=f"{args.records:,} records, {args.batch} per poll",
    )
    page.write()


if __name__ == "__main__":
    main()
