"""Does a reader that follows a topic while producers write see every record? Raw and kit.

This is the reconfiguration scenario of ``reconfig_loss.py`` with raw producers: 2 idempotent
confluent-kafka producers (``acks=all``, the worker's settings) write batches of 10 keyed
records of about 250 bytes every 10 ms into a 2-partition topic; after 60 records each they
are closed and 4 new producers carry on, one per stream (as the 4 new tasks do after a
reconfiguration), up to 600 records per stream (``--streams``, ``--interval`` change the load).
Three readers follow the topic from its beginning while they write:

- ``raw``: a plain confluent-kafka consumer assigned to both partitions;
- ``sink``: the kit's sink task runner (``WorkerSinkTask``, its consumer settings, a group of
  its own) with a task that keeps what ``put`` gets;
- ``log``: the kit's ``KafkaBasedLog`` (what distributed mode's stores read their topics with),
  reading to the end again and again, as a store refreshing itself does.

Once every record is acknowledged the readers drain, and a fresh consumer reads the topic
again. A record the fresh consumer finds at an offset a reader never got was skipped by a
fetch: the broker served it, acknowledged it, stored it, and left it out of what that reader was
given. The embedded broker (Tansu) does that now and then under this load; the raw reader goes
on past the gap, the kit's readers notice it, read the partition again and report the gap
healed (``heals``; see ``cdk.runtime.util.FetchGaps``). The topic is compacted (the log reads
only compacted topics; every key is unique, so nothing is compacted away).

    .venv/bin/python -m tests.stress.fetch_gap --rounds 50 --out /tmp/gap.jsonl
    .venv/bin/python -m tests.stress.fetch_gap --rounds 20 --streams 8 --interval 0.001 \\
        --out /tmp/gap.jsonl   # heavier: gaps in about one round of ten here

One JSON line per round goes to ``--out``. The exit status is 1 when a kit reader missed a
record the fresh consumer found (the raw reader's gaps are what the kit heals; they do not
fail the run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from cdk.api import SinkRecord, SinkTask
from cdk.converters import ByteArrayConverter, SimpleHeaderConverter, StringConverter
from cdk.kafka import create_topics
from cdk.runtime._sink_runner import WorkerSinkTask
from cdk.runtime._status import ConnectorTaskId, StatusStore, TargetState
from cdk.runtime.errors import ErrorHandlingConfig, RetryWithToleranceOperator
from cdk.runtime.util import KafkaBasedLog
from cdk.transforms import TransformationChain

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


Seen = dict[tuple[int, int], str]  # (partition, offset) -> key


class _KeepTask(SinkTask):
    """A sink task that keeps the coordinates and key of every record ``put`` gets."""

    def __init__(self) -> None:
        self.seen: Seen = {}
        self.lock = threading.Lock()

    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        pass

    def put(self, records: Any) -> None:
        with self.lock:
            for record in records:
                assert isinstance(record, SinkRecord)
                self.seen[(record.kafka_partition or 0, record.kafka_offset)] = record.key or ""

    def stop(self) -> None:
        pass

    def count(self) -> int:
        with self.lock:
            return len(self.seen)


def _sink_runner(bootstrap: str, topic: str, task: _KeepTask) -> WorkerSinkTask:
    """The kit's sink task runner on ``topic``, in a consumer group of its own."""
    key, value, headers = StringConverter(), ByteArrayConverter(), SimpleHeaderConverter()
    key.configure({}, True)
    value.configure({}, False)
    operator = RetryWithToleranceOperator(ErrorHandlingConfig.from_props({}))
    return WorkerSinkTask(
        ConnectorTaskId(f"gap-{uuid.uuid4().hex[:8]}", 0),
        task,
        {"topics": topic},
        worker_id="fetch-gap:0",
        status_store=StatusStore(),
        target=TargetState.STARTED,
        key_converter=key,
        value_converter=value,
        header_converter=headers,
        transformation_chain=TransformationChain.from_config({}),
        operator=operator,
        consumer_config={"bootstrap.servers": bootstrap},
        flush_interval_ms=1000,
        closers=[operator.close],
    )


