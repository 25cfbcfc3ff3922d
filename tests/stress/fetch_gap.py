"""Raw clients only: does a reader that follows a topic while producers write see every record?

This is the reconfiguration scenario of ``reconfig_loss.py`` without the kit: 2 idempotent
confluent-kafka producers (``acks=all``) write batches of 10 keyed records every 10 ms into a
2-partition topic, 2 more join half way (as the 4 new tasks do after a reconfiguration), and a
consumer assigned to both partitions from the beginning reads while they write. Once every
record is acknowledged, the live consumer drains, and a fresh consumer reads the topic again.
A record the fresh consumer finds at an offset the live one never got was skipped by a fetch:
the broker served it, acknowledged it, stored it, and still left it out of what the live
consumer was given.

    .venv/bin/python -m tests.stress.fetch_gap --rounds 50 --out /tmp/gap.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from cdk.kafka import create_topics

PRODUCERS = 4
RECORDS = 600  # per producer
BATCH = 10
INTERVAL_S = 0.01


def _produce(
    bootstrap: str, topic: str, name: str, acks: dict[str, int], start: threading.Event
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})

    def delivered(err: Any, msg: Any) -> None:
        acks["ok" if err is None else "failed"] += 1

    start.wait()
    for first in range(0, RECORDS, BATCH):
        for n in range(first, first + BATCH):
            producer.produce(topic, key=f"{name}-{n}".encode(), value=b"v", on_delivery=delivered)
        producer.poll(0)
        time.sleep(INTERVAL_S)
    producer.flush(60)


def _reader(bootstrap: str, topic: str) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in (0, 1)])
    return consumer


def _read(consumer: Consumer, into: dict[tuple[int, int], str], timeout: float = 0.05) -> None:
    for msg in consumer.consume(10000, timeout):
        if msg.error() is None:
            into[(msg.partition(), msg.offset())] = msg.key().decode()


def run_round(bootstrap: str) -> dict[str, Any]:
    topic = f"gap-{uuid.uuid4().hex[:10]}"
    create_topics(bootstrap, [topic], partitions=2)
    acks = {"ok": 0, "failed": 0}
    names = [f"s{i}" for i in range(PRODUCERS)]
    starts = [threading.Event() for _ in names]
    threads = [
        threading.Thread(target=_produce, args=(bootstrap, topic, n, acks, s))
        for n, s in zip(names, starts, strict=True)
    ]
    for t in threads:
        t.start()
    live: dict[tuple[int, int], str] = {}
    consumer = _reader(bootstrap, topic)
    try:
        for s in starts[:2]:
            s.set()
        deadline = time.monotonic() + 0.3  # the 2 others join half way through the first ones
        while time.monotonic() < deadline:
            _read(consumer, live)
        for s in starts[2:]:
            s.set()
        while any(t.is_alive() for t in threads):
            _read(consumer, live)
        for t in threads:
            t.join()
        quiet = time.monotonic()
        while time.monotonic() - quiet < 1.0:
            before = len(live)
            _read(consumer, live, 0.1)
            if len(live) != before:
                quiet = time.monotonic()
    finally:
        consumer.close()
    fresh: dict[tuple[int, int], str] = {}
    again = _reader(bootstrap, topic)
    try:
        quiet = time.monotonic()
        while time.monotonic() - quiet < 1.0:
            before = len(fresh)
            _read(again, fresh, 0.1)
            if len(fresh) != before:
                quiet = time.monotonic()
    finally:
        again.close()
    skipped = sorted(set(fresh) - set(live))
    return {
        "topic": topic,
        "acked": acks["ok"],
        "failed": acks["failed"],
        "live": len(live),
        "fresh": len(fresh),
        "skipped_by_live_reader": [[p, o, fresh[(p, o)]] for p, o in skipped],
    }


@contextlib.contextmanager
def _broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from cdk.kafka import EmbeddedKafka

    with EmbeddedKafka() as kafka:
        yield kafka.bootstrap_servers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--bootstrap", help="an existing broker (default: an embedded Tansu)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    gaps = 0
    with _broker(args.bootstrap) as bootstrap, args.out.open("a") as out:
        for number in range(1, args.rounds + 1):
            result = run_round(bootstrap)
            result["round"] = number
            out.write(json.dumps(result) + "\n")
            out.flush()
            gaps += bool(result["skipped_by_live_reader"])
            print(
                f"round {number}: acked {result['acked']} (failed {result['failed']}), "
                f"live reader {result['live']}, fresh reader {result['fresh']}, "
                f"skipped {len(result['skipped_by_live_reader'])}",
                flush=True,
            )
    print(f"{args.rounds} rounds: {gaps} where the live reader was not given acked records")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main())
