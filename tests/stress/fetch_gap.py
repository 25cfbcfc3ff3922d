"""Raw clients only: does a reader that follows a topic while producers write see every record?

This is the reconfiguration scenario of ``reconfig_loss.py`` without the kit: 2 idempotent
confluent-kafka producers (``acks=all``, the worker's settings) write batches of 10 keyed
records of about 250 bytes every 10 ms into a 2-partition topic; after 60 records each they
are closed and 4 new producers carry on, one per stream (as the 4 new tasks do after a
reconfiguration), up to 600 records per stream; a consumer assigned to both partitions from
the beginning reads while they write. Once every
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

STREAMS = 4
RECORDS = 600  # per stream
SWITCH_AT = 60  # the first 2 streams' producers are replaced after this many records
BATCH = 10
INTERVAL_S = 0.01
#: About the size of the generator's records in the JsonConverter envelope.
VALUE = b'{"schema":{"type":"struct","fields":[]},"payload":{"pad":"' + b"x" * 200 + b'"}}'
#: The worker's producer settings (cdk/runtime/_source_runner.py and the worker config).
PRODUCER = {
    "acks": "all",
    "enable.idempotence": True,
    "linger.ms": 5,
    "batch.num.messages": 10000,
    "batch.size": 1048576,
}


def _produce(
    bootstrap: str,
    topic: str,
    name: str,
    seqs: range,
    acks: dict[str, int],
    start: threading.Event,
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER})

    def delivered(err: Any, msg: Any) -> None:
        acks["ok" if err is None else "failed"] += 1

    start.wait()
    for first in range(seqs.start, seqs.stop, BATCH):
        for n in range(first, min(first + BATCH, seqs.stop)):
            producer.produce(topic, VALUE, f"{name}-{n}".encode(), on_delivery=delivered)
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
            into[(msg.partition() or 0, msg.offset() or 0)] = (msg.key() or b"").decode()


def _drain(consumer: Consumer, into: dict[tuple[int, int], str]) -> None:
    quiet = time.monotonic()
    while time.monotonic() - quiet < 1.0:
        before = len(into)
        _read(consumer, into, 0.1)
        if len(into) != before:
            quiet = time.monotonic()


def _phase(
    bootstrap: str,
    topic: str,
    work: dict[str, range],
    acks: dict[str, int],
    consumer: Consumer,
    live: dict[tuple[int, int], str],
) -> None:
    """One producer per stream writes its records while the live consumer reads."""
    start = threading.Event()
    threads = [
        threading.Thread(target=_produce, args=(bootstrap, topic, name, seqs, acks, start))
        for name, seqs in work.items()
    ]
    for t in threads:
        t.start()
    start.set()
    while any(t.is_alive() for t in threads):
        _read(consumer, live)
    for t in threads:
        t.join()


def run_round(bootstrap: str) -> dict[str, Any]:
    """2 producers, replaced after SWITCH_AT records by 4 new ones (as a reconfiguration)."""
    topic = f"gap-{uuid.uuid4().hex[:10]}"
    create_topics(bootstrap, [topic], partitions=2)
    acks = {"ok": 0, "failed": 0}
    live: dict[tuple[int, int], str] = {}
    consumer = _reader(bootstrap, topic)
    try:
        first = {f"s{i}": range(SWITCH_AT) for i in range(2)}
        _phase(bootstrap, topic, first, acks, consumer, live)
        second = {f"s{i}": range(SWITCH_AT if i < 2 else 0, RECORDS) for i in range(STREAMS)}
        _phase(bootstrap, topic, second, acks, consumer, live)
        _drain(consumer, live)
    finally:
        consumer.close()
    fresh: dict[tuple[int, int], str] = {}
    again = _reader(bootstrap, topic)
    try:
        _drain(again, fresh)
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
    global STREAMS, INTERVAL_S  # the stress script's knobs
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--bootstrap", help="an existing broker (default: an embedded Tansu)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--streams", type=int, default=STREAMS, help="producers after the switch")
    parser.add_argument(
        "--interval", type=float, default=INTERVAL_S, help="seconds between batches"
    )
    args = parser.parse_args(argv)
    STREAMS, INTERVAL_S = args.streams, args.interval
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