class _LogReader:
    """A KafkaBasedLog on ``topic`` read to its end in a loop on a thread of its own."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.seen: Seen = {}
        self.error: str | None = None
        self.log = KafkaBasedLog(
            topic, bootstrap, self._record, replication_factor=1, create=False, timeout_s=30
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="log-reader", daemon=True)

    def _record(self, record: tuple[bytes | None, bytes | None, int, int]) -> None:
        key, _value, partition, offset = record
        self.seen[(partition, offset)] = (key or b"").decode()

    def start(self) -> None:
        self.log.start()
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(0.005):
            try:
                self.log.read_to_end()
            except Exception as exc:  # noqa: BLE001 - reported in the round's result
                self.error = f"{type(exc).__name__}: {exc}"
                return

    def close(self) -> None:
        self._stop.set()
        self._thread.join(60)
        try:
            self.log.read_to_end()  # everything acknowledged before now
        finally:
            self.log.stop()


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


def _wait(predicate: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _settle(count: Any, target: int, timeout: float = 30.0) -> None:
    """Wait until ``count()`` reaches ``target`` or stops moving for a second."""
    deadline = time.monotonic() + timeout
    last, since = count(), time.monotonic()
    while count() < target and time.monotonic() < deadline:
        time.sleep(0.05)
        now = count()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since > 1.0:
            return


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
    create_topics(bootstrap, [topic], partitions=2, config={"cleanup.policy": "compact"})
    acks = {"ok": 0, "failed": 0}
    live: dict[tuple[int, int], str] = {}
    task = _KeepTask()
    runner = _sink_runner(bootstrap, topic, task)
    log_reader = _LogReader(bootstrap, topic)
    consumer = _reader(bootstrap, topic)
    try:
        runner.start()
        if not _wait(lambda: runner.assigned_partitions(), 30.0):
            raise RuntimeError("the sink task got no partitions")
        log_reader.start()
        first = {f"s{i}": range(SWITCH_AT) for i in range(2)}
        _phase(bootstrap, topic, first, acks, consumer, live)
        second = {f"s{i}": range(SWITCH_AT if i < 2 else 0, RECORDS) for i in range(STREAMS)}
        _phase(bootstrap, topic, second, acks, consumer, live)
        _drain(consumer, live)
        _settle(task.count, acks["ok"])
    finally:
        consumer.close()
        runner.stop()
        stopped = runner.await_stop(30)
        log_reader.close()
    fresh: dict[tuple[int, int], str] = {}
    again = _reader(bootstrap, topic)
    try:
        _drain(again, fresh)
    finally:
        again.close()
    sink_metrics = runner.metrics.sink
    assert sink_metrics is not None

    def skipped(seen: Seen) -> list[list[Any]]:
        return [[p, o, fresh[(p, o)]] for p, o in sorted(set(fresh) - set(seen))]

    return {
        "topic": topic,
        "acked": acks["ok"],
        "failed": acks["failed"],
        "fresh": len(fresh),
        "raw": len(live),
        "sink": len(task.seen),
        "log": len(log_reader.seen),
        "sink_heals": int(sink_metrics.fetch_gap_heal.total),
        "log_heals": log_reader.log.healed_gaps,
        # this topic has no genuine holes: a gap a re-read found again is one not healed
        "sink_confirmed": runner._gaps.confirmed,
        "log_confirmed": log_reader.log._gaps.confirmed,
        "sink_stopped": stopped,
        "log_error": log_reader.error,
        "skipped_by_raw": skipped(live),
        "skipped_by_sink": skipped(task.seen),
        "skipped_by_log": skipped(log_reader.seen),
    }


@contextlib.contextmanager
def _broker(bootstrap: str | None, nice: int) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from cdk.kafka import EmbeddedKafka

    with EmbeddedKafka() as kafka:
        if nice and kafka.pid is not None:
            # every thread of the broker (Linux nice values are per thread)
            for tid in os.listdir(f"/proc/{kafka.pid}/task"):
                os.setpriority(os.PRIO_PROCESS, int(tid), nice)
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
    parser.add_argument(
        "--nice-broker",
        type=int,
        default=0,
        help="nice value of the embedded broker's threads (a starved broker skips more often)",
    )
    args = parser.parse_args(argv)
    STREAMS, INTERVAL_S = args.streams, args.interval
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    rounds = {"raw": 0, "sink": 0, "log": 0}
    records = {"raw": 0, "sink": 0, "log": 0}
    heals = {"sink": 0, "log": 0}
    with _broker(args.bootstrap, args.nice_broker) as bootstrap, args.out.open("a") as out:
        for number in range(1, args.rounds + 1):
            result = run_round(bootstrap)
            result["round"] = number
            out.write(json.dumps(result) + "\n")
            out.flush()
            for name in rounds:
                missed = len(result[f"skipped_by_{name}"])
                rounds[name] += bool(missed)
                records[name] += missed
            heals["sink"] += result["sink_heals"]
            heals["log"] += result["log_heals"]
            print(
                f"round {number}: acked {result['acked']} (failed {result['failed']}), "
                f"fresh reader {result['fresh']}; skipped: raw "
                f"{len(result['skipped_by_raw'])}, sink {len(result['skipped_by_sink'])} "
                f"(heals {result['sink_heals']}, not healed {result['sink_confirmed']}), log "
                f"{len(result['skipped_by_log'])} (heals {result['log_heals']}, not healed "
                f"{result['log_confirmed']})"
                + (f"; log error: {result['log_error']}" if result["log_error"] else "")
                + ("" if result["sink_stopped"] else "; the sink task did not stop"),
                flush=True,
            )
    print(
        f"{args.rounds} rounds: records skipped by the raw reader {records['raw']} "
        f"(in {rounds['raw']} rounds), by the kit's sink task runner {records['sink']} "
        f"(in {rounds['sink']}; gaps healed {heals['sink']}), by KafkaBasedLog "
        f"{records['log']} (in {rounds['log']}; gaps healed {heals['log']})"
    )
    return 1 if rounds["sink"] or rounds["log"] else 0


if __name__ == "__main__":
    sys.exit(main())
